"""When a path last changed (git/last_changed.py): the newest commit on the
first-parent line whose blob for the path differs from its first parent's.

Real repositories made with pygit2 in tmp_path, each commit at a day of its own
(noon UTC unless a test says otherwise), so a date names the commit it came from.
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pygit2
import pytest

from omh_git_memory.git.history import commit_date
from omh_git_memory.git.last_changed import MAX_COMMITS, last_changed
from omh_git_memory.git.repository import GitRepo, open_repo
from tests.helpers import IDENTITY, ROOT, git

Files = dict[str, bytes | None]  # path -> content (None: remove it)


class History:
    """A repository whose commits are made one by one, each dated `day`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.repo = pygit2.init_repository(str(path), initial_head="main")

    def commit(self, day: str, files: Files, parents: list[str] | None = None,
               ref: str | None = "refs/heads/main", offset: int = 0,
               mode: int = pygit2.enums.FileMode.BLOB) -> str:
        """A commit on `ref` changing `files` from its first parent's tree (the
        branch's tip unless `parents` are given), made at noon of `day` in UTC (or
        at `day` when it holds a time) seen from `offset` minutes east."""
        if parents is None:
            parents = [] if self.repo.head_is_unborn or ref is None else \
                [str(self.repo.references[ref].target)] if ref in self.repo.references else []
        index = pygit2.Index()
        if parents:
            index.read_tree(self.repo[parents[0]].peel(pygit2.Commit).tree)
        for path, data in files.items():
            if data is None:
                index.remove(path)
            else:
                index.add(pygit2.IndexEntry(path, self.repo.create_blob(data), mode))
        tree = index.write_tree(self.repo)
        when = dt.datetime.fromisoformat(day if "T" in day else f"{day}T12:00:00+00:00")
        sig = pygit2.Signature(*IDENTITY, int(when.timestamp()), offset)
        oid = self.repo.create_commit(ref, sig, sig, f"commit of {day}", tree,
                                      [pygit2.Oid(hex=p) for p in parents])
        return str(oid)

    def git(self) -> GitRepo:
        return open_repo(self.path)

    def dates(self, start: str, paths: list[str], **kwargs: object) -> dict[str, str]:
        found = last_changed(self.git(), start, paths, **kwargs)  # type: ignore[arg-type]
        return {path: day.isoformat() for path, day in found.items()}


@pytest.fixture
def history(tmp_path: Path) -> History:
    return History(tmp_path / "repo")


def test_a_path_is_dated_by_the_newest_commit_that_changed_it(history: History) -> None:
    history.commit("2026-01-01", {"a.md": b"a\n", "b.md": b"b\n", "x.txt": b"x\n"})
    history.commit("2026-02-01", {"a.md": b"a, again\n"})
    head = history.commit("2026-03-01", {"x.txt": b"x, again\n"})
    assert history.dates(head, ["a.md", "b.md", "x.txt"]) == {
        "a.md": "2026-02-01", "b.md": "2026-01-01", "x.txt": "2026-03-01"}


def test_only_the_paths_asked_are_dated(history: History) -> None:
    history.commit("2026-01-01", {"a.md": b"a\n", "b.md": b"b\n"})
    head = history.commit("2026-02-01", {"b.md": b"b, again\n"})
    assert history.dates(head, ["a.md"]) == {"a.md": "2026-01-01"}
    assert history.dates(head, []) == {}


def test_a_path_in_a_folder_is_dated_by_its_own_change_not_its_siblings(
    history: History,
) -> None:
    history.commit("2026-01-01", {"docs/deep/a.md": b"a\n", "docs/deep/b.md": b"b\n",
                                  "docs/c.md": b"c\n", "src/x.py": b"x\n"})
    history.commit("2026-02-01", {"docs/deep/b.md": b"b, again\n"})
    history.commit("2026-03-01", {"docs/c.md": b"c, again\n", "src/x.py": b"y\n"})
    head = history.commit("2026-04-01", {"src/x.py": b"z\n"})
    assert history.dates(head, ["docs/deep/a.md", "docs/deep/b.md", "docs/c.md"]) == {
        "docs/deep/a.md": "2026-01-01", "docs/deep/b.md": "2026-02-01",
        "docs/c.md": "2026-03-01"}


def test_a_mode_change_alone_changes_no_blob(history: History) -> None:
    history.commit("2026-01-01", {"run.md": b"run\n"})
    head = history.commit("2026-02-01", {"run.md": b"run\n"},
                          mode=pygit2.enums.FileMode.BLOB_EXECUTABLE)
    assert history.dates(head, ["run.md"]) == {"run.md": "2026-01-01"}


