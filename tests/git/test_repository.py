"""What callers of the git modules see, written for the mutants the mutation pass found
alive (mutation pass 4): which checkouts a clone has, the root commit,
reading trees and blobs (a partial or damaged clone refused by name), the write
obstacles in HEAD, the index and on disk, the commit writer and its undo.

In-process over their functions, against real repositories; the git CLI plays
the user. Fault points (OMH_FAULT, with OMH_FAULT_ERRNO to raise instead of dying)
reach the undo paths.

Found by mutation testing (docs/records/mutation-passes.md); was tests/test_mutants_git.py.
"""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pygit2
import pytest

from omh_git_memory.git import repository
from omh_git_memory.git.commit import Change, _Index, commit_change, identities, signed_off
from omh_git_memory.git.config import config_value
from omh_git_memory.git.filters import worktree_blob_id
from omh_git_memory.git.history import first_root, head_id, resolve_commit
from omh_git_memory.git.obstacles import write_obstacle
from omh_git_memory.git.recovery import check_out_paths
from omh_git_memory.git.repository import GitRepo, checkouts, open_repo
from omh_git_memory.git.staging import in_index, index_change, path_is_dirty
from omh_git_memory.git.trees import (
    TreeFile,
    blob_in_tree,
    blob_size,
    files_under,
    is_partial_clone,
    list_tree,
    path_in_tree,
    read_blob,
    require_blobs,
    tree_file,
)
from omh_git_memory.model import faults
from omh_git_memory.model.errors import GitFailure, NotARepository
from tests.helpers import IDENTITY, commit_files, git, make_repo

# --- which checkouts, which root --------------------------------------------------


def _committed(path: Path, files: dict[str, str]) -> tuple[GitRepo, pygit2.Commit]:
    """A repository at `path` whose one commit holds `files`, and that commit."""
    make_repo(path, files)
    repo = open_repo(path)
    head = resolve_commit(repo, "HEAD")
    assert head is not None
    return repo, head


def test_checkouts_of_a_clone_with_a_linked_worktree_from_either_side(tmp_path: Path) -> None:
    main = tmp_path / "main"
    make_repo(main)
    git(main, "worktree", "add", "-q", str(tmp_path / "linked"))
    linked = (tmp_path / "linked").resolve()
    assert open_repo(linked).main_checkout == main.resolve()
    assert open_repo(main).main_checkout == main.resolve()
    assert checkouts(open_repo(main)) == [main.resolve(), linked]
    assert checkouts(open_repo(linked)) == [main.resolve(), linked]


def test_a_bare_repository_has_no_checkout_of_its_own(tmp_path: Path) -> None:
    make_repo(tmp_path / "src")
    git(tmp_path, "clone", "-q", "--bare", str(tmp_path / "src"), "bare.git")
    bare = open_repo(tmp_path / "bare.git")
    assert bare.main_checkout == (tmp_path / "bare.git").resolve()
    assert checkouts(bare) == []
    with pytest.raises(NotARepository, match="is a bare repository; run omh inside a checkout"):
        bare.require_workdir()


def test_a_separate_git_dir_checkout_is_its_own_only_checkout(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "--separate-git-dir", str(tmp_path / "store.git"), "work")
    repo = open_repo(tmp_path / "work")
    assert checkouts(repo) == [(tmp_path / "work").resolve()]


def test_first_root_is_the_first_commit_and_none_before_any(tmp_path: Path) -> None:
    path = tmp_path / "repo"
    first = make_repo(path).head.target
    commit_files(path, {"b.md": "b\n"})
    assert first_root(open_repo(path)) == str(first)
    git(tmp_path, "init", "-q", "-b", "main", "empty")
    assert first_root(open_repo(tmp_path / "empty")) is None
    assert head_id(open_repo(tmp_path / "empty")) is None
    assert head_id(open_repo(path)) == git(path, "rev-parse", "HEAD").strip()


def test_first_root_of_an_unreadable_history_is_none(tmp_path: Path) -> None:
    path = tmp_path / "repo"
    make_repo(path)
    commit_files(path, {"b.md": "b\n"})
    _drop_object(path, git(path, "rev-parse", "HEAD").strip())
    assert first_root(open_repo(path)) is None


