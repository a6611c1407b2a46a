"""adopt.py's guards, called directly on stores made by hand: whose store may be
opened (`check_owner`), what `omh adopt` refuses (another repository's store, a
shallow clone's guess, a store inside or around the clone's own, a file or a link
where a store or a note's folder goes, a conflict) with nothing moved, and that a
copy which fails or meets a change halfway loses no note. test_adopt.py holds the
same refusals through the command line."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from omh_git_memory.git import nofollow
from omh_git_memory.git.history import first_root
from omh_git_memory.git.repository import GitRepo, open_repo
from omh_git_memory.model.errors import ForeignStore, StoreError
from omh_git_memory.stores import adopt as adopting
from omh_git_memory.stores.adopt import adopt, check_owner, take_over
from omh_git_memory.stores.journal import LOCK_NAME
from omh_git_memory.stores.location import local_store_root, store_id
from omh_git_memory.stores.record import MARKER, StoreRecord, clone_id, read_record, write_record
from omh_git_memory.stores.store import CACHE_FILES
from tests.helpers import git, make_repo, note_text

OTHER_CLONE = "f" * 32


def _repo(path: Path, files: dict[str, str] | None = None) -> GitRepo:
    make_repo(path, files)
    return open_repo(path)


def _root_of(path: Path, files: dict[str, str]) -> str:
    """The first commit of a repository made at `path` with `files`."""
    root = first_root(_repo(path, files))
    assert root is not None
    return root


def _store(path: Path, record: StoreRecord | None, notes: dict[str, str]) -> Path:
    """A store at `path` holding `notes` (relative path: text) and `record`."""
    path.mkdir(parents=True, exist_ok=True)
    for rel, text in notes.items():
        (path / rel).parent.mkdir(parents=True, exist_ok=True)
        (path / rel).write_text(text)
    if record is not None:
        write_record(path, record)
    return path


def _mine(repo: GitRepo, tmp_path: Path) -> StoreRecord:
    """This clone's record, as it was written before the clone moved from tmp/gone."""
    return StoreRecord(str(tmp_path / "gone"), clone_id(repo, create=True), first_root(repo))


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


def _notes(n: int, prefix: str = "surprise/n") -> dict[str, str]:
    return {f"{prefix}{i}.md": note_text(f"{prefix}{i}") for i in range(n)}


# --- check_owner ----------------------------------------------------------------

def test_an_older_record_without_a_clone_id_opens_only_for_the_same_history(
        tmp_path: Path) -> None:
    repo = _repo(tmp_path / "api")
    store = _store(tmp_path / "store", StoreRecord("/was/here", None, first_root(repo)), {})
    check_owner(repo, store)  # nothing tells the clones apart, and the history agrees
    other = _root_of(tmp_path / "other", {"o.txt": "o\n"})
    write_record(store, StoreRecord("/was/here", None, other))
    with pytest.raises(ForeignStore, match="holds the notes of another repository"):
        check_owner(repo, store)


def test_a_clone_with_no_id_yet_opens_a_store_of_its_history(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "api")
    assert clone_id(repo) is None
    store = _store(tmp_path / "store", StoreRecord("/was/here", OTHER_CLONE, first_root(repo)),
                   {})
    check_owner(repo, store)
    assert clone_id(repo) is None  # opening made no id


def test_a_refusal_names_both_first_commits_by_twelve_digits(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "api")
    ours, theirs = first_root(repo), _root_of(tmp_path / "other", {"o.txt": "o\n"})
    assert ours is not None
    store = _store(tmp_path / "store", StoreRecord("/was/here", OTHER_CLONE, theirs), {})
    both = f"(its first commit is {theirs[:12]}; this one's is {ours[:12]})"
    with pytest.raises(ForeignStore) as refused:
        check_owner(repo, store)
    assert both in str(refused.value)
    with pytest.raises(ForeignStore) as refused:
        take_over(repo, store)
    assert both in str(refused.value)
    source = _store(tmp_path / "memory" / "other-0123456789ab",
                    StoreRecord(str(tmp_path / "gone"), OTHER_CLONE, theirs), _notes(1))
    before = _files(source)
    with pytest.raises(StoreError) as refused:
        adopt(repo, local_store_root(repo), str(source))
    assert f"(its first commit is {theirs[:12]}, this one's is {ours[:12]}); nothing" in str(
        refused.value)
    assert _files(source) == before


# --- take_over and what adopt returns -----------------------------------------

