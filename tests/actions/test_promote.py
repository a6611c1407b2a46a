"""The team layer, promote and the CI lint, against real git."""

from __future__ import annotations

import os
from functools import partial
from pathlib import Path

import pygit2
import pytest

from omh_git_memory.actions.promote import promote
from omh_git_memory.actions.workspace import open_workspace
from omh_git_memory.git.repository import open_repo
from omh_git_memory.model.errors import GitFailure, PromoteRefused
from tests.helpers import ROOT, git, omh
from tests.helpers.notes import PORT_NOTE, remembered
from tests.helpers.repo import head_of, init_committed

_remember = partial(remembered, recorded="2026-11-01", **PORT_NOTE)

A = "surprise/ports-are-taken"
B = "surprise/ci-uses-port-8080"


@pytest.fixture
def linked(repo_dir: Path) -> Path:
    """A repository with omh set up and two local notes, B linking to A."""
    init_committed(repo_dir)
    _remember(repo_dir, "Ports are taken.")
    _remember(repo_dir, "CI uses port 8080.", "--relates-to", A)
    return repo_dir


def _layers(repo: Path) -> set[tuple[str, str]]:
    """The written notes (derived stubs and the repo topic left out)."""
    notes = omh(repo, "memory", "--json").json()["notes"]
    return {(n["layer"], n["key"]) for n in notes if not n["derived"]}


def test_a_link_that_would_dangle_for_a_teammate_is_refused(linked: Path) -> None:
    head = head_of(linked)
    run = omh(linked, "memory", "promote", B)
    assert run.code == 1
    assert f"[[{A}]] would dangle for a teammate" in run.err
    assert f"omh memory promote {B} {A}" in run.err
    assert head_of(linked) == head
    assert _layers(linked) == {("local", A), ("local", B)}


def test_promoting_both_is_one_commit_of_exactly_those_files(linked: Path) -> None:
    (linked / "work.txt").write_text("unstaged work\n")
    (linked / "staged.txt").write_text("staged work\n")
    git(linked, "add", "staged.txt")
    before = head_of(linked)
    run = omh(linked, "memory", "promote", B, A, "--json")
    assert run.code == 0, run.err
    assert git(linked, "rev-parse", "HEAD~1").strip() == before
    changed = git(linked, "diff-tree", "--no-commit-id", "--name-only", "-r", "HEAD").split()
    assert sorted(changed) == [f".omh/notes/{B}.md", f".omh/notes/{A}.md"]
    assert A in git(linked, "log", "-1", "--format=%s")
    status = git(linked, "status", "--porcelain").splitlines()
    assert sorted(status) == sorted(["A  staged.txt", "?? work.txt"])  # the user's work, untouched
    assert _layers(linked) == {("team", A), ("team", B)}


def test_a_promoted_note_is_team_in_a_fresh_clone_and_lints_clean(
    linked: Path, tmp_path: Path
) -> None:
    assert omh(linked, "memory", "promote", A, B).code == 0
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(linked), str(clone))
    assert _layers(clone) == {("team", A), ("team", B)}
    assert omh(clone, "memory", "lint", "--ref", "HEAD").code == 0
    # A later commit adding a note without `## Answers` fails the CI check.
    bad = clone / ".omh/notes/surprise/bad.md"
    note = (clone / f".omh/notes/{A}.md").read_text().replace(A, "surprise/bad")
    bad.write_text(note.split("## Answers")[0])
    git(clone, "add", "-A")
    git(clone, "commit", "-qm", "a bad note")
    run = omh(clone, "memory", "lint", "--ref", "HEAD")
    assert run.code == 1 and "MissingSection" in run.out
    assert omh(clone, "memory", "lint", "--ref", "HEAD~1").code == 0


def test_lint_ref_fails_on_a_team_note_linking_outside_the_team(repo_dir: Path) -> None:
    notes = repo_dir / ".omh/notes"
    notes.mkdir(parents=True)
    (notes / "a.md").write_text(
        "---\nkey: a\ntype: topic\nsource: t\nrecorded: 2026-11-01\n---\n\n# A\n\n"
        "## Related\n\n- [[only-local]]\n"
    )
    git(repo_dir, "add", "-A")
    git(repo_dir, "commit", "-qm", "note")
    run = omh(repo_dir, "memory", "lint", "--ref", "HEAD")
    assert run.code == 1 and "DanglingLink" in run.out
    assert omh(repo_dir, "memory", "lint").code == 0  # locally it is a warning


def test_the_team_layer_is_read_from_the_tree_not_the_working_directory(linked: Path) -> None:
    assert omh(linked, "memory", "promote", A, B).code == 0
    (linked / f".omh/notes/{A}.md").write_text("edited, uncommitted\n")
    notes = omh(linked, "memory", "--json").json()
    assert notes["unreadable"] == []
    assert ("team", A) in _layers(linked)


