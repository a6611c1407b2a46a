"""`Workspace.at(rev)`: the store as of a past commit (`--ref REV`) — that commit's
team notes and stubs under that commit's settings, who last changed each as of
that commit, and never a local note. Real repositories, no CLI."""

from __future__ import annotations

from pathlib import Path

import pytest

from omh_git_memory.actions.ask import Question, ask
from omh_git_memory.actions.listing import list_notes
from omh_git_memory.actions.lookup import shown_notes
from omh_git_memory.actions.workspace import Settings, open_workspace
from omh_git_memory.model.errors import ConfigError, NoteNotFound
from omh_git_memory.model.layers import Layer
from tests.helpers import commit_as, commit_files, git, note_text, remember_linked
from tests.helpers.repo import init_committed

DEPLOY = "docs/deploy.md"


def _exclude_docs(repo: Path) -> None:
    """`[stubs] exclude = ["docs/*"]` in the checkout's settings (not committed)."""
    path = repo / ".omh/memory.toml"
    text = path.read_text(encoding="utf-8")
    assert "exclude = []" in text
    path.write_text(text.replace("exclude = []", 'exclude = ["docs/*"]'), encoding="utf-8")


def _keys(answered: object) -> list[tuple[str, str]]:
    return [(h.doc.layer, h.doc.key) for h in answered.answer.results]  # type: ignore[attr-defined]


def test_local_notes_are_left_out_at_a_commit(repo_dir: Path) -> None:
    init_committed(repo_dir)
    commit_files(repo_dir, {DEPLOY: "# Deploy\n\nThe canary rollout waits an hour.\n"})
    remember_linked(repo_dir, "The canary rollout waited a day.")
    ws = open_workspace(repo_dir)
    assert "local" in {layer for layer, _ in _keys(ask(ws, Question("canary rollout")))}
    pinned = ws.at("HEAD")
    answered = ask(pinned, Question("canary rollout"))
    assert _keys(answered) and {layer for layer, _ in _keys(answered)} == {"team"}
    assert not any(d is not None and d.layer == "local" for d in pinned.searcher().docs)
    listed = list_notes(pinned)
    assert {r["layer"] for r in listed.rows} == {"team"}
    assert listed.counts["local"] == {"notes": 0}
    assert all(e.layer is Layer.TEAM for e in pinned.graph().entries)


def test_at_head_the_answer_is_recalls_own_without_local_notes(repo_dir: Path) -> None:
    init_committed(repo_dir)
    commit_files(repo_dir, {DEPLOY: "# Deploy\n\n## Rollback\n\nSwitch blue and green.\n",
                            ".omh/notes/blue-green.md": note_text(
                                "blue-green", body="Deploys switch blue and green.\n")})
    ws = open_workspace(repo_dir)
    plain, pinned = ask(ws, Question("blue green")), ask(ws.at("HEAD"), Question("blue green"))
    assert _keys(plain) == _keys(pinned) and len(_keys(plain)) == 2
    assert [h.score for h in plain.answer.results] == [h.score for h in pinned.answer.results]
    assert plain.changed == pinned.changed and plain.sections == pinned.sections
    assert ws.at("HEAD").pinned.settings is Settings.CHECKOUT  # type: ignore[union-attr]


def test_a_past_commit_answers_with_its_own_notes_and_documents(repo_dir: Path) -> None:
    init_committed(repo_dir)
    old = commit_files(repo_dir, {".omh/notes/blue-green.md": note_text(
        "blue-green", body="Deploys switch blue and green.\n")}, "a team note")
    commit_files(repo_dir, {".omh/notes/blue-green.md": None,
                            ".omh/notes/canary.md": note_text(
                                "canary", body="Deploys go out as a canary.\n")}, "replaced")
    ws = open_workspace(repo_dir)
    assert _keys(ask(ws.at(old), Question("deploys"))) == [("team", "blue-green")]
    assert _keys(ask(ws.at("HEAD~1"), Question("deploys"))) == [("team", "blue-green")]
    assert _keys(ask(ws, Question("deploys"))) == [("team", "canary")]
    shown = shown_notes(ws.at(old), "blue-green", None)
    assert [s.where for s in shown] == [f"{old[:12]}:.omh/notes/blue-green.md"]
    with pytest.raises(NoteNotFound, match="no team note or stub canary at"):
        shown_notes(ws.at(old), "canary", None)