def test_a_take_over_is_no_merge_and_a_merge_says_so(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "api")
    target = local_store_root(repo)
    _store(target, StoreRecord(str(tmp_path / "api"), OTHER_CLONE, first_root(repo)),
           _notes(2))
    taken = adopt(repo, target, str(target))
    assert (taken.source, taken.notes, taken.merged) == (target, 2, False)
    assert read_record(target) == StoreRecord(str(tmp_path / "api"), clone_id(repo),
                                              first_root(repo))
    source = _store(target.parent / "api-0123456789ab", _mine(repo, tmp_path),
                    _notes(1, "other/m"))
    merged = adopt(repo, target, str(source))
    assert (merged.notes, merged.merged, merged.left) == (1, True, [])


def test_a_store_made_before_another_clones_first_commit_is_not_taken_over(
        tmp_path: Path) -> None:
    # Only that clone's id said whose it is: no history to compare, and not for
    # want of fetching (the refusal names the store's first-commit-less record).
    repo = _repo(tmp_path / "api")
    target = _store(local_store_root(repo), StoreRecord(str(tmp_path / "api"), OTHER_CLONE,
                                                        None), _notes(1))
    before = _files(target)
    with pytest.raises(ForeignStore) as refused:
        adopt(repo, target, str(target))
    assert "before its first commit" in str(refused.value)
    assert "it cannot be taken over" in str(refused.value)
    assert "unshallow" not in str(refused.value)
    assert _files(target) == before


# --- the source ---------------------------------------------------------------

def test_a_store_named_by_its_folder_anywhere_is_adopted(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "api")
    backup = _store(tmp_path / "backup" / "old-store", _mine(repo, tmp_path), _notes(2))
    done = adopt(repo, local_store_root(repo), str(backup))
    assert (done.notes, done.merged) == (2, False)
    assert not backup.exists()
    assert sorted(_files(local_store_root(repo))) == [
        MARKER, "surprise/n0.md", "surprise/n1.md"]


def test_a_folder_beside_the_stores_with_no_record_is_adopted_by_its_name(
        tmp_path: Path) -> None:
    repo = _repo(tmp_path / "api")
    target = local_store_root(repo)
    older = _store(target.parent / "api-0123456789ab", None, _notes(1))
    assert adopt(repo, target, str(older)).notes == 1
    assert not older.exists()


def test_a_named_path_that_is_a_link_loop_is_not_a_store(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "api")
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    with pytest.raises(StoreError, match="is not a local store"):
        adopt(repo, local_store_root(repo), str(loop))


def test_a_store_inside_the_clones_own_or_around_it_is_refused(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "api")
    target = local_store_root(repo)
    _store(target, _mine(repo, tmp_path), _notes(1))
    inner = _store(target / "inner", _mine(repo, tmp_path), _notes(1))
    before = _files(target)
    with pytest.raises(StoreError, match="this clone's own store \\(or holds it\\)"):
        adopt(repo, target, str(inner))
    assert _files(target) == before
    outer = _store(tmp_path / "outer", _mine(repo, tmp_path), _notes(1, "o/x"))
    below = outer / "mine"  # a target inside the store named: moving it would nest
    with pytest.raises(StoreError, match="this clone's own store \\(or holds it\\)"):
        adopt(repo, below, str(outer))
    assert not below.exists() and (outer / "o" / "x0.md").is_file()


def test_a_store_of_this_checkouts_path_is_not_refused_as_still_there(
        tmp_path: Path) -> None:
    # A store recorded at this very checkout (an older store name of it, say) is
    # not "another clone that still exists": this clone is the one still there.
    repo = _repo(tmp_path / "api")
    record = StoreRecord(str(repo.main_checkout), clone_id(repo, create=True),
                         first_root(repo))
    source = _store(local_store_root(repo).parent / "api-0123456789ab", record, _notes(1))
    assert adopt(repo, local_store_root(repo), str(source)).notes == 1


def test_a_clone_that_still_exists_keeps_its_store(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "api")
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(tmp_path / "api"), str(other))
    source = _store(tmp_path / "memory" / "other-0123456789ab",
                    StoreRecord(str(other), OTHER_CLONE, first_root(repo)), _notes(1))
    before = _files(source)
    with pytest.raises(StoreError, match="which still exists"):
        adopt(repo, local_store_root(repo), str(source))
    assert _files(source) == before and not local_store_root(repo).exists()