def test_resolve_commit_on_a_branch_with_no_commit(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "main", "empty")
    empty = open_repo(tmp_path / "empty")
    assert resolve_commit(empty, "HEAD") is None
    with pytest.raises(GitFailure, match=r"'main' names no commit"):
        resolve_commit(empty, "main")
    make_repo(tmp_path / "full")
    full = open_repo(tmp_path / "full")
    head = resolve_commit(full, "HEAD")
    assert head is not None and str(head.id) == git(tmp_path / "full", "rev-parse", "HEAD").strip()
    with pytest.raises(GitFailure, match=r"names no commit"):
        resolve_commit(full, "HEAD:README.md")  # a blob, not a commit


def test_commit_files_commits_the_named_files_and_refuses_a_missing_one(tmp_path: Path) -> None:
    path = tmp_path / "repo"
    make_repo(path)
    (path / "new.md").write_text("new\n", encoding="utf-8")
    repository.commit_files(path, ["new.md"], "add new", *IDENTITY)
    assert git(path, "show", "HEAD:new.md") == "new\n"
    assert git(path, "status", "--porcelain") == ""
    with pytest.raises(GitFailure, match=r"committing gone.md in"):
        repository.commit_files(path, ["gone.md"], "add gone", *IDENTITY)


def test_a_failed_index_open_prints_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                            ) -> None:
    bad = tmp_path / "index"
    bad.write_bytes(b"this is no index")
    seen: list[Any] = []
    monkeypatch.setattr(sys, "unraisablehook", seen.append)
    with pytest.raises(pygit2.GitError):
        _Index(str(bad))
    gc.collect()
    assert seen == []


# --- reading trees and blobs ---------------------------------------------------


def _tree_repo(tmp_path: Path) -> tuple[GitRepo, pygit2.Commit]:
    path = tmp_path / "repo"
    make_repo(path, {"team/a.md": "12345", "team/sub/b.md": "bb\n", "other.md": "o\n"})
    os.symlink("a.md", path / "team" / "link")
    git(path, "add", "-A")
    git(path, "commit", "-qm", "link")
    repo = open_repo(path)
    head = resolve_commit(repo, "HEAD")
    assert head is not None
    return repo, head


def test_files_under_reads_to_the_limit_and_lists_the_rest(tmp_path: Path) -> None:
    repo, head = _tree_repo(tmp_path)
    every = {f.path: f for f in files_under(repo, head, "team")}
    assert sorted(every) == ["team/a.md", "team/link", "team/sub/b.md"]
    assert every["team/a.md"].data == b"12345" and every["team/a.md"].size == 5
    assert every["team/link"].kind == "symlink" and every["team/link"].data is None
    assert every["team/link"].size == 0
    at_limit = {f.path: f for f in files_under(repo, head, "team", max_bytes=5)}
    assert at_limit["team/a.md"].data == b"12345"
    over = {f.path: f for f in files_under(repo, head, "team", max_bytes=4)}
    assert over["team/a.md"].data is None and over["team/a.md"].size == 5
    assert over["team/sub/b.md"].data == b"bb\n"
    assert files_under(repo, head, "nothing/here") == []
    assert files_under(repo, None, "team") == []


def test_files_under_a_prefix_that_is_a_symlink_lists_only_it(tmp_path: Path) -> None:
    repo, head = _tree_repo(tmp_path)
    assert files_under(repo, head, "team/link") == [
        TreeFile("team/link", str(head.tree["team/link"].id), None, "symlink")]
    [only] = files_under(repo, head, "team/link/deeper")
    assert only.path == "team/link" and only.kind == "symlink"


def _drop_object(repo_path: Path, oid: object) -> None:
    text = str(oid)
    (repo_path / ".git" / "objects" / text[:2] / text[2:]).unlink()


def test_every_missing_blob_is_named_at_once(tmp_path: Path) -> None:
    path = tmp_path / "repo"
    _, head = _committed(path, {"team/a.md": "a\n", "team/b.md": "b\n", "team/c.md": "c\n"})
    for name in ("team/b.md", "team/c.md"):
        _drop_object(path, head.tree[name].id)
    short = str(head.id)[:12]
    with pytest.raises(GitFailure) as caught:
        files_under(open_repo(path), head, "team")
    assert str(caught.value).startswith(f"2 files (team/b.md, …) at {short} is missing from ")
    assert "the repository is damaged" in str(caught.value)
    # a partial clone says how to fetch them
    git(path, "config", "remote.origin.promisor", "true")
    with pytest.raises(GitFailure) as caught:
        files_under(open_repo(path), head, "team")
    assert str(caught.value).startswith(f"2 files (team/b.md, …) at {short} is not in this clone")
    assert f"`git archive --format=tar {short} -- team >/dev/null`" in str(caught.value)


