"""The local store's behaviour that mutation testing (bench/mutation.py) found
unchecked: what reading reports about files that are no notes, where a store may
not live, and what the write policies and removals leave behind.

Found by mutation testing (docs/records/mutation-passes.md); was tests/test_mutants_store.py."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from omh_git_memory.git.repository import open_repo
from omh_git_memory.model.errors import KeyConflict, NoteNotFound, StoreError
from omh_git_memory.model.keys import Key
from omh_git_memory.model.layers import Layer
from omh_git_memory.model.note import MAX_NOTE_BYTES
from omh_git_memory.stores.location import local_store_root, store_id
from omh_git_memory.stores.reading import StoredNote, file_kind, read_note_bytes, read_regular
from omh_git_memory.stores.store import IfExists, LocalStore
from tests.helpers import SEED_NOTE, git, note_text


def _entries(root: Path) -> list[Path]:
    """What a directory of the store holds, but the lock file every writer takes."""
    return [p for p in root.iterdir() if p.name != ".omh-lock"]


def _store(tmp_path: Path) -> LocalStore:
    store = LocalStore(tmp_path / "store")
    store.create_root()
    return store


def _write(store: LocalStore, key: str, body: str = "b", **kw: object) -> tuple[Key, bool]:
    return store.write(Key(key), lambda k: note_text(k.value, body=body), **kw)  # type: ignore[arg-type]


def test_a_file_whose_path_is_no_key_has_no_path_key() -> None:
    stored = StoredNote(Layer.LOCAL, "Not A Key!.md", "/x", None, "bad")
    assert stored.path_key is None
    assert stored.key == "Not A Key!"
    good = StoredNote(Layer.LOCAL, "gotchas/a-b.md", "/x", None, "bad")
    assert good.path_key == Key("gotchas/a-b")


def test_file_kinds_are_named(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "dir").mkdir()
    (tmp_path / "file").write_text("x")
    os.symlink("file", tmp_path / "link")
    assert file_kind(os.lstat(tmp_path / "fifo").st_mode) == "FIFO (named pipe)"
    assert file_kind(os.lstat(tmp_path / "dir").st_mode) == "directory"
    assert file_kind(os.lstat(tmp_path / "file").st_mode) == "regular file"
    assert file_kind(os.lstat(tmp_path / "link").st_mode) == "symlink"
    assert file_kind(os.lstat("/dev/null").st_mode) == "character device"
    assert file_kind(0) == "special file"


def test_scan_reports_each_file_that_is_no_note_and_reads_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _store(tmp_path)
    _write(store, "gotchas/good")
    os.mkfifo(store.root / "gotchas" / "pipe.md")
    os.symlink("good.md", store.root / "gotchas" / "link.md")
    (store.root / "gotchas" / "huge.md").write_bytes(b"x" * (MAX_NOTE_BYTES + 1))
    (store.root / "gotchas" / "broken.md").write_text("no frontmatter\n")
    (store.root / ".hidden.md").write_text("ignored")
    (store.root / "gotchas" / "notes.txt").write_text("not a note file")
    sock = socket.socket(socket.AF_UNIX)
    # Bound by a relative name: a socket's path is limited to about 100 bytes, which a
    # deep temporary folder (macOS, a long TMPDIR) passes.
    monkeypatch.chdir(store.root / "gotchas")
    sock.bind("sock.md")
    try:
        found = {s.relpath: s for s in store.scan()}
    finally:
        sock.close()
    assert sorted(found) == ["gotchas/broken.md", "gotchas/good.md", "gotchas/huge.md",
                             "gotchas/link.md", "gotchas/pipe.md", "gotchas/sock.md"]
    assert found["gotchas/good.md"].note is not None and found["gotchas/good.md"].problem is None
    assert "symlink" in (found["gotchas/link.md"].problem or "")
    assert "FIFO" in (found["gotchas/pipe.md"].problem or "")
    assert "socket" in (found["gotchas/sock.md"].problem or "")
    assert str(MAX_NOTE_BYTES) in (found["gotchas/huge.md"].problem or "")
    assert found["gotchas/broken.md"].note is None and found["gotchas/broken.md"].problem
    assert all(s.layer is Layer.LOCAL for s in found.values())


def test_scan_walks_nested_folders_in_order_and_an_absent_store_is_empty(
    tmp_path: Path
) -> None:
    store = _store(tmp_path)
    for key in ("b/z", "a/deep/y", "a/x", "c"):
        _write(store, key)
    assert [s.relpath for s in store.scan()] == ["a/deep/y.md", "a/x.md", "b/z.md", "c.md"]
    assert sorted(r for r, *_ in store.signature()) == ["a/deep/y.md", "a/x.md", "b/z.md",
                                                           "c.md"]
    missing = LocalStore(tmp_path / "missing")
    assert missing.scan() == [] and missing.signature() == ()


def test_signature_changes_when_a_note_is_replaced(tmp_path: Path) -> None:
    store = _store(tmp_path)
    _write(store, "a")
    before = store.signature()
    _write(store, "a", body="longer body now", if_exists=IfExists.OVERRIDE)
    assert store.signature() != before


def test_create_root_says_whether_it_made_the_folder_and_calls_the_hooks(
    tmp_path: Path
) -> None:
    calls: list[str] = []
    store = LocalStore(tmp_path / "new" / "store", before_create=lambda: calls.append("b"),
                       after_create=lambda: calls.append("a"))
    assert store.create_root() is True
    assert calls == ["b", "a"]
    assert store.create_root() is False
    assert calls == ["b", "a"]


def test_create_root_refused_by_before_create_makes_nothing(tmp_path: Path) -> None:
    def refuse() -> None:
        raise StoreError("left behind")

    store = LocalStore(tmp_path / "s", before_create=refuse)
    with pytest.raises(StoreError, match="left behind"):
        store.create_root()
    assert not (tmp_path / "s").exists()


def test_a_key_through_a_file_where_its_folder_goes_is_refused(tmp_path: Path) -> None:
    # (A symlinked folder: tests/test_store.py; both one level deeper: below.)
    store = _store(tmp_path)
    (store.root / "plain").write_text("x")
    with pytest.raises(StoreError, match="needs a directory"):
        _write(store, "plain/note")
    assert (store.root / "plain").read_text() == "x"


def test_skip_keeps_the_first_and_error_names_the_way_out(tmp_path: Path) -> None:
    store = _store(tmp_path)
    _write(store, "a", body="first")
    assert _write(store, "a", body="second", if_exists=IfExists.SKIP) == (Key("a"), False)
    with pytest.raises(KeyConflict, match="--if-exists"):
        _write(store, "a", body="third")
    assert "first" in (store.root / "a.md").read_text()


def test_suffix_passes_over_taken_keys(tmp_path: Path) -> None:
    store = _store(tmp_path)
    _write(store, "a")
    key, wrote = _write(store, "a", if_exists=IfExists.SUFFIX,
                        taken=lambda k: k.value == "a-2")
    assert (key.value, wrote) == ("a-3", True)
    assert sorted(p.name for p in _entries(store.root)) == ["a-3.md", "a.md"]


def test_writing_over_a_directory_is_refused(tmp_path: Path) -> None:
    store = _store(tmp_path)
    (store.root / "a.md").mkdir()
    with pytest.raises(StoreError, match="directory"):
        _write(store, "a")
    with pytest.raises(StoreError, match="directory"):
        _write(store, "a", if_exists=IfExists.OVERRIDE)


def test_no_temporary_file_is_left_after_writes(tmp_path: Path) -> None:
    store = _store(tmp_path)
    _write(store, "d/a")
    _write(store, "d/a", if_exists=IfExists.OVERRIDE)
    _write(store, "d/a", if_exists=IfExists.SKIP)
    assert sorted(p.name for p in (store.root / "d").iterdir()) == ["a.md"]


def test_remove_prunes_empty_folders_but_not_the_root(tmp_path: Path) -> None:
    store = _store(tmp_path)
    _write(store, "x/y/z")
    _write(store, "x/keep")
    store.remove(Key("x/y/z"))
    assert not (store.root / "x" / "y").exists()
    assert (store.root / "x" / "keep.md").exists()
    store.remove(Key("x/keep"))
    assert store.root.is_dir() and list(_entries(store.root)) == []
    with pytest.raises(NoteNotFound):
        store.remove(Key("x/keep"))


def test_remove_if_removes_only_the_bytes_read(tmp_path: Path) -> None:
    store = _store(tmp_path)
    _write(store, "d/a", body="one")
    data = (store.root / "d" / "a.md").read_bytes()
    assert store.remove_if(Key("d/a"), data + b"x") is None
    assert (store.root / "d" / "a.md").read_bytes() == data
    assert store.remove_if(Key("d/a"), data) == store.root / "d" / "a.md"
    assert not (store.root / "d").exists()
    with pytest.raises(NoteNotFound):
        store.remove_if(Key("d/a"), data)
    assert list(_entries(store.root)) == []  # nothing set aside is left


def test_replace_if_replaces_only_the_bytes_read(tmp_path: Path) -> None:
    store = _store(tmp_path)
    _write(store, "a", body="one")
    data = (store.root / "a.md").read_bytes()
    assert store.replace_if(Key("a"), b"other", SEED_NOTE) is None
    assert (store.root / "a.md").read_bytes() == data
    assert store.replace_if(Key("a"), data, SEED_NOTE) == store.root / "a.md"
    assert (store.root / "a.md").read_text() == SEED_NOTE
    with pytest.raises(NoteNotFound):
        store.replace_if(Key("gone"), data, SEED_NOTE)


def test_store_ids_differ_by_path_and_name_a_bare_repository_plainly() -> None:
    assert store_id(Path("/a/api")) != store_id(Path("/b/api"))
    assert store_id(Path("/a/api")).startswith("api-")
    assert store_id(Path("/a/api.git")).startswith("api-")
    assert store_id(Path("/a/...")).startswith("repo-")
    assert len(store_id(Path("/a/api")).split("-")[-1]) == 12


def test_omh_home_places_the_store_and_must_be_absolute(repo_dir: Path, tmp_path: Path) -> None:
    repo = open_repo(repo_dir)
    root = local_store_root(repo, {"OMH_HOME": str(tmp_path / "h")})
    assert root.parent == tmp_path / "h" / "memory"
    with pytest.raises(StoreError, match="OMH_HOME=rel is a relative path"):
        local_store_root(repo, {"OMH_HOME": "rel"})
    with pytest.raises(StoreError, match="OMH_LOCAL_STORE=rel is a relative path"):
        local_store_root(repo, {"OMH_LOCAL_STORE": "rel"})
    with pytest.raises(StoreError, match="home directory that does not exist"):
        local_store_root(repo, {"OMH_LOCAL_STORE": "~no-such-user-omh/x"})


@pytest.mark.parametrize("where,says", [
    ("inside", "inside the checkout"),
    ("holds", "holds the checkout"),
    ("gitdir", "inside the git directory"),
])
def test_a_store_in_or_around_the_repository_is_refused(
    repo_dir: Path, where: str, says: str
) -> None:
    repo = open_repo(repo_dir)
    place = {"inside": repo_dir / "notes", "holds": repo_dir.parent,
             "gitdir": repo_dir / ".git" / "omh"}[where]
    with pytest.raises(StoreError, match=says) as err:
        local_store_root(repo, {"OMH_LOCAL_STORE": str(place)})
    assert "OMH_LOCAL_STORE" in str(err.value)


def test_a_store_that_holds_a_separate_git_directory_is_refused(tmp_path: Path) -> None:
    work = tmp_path / "work" / "co"
    work.mkdir(parents=True)
    (tmp_path / "gd").mkdir()
    git(tmp_path, "init", "-q", "--separate-git-dir", str(tmp_path / "gd" / "repo.git"), str(work))
    repo = open_repo(work)
    with pytest.raises(StoreError, match="holds the git directory"):
        local_store_root(repo, {"OMH_LOCAL_STORE": str(tmp_path / "gd")})


def test_a_symlink_into_the_checkout_is_caught_and_named(repo_dir: Path, tmp_path: Path) -> None:
    os.symlink(repo_dir, tmp_path / "sneaky")
    with pytest.raises(StoreError, match="through a symlink"):
        local_store_root(open_repo(repo_dir), {"OMH_LOCAL_STORE": str(tmp_path / "sneaky" / "s")})


def test_a_note_of_exactly_the_limit_is_read(tmp_path: Path) -> None:
    store = _store(tmp_path)
    text = note_text("a", body="")
    data = text.encode() + b"x" * (MAX_NOTE_BYTES - len(text.encode()) - 3) + b"END"
    assert len(data) == MAX_NOTE_BYTES
    (store.root / "a.md").write_bytes(data)
    (store.root / "b.md").write_bytes(data + b"\n")
    found = {s.relpath: s for s in store.scan()}
    note = found["a.md"].note
    assert note is not None, found["a.md"].problem
    assert note.body.rstrip().endswith("xEND")  # read whole, not one byte short
    assert str(MAX_NOTE_BYTES) in (found["b.md"].problem or "")
    assert read_note_bytes(Layer.LOCAL, "a.md", "x", data).note is not None
    assert read_note_bytes(Layer.LOCAL, "b.md", "x", data + b"\n").note is None


def test_a_refused_store_names_the_variable_that_placed_it(
    repo_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = open_repo(repo_dir)
    with pytest.raises(StoreError, match="set OMH_HOME to a folder outside"):
        local_store_root(repo, {"OMH_HOME": str(repo_dir / "h")})
    # No OMH_HOME: the store is under HOME, a home inside the checkout.
    monkeypatch.delenv("OMH_HOME")
    monkeypatch.setenv("HOME", str(repo_dir / "h"))
    with pytest.raises(StoreError, match="set HOME to a folder outside"):
        local_store_root(repo)


def test_a_store_in_the_shared_git_directory_is_refused_from_a_linked_worktree(
    repo_dir: Path, tmp_path: Path
) -> None:
    git(repo_dir, "worktree", "add", "-q", str(tmp_path / "wt"), "-b", "side")
    repo = open_repo(tmp_path / "wt")
    with pytest.raises(StoreError, match="inside the git directory"):
        local_store_root(repo, {"OMH_LOCAL_STORE": str(repo_dir / ".git" / "omh")})


def test_a_store_behind_a_symlink_loop_is_refused(repo_dir: Path, tmp_path: Path) -> None:
    os.symlink(tmp_path / "loop-b", tmp_path / "loop-a")
    os.symlink(tmp_path / "loop-a", tmp_path / "loop-b")
    with pytest.raises(StoreError, match="cannot be resolved"):
        local_store_root(open_repo(repo_dir), {"OMH_LOCAL_STORE": str(tmp_path / "loop-a")})


def test_a_symlink_deeper_on_a_key_path_is_refused(tmp_path: Path) -> None:
    store = _store(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (store.root / "a").mkdir()
    os.symlink(outside, store.root / "a" / "linked")
    with pytest.raises(StoreError, match="symlink"):
        _write(store, "a/linked/deeper/note")
    (store.root / "a" / "plain").write_text("x")
    with pytest.raises(StoreError, match="needs a directory"):
        _write(store, "a/plain/note")
    assert list(outside.iterdir()) == []


def test_a_store_that_cannot_be_created_is_a_store_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(StoreError, match="cannot create the local store"):
        LocalStore(tmp_path / "file" / "store").create_root()


def test_a_symlinked_folder_in_the_store_is_reported_not_walked(tmp_path: Path) -> None:
    store = _store(tmp_path)
    elsewhere = LocalStore(tmp_path / "elsewhere")
    elsewhere.create_root()
    _write(elsewhere, "secret")
    os.symlink(elsewhere.root, store.root / "linked")
    found = {s.relpath: s for s in store.scan()}
    assert list(found) == ["linked"]
    assert "symlink" in (found["linked"].problem or "")


def test_override_says_it_wrote(tmp_path: Path) -> None:
    store = _store(tmp_path)
    _write(store, "a")
    assert _write(store, "a", body="new", if_exists=IfExists.OVERRIDE) == (Key("a"), True)
    assert "new" in (store.root / "a.md").read_text()


def test_suffixes_stop_at_999(tmp_path: Path) -> None:
    store = _store(tmp_path)
    with pytest.raises(KeyConflict, match="up to -999"):
        _write(store, "a", if_exists=IfExists.SUFFIX, taken=lambda k: k.value != "a-1000")
    assert list(_entries(store.root)) == []


def test_removing_a_folder_where_a_note_should_be_is_refused(tmp_path: Path) -> None:
    store = _store(tmp_path)
    (store.root / "a.md").mkdir()
    with pytest.raises(StoreError, match="is a directory, not a note"):
        store.remove(Key("a"))
    assert (store.root / "a.md").is_dir()


def test_remove_if_never_removes_a_symlink_that_replaced_the_note(tmp_path: Path) -> None:
    store = _store(tmp_path)
    _write(store, "a")
    data = (store.root / "a.md").read_bytes()
    (tmp_path / "elsewhere.md").write_bytes(data)
    (store.root / "a.md").unlink()
    os.symlink(tmp_path / "elsewhere.md", store.root / "a.md")
    assert store.remove_if(Key("a"), data) is None
    assert (store.root / "a.md").is_symlink()
    assert (tmp_path / "elsewhere.md").read_bytes() == data


def test_remove_if_puts_back_a_folder_that_stands_where_the_note_was(tmp_path: Path) -> None:
    store = _store(tmp_path)
    (store.root / "a.md").mkdir()
    (store.root / "a.md" / "inner").write_text("kept")
    assert store.remove_if(Key("a"), b"whatever") is None
    assert (store.root / "a.md" / "inner").read_text() == "kept"
    assert sorted(p.name for p in _entries(store.root)) == ["a.md"]


def test_read_regular_reads_a_whole_regular_file_and_nothing_else(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"abc\n" * 1000)
    assert read_regular(tmp_path / "f") == b"abc\n" * 1000
    assert read_regular(tmp_path / "f", 3) == b"abc"
    os.symlink(tmp_path / "f", tmp_path / "link")
    os.mkfifo(tmp_path / "fifo")
    assert read_regular(tmp_path / "link") is None
    assert read_regular(tmp_path / "fifo") is None
    assert read_regular(tmp_path / "missing") is None


def test_a_missing_home_folder_is_never_made(repo_dir: Path, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """HOME=/nonexistent (a service account's): the default store would be made under
    it, home folder and all; omh refuses to write instead, and still reads."""
    from tests.helpers import omh

    monkeypatch.delenv("OMH_HOME")
    nowhere = tmp_path / "nonexistent"
    env = {"HOME": str(nowhere)}
    run = omh(repo_dir, "memory", "remember", "--expected", "x", "--observed", "A surprise.",
              "--evidence", "seen", "--answers", "what?", env=env)
    assert run.code == 1, run.out
    assert run.err.startswith(f"omh: the home folder {nowhere} (HOME) does not exist")
    assert "OMH_LOCAL_STORE" in run.err
    assert not nowhere.exists()
    assert omh(repo_dir, "memory", "recall", "a surprise", env=env).code == 0
    assert not nowhere.exists()
    # An empty or relative HOME is refused too ("" would read as `/`).
    for bad in ("", ".."):  # (`home`, inside the checkout, is refused as that)
        run = omh(repo_dir, "memory", "remember", "--expected", "x", "--observed",
                  "A surprise.", "--evidence", "seen", "--answers", "what?",
                  env={"HOME": bad})
        assert run.code == 1 and f"HOME={bad!r} is not an absolute path" in run.err, run.err
    # A folder the user names is theirs to have made.
    chosen = tmp_path / "chosen" / "omh"
    run = omh(repo_dir, "memory", "remember", "--expected", "x", "--observed", "A surprise.",
              "--evidence", "seen", "--answers", "what?", env={**env, "OMH_HOME": str(chosen)})
    assert run.code == 0, run.err
    assert (chosen / "memory").is_dir() and not nowhere.exists()