def _shallow(tmp_path: Path) -> tuple[GitRepo, str]:
    """A shallow clone of a repository with history: (it, the full one's root)."""
    full = tmp_path / "full"
    make_repo(full)
    for n in range(2):
        (full / f"f{n}").write_text(f"{n}\n")
        git(full, "add", f"f{n}")
        git(full, "commit", "-qm", f"change {n}")
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{full}", str(tmp_path / "shallow"))
    root = first_root(open_repo(full))
    assert root is not None
    return open_repo(tmp_path / "shallow"), root


def test_a_shallow_clone_adopts_no_store_it_cannot_place(tmp_path: Path) -> None:
    repo, root = _shallow(tmp_path)
    target = local_store_root(repo)
    source = _store(target.parent / "full-0123456789ab",
                    StoreRecord(str(tmp_path / "gone"), OTHER_CLONE, root), _notes(1))
    before = _files(source)
    with pytest.raises(StoreError, match="git fetch --unshallow"):
        adopt(repo, target, str(source))
    assert _files(source) == before and not target.exists()
    # a record with neither clone id nor first commit names nothing to doubt
    write_record(source, StoreRecord(str(tmp_path / "gone"), None, None))
    assert adopt(repo, target, str(source)).notes == 1


# --- left behind: which store `omh adopt` with no name takes -----------------

def test_with_no_name_only_the_store_left_for_sure_is_adopted(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "api")
    target = local_store_root(repo)
    stray = _store(target.parent / "api-0123456789ab", None, _notes(1, "stray/s"))
    moved = _store(target.parent / "api-abcdefabcdef", _mine(repo, tmp_path), _notes(1))
    done = adopt(repo, target, None)
    assert done.source == moved and not moved.exists()
    assert (stray / "stray" / "s0.md").is_file()  # unrecorded: only a maybe, left alone
    _store(target.parent / "api-111111111111", _mine(repo, tmp_path), _notes(1, "a/x"))
    _store(target.parent / "api-222222222222", _mine(repo, tmp_path), _notes(1, "b/y"))
    with pytest.raises(StoreError, match="this clone left 2 stores behind"):
        adopt(repo, target, None)


# --- the target ----------------------------------------------------------------

def test_a_target_that_is_a_file_or_a_link_is_refused_and_nothing_moves(
        tmp_path: Path) -> None:
    repo = _repo(tmp_path / "api")
    target = local_store_root(repo)
    source = _store(target.parent / "api-0123456789ab", _mine(repo, tmp_path), _notes(1))
    before = _files(source)
    target.write_text("not a store\n")
    with pytest.raises(StoreError, match="is not a directory; move it away"):
        adopt(repo, target, str(source))
    target.unlink()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    target.symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(StoreError, match="is not a directory; move it away"):
        adopt(repo, target, str(source))
    assert _files(source) == before and list(elsewhere.iterdir()) == []


def test_a_target_of_only_a_record_and_caches_is_replaced_whole(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "api")
    target = _store(local_store_root(repo), _mine(repo, tmp_path), {})
    for name in CACHE_FILES:
        (target / name).write_bytes(b"cache")
    source = _store(target.parent / "api-0123456789ab", _mine(repo, tmp_path), _notes(1))
    done = adopt(repo, target, str(source))
    assert not done.merged and not source.exists()
    assert sorted(_files(target)) == [MARKER, "surprise/n0.md"]