def test_a_missing_subtree_is_named(tmp_path: Path) -> None:
    path = tmp_path / "repo"
    _, head = _committed(path, {"team/sub/a.md": "a\n"})
    _drop_object(path, head.tree["team/sub"].id)
    short = str(head.id)[:12]
    with pytest.raises(GitFailure, match=rf"^team/sub at {short} is missing from "):
        files_under(open_repo(path), head, "team")
    with pytest.raises(GitFailure, match=rf"^team/sub at {short} is missing from "):
        files_under(open_repo(path), head, "team/sub")
    with pytest.raises(GitFailure, match=rf"^team/sub at {short} is missing from "):
        list_tree(open_repo(path), head)


def test_a_missing_root_tree_is_named(tmp_path: Path) -> None:
    path = tmp_path / "repo"
    _, head = _committed(path, {"team/a.md": "a\n"})
    _drop_object(path, head.tree.id)
    head = resolve_commit(open_repo(path), "HEAD")
    assert head is not None
    short = str(head.id)[:12]
    with pytest.raises(GitFailure, match=rf"^its tree at {short} is missing from "):
        files_under(open_repo(path), head, "team")
    with pytest.raises(GitFailure, match=rf"^its tree at {short} is missing from "):
        list_tree(open_repo(path), head)


def test_is_partial_clone_reads_the_promisor_settings(tmp_path: Path) -> None:
    path = tmp_path / "repo"
    make_repo(path)
    git(path, "config", "core.filemode", "true")
    git(path, "config", "foo.promisor", "true")  # not a remote's
    git(path, "config", "remote.origin.url", "file:///x.promisor")
    assert is_partial_clone(open_repo(path)) is False
    git(path, "config", "remote.origin.promisor", "false")
    assert is_partial_clone(open_repo(path)) is False
    git(path, "config", "remote.origin.promisor", "true")
    assert is_partial_clone(open_repo(path)) is True
    git(path, "config", "--unset", "remote.origin.promisor")
    git(path, "config", "extensions.partialClone", "origin")
    assert is_partial_clone(open_repo(path)) is True


def test_require_blobs_names_one_missing_blob(tmp_path: Path) -> None:
    path = tmp_path / "repo"
    repo, head = _committed(path, {"a.md": "a\n", "b.md": "b\n"})
    blobs = {name: str(head.tree[name].id) for name in ("a.md", "b.md")}
    require_blobs(repo, str(head.id), blobs, ".")
    _drop_object(path, blobs["b.md"])
    with pytest.raises(GitFailure, match=rf"^b.md at {str(head.id)[:12]} is missing from "):
        require_blobs(open_repo(path), str(head.id), blobs, ".")


def test_blob_readers_name_what_is_missing(tmp_path: Path) -> None:
    path = tmp_path / "repo"
    repo, head = _committed(path, {"a.md": "abc"})
    blob = str(head.tree["a.md"].id)
    assert blob_size(repo, blob) == 3 and read_blob(repo, blob) == b"abc"
    _drop_object(path, blob)
    repo = open_repo(path)
    with pytest.raises(GitFailure, match=rf"^a.md \(blob {blob[:12]}\) is missing from "):
        read_blob(repo, blob, "a.md")
    with pytest.raises(GitFailure, match=rf"^blob {blob} is missing from .*`git fsck`"):
        blob_size(repo, blob)
    with pytest.raises(GitFailure, match=r"^blob zz is missing"):
        read_blob(repo, "zz")
    git(path, "config", "extensions.partialClone", "origin")
    with pytest.raises(GitFailure, match=rf"`git cat-file -p {blob} >/dev/null`"):
        read_blob(open_repo(path), blob, "a.md")


def test_blob_in_tree_and_path_in_tree(tmp_path: Path) -> None:
    repo, head = _tree_repo(tmp_path)
    assert blob_in_tree(head, "team/a.md") == b"12345"
    assert blob_in_tree(head, "team/link") is None
    assert blob_in_tree(head, "team/sub") is None
    assert blob_in_tree(head, "team/none") is None
    assert blob_in_tree(None, "team/a.md") is None
    assert path_in_tree(head, "team/a.md") is True
    assert path_in_tree(head, "team/none") is False
    assert path_in_tree(None, "team/a.md") is False
    assert tree_file(head, "team/none") is None
    assert tree_file(head, "team/sub") is None
    assert tree_file(head, "team/a.md") == (str(head.tree["team/a.md"].id), 0o100644)
    path = repo.require_workdir()
    _drop_object(path, head.tree["team/a.md"].id)
    _drop_object(path, head.tree["team/sub"].id)
    short = str(head.id)[:12]
    with pytest.raises(GitFailure, match=rf"^cannot read team/a.md at {short}: it is not in"):
        blob_in_tree(head, "team/a.md")
    with pytest.raises(GitFailure, match=rf"^cannot read team/sub/b.md at {short}: part of"):
        path_in_tree(head, "team/sub/b.md")


