"""Citations and the working tree: a note cites a file as its writer saw it, an edit
not committed yet included, and recall at HEAD does not mark a file the working tree
holds as recorded; recall as of a commit reads that commit alone (expiry/citations.py,
docs/recall.md "Cited files that changed")."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pygit2
import pytest

from omh_git_memory.expiry.citations import parse_cites
from omh_git_memory.model.note import parse
from tests.helpers import commit_files, local_store, make_repo, omh

OLD = "def parse_header(x):\n    return x\n"
NEW = "def parse_header(x):\n    return x.replace('\\t', ' ')\n"
KEY = "surprise/header-parsing-drops-tabs"
QUESTION = "why does header parsing drop tabs"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "app"
    make_repo(path, {"src/app.py": OLD, "README.md": "# App\n"})
    assert omh(path, "init").code == 0
    return path


def _remember(repo: Path) -> str:
    run = omh(repo, "memory", "remember", "--expected", "tabs are kept",
              "--observed", "Header parsing drops tabs.", "--evidence", "src/app.py:2",
              "--answers", "why does header parsing drop tabs?")
    assert run.code == 0, run.err
    text = (local_store(repo) / f"{KEY}.md").read_text(encoding="utf-8")
    [cited] = parse_cites(parse(text).field("cites"))
    return cited.blob


def _citation(repo: Path, *extra: str) -> dict[str, Any]:
    run = omh(repo, "memory", "recall", QUESTION, "--json", *extra)
    assert run.code == 0, run.err
    [found] = next(r for r in run.json()["results"] if r["key"] == KEY)["citations"]
    return dict(found)


def _blob_of(text: str) -> str:
    return str(pygit2.hash(text.encode()))


def test_an_edit_not_committed_yet_is_cited_as_the_writer_saw_it(repo: Path) -> None:
    (repo / "src/app.py").write_text(NEW, encoding="utf-8")
    assert _remember(repo) == _blob_of(NEW)
    assert _citation(repo)["changed"] is False  # the working tree holds what it saw
    commit_files(repo, {"src/app.py": NEW})
    assert _citation(repo)["changed"] is False  # and HEAD, once committed


def test_an_edit_the_note_saw_and_then_undone_is_marked(repo: Path) -> None:
    (repo / "src/app.py").write_text(NEW, encoding="utf-8")
    _remember(repo)
    (repo / "src/app.py").write_text(OLD, encoding="utf-8")
    assert _citation(repo)["changed"] is True


def test_as_of_a_commit_only_its_tree_counts(repo: Path) -> None:
    (repo / "src/app.py").write_text(NEW, encoding="utf-8")
    _remember(repo)
    assert omh(repo, "memory", "promote", KEY).code == 0  # --ref shows team notes only
    assert _citation(repo)["changed"] is False
    assert _citation(repo, "--ref", "HEAD")["changed"] is True  # the commit's tree alone


def test_a_working_file_replaced_by_a_symlink_is_not_followed(repo: Path,
                                                               tmp_path: Path) -> None:
    outside = tmp_path / "outside.py"
    outside.write_text(NEW, encoding="utf-8")
    (repo / "src/app.py").unlink()
    os.symlink(outside, repo / "src/app.py")
    assert _remember(repo) == _blob_of(OLD)  # HEAD's: the link is not read


def test_the_working_file_is_hashed_with_gits_filters(repo: Path) -> None:
    commit_files(repo, {".gitattributes": "*.py text eol=lf\n"})
    (repo / "src/app.py").write_bytes(OLD.replace("\n", "\r\n").encode())
    assert _remember(repo) == _blob_of(OLD)  # git add would store LF: no edit


def test_promote_warns_of_a_cited_edit_it_does_not_commit(repo: Path) -> None:
    (repo / "src/app.py").write_text(NEW, encoding="utf-8")
    _remember(repo)
    run = omh(repo, "memory", "promote", KEY)
    assert run.code == 0
    assert (f"warning: team/{KEY} cites src/app.py as this checkout holds it, not as "
            "committed: commit that edit too") in run.out


def test_promote_says_nothing_of_a_cited_file_committed_as_seen(repo: Path) -> None:
    _remember(repo)
    run = omh(repo, "memory", "promote", KEY, "--json")
    assert run.code == 0 and run.json()["cites_uncommitted"] == {}