def test_a_renamed_document_is_a_new_path_dated_by_the_rename(history: History) -> None:
    history.commit("2026-01-01", {"old.md": b"same words\n"})
    head = history.commit("2026-05-01", {"old.md": None, "docs/new.md": b"same words\n"})
    assert history.dates(head, ["docs/new.md"]) == {"docs/new.md": "2026-05-01"}


def test_a_path_removed_and_added_back_is_dated_by_its_return(history: History) -> None:
    history.commit("2026-01-01", {"a.md": b"a\n", "keep.txt": b"k\n"})
    history.commit("2026-02-01", {"a.md": None})
    head = history.commit("2026-03-01", {"a.md": b"a\n"})
    assert history.dates(head, ["a.md"]) == {"a.md": "2026-03-01"}


def test_a_file_where_a_folder_was_and_a_folder_where_a_file_was(history: History) -> None:
    history.commit("2026-01-01", {"docs": b"a file\n", "notes/a.md": b"a\n", "k": b"k\n"})
    history.commit("2026-02-01", {"docs": None, "docs/a.md": b"a\n"})
    history.commit("2026-03-01", {"notes/a.md": None, "notes": b"now a file\n"})
    head = history.commit("2026-04-01", {"k": b"k, again\n"})
    assert history.dates(head, ["docs/a.md", "notes"]) == {
        "docs/a.md": "2026-02-01", "notes": "2026-03-01"}


def test_a_merge_follows_its_first_parent(history: History) -> None:
    root = history.commit("2026-01-01", {"a.md": b"a\n", "b.md": b"b\n", "c.md": b"c\n"})
    # the side branch changes a.md and b.md; main changes c.md
    side = history.commit("2026-02-01", {"a.md": b"a on the side\n", "b.md": b"b, side\n"},
                          parents=[root], ref="refs/heads/side")
    main = history.commit("2026-03-01", {"c.md": b"c on main\n"})
    # the merge takes the side's a.md and keeps main's b.md (a resolved conflict)
    merge = history.commit("2026-04-01", {"a.md": b"a on the side\n"}, parents=[main, side])
    assert history.dates(merge, ["a.md", "b.md", "c.md"]) == {
        "a.md": "2026-04-01",  # new to the first-parent line with the merge
        "b.md": "2026-01-01",  # the side's change never reached main
        "c.md": "2026-03-01"}


def test_the_walk_takes_the_first_parent_not_the_second(history: History) -> None:
    root = history.commit("2026-01-01", {"a.md": b"a\n", "k": b"k\n"})
    history.commit("2026-02-01", {"a.md": b"a, then\n"})
    main = history.commit("2026-03-01", {"a.md": b"a\n"})  # back as in the root
    # the second parent has a.md as the root had it, its own commits otherwise
    side = history.commit("2026-02-15", {"k": b"k, side\n"}, parents=[root],
                          ref="refs/heads/side")
    merge = history.commit("2026-04-01", {"k": b"k, side\n"}, parents=[main, side])
    assert history.dates(merge, ["a.md"]) == {"a.md": "2026-03-01"}


def test_the_date_is_the_committers_day_in_the_committers_time_zone(
    history: History,
) -> None:
    # 23:30 UTC on 1 January is 2 January in Auckland (UTC+13 in summer)
    history.commit("2025-12-01", {"a.md": b"a\n"})
    head = history.commit("2026-01-01T23:30:00+00:00", {"a.md": b"a, again\n"},
                          offset=13 * 60)
    commit = history.repo[head].peel(pygit2.Commit)
    assert commit_date(commit) == dt.date(2026, 1, 2)
    assert history.dates(head, ["a.md"]) == {"a.md": "2026-01-02"}


def test_the_walk_is_bounded_and_what_is_left_gets_the_oldest_day_walked(
    history: History,
) -> None:
    history.commit("2026-01-01", {"a.md": b"a\n", "b.md": b"b\n"})
    history.commit("2026-02-01", {"b.md": b"b2\n"})
    history.commit("2026-03-01", {"b.md": b"b3\n"})
    head = history.commit("2026-04-01", {"b.md": b"b4\n"})
    assert history.dates(head, ["a.md"], limit=2) == {"a.md": "2026-03-01"}
    assert history.dates(head, ["a.md"], limit=1) == {"a.md": "2026-04-01"}
    assert history.dates(head, ["a.md"], limit=3) == {"a.md": "2026-02-01"}
    assert history.dates(head, ["a.md"], limit=4) == {"a.md": "2026-01-01"}
    # a path dated within the bound keeps its own day
    assert history.dates(head, ["a.md", "b.md"], limit=2) == {
        "a.md": "2026-03-01", "b.md": "2026-04-01"}