def test_config_value(tmp_path: Path) -> None:
    path = tmp_path / "repo"
    make_repo(path)
    repo = open_repo(path)
    assert config_value(repo, "user.name") == IDENTITY[0]
    assert config_value(repo, "no.such") is None


# --- the index as the user left it ---------------------------------------------


def test_dirty_and_index_queries(tmp_path: Path) -> None:
    path = tmp_path / "repo"
    make_repo(path, {"a.md": "a\n"})
    (path / "untracked.md").write_text("u\n", encoding="utf-8")
    repo = open_repo(path)
    assert path_is_dirty(repo, "untracked.md") is True
    assert path_is_dirty(repo, "a.md") is True
    assert path_is_dirty(repo, "nothing.md") is False
    assert in_index(repo, "a.md") is True
    git(path, "rm", "-q", "--cached", "a.md")
    assert in_index(repo, "a.md") is False
    committed = (str(open_repo(path).repo.revparse_single("HEAD:a.md").id), 0o100644)
    assert index_change(repo, "a.md", committed) is None  # a removal staged
    git(path, "add", "a.md")
    assert index_change(repo, "a.md", committed) is None
    (path / "a.md").write_text("changed\n", encoding="utf-8")
    git(path, "add", "a.md")
    assert index_change(repo, "a.md", committed) == "has changes staged in the index"


def test_index_change_names_a_merge_conflict(tmp_path: Path) -> None:
    path = tmp_path / "repo"
    make_repo(path, {"a.md": "base\n", "b.md": "b\n"})
    base = (str(open_repo(path).repo.revparse_single("HEAD:b.md").id), 0o100644)
    git(path, "switch", "-q", "-c", "other")
    commit_files(path, {"a.md": "other\n"})
    git(path, "switch", "-q", "main")
    commit_files(path, {"a.md": "mine\n"})
    with pytest.raises(subprocess.CalledProcessError):
        git(path, "merge", "-q", "other")
    repo = open_repo(path)
    committed = (str(repo.repo.revparse_single("HEAD:a.md").id), 0o100644)
    assert index_change(repo, "a.md", committed) == "has a merge conflict in the index"
    assert index_change(repo, "b.md", base) is None


def test_worktree_blob_id_is_what_git_add_gives(tmp_path: Path) -> None:
    path = tmp_path / "repo"
    make_repo(path)
    (path / "x.md").write_text("x\n", encoding="utf-8")
    repo = open_repo(path)
    assert worktree_blob_id(repo, path / "x.md", "x.md") == git(
        path, "hash-object", "x.md").strip()
    with pytest.raises(GitFailure, match=r"^hashing x.md as git would"):
        worktree_blob_id(repo, path / "missing.md", "x.md")


def test_a_damaged_index_is_named(tmp_path: Path) -> None:
    path = tmp_path / "repo"
    make_repo(path)
    (path / ".git" / "index").write_bytes(b"DIRC garbage")
    repo = open_repo(path)
    with pytest.raises(GitFailure, match=rf"^reading the index {path.resolve() / '.git'}/index: "):
        write_obstacle(repo, "team/x.md")
    with pytest.raises(GitFailure, match=r"^reading the index"):
        check_out_paths(repo, {"team/x.md": b"x"})
    assert not (path / ".git" / "index.lock").exists()  # the lock is given back


# --- write obstacles -------------------------------------------------------------


def _obstacle_repo(tmp_path: Path) -> Path:
    """HEAD holds a symlink `team` and a file `plain`, and a directory `dir`."""
    path = tmp_path / "repo"
    make_repo(path, {"plain": "p\n", "dir/in.md": "i\n", "deep/er/x.md": "x\n"})
    os.symlink("dir", path / "team")
    os.symlink("x.md", path / "deep" / "er" / "ln")
    git(path, "add", "-A")
    git(path, "commit", "-qm", "obstacles")
    return path


def _head_only(path: Path, name: str) -> None:
    """`name` stays in HEAD, but not in the index nor on disk."""
    git(path, "rm", "-q", "--cached", name)
    os.unlink(path / name)