def test_a_branch_moved_meanwhile_makes_promote_fail_cleanly(
    linked: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = open_workspace(linked)
    real_create_commit = pygit2.Repository.create_commit

    def racing_create_commit(self, *args):  # type: ignore[no-untyped-def]
        made = real_create_commit(self, *args)
        # another process moves the branch (without the index, which promote holds)
        other = git(linked, "commit-tree", "HEAD^{tree}", "-p", "HEAD", "-m",
                    "someone else").strip()
        git(linked, "update-ref", "refs/heads/main", other)
        return made

    theirs_before = head_of(linked)
    with monkeypatch.context() as patch, pytest.raises(GitFailure, match="could not move"):
        patch.setattr(pygit2.Repository, "create_commit", racing_create_commit)
        promote(ws, [A, B])
    assert git(linked, "log", "-1", "--format=%s").strip() == "someone else"
    assert git(linked, "rev-parse", "HEAD~1").strip() == theirs_before
    assert _layers(linked) == {("local", A), ("local", B)}


def test_a_held_index_lock_refuses_and_changes_nothing(linked: Path) -> None:
    head = head_of(linked)
    lock = linked / ".git/index.lock"
    lock.write_text("")
    run = omh(linked, "memory", "promote", A, B)
    assert run.code == 1 and "index.lock" in run.err
    lock.unlink()
    assert head_of(linked) == head
    assert _layers(linked) == {("local", A), ("local", B)}


def test_an_index_failure_after_the_commit_undoes_the_commit(
    linked: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    head = head_of(linked)

    def failing_write(self):  # type: ignore[no-untyped-def]
        raise pygit2.GitError("could not lock index")

    # the new index is staged before the branch moves: nothing to undo
    with monkeypatch.context() as patch, pytest.raises(GitFailure, match="nothing was committed"):
        patch.setattr(pygit2.Index, "write", failing_write)
        promote(open_workspace(linked), [A, B])
    assert head_of(linked) == head
    assert _layers(linked) == {("local", A), ("local", B)}


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ("-----BEGIN RSA PRIVATE KEY-----", "private key"),
        ("aws key AKIAQYLPMN5HHHFPZAM2 here", "AWS"),  # not AWS's EXAMPLE id: a placeholder
        ("token ghp_" + "a1B2" * 9, "GitHub"),
        ("clone https://bob:hunter22@example.com/repo.git", "password in a URL"),
        ("DB_PASSWORD=correct-horse-battery", "credential assignment"),
    ],
)
def test_content_that_looks_like_a_secret_is_refused_naming_the_line(
    repo_dir: Path, line: str, kind: str
) -> None:
    _remember(repo_dir, "Secrets leak.", "--evidence", line)
    run = omh(repo_dir, "memory", "promote", "surprise/secrets-leak")
    assert run.code == 1
    assert "line 17 looks like" in run.err and kind in run.err


def test_look_alikes_are_not_secrets(repo_dir: Path) -> None:
    _remember(repo_dir, "Placeholders pass.",
              "--evidence", "set API_KEY=${API_KEY} and password: <your password>")
    assert omh(repo_dir, "memory", "promote", "surprise/placeholders-pass").code == 0


def test_an_existing_or_dirty_destination_is_refused(linked: Path) -> None:
    dest = linked / f".omh/notes/{A}.md"
    dest.parent.mkdir(parents=True)
    dest.write_text("someone's draft\n")
    run = omh(linked, "memory", "promote", A)
    assert run.code == 1 and "already exists in the index or working tree" in run.err
    assert dest.read_text() == "someone's draft\n"


def test_a_note_failing_the_schema_is_refused(repo_dir: Path) -> None:
    _remember(repo_dir, "Fences break.")
    store = Path(omh(repo_dir, "memory", "--json").json()["local_store"])
    path = store / "surprise/fences-break.md"
    path.write_text(path.read_text() + "\n```\nnever closed\n")
    run = omh(repo_dir, "memory", "promote", "surprise/fences-break")
    assert run.code == 1 and "UnclosedFence" in run.err


def test_git_add_all_never_commits_a_local_note(linked: Path) -> None:
    git(linked, "add", "-A")
    git(linked, "commit", "-q", "--allow-empty", "-m", "everything")
    assert git(linked, "ls-files").split() == [".omh/.gitignore", ".omh/memory.toml", "README.md"]


def test_rm_of_a_team_note_linked_from_the_team_is_refused_with_the_links_named(
    linked: Path,
) -> None:
    """The removing commit would fail `lint --ref HEAD` (a team link to nothing), the
    check the docs give CI: refused before anything is committed."""
    assert omh(linked, "memory", "promote", A, B).code == 0
    head = head_of(linked)
    run = omh(linked, "memory", "rm", A)
    assert run.code == 1
    assert (f"team/{A} is linked from team/{B}: removing it would leave that link to "
            f"[[{A}]] dangling") in run.err
    assert "--leave-links" in run.err and f"omh memory edit {B} --layer team" in run.err
    assert head_of(linked) == head and (linked / f".omh/notes/{A}.md").exists()


