"""A stub's date is the day its document last changed on the first-parent line, not
the day of the commit indexed (recall/build.py with git/last_changed.py): what
recall prints (text and --json), `show`, `omh memory --json` and the MCP answer's
lines all give that date, in a full build and an incremental one alike.

Before, every stub carried the indexed commit's date, so in a real repository every
document looked written that day and recall's tie-break on the newer note meant
nothing. Real repositories, the git CLI playing the user, the CLI in process.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from omh_git_memory.actions.ask import Question, ask
from omh_git_memory.actions.workspace import open_workspace
from tests.helpers import commit_files, git, omh

DEPLOY = "# Deploying\n\n## Rolling back\nrollback steps for the deploy\n"
BUILD = "# Building\n\n## Running the tests\nthe test runner and its flags\n"


@pytest.fixture
def dated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty repository; `_commit` makes its commits, each on a day of its own."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    return repo


def _commit(repo: Path, monkeypatch: pytest.MonkeyPatch, day: str,
            files: dict[str, str | None]) -> str:
    monkeypatch.setenv("GIT_COMMITTER_DATE", f"{day}T12:00:00+0000")
    monkeypatch.setenv("GIT_AUTHOR_DATE", f"{day}T12:00:00+0000")
    return commit_files(repo, files, f"commit of {day}")


def _json(repo: Path, *args: str) -> Any:
    run = omh(repo, *args, "--json")
    assert run.code == 0, run.err
    return run.json()


def _recalled(repo: Path, question: str) -> dict[str, str]:
    """Every note the answer names (results and neighbours), with its date."""
    results = _json(repo, "memory", "recall", question)["results"]
    return {d["key"]: d["recorded"] for r in results for d in (r, *r["neighbours"])}


def _listed(repo: Path) -> dict[str, str]:
    return {n["key"]: n["recorded"] for n in _json(repo, "memory")["notes"]}


def _shown(repo: Path, key: str) -> str:
    notes = _json(repo, "memory", "show", key)["notes"]
    assert len(notes) == 1 and f"recorded: {notes[0]['recorded']}\n" in notes[0]["text"]
    text = omh(repo, "memory", "show", key)
    assert text.code == 0 and f"recorded: {notes[0]['recorded']}" in text.out, text.err
    recorded: str = notes[0]["recorded"]
    return recorded


def test_a_document_untouched_since_an_old_commit_shows_that_commits_date(
    dated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _commit(dated, monkeypatch, "2026-03-01", {"docs/deploy.md": DEPLOY})
    _commit(dated, monkeypatch, "2026-05-01", {"docs/build.md": BUILD})
    _commit(dated, monkeypatch, "2026-07-15", {"src/main.py": "print('hi')\n"})
    # The topic is no neighbour here (the question shares no word with it); its date,
    # as of HEAD, is checked in the listing below.
    assert _recalled(dated, "rolling back the deploy") == {"docs/deploy": "2026-03-01"}
    text = omh(dated, "memory", "recall", "rolling back the deploy")
    assert text.code == 0, text.err
    line = next(x for x in text.out.splitlines() if x.startswith("docs/deploy "))
    assert "team · 2026-03-01" in line, text.out
    assert _shown(dated, "docs/deploy") == "2026-03-01"
    assert _shown(dated, "docs/build") == "2026-05-01"
    assert _listed(dated) == {"docs/deploy": "2026-03-01", "docs/build": "2026-05-01",
                              "repo": "2026-07-15"}


def test_the_mcp_answer_dates_a_stub_as_its_document(
    dated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _commit(dated, monkeypatch, "2026-03-01", {"docs/deploy.md": DEPLOY})
    _commit(dated, monkeypatch, "2026-07-15", {"src/main.py": "print('hi')\n"})
    answered = ask(open_workspace(dated), Question("rolling back the deploy", ()), excerpts=3)
    (hit, *_) = answered.answer.results
    assert hit.doc.key == "docs/deploy"
    note = answered.notes[("team", "docs/deploy")]  # the excerpt's note, read again
    assert note.recorded.isoformat() == "2026-03-01"


def test_a_changed_document_gets_the_day_it_changed(
    dated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _commit(dated, monkeypatch, "2026-03-01", {"docs/deploy.md": DEPLOY, "docs/build.md": BUILD})
    assert _listed(dated)["docs/deploy"] == "2026-03-01"  # an index to build from
    _commit(dated, monkeypatch, "2026-06-01", {"docs/deploy.md": DEPLOY + "and a canary\n"})
    built = _json(dated, "memory", "reindex")
    assert built["analysed"] == 1  # incremental: one document read again
    assert _listed(dated) == {"docs/deploy": "2026-06-01", "docs/build": "2026-03-01",
                              "repo": "2026-06-01"}
    assert _shown(dated, "docs/deploy") == "2026-06-01"


def test_a_renamed_document_is_dated_by_its_rename(
    dated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _commit(dated, monkeypatch, "2026-03-01", {"deploy.md": DEPLOY})
    _listed(dated)
    _commit(dated, monkeypatch, "2026-04-01", {"deploy.md": None, "docs/deploying.md": DEPLOY})
    assert _listed(dated)["docs/deploying"] == "2026-04-01"


def test_a_merge_dates_a_document_by_the_first_parent_line(
    dated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _commit(dated, monkeypatch, "2026-03-01", {"docs/deploy.md": DEPLOY, "docs/build.md": BUILD})
    git(dated, "switch", "-qc", "side")
    _commit(dated, monkeypatch, "2026-04-01", {"docs/deploy.md": DEPLOY + "on the side\n"})
    git(dated, "switch", "-q", "main")
    _commit(dated, monkeypatch, "2026-05-01", {"docs/build.md": BUILD + "on main\n"})
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2026-06-01T12:00:00+0000")
    git(dated, "merge", "-q", "--no-ff", "-m", "merge side", "side")
    # the side's change reached main with the merge; main's own change kept its day
    assert _listed(dated) == {"docs/deploy": "2026-06-01", "docs/build": "2026-05-01",
                              "repo": "2026-06-01"}


def test_an_incremental_index_dates_as_a_full_one(
    dated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _commit(dated, monkeypatch, "2026-03-01", {"docs/deploy.md": DEPLOY, "docs/build.md": BUILD,
                                                "docs/ops.md": "# Ops\n"})
    _listed(dated)  # the base index
    # two commits with no index between them: deploy.md changed and changed back,
    # build.md changed; the base's index is the one the next build starts from
    _commit(dated, monkeypatch, "2026-04-01", {"docs/deploy.md": "# Deploying, briefly\n",
                                                "docs/build.md": BUILD + "more\n"})
    _commit(dated, monkeypatch, "2026-05-01", {"docs/deploy.md": DEPLOY})
    incremental = _json(dated, "memory", "reindex")
    assert incremental["reused"] >= 2  # deploy.md and ops.md as the base had them
    listed = _listed(dated)
    assert listed == {"docs/deploy": "2026-05-01", "docs/build": "2026-04-01",
                      "docs/ops": "2026-03-01", "repo": "2026-05-01"}
    assert _json(dated, "memory", "reindex", "--full")["analysed"] >= 3
    assert _listed(dated) == listed


def test_an_index_from_another_branch_is_no_source_of_dates(
    dated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The newest index on disk may be another branch's: a document it holds as this
    commit does was not necessarily changed on the same day in this line."""
    _commit(dated, monkeypatch, "2026-03-01", {"docs/build.md": BUILD})
    git(dated, "switch", "-qc", "side")
    _commit(dated, monkeypatch, "2026-04-01", {"docs/deploy.md": DEPLOY})
    assert _listed(dated)["docs/deploy"] == "2026-04-01"  # the side's index, the newest
    git(dated, "switch", "-q", "main")
    _commit(dated, monkeypatch, "2026-06-01", {"docs/deploy.md": DEPLOY})  # the same blob
    assert _listed(dated)["docs/deploy"] == "2026-06-01"