def test_obstacles_in_head(tmp_path: Path) -> None:
    path = _obstacle_repo(tmp_path)
    repo = open_repo(path)
    assert write_obstacle(repo, "dir/in.md") is None  # a regular file: replaceable
    assert write_obstacle(repo, "plain") is None
    assert write_obstacle(repo, "dir/new.md") is None
    _head_only(path, "team")
    _head_only(path, "deep/er/ln")
    git(path, "rm", "-q", "-r", "--cached", "dir")
    assert write_obstacle(repo, "team/x.md") == (
        "team is a symlink in HEAD; omh never writes through a symlink: replace it with a "
        "plain directory (git rm it and commit)")
    assert write_obstacle(repo, "deep/er/ln/y.md") == (
        "deep/er/ln is a symlink in HEAD; omh never writes through a symlink: replace it with "
        "a plain directory (git rm it and commit)")
    assert write_obstacle(repo, "deep/er/ln") == (
        "deep/er/ln is a symlink in HEAD; omh never writes through a symlink: remove it")
    assert write_obstacle(repo, "plain/x.md") == (
        "plain is a file in HEAD, so nothing can be written below it as plain/x.md: choose "
        "another key, or move it away")
    git(path, "rm", "-q", "--cached", "plain")
    os.unlink(path / "plain")
    __import__("shutil").rmtree(path / "dir")
    assert write_obstacle(repo, "dir") == (
        "dir is a directory in HEAD: choose another key, or move it away")


def test_obstacles_in_the_index(tmp_path: Path) -> None:
    path = tmp_path / "repo"
    make_repo(path)
    os.symlink("elsewhere", path / "team")
    (path / "note.md").write_text("n\n", encoding="utf-8")
    os.symlink("elsewhere", path / "ln.md")
    (path / "d").mkdir()
    (path / "d" / "f.md").write_text("f\n", encoding="utf-8")
    git(path, "add", "team", "note.md", "ln.md", "d")
    repo = open_repo(path)
    assert write_obstacle(repo, "team/x.md") == (
        "team is a symlink staged in the index; omh never writes through a symlink: replace "
        "it with a plain directory; unstage it first (git rm --cached team)")
    assert write_obstacle(repo, "ln.md") == (
        "ln.md is a symlink staged in the index; omh never writes through a symlink: remove "
        "it; unstage it first (git rm --cached ln.md)")
    assert write_obstacle(repo, "note.md") is None  # a staged regular file
    assert write_obstacle(repo, "d") == (
        "d is a directory staged in the index: choose another key, or move it away")


def test_obstacles_on_disk_only(tmp_path: Path) -> None:
    path = tmp_path / "repo"
    make_repo(path)
    os.symlink("elsewhere", path / "team")
    repo = open_repo(path)
    assert write_obstacle(repo, "team/x.md") == (
        "team is a symlink on disk; omh never writes through a symlink: replace it with a "
        "plain directory")


# --- the commit writer -----------------------------------------------------------


def _log(path: Path) -> list[str]:
    return git(path, "log", "--format=%H", "main").split()


def test_commit_change_adds_changes_and_deletes(tmp_path: Path) -> None:
    path = tmp_path / "repo"
    make_repo(path, {"README.md": "r\n", "team/old.md": "old\n", "team/gone.md": "gone\n"})
    before = _log(path)
    repo = open_repo(path)
    new = commit_change(repo, Change(
        {"team/old.md": b"changed\n", "team/new.md": b"new\n"}, ("team/gone.md",), "subject"))
    assert _log(path) == [new, *before]
    assert git(path, "log", "-1", "--format=%B").strip() == "subject"  # no sign-off unasked
    assert git(path, "log", "-1", "--format=%P").strip() == before[0]
    assert git(path, "ls-tree", "-r", "--name-only", "HEAD").split() == [
        "README.md", "team/new.md", "team/old.md"]
    assert (path / "team" / "old.md").read_text() == "changed\n"
    assert (path / "team" / "new.md").read_text() == "new\n"
    assert not (path / "team" / "gone.md").exists()
    assert git(path, "status", "--porcelain") == ""  # index and working tree in line
    assert git(path, "reflog", "-1", "--format=%gs", "main") == "omh: subject\n"


def test_commit_change_on_a_branch_with_no_commit(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "main", "empty")
    path = tmp_path / "empty"
    git(path, "config", "user.name", IDENTITY[0])
    git(path, "config", "user.email", IDENTITY[1])
    assert not (path / ".git" / "index").exists()
    new = commit_change(open_repo(path), Change({"team/a.md": b"a\n"}, (), "first"))
    assert _log(path) == [new]
    assert git(path, "log", "-1", "--format=%P").strip() == ""
    assert git(path, "status", "--porcelain") == ""