def test_rm_of_a_team_note_is_a_commit_recoverable_from_history(linked: Path) -> None:
    assert omh(linked, "memory", "promote", A, B).code == 0
    run = omh(linked, "memory", "rm", A, "--leave-links", "--json")
    assert run.code == 0, run.err
    assert run.json()["linked_from"] == [{"layer": "team", "key": B}]
    assert git(linked, "log", "-1", "--format=%s").strip() == f"omh: remove {A}"
    assert not (linked / f".omh/notes/{A}.md").exists()
    assert git(linked, "status", "--porcelain") == ""
    assert "Ports are taken" in git(linked, "show", f"HEAD~1:.omh/notes/{A}.md")


def test_worktrees_share_the_local_store_and_removing_one_loses_nothing(
    linked: Path, tmp_path: Path
) -> None:
    wt = tmp_path / "wt"
    git(linked, "worktree", "add", "-q", str(wt), "-b", "session")
    _remember(wt, "Worktrees share notes.")
    assert ("local", "surprise/worktrees-share-notes") in _layers(linked)
    git(linked, "worktree", "remove", "--force", str(wt))
    assert ("local", "surprise/worktrees-share-notes") in _layers(linked)


def test_missing_identity_is_a_clear_message(linked: Path) -> None:
    repo = open_repo(linked).repo
    del repo.config["user.name"]
    del repo.config["user.email"]
    env = {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    run = omh(linked, "memory", "promote", A, B, env=env)
    assert run.code == 1 and "git config user.name" in run.err
    assert _layers(linked) == {("local", A), ("local", B)}


def test_promote_refuses_an_unknown_key(linked: Path) -> None:
    with pytest.raises(PromoteRefused, match="no local note"):
        promote(open_workspace(linked), ["surprise/nothing"])


def test_lint_worktree_checks_team_notes_before_they_are_committed(repo_dir: Path) -> None:
    notes = repo_dir / ".omh/notes"
    notes.mkdir(parents=True)
    (notes / "a.md").write_text(
        "---\nkey: a\ntype: stub\nsource: t\nrecorded: 2026-11-01\n---\n\n# A\n"
    )
    run = omh(repo_dir, "memory", "lint", "--worktree")
    assert run.code == 1 and "MissingSection" in run.out and "working tree" in run.out
    assert omh(repo_dir, "memory", "lint", "--ref", "HEAD").code == 0  # not committed yet


def test_the_pre_commit_hook_runs_the_worktree_lint() -> None:
    hooks = (ROOT / ".pre-commit-hooks.yaml").read_text()
    assert "entry: omh memory lint --worktree" in hooks
    assert "pass_filenames: false" in hooks


def test_a_working_tree_write_failure_undoes_the_commit(
    linked: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    head = head_of(linked)
    real_replace, real_link = os.replace, os.link

    def refusing(real):  # type: ignore[no-untyped-def]
        def call(src, dst, **dirs):  # type: ignore[no-untyped-def]
            # a working-tree file: below a dir fd, from its `.omh-tmp-` temporary file
            # (the git dir's lock record is written below a dir fd too, as `NAME.hex`)
            if dirs.get("dst_dir_fd") is not None and str(src).startswith(".omh-tmp-"):
                raise OSError(28, "No space left on device")
            return real(src, dst, **dirs)
        return call

    with monkeypatch.context() as patch, pytest.raises(GitFailure, match="undone"):
        # a new file is linked into place, a clean copy replaced
        patch.setattr(os, "replace", refusing(real_replace))
        patch.setattr(os, "link", refusing(real_link))
        promote(open_workspace(linked), [A, B])
    assert head_of(linked) == head
    assert git(linked, "status", "--porcelain") == ""
    assert _layers(linked) == {("local", A), ("local", B)}


def test_a_key_the_team_already_has_is_refused(linked: Path) -> None:
    # remember refuses a key the team holds, but a teammate's commit can bring one
    # in after the local note was written.
    team_copy = linked / f".omh/notes/{A}.md"
    team_copy.parent.mkdir(parents=True)
    stored = omh(linked, "memory", "show", A, "--json").json()["notes"][0]["text"]
    team_copy.write_text(stored.replace("a free port", "theirs"))
    git(linked, "add", "-A")
    git(linked, "commit", "-qm", "a teammate's note")
    head = head_of(linked)
    run = omh(linked, "memory", "promote", A)
    assert run.code == 1 and "the team layer already has" in run.err
    assert head_of(linked) == head