def _source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    git(src, "init", "-q", "-b", "main")
    git(src, "config", "uploadpack.allowFilter", "true")
    _commit(src, monkeypatch, "2026-01-01", {"docs/deploy.md": DEPLOY, "docs/build.md": BUILD})
    _commit(src, monkeypatch, "2026-02-01", {"docs/build.md": BUILD + "more\n"})
    _commit(src, monkeypatch, "2026-03-01", {"src/main.py": "print('hi')\n"})
    return src


def test_a_shallow_clone_dates_from_its_boundary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = _source(tmp_path, monkeypatch)
    git(tmp_path, "clone", "-q", "--depth", "2", f"file://{src}", "shallow")
    shallow = tmp_path / "shallow"
    assert (shallow / ".git" / "shallow").is_file()
    # deploy.md is older than the clone's history: it gets its oldest commit's day
    assert _listed(shallow) == {"docs/deploy": "2026-02-01", "docs/build": "2026-02-01",
                                "repo": "2026-03-01"}
    assert _recalled(shallow, "rolling back the deploy")["docs/deploy"] == "2026-02-01"


@pytest.mark.parametrize("kind", ["blob:none", "tree:0"])
def test_a_partial_clone_recalls_with_dates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    src = _source(tmp_path, monkeypatch)
    git(tmp_path, "clone", "-q", f"--filter={kind}", f"file://{src}", "part")
    part = tmp_path / "part"
    listed = _listed(part)
    if kind == "blob:none":  # every tree is there: the dates are the full clone's
        assert listed == {"docs/deploy": "2026-01-01", "docs/build": "2026-02-01",
                          "repo": "2026-03-01"}
    else:  # no older tree: the walk ends at HEAD
        assert listed == {"docs/deploy": "2026-03-01", "docs/build": "2026-03-01",
                          "repo": "2026-03-01"}
    assert "docs/deploy" in _recalled(part, "rolling back the deploy")