def test_commit_change_of_a_file_staged_new_with_those_bytes(tmp_path: Path) -> None:
    path = tmp_path / "repo"
    make_repo(path)
    (path / "team").mkdir()
    (path / "team" / "a.md").write_bytes(b"a\n")
    git(path, "add", "team/a.md")
    commit_change(open_repo(path), Change({"team/a.md": b"a\n"}, (), "add a"))
    assert git(path, "show", "HEAD:team/a.md") == "a\n"
    assert git(path, "status", "--porcelain") == ""


def test_commit_change_of_paths_whose_removal_is_staged(tmp_path: Path) -> None:
    path = tmp_path / "repo"
    make_repo(path, {"team/a.md": "a\n", "team/b.md": "b\n"})
    git(path, "rm", "-q", "--cached", "team/a.md", "team/b.md")
    commit_change(open_repo(path), Change({"team/a.md": b"new\n"}, ("team/b.md",), "m"))
    assert git(path, "ls-tree", "-r", "--name-only", "HEAD").split() == ["team/a.md"]
    assert git(path, "show", "HEAD:team/a.md") == "new\n"


def test_commit_change_of_a_file_staged_before_the_first_commit(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "main", "empty")
    path = tmp_path / "empty"
    git(path, "config", "user.name", IDENTITY[0])
    git(path, "config", "user.email", IDENTITY[1])
    (path / "a.md").write_bytes(b"a\n")
    git(path, "add", "a.md")
    commit_change(open_repo(path), Change({"a.md": b"a\n"}, (), "first"))
    assert git(path, "show", "HEAD:a.md") == "a\n"
    assert git(path, "status", "--porcelain") == ""


def test_commit_change_without_an_identity(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "main", "anon")
    # libgit2 fixed its global and XDG search paths when pygit2 was imported, from the
    # real HOME: point them at an empty folder for this test
    paths = pygit2.settings.search_path
    levels = (pygit2.enums.ConfigLevel.GLOBAL, pygit2.enums.ConfigLevel.XDG,
              pygit2.enums.ConfigLevel.SYSTEM)
    saved = [paths[level] for level in levels]
    (tmp_path / "nobody").mkdir()
    try:
        for level in levels:
            paths[level] = str(tmp_path / "nobody")
        with pytest.raises(GitFailure, match=r"^git does not know who you are"):
            commit_change(open_repo(tmp_path / "anon"), Change({"a.md": b"a"}, (), "m"))
    finally:
        for level, value in zip(levels, saved, strict=True):
            paths[level] = value


@pytest.mark.parametrize(("name", "email"), [("a\udcff", "a@x"), ("a", "\udcffa@x")],
                         ids=["name", "email"])
def test_an_identity_of_bytes_that_are_no_text_is_refused_in_one_line(
        tmp_path: Path, name: str, email: str) -> None:
    # a variable holding bytes that are not UTF-8 reaches Python as a lone surrogate
    make_repo(tmp_path / "r")
    env = {"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email,
           "GIT_COMMITTER_NAME": "c", "GIT_COMMITTER_EMAIL": "c@x"}
    with pytest.raises(GitFailure, match=r"^git's identity cannot be used \("):
        identities(open_repo(tmp_path / "r"), env)

def test_commit_change_refuses_a_staged_edit_of_a_path_it_changes_or_deletes(
        tmp_path: Path) -> None:
    path = tmp_path / "repo"
    make_repo(path, {"team/a.md": "a\n", "team/b.md": "b\n"})
    before = _log(path)
    for name in ("team/a.md", "team/b.md"):
        (path / name).write_text("staged\n", encoding="utf-8")
    git(path, "add", "-A")
    repo = open_repo(path)
    with pytest.raises(GitFailure, match=(
            r"^team/a.md has changes staged in the index; commit them .*; nothing was changed")):
        commit_change(repo, Change({"team/a.md": b"staged\n"}, (), "m"))
    with pytest.raises(GitFailure, match=r"^team/b.md has changes staged in the index"):
        commit_change(repo, Change({}, ("team/b.md",), "m"))
    git(path, "reset", "-q")
    os.chmod(path / "team" / "a.md", 0o755)
    (path / "team" / "a.md").write_text("a\n", encoding="utf-8")
    git(path, "add", "team/a.md")  # the mode alone is staged
    with pytest.raises(GitFailure, match=r"^team/a.md has changes staged in the index"):
        commit_change(repo, Change({"team/a.md": b"new\n"}, (), "m"))
    assert _log(path) == before