def test_the_default_bound_is_the_one_the_docs_give(history: History) -> None:
    recall = (ROOT / "docs" / "recall.md").read_text(encoding="utf-8")
    assert f"at most {MAX_COMMITS:,} commits (`MAX_COMMITS`)" in recall
    history.commit("2026-01-01", {"a.md": b"a\n"})
    head = history.commit("2026-02-01", {"k": b"k\n"})
    assert history.dates(head, ["a.md"]) == {"a.md": "2026-01-01"}  # well within it


def test_a_folder_that_changed_does_not_hide_its_siblings_changes(history: History) -> None:
    # a/ holds a path still to date and changed in the same commit as b.md
    history.commit("2026-01-01", {"a/x.md": b"x\n", "a/y.md": b"y\n", "b.md": b"b\n"})
    history.commit("2026-02-01", {"a/y.md": b"y2\n", "b.md": b"b2\n"})
    head = history.commit("2026-03-01", {"k": b"k\n"})
    assert history.dates(head, ["a/x.md", "b.md"]) == {"a/x.md": "2026-01-01",
                                                       "b.md": "2026-02-01"}


def test_a_folder_whose_paths_are_all_dated_does_not_hide_its_siblings(
    history: History,
) -> None:
    history.commit("2026-01-01", {"a/x.md": b"x\n", "b.md": b"b\n", "k": b"k\n"})
    history.commit("2026-02-01", {"b.md": b"b2\n", "k": b"k2\n"})
    history.commit("2026-03-01", {"a/x.md": b"x3\n", "k": b"k3\n"})
    head = history.commit("2026-04-01", {"k": b"k4\n"})
    # a/ is done after 2026-03-01; the walk goes on past it for b.md
    assert history.dates(head, ["a/x.md", "b.md"]) == {"a/x.md": "2026-03-01",
                                                       "b.md": "2026-02-01"}


def test_paths_known_at_a_base_are_dated_only_when_they_changed_since(
    history: History,
) -> None:
    history.commit("2026-01-01", {"a.md": b"a\n", "b.md": b"b\n", "c.md": b"c\n"})
    base = history.commit("2026-02-01", {"k": b"k\n"})
    history.commit("2026-03-01", {"b.md": b"b, changed\n"})
    history.commit("2026-04-01", {"c.md": b"c, changed\n"})
    head = history.commit("2026-05-01", {"c.md": b"c\n"})  # changed back as it was at base
    assert history.dates(head, [], base=base, base_paths={"a.md", "b.md", "c.md"}) == {
        "b.md": "2026-03-01", "c.md": "2026-05-01"}  # a.md: as at the base
    # a path to date fully walks on past the base
    assert history.dates(head, ["a.md"], base=base, base_paths={"b.md"}) == {
        "a.md": "2026-01-01", "b.md": "2026-03-01"}
    # the base is the start: nothing known changed
    assert history.dates(base, [], base=base, base_paths={"a.md"}) == {}


def test_a_base_off_the_first_parent_line_dates_its_paths_like_the_rest(
    history: History,
) -> None:
    root = history.commit("2026-01-01", {"a.md": b"a\n", "k": b"k\n"})
    other = history.commit("2026-02-01", {"k": b"k, other\n"}, parents=[root],
                           ref="refs/heads/other")
    head = history.commit("2026-03-01", {"k": b"k, main\n"})
    assert history.dates(head, [], base=other, base_paths={"a.md"}) == {"a.md": "2026-01-01"}


def _shallow(history: History, boundary: str) -> None:
    (history.path / ".git" / "shallow").write_text(boundary + "\n")


def test_a_shallow_boundary_ends_the_walk_with_its_own_day(history: History) -> None:
    history.commit("2026-01-01", {"a.md": b"a\n", "b.md": b"b\n"})
    boundary = history.commit("2026-02-01", {"b.md": b"b2\n"})
    head = history.commit("2026-03-01", {"b.md": b"b3\n"})
    _shallow(history, boundary)
    assert history.dates(head, ["a.md", "b.md"]) == {"a.md": "2026-02-01", "b.md": "2026-03-01"}