def test_a_target_that_cannot_be_listed_keeps_its_files(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Only a target holding nothing but a record loses its caches; one that cannot
    # be listed (unreadable) is not known to be such a target.
    repo = _repo(tmp_path / "api")
    target = _store(local_store_root(repo), _mine(repo, tmp_path), _notes(1, "t/x"))
    for name in CACHE_FILES:
        (target / name).write_bytes(b"cache")
    source = _store(target.parent / "api-0123456789ab", _mine(repo, tmp_path), _notes(1))
    real = os.scandir

    def unreadable(path: Any = ".") -> Any:
        if Path(path) == target:
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", unreadable)
    assert adopt(repo, target, str(source)).merged
    monkeypatch.undo()
    assert all((target / name).read_bytes() == b"cache" for name in CACHE_FILES)


def test_a_new_memory_folder_is_made_private(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repo(tmp_path / "api")
    home = tmp_path / "new-home" / ".omh"
    monkeypatch.setenv("OMH_HOME", str(home))
    source = _store(tmp_path / "backup" / "store", _mine(repo, tmp_path), _notes(1))
    target = local_store_root(repo)
    assert not home.exists()
    assert adopt(repo, target, str(source)).notes == 1
    assert stat.S_IMODE(os.stat(target.parent).st_mode) == 0o700
    assert (target / "surprise" / "n0.md").is_file()


def _rename_failing(monkeypatch: pytest.MonkeyPatch, source: Path, code: int) -> None:
    real = os.rename

    def rename(src: Any, dst: Any, *args: Any, **kwargs: Any) -> None:
        if Path(src) == source:
            raise OSError(code, os.strerror(code), str(src))
        real(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "rename", rename)


@pytest.mark.parametrize("exists", [False, True], ids=["no target yet", "an empty target"])
def test_a_store_on_another_file_system_is_copied_over(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, exists: bool) -> None:
    repo = _repo(tmp_path / "api")
    target = local_store_root(repo)
    if exists:
        target.mkdir(parents=True)
    source = _store(tmp_path / "mnt" / "store", _mine(repo, tmp_path),
                    {**_notes(2), "deep/er/x.md": note_text("deep/er/x")})
    (source / LOCK_NAME).write_bytes(b"")  # every store used by omh has one
    _rename_failing(monkeypatch, source, errno.EXDEV)
    done = adopt(repo, target, str(source))
    assert (done.notes, done.merged, done.left) == (3, False, [])  # no notes were there
    assert not source.exists()
    assert sorted(_files(target)) == [MARKER, "deep/er/x.md", "surprise/n0.md",
                                      "surprise/n1.md"]
    if not exists:  # made by adopt: private from the start
        assert stat.S_IMODE(os.lstat(target).st_mode) == 0o700
    assert read_record(target) == StoreRecord(str(repo.main_checkout), clone_id(repo),
                                              first_root(repo))


def test_a_move_that_fails_otherwise_is_refused_and_nothing_moves(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repo(tmp_path / "api")
    target = local_store_root(repo)
    source = _store(target.parent / "api-0123456789ab", _mine(repo, tmp_path), _notes(1))
    before = _files(source)
    _rename_failing(monkeypatch, source, errno.EACCES)
    with pytest.raises(StoreError, match=f"cannot move {source} to {target}: Permission"):
        adopt(repo, target, str(source))
    assert _files(source) == before and not target.exists()


# --- merging -------------------------------------------------------------------

def test_a_merge_leaves_no_empty_folder_record_cache_or_lock_behind(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "api")
    target = _store(local_store_root(repo), _mine(repo, tmp_path), _notes(1, "t/x"))
    source = _store(target.parent / "api-0123456789ab", _mine(repo, tmp_path),
                    {"a/b/c/deep.md": note_text("a/b/c/deep"), "top.md": note_text("top")})
    for name in (*CACHE_FILES, LOCK_NAME):
        (source / name).write_bytes(b"")
    done = adopt(repo, target, str(source))
    assert (done.merged, done.left) == (True, [])
    assert not source.exists()
    assert (target / "a" / "b" / "c" / "deep.md").read_text() == note_text("a/b/c/deep")


@pytest.mark.parametrize("kind", ["a file", "a link to a folder"])
def test_something_else_where_a_notes_folder_goes_is_a_conflict(
        tmp_path: Path, kind: str) -> None:
    repo = _repo(tmp_path / "api")
    target = _store(local_store_root(repo), _mine(repo, tmp_path), _notes(1, "t/x"))
    (target / "a").mkdir()
    aim = tmp_path / "aim"
    aim.mkdir()
    if kind == "a file":
        (target / "a" / "b").write_text("in the way\n")
    else:
        (target / "a" / "b").symlink_to(aim, target_is_directory=True)
    source = _store(target.parent / "api-0123456789ab", _mine(repo, tmp_path),
                    {"a/b/c.md": note_text("a/b/c"), "a/first.md": note_text("a/first")})
    before = (_files(source), _files(target))
    with pytest.raises(StoreError, match=r"hold a/b/c\.md with different text; nothing was"):
        adopt(repo, target, str(source))
    assert (_files(source), _files(target)) == before and list(aim.iterdir()) == []


@pytest.mark.parametrize("kind", ["a link to the same text", "a folder", "a FIFO"])
def test_something_else_at_a_notes_name_is_a_conflict(tmp_path: Path, kind: str) -> None:
    repo = _repo(tmp_path / "api")
    target = _store(local_store_root(repo), _mine(repo, tmp_path), {})
    (target / "surprise").mkdir()
    source = _store(target.parent / "api-0123456789ab", _mine(repo, tmp_path), _notes(1))
    at = target / "surprise" / "n0.md"
    if kind == "a folder":
        at.mkdir()
    elif kind == "a FIFO":
        os.mkfifo(at)  # never opened: it would block
    else:
        same = tmp_path / "same.md"
        same.write_text(note_text("surprise/n0"))
        at.symlink_to(same)
    before = _files(source)
    with pytest.raises(StoreError, match=r"hold surprise/n0\.md with different text"):
        adopt(repo, target, str(source))
    assert _files(source) == before
    assert os.path.lexists(at) and not stat.S_ISREG(os.lstat(at).st_mode)


@pytest.mark.parametrize(("n", "shown"), [
    (5, "n0.md, n1.md, n2.md, n3.md, n4.md with"),
    (6, "n0.md, n1.md, n2.md, n3.md, n4.md and 1 more with"),
    (8, "n0.md, n1.md, n2.md, n3.md, n4.md and 3 more with"),
])
def test_a_conflict_names_five_notes_and_counts_the_rest(
        tmp_path: Path, n: int, shown: str) -> None:
    repo = _repo(tmp_path / "api")
    target = _store(local_store_root(repo), _mine(repo, tmp_path),
                    {f"n{i}.md": "mine\n" for i in range(n)})
    source = _store(target.parent / "api-0123456789ab", _mine(repo, tmp_path),
                    {f"n{i}.md": "theirs\n" for i in range(n)})
    with pytest.raises(StoreError) as refused:
        adopt(repo, target, str(source))
    assert f"hold {shown} different text" in str(refused.value)


def _put_then(monkeypatch: pytest.MonkeyPatch, before: Callable[[int, str], None]) -> None:
    """nofollow.put, with `before(fd, name)` run first for a note (not the record)."""
    real = nofollow.put

    def put(fd: int, name: str, data: Any, **kwargs: Any) -> bool:
        if name.endswith(".md"):
            before(fd, name)
        return real(fd, name, data, **kwargs)

    monkeypatch.setattr(nofollow, "put", put)


def test_a_copy_that_fails_halfway_loses_no_note(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repo(tmp_path / "api")
    target = _store(local_store_root(repo), _mine(repo, tmp_path), _notes(1, "t/x"))
    source = _store(target.parent / "api-0123456789ab", _mine(repo, tmp_path), _notes(3))
    before = _files(source)
    copies: list[str] = []

    def disk_full(_fd: int, name: str) -> None:
        copies.append(name)
        if len(copies) == 2:
            raise OSError(errno.ENOSPC, "No space left on device")

    _put_then(monkeypatch, disk_full)
    with pytest.raises(StoreError, match=r"No space left on device; .* is kept"):
        adopt(repo, target, str(source))
    assert _files(source) == before  # nothing removed from the old store
    monkeypatch.undo()
    done = adopt(repo, target, str(source))  # run again once there is room
    assert (done.notes, done.left) == (3, []) and not source.exists()


def test_a_note_written_meanwhile_with_the_same_text_is_no_conflict(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repo(tmp_path / "api")
    target = _store(local_store_root(repo), _mine(repo, tmp_path), _notes(1, "t/x"))
    source = _store(target.parent / "api-0123456789ab", _mine(repo, tmp_path), _notes(2))

    def another_adopt(fd: int, name: str) -> None:  # got there first, with the same bytes
        with open(os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600, dir_fd=fd),
                  "wb") as out:
            out.write((source / "surprise" / name).read_bytes())

    _put_then(monkeypatch, another_adopt)
    done = adopt(repo, target, str(source))
    assert (done.notes, done.left) == (2, []) and not source.exists()


def test_a_note_written_meanwhile_with_other_text_keeps_the_old_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repo(tmp_path / "api")
    target = _store(local_store_root(repo), _mine(repo, tmp_path), _notes(1, "t/x"))
    source = _store(target.parent / "api-0123456789ab", _mine(repo, tmp_path), _notes(1))
    before = _files(source)

    def someone_else(fd: int, name: str) -> None:
        with open(os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600, dir_fd=fd),
                  "wb") as out:
            out.write(b"another text\n")

    _put_then(monkeypatch, someone_else)
    with pytest.raises(StoreError, match="appeared with other text while adopting"):
        adopt(repo, target, str(source))
    assert _files(source) == before
    assert (target / "surprise" / "n0.md").read_bytes() == b"another text\n"


def test_a_notes_folder_swapped_for_a_link_meanwhile_is_not_written_through(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repo(tmp_path / "api")
    target = _store(local_store_root(repo), _mine(repo, tmp_path), _notes(1, "t/x"))
    source = _store(target.parent / "api-0123456789ab", _mine(repo, tmp_path),
                    _notes(1, "other/n"))
    before = _files(source)
    aim = tmp_path / "aim"
    aim.mkdir()
    real = adopting._differs

    def then_linked(src: Path, root: Path, rel: str) -> bool:
        differs = real(src, root, rel)  # compared while `other/` did not exist
        (target / "other").symlink_to(aim, target_is_directory=True)
        return differs

    monkeypatch.setattr(adopting, "_differs", then_linked)
    with pytest.raises(StoreError, match="is not a directory; nothing was overwritten"):
        adopt(repo, target, str(source))
    assert list(aim.iterdir()) == [] and _files(source) == before


def test_a_note_gone_from_the_old_store_meanwhile_is_skipped(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repo(tmp_path / "api")
    target = _store(local_store_root(repo), _mine(repo, tmp_path), _notes(2))
    source = _store(target.parent / "api-0123456789ab", _mine(repo, tmp_path),
                    {**_notes(2), "later.md": note_text("later")})
    real = adopting._differs

    def then_removed(src: Path, root: Path, rel: str) -> bool:
        differs = real(src, root, rel)
        if rel == "surprise/n0.md":
            src.unlink()  # removed (by hand, say) once compared
        return differs

    monkeypatch.setattr(adopting, "_differs", then_removed)
    done = adopt(repo, target, str(source))
    assert done.left == [] and not source.exists()
    assert (target / "surprise" / "n0.md").read_text() == note_text("surprise/n0")
    assert (target / "later.md").read_text() == note_text("later")


def test_a_note_changed_in_the_old_store_meanwhile_stays_there(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repo(tmp_path / "api")
    target = _store(local_store_root(repo), _mine(repo, tmp_path), _notes(1, "t/x"))
    source = _store(target.parent / "api-0123456789ab", _mine(repo, tmp_path), _notes(2))
    real = adopting._copy_new

    def then_edited(src: Path, dst: Path, root: Path) -> None:
        real(src, dst, root)
        if src.name == "n1.md":
            src.write_text("edited after the copy\n")

    monkeypatch.setattr(adopting, "_copy_new", then_edited)
    done = adopt(repo, target, str(source))
    assert done.left == ["surprise/n1.md"]
    assert (source / "surprise" / "n1.md").read_text() == "edited after the copy\n"
    assert not (source / "surprise" / "n0.md").exists()
    assert (target / "surprise" / "n1.md").read_text() == note_text("surprise/n1")


def test_links_and_fifos_in_the_old_store_are_neither_followed_nor_opened(
        tmp_path: Path) -> None:
    repo = _repo(tmp_path / "api")
    target = _store(local_store_root(repo), _mine(repo, tmp_path), _notes(1, "t/x"))
    secret = tmp_path / "secret.md"
    secret.write_text("not a note of this store\n")
    source = _store(target.parent / "api-0123456789ab", _mine(repo, tmp_path), _notes(1))
    (source / "surprise" / "link.md").symlink_to(secret)
    os.mkfifo(source / "surprise" / "fifo.md")  # opened, it would block the adopt
    done = adopt(repo, target, str(source))
    assert (done.notes, done.left) == (1, ["surprise/fifo.md", "surprise/link.md"])
    assert not (target / "surprise" / "link.md").exists()
    assert not (target / "surprise" / "fifo.md").exists()
    assert (source / "surprise" / "link.md").is_symlink()


def test_store_id_names_the_old_path_the_user_gives(tmp_path: Path) -> None:
    # `omh adopt OLD_PATH`: the old path through a link names the store of the
    # path the link leads to, as the store was named when the clone was there.
    repo = _repo(tmp_path / "api")
    real_old = tmp_path / "real" / "api"
    real_old.parent.mkdir()
    (tmp_path / "via").symlink_to(tmp_path / "real", target_is_directory=True)
    target = local_store_root(repo)
    source = _store(target.parent / store_id(real_old), _mine(repo, tmp_path), _notes(1))
    assert adopt(repo, target, str(tmp_path / "via" / "api")).source == source
