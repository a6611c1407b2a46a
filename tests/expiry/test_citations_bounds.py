"""The bounds a citation keeps (docs/recall.md, docs/note-format.md): at most eight
files a note, no source scanned for symbols once paths fill them, nothing checked
without a commit, and a walk of at most 200 commits to count the changes since."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pygit2

from omh_git_memory.actions.workspace import open_workspace
from omh_git_memory.expiry.citations import check, cite
from tests.helpers import IDENTITY, make_repo


class Files:
    """A HEAD of `files` (path → blob id) where each symbol of `defines` is defined in
    one file; `scanned` counts the symbol scans (each reads the sources)."""

    def __init__(self, files: dict[str, str], defines: dict[str, str]) -> None:
        self.files = files
        self.defines = defines
        self.scanned = 0

    def blob_at(self, path: str) -> str | None:
        return self.files.get(path)

    def defined_in(self, symbols: Iterable[str]) -> dict[str, tuple[str, ...]]:
        self.scanned += 1
        return {s: (self.defines[s],) for s in symbols if s in self.defines}


def _head(paths: int, symbols: int) -> tuple[Files, str]:
    files = {f"src/f{i}.py": f"{i:07x}" for i in range(paths + symbols)}
    defines = {f"sym{j}": f"src/f{paths + j}.py" for j in range(symbols)}
    evidence = " ".join(f"src/f{i}.py" for i in range(paths)) + " " + \
        " ".join(f"`sym{j}`" for j in range(symbols))
    return Files(files, defines), evidence


def test_a_note_records_at_most_eight_files() -> None:
    head, evidence = _head(paths=11, symbols=0)
    assert [c.path for c in cite(evidence, head)] == [f"src/f{i}.py" for i in range(8)]


def test_symbols_fill_what_the_paths_leave_and_stop_at_eight() -> None:
    head, evidence = _head(paths=7, symbols=3)
    found = [c.path for c in cite(evidence, head)]
    assert found == [f"src/f{i}.py" for i in range(8)]  # seven paths, then sym0's file


def test_no_source_is_scanned_for_symbols_once_paths_fill_the_note() -> None:
    full, evidence = _head(paths=8, symbols=2)
    assert len(cite(evidence, full)) == 8
    assert full.scanned == 0
    room, evidence = _head(paths=7, symbols=2)
    cite(evidence, room)
    assert room.scanned == 1


def test_nothing_is_checked_without_a_commit(tmp_path: Path) -> None:
    make_repo(tmp_path / "r", {"a.py": "x = 1\n"})
    ws = open_workspace(tmp_path / "r")
    assert check(ws.repo, None, {("local", "k"): "a.py@abcdef1234567"}) == {}


def _history(path: Path, changes: int) -> tuple[str, str]:
    """A repository whose `a.py` holds its first blob, then changes `changes` times,
    one commit each; (that first blob, the last commit)."""
    repo = make_repo(path, {"a.py": "0\n"})
    first = str(repo.head.peel(pygit2.Commit).tree["a.py"].id)
    sig = pygit2.Signature(*IDENTITY)
    for n in range(1, changes + 1):
        index = pygit2.Index()
        index.add(pygit2.IndexEntry("a.py", repo.create_blob(f"{n}\n".encode()),
                                    pygit2.enums.FileMode.BLOB))
        repo.create_commit("HEAD", sig, sig, f"change {n}", index.write_tree(repo),
                           [repo.head.target])
    return first, str(repo.head.target)


def test_the_walk_counts_two_hundred_commits_back_and_no_further(tmp_path: Path) -> None:
    for changes, known in ((199, True), (200, False)):
        first, head = _history(tmp_path / f"r{changes}", changes)
        ws = open_workspace(tmp_path / f"r{changes}")
        [found] = check(ws.repo, head, {("local", "k"): f"a.py@{first}"})[("local", "k")]
        assert found.changed
        assert found.commits == (changes if known else None), changes