def test_a_real_shallow_clone_dates_what_it_holds(history: History, tmp_path: Path) -> None:
    history.commit("2026-01-01", {"a.md": b"a\n", "b.md": b"b\n"})
    history.commit("2026-02-01", {"b.md": b"b2\n"})
    history.commit("2026-03-01", {"b.md": b"b3\n"})
    git(tmp_path, "clone", "-q", "--depth", "2", f"file://{history.path}", "shallow")
    clone = open_repo(tmp_path / "shallow")
    head = str(clone.repo.head.target)
    found = last_changed(clone, head, ["a.md", "b.md"])
    assert {p: d.isoformat() for p, d in found.items()} == {
        "a.md": "2026-02-01", "b.md": "2026-03-01"}


def _loose(history: History, oid: str) -> Path:
    return history.path / ".git" / "objects" / oid[:2] / oid[2:]


def test_a_parent_this_clone_lacks_ends_the_walk(history: History) -> None:
    history.commit("2026-01-01", {"a.md": b"a\n", "b.md": b"b\n"})
    lost = history.commit("2026-02-01", {"b.md": b"b2\n"})
    head = history.commit("2026-03-01", {"b.md": b"b3\n"})
    _loose(history, lost).unlink()
    assert history.dates(head, ["a.md", "b.md"]) == {"a.md": "2026-03-01", "b.md": "2026-03-01"}


def test_a_tree_this_clone_lacks_ends_the_walk(history: History) -> None:
    history.commit("2026-01-01", {"docs/a.md": b"a\n", "b.md": b"b\n", "c.md": b"c\n"})
    lost = history.commit("2026-02-01", {"docs/a.md": b"a2\n", "b.md": b"b2\n"})
    history.commit("2026-03-01", {"docs/a.md": b"a3\n", "b.md": b"b3\n"})
    head = history.commit("2026-04-01", {"k": b"k\n"})
    # the root tree of 2026-02-01 stays; its docs/ folder is gone (a partial clone)
    folder = history.repo[lost].peel(pygit2.Commit).tree["docs"].id
    _loose(history, str(folder)).unlink()
    every = ["docs/a.md", "b.md", "c.md"]
    ended = {"docs/a.md": "2026-03-01", "b.md": "2026-03-01", "c.md": "2026-03-01"}
    assert history.dates(head, every) == ended  # c.md: the oldest commit walked
    root_tree = history.repo[lost].peel(pygit2.Commit).tree.id
    _loose(history, str(root_tree)).unlink()  # and now its whole tree
    assert history.dates(head, every) == ended


def test_a_treeless_clone_dates_without_failing(history: History, tmp_path: Path) -> None:
    history.commit("2026-01-01", {"docs/a.md": b"a\n", "b.md": b"b\n"})
    history.commit("2026-02-01", {"b.md": b"b2\n"})
    history.commit("2026-03-01", {"docs/a.md": b"a3\n"})
    history.repo.config["uploadpack.allowFilter"] = "true"
    git(tmp_path, "clone", "-q", "--filter=tree:0", f"file://{history.path}", "part")
    clone = open_repo(tmp_path / "part")
    found = last_changed(clone, str(clone.repo.head.target), ["docs/a.md", "b.md"])
    assert found["docs/a.md"] == dt.date(2026, 3, 1)
    # the clone holds no tree of an older commit: the walk ends at its start
    assert found["b.md"] == dt.date(2026, 3, 1)


def test_a_path_nested_deeper_than_pythons_stack_is_dated(history: History) -> None:
    deep = "/".join(["d"] * 1500) + "/a.md"
    history.commit("2026-01-01", {deep: b"a\n", "k": b"k\n"})
    history.commit("2026-02-01", {deep: b"a2\n"})
    head = history.commit("2026-03-01", {"k": b"k2\n"})
    assert history.dates(head, [deep]) == {deep: "2026-02-01"}


def test_an_unborn_start_dates_nothing(tmp_path: Path) -> None:
    repo = pygit2.init_repository(str(tmp_path / "empty"), initial_head="main")
    assert last_changed(open_repo(Path(repo.workdir)), "HEAD", ["a.md"]) == {}


def test_the_walk_reads_no_blob(history: History) -> None:
    """A blobless clone lacks old blobs: the walk compares ids, never contents."""
    history.commit("2026-01-01", {"a.md": b"a\n", "b.md": b"b\n"})
    history.commit("2026-02-01", {"b.md": b"b2\n"})
    head = history.commit("2026-03-01", {"b.md": b"b3\n"})
    for root, _dirs, names in os.walk(history.path / ".git" / "objects"):
        for name in names:
            oid = Path(root).name + name
            if len(oid) == 40 and history.repo[oid].type == pygit2.enums.ObjectType.BLOB:
                (Path(root) / name).unlink()
    assert history.dates(head, ["a.md", "b.md"]) == {"a.md": "2026-01-01", "b.md": "2026-03-01"}