def test_commit_change_refuses_each_kind_of_obstacle(tmp_path: Path) -> None:
    path = _obstacle_repo(tmp_path)
    before = _log(path)
    (path / "untracked.md").write_text("mine\n", encoding="utf-8")
    repo = open_repo(path)
    with pytest.raises(GitFailure, match=r"^untracked.md exists on disk with other content"):
        commit_change(repo, Change({"untracked.md": b"omh\n"}, (), "m"))
    os.symlink("dir", path / "staged")
    git(path, "add", "staged")
    with pytest.raises(GitFailure, match=r"^staged is a symlink staged in the index"):
        commit_change(repo, Change({"staged/x.md": b"x"}, (), "m"))
    _head_only(path, "team")
    with pytest.raises(GitFailure, match=r"^team is a symlink in HEAD.*; nothing was changed$"):
        commit_change(repo, Change({"team/x.md": b"x"}, (), "m"))
    assert _log(path) == before
    assert not (path / "team").exists()


def test_commit_change_signs_off_when_asked(tmp_path: Path) -> None:
    path = tmp_path / "repo"
    make_repo(path)
    commit_change(open_repo(path), Change({"a.md": b"a"}, (), "subject", signoff=True))
    assert git(path, "log", "-1", "--format=%B").strip() == (
        f"subject\n\nSigned-off-by: {IDENTITY[0]} <{IDENTITY[1]}>")


def test_signed_off_trailers_and_subjects() -> None:
    trailer = "Signed-off-by: A <a@x>"
    assert signed_off(f"subject\n\n{trailer}\n", "A", "a@x") == f"subject\n\n{trailer}\n"
    assert signed_off("fix: a crash", "A", "a@x") == f"fix: a crash\n\n{trailer}\n"
    assert signed_off("subject\n\nCo-authored-by: B <b@x>", "A", "a@x") == (
        f"subject\n\nCo-authored-by: B <b@x>\n{trailer}\n")


def _state(path: Path) -> tuple[list[str], str, list[str]]:
    return _log(path), git(path, "status", "--porcelain"), sorted(os.listdir(path))


@pytest.mark.parametrize("point", faults.TRANSACTION)
def test_a_failure_inside_the_commit_is_undone(point: str, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "repo"
    make_repo(path, {"README.md": "r\n", "gone.md": "g\n"})
    before = _state(path)
    monkeypatch.setenv("OMH_FAULT", point)
    monkeypatch.setenv("OMH_FAULT_ERRNO", "EIO")
    with pytest.raises(GitFailure) as caught:
        commit_change(open_repo(path), Change({"new.md": b"n"}, ("gone.md",), "m"))
    if point in ("commit:ref", "commit:workdir"):
        assert str(caught.value) == (
            "committing failed (Input/output error); the commit was undone and nothing else "
            "changed")
    else:
        assert str(caught.value) == (
            "committing failed (Input/output error); nothing was committed or changed")
    assert _state(path) == before
    assert not (path / ".git" / "index.lock").exists()


def test_a_failure_after_somebody_moved_the_branch_keeps_their_commit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "repo"
    make_repo(path)
    parent = _log(path)[0]
    theirs: list[str] = []

    def meanwhile(name: str) -> None:
        if name == "commit:workdir":
            repo = pygit2.Repository(str(path))
            sig = pygit2.Signature(*IDENTITY)
            head = repo.head.peel(pygit2.Commit)
            theirs.append(str(repo.create_commit(
                "refs/heads/main", sig, sig, "theirs", head.tree.id, [head.id])))
            raise OSError(5, "Input/output error")

    monkeypatch.setattr(faults, "point", meanwhile)
    with pytest.raises(GitFailure) as caught:
        commit_change(open_repo(path), Change({"new.md": b"n"}, (), "m"))
    ours = git(path, "rev-parse", f"{theirs[0]}^").strip()
    assert str(caught.value) == (
        f"committing failed (Input/output error), and the commit {ours[:12]} could not be "
        "undone (somebody moved the branch on since): it stays on refs/heads/main, but the "
        "index and working tree lack it; run the same omh command again to finish it, or "
        f"drop it with `git reset --soft {parent}`")
    assert _log(path)[0] == theirs[0]
    assert not (path / "new.md").exists()


class _Ref:
    """A branch whose update reports `failure` (after really moving when `moves`)."""

    def __init__(self, ref: pygit2.Reference, failure: OSError, moves: bool) -> None:
        self._ref, self._failure, self._moves = ref, failure, moves

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ref, name)

    def set_target(self, target: pygit2.Oid, message: str) -> None:
        if self._moves:
            self._ref.set_target(target, message)
        raise self._failure