def test_who_last_changed_it_is_walked_from_the_commit_asked(repo_dir: Path) -> None:
    # Ada writes it, Bob changes it, Carol changes it back: at Ada's commit it is
    # Ada's, though HEAD's index (built first, the base of the past one) says Carol.
    text = "# Deploy\n\nDeploys switch blue and green.\n"
    ada = commit_as(repo_dir, "Ada", {DEPLOY: text}, 10)
    commit_as(repo_dir, "Bob", {"README.md": "# Other\n"}, 15)
    commit_as(repo_dir, "Bob", {DEPLOY: text + "\nAnd a canary.\n"}, 20)
    carol = commit_as(repo_dir, "Carol", {DEPLOY: text}, 30)
    ws = open_workspace(repo_dir)
    assert ask(ws, Question("blue green")).changed[("team", "docs/deploy")][:2] == (
        carol, "Carol")
    at_ada = ask(ws.at(ada), Question("blue green"))
    assert at_ada.changed[("team", "docs/deploy")][:2] == (ada, "Ada")
    at_bob = ask(ws.at("HEAD~1"), Question("blue green"))
    assert at_bob.changed[("team", "docs/deploy")][1] == "Bob"
    stub = next(h.doc for h in at_ada.answer.results if h.doc.key == "docs/deploy")
    assert stub.recorded == at_ada.changed[("team", "docs/deploy")][2]  # dated as of Ada's


def test_a_commit_without_omh_has_its_stubs_under_the_default_settings(repo_dir: Path) -> None:
    before = commit_files(repo_dir, {DEPLOY: "# Deploy\n\nThe canary waits an hour.\n"})
    init_committed(repo_dir)
    _exclude_docs(repo_dir)
    git(repo_dir, "commit", "-qam", "no stubs for docs/")
    ws = open_workspace(repo_dir)
    assert _keys(ask(ws, Question("canary"))) == []  # excluded at HEAD
    old = ws.at(before)
    assert old.pinned is not None and old.pinned.settings is Settings.DEFAULTS
    assert _keys(ask(old, Question("canary"))) == [("team", "docs/deploy")]
    listed = list_notes(old)
    assert listed.counts["team"] == {"notes": 0, "stubs": 2, "topic": 1}  # README.md too
    assert {r["key"] for r in listed.rows if r["type"] != "stub"} == {"repo"}


def test_a_past_commit_is_read_under_the_settings_it_holds(repo_dir: Path) -> None:
    init_committed(repo_dir)
    _exclude_docs(repo_dir)
    commit_files(repo_dir, {DEPLOY: "# Deploy\n\nThe canary waits an hour.\n"}, "excluded")
    excluded = git(repo_dir, "rev-parse", "HEAD").strip()
    git(repo_dir, "checkout", "-q", "HEAD~1", "--", ".omh/memory.toml")
    git(repo_dir, "commit", "-qm", "docs/ stubbed again")
    ws = open_workspace(repo_dir)
    assert _keys(ask(ws, Question("canary"))) == [("team", "docs/deploy")]
    pinned = ws.at(excluded)
    assert pinned.pinned is not None and pinned.pinned.settings is Settings.COMMITTED
    assert _keys(ask(pinned, Question("canary"))) == []


def test_settings_a_past_commit_cannot_give_are_refused_by_where_they_are(
        repo_dir: Path) -> None:
    init_committed(repo_dir)
    bad = commit_files(repo_dir, {".omh/memory.toml": "[keys\n"}, "broken settings")
    commit_files(repo_dir, {".omh/memory.toml": "[keys]\n"}, "mended")
    with pytest.raises(ConfigError, match=rf"\.omh/memory\.toml at {bad[:12]} is not valid"):
        open_workspace(repo_dir).at(bad)


@pytest.mark.parametrize("kind", ["symlink", "folder", "submodule"])
def test_settings_a_past_commit_holds_as_no_regular_file_are_refused(
        repo_dir: Path, kind: str) -> None:
    # The commit holds a .omh/memory.toml, only not one omh reads (a clone checked out
    # there refuses it too): never answered as if it held none, under the defaults.
    init_committed(repo_dir)
    settings = repo_dir / ".omh/memory.toml"
    settings.unlink()
    if kind == "symlink":
        settings.symlink_to("../README.md")
        git(repo_dir, "add", "-A")
    elif kind == "folder":
        (settings / "x.toml").parent.mkdir()
        (settings / "x.toml").write_text("[keys]\n", encoding="utf-8")
        git(repo_dir, "add", "-A")
    else:
        head = git(repo_dir, "rev-parse", "HEAD").strip()
        git(repo_dir, "rm", "-q", "--cached", ".omh/memory.toml")
        git(repo_dir, "update-index", "--add", "--cacheinfo", f"160000,{head},.omh/memory.toml")
    git(repo_dir, "commit", "-qm", f"settings as a {kind}")
    odd = git(repo_dir, "rev-parse", "HEAD").strip()
    commit_files(repo_dir, {"README.md": "# Test repo, again\n"}, "later")
    with pytest.raises(ConfigError, match=rf"\.omh/memory\.toml at {odd[:12]} is a {kind}"):
        open_workspace(repo_dir).at(odd)