class _Refs:
    def __init__(self, refs: Any, failure: OSError, moves: bool) -> None:
        self._refs, self._failure, self._moves = refs, failure, moves

    def __getattr__(self, name: str) -> Any:
        return getattr(self._refs, name)

    def __getitem__(self, name: str) -> Any:
        return self._refs[name]

    def get(self, name: str) -> Any:
        ref = self._refs.get(name)
        return None if ref is None else _Ref(ref, self._failure, self._moves)


def test_a_full_disk_when_moving_the_branch(tmp_path: Path) -> None:
    path = tmp_path / "repo"
    make_repo(path)
    before = _state(path)
    repo = open_repo(path)
    repo.repo.references = _Refs(  # type: ignore[assignment]
        repo.repo.references, OSError(28, "No space left on device"), moves=False)
    with pytest.raises(GitFailure) as caught:
        commit_change(repo, Change({"new.md": b"n"}, (), "m"))
    assert str(caught.value) == (
        "could not move refs/heads/main, nothing was changed: the disk is full; free some "
        "space and run the command again")
    assert _state(path) == before


def test_a_branch_that_moved_though_its_log_failed_is_committed(tmp_path: Path) -> None:
    path = tmp_path / "repo"
    make_repo(path)
    repo = open_repo(path)
    repo.repo.references = _Refs(  # type: ignore[assignment]
        repo.repo.references, OSError(5, "Input/output error"), moves=True)
    new = commit_change(repo, Change({"new.md": b"n"}, (), "m"))
    assert _log(path)[0] == new
    assert (path / "new.md").read_bytes() == b"n"
    assert git(path, "status", "--porcelain") == ""


def test_a_branch_git_holds_locked_is_refused(tmp_path: Path) -> None:
    # libgit2 says "failed to lock file '…' for writing: " with nothing after the
    # colon; the refusal reads without the dangling colon
    path = tmp_path / "repo"
    make_repo(path)
    before = _log(path)
    (path / ".git" / "refs" / "heads" / "main.lock").write_text("", encoding="utf-8")
    with pytest.raises(GitFailure, match=(
            r"^could not move refs/heads/main: failed to lock file '.*/main.lock' for writing "
            r"\(another process "
            r"committed meanwhile\?\); nothing was changed, run the command again$")):
        commit_change(open_repo(path), Change({"new.md": b"n"}, (), "m"))
    assert _log(path) == before
    assert not (path / "new.md").exists()


# --- bringing paths in line after a crash ----------------------------------------


def test_check_out_paths_writes_what_is_missing_and_keeps_the_users(tmp_path: Path) -> None:
    path = tmp_path / "repo"
    make_repo(path, {"team/a.md": "a\n", "team/b.md": "b\n"})
    git(path, "rm", "-q", "--cached", "team/a.md")
    os.unlink(path / "team" / "a.md")
    (path / "team" / "b.md").write_text("mine\n", encoding="utf-8")
    check_out_paths(open_repo(path), {"team/a.md": b"a\n", "team/b.md": b"b\n"})
    assert (path / "team" / "a.md").read_text() == "a\n"
    assert (path / "team" / "b.md").read_text() == "mine\n"
    assert git(path, "status", "--porcelain") == " M team/b.md\n"


def test_check_out_paths_refuses_each_kind_of_obstacle(tmp_path: Path) -> None:
    path = _obstacle_repo(tmp_path)
    repo = open_repo(path)
    os.symlink("dir", path / "ondisk")
    with pytest.raises(GitFailure, match=r"^ondisk is a symlink on disk.*; nothing was changed$"):
        check_out_paths(repo, {"ondisk/x.md": b"x"})
    os.symlink("dir", path / "staged")
    git(path, "add", "staged")
    with pytest.raises(GitFailure, match=r"^staged is a symlink staged in the index"):
        check_out_paths(repo, {"staged/x.md": b"x"})
    _head_only(path, "team")
    with pytest.raises(GitFailure, match=r"^team is a symlink in HEAD"):
        check_out_paths(repo, {"team/x.md": b"x"})
    assert not (path / "team").exists()
    assert not (path / ".git" / "index.lock").exists()
