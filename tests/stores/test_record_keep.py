"""keep_record's guards, called on a store directly (omh_git_memory/stores/record.py):
which records it writes or brings up to date, which it keeps as they are (another
clone's, another repository's, the maker's of a store OMH_LOCAL_STORE names), and
what it does with a link, a FIFO or a folder at the record's path; then
still_there, which tells whether the clone that made a store is still at its
recorded checkout.

Found by mutation testing (docs/records/mutation-s16-record.md)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pygit2

from omh_git_memory.git.history import first_root
from omh_git_memory.git.repository import GitRepo, open_repo
from omh_git_memory.stores.record import (
    CLONE_ID,
    MARKER,
    StoreRecord,
    clone_id,
    keep_record,
    read_record,
    record_of,
    still_there,
)
from tests.helpers import make_repo

OTHER_CLONE = "0123456789abcdef0123456789abcdef"


def _repo(path: Path, committed: bool = True) -> GitRepo:
    if committed:
        make_repo(path)
    else:
        pygit2.init_repository(str(path), initial_head="main")
    return open_repo(path)


def _store(tmp_path: Path, **record: str | None) -> Path:
    """A store holding a record written compactly, as write_record never writes
    one: a record keep_record rewrote reads back otherwise, even with the same
    fields."""
    store = tmp_path / "store"
    store.mkdir()
    if record:
        (store / MARKER).write_text(json.dumps(record, separators=(",", ":")))
    return store


def _text(store: Path) -> str:
    return (store / MARKER).read_text(encoding="utf-8")


def test_a_store_with_no_record_gets_the_clones(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo")
    store = _store(tmp_path)
    keep_record(repo, store)
    assert read_record(store) == record_of(repo)
    assert read_record(store) == StoreRecord(str(repo.main_checkout), clone_id(repo),
                                             first_root(repo))


def test_no_store_no_record_and_no_clone_id(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo")
    keep_record(repo, tmp_path / "store")
    keep_record(repo, tmp_path / "store", only_if_missing=True)
    assert not (tmp_path / "store").exists()
    assert clone_id(repo) is None


def test_an_up_to_date_record_is_left_as_it_is(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo")
    mine = clone_id(repo, create=True)
    store = _store(tmp_path, checkout=str(repo.main_checkout), clone=mine,
                   root=first_root(repo))
    before = _text(store)
    keep_record(repo, store)
    keep_record(repo, store, only_if_missing=True)
    assert _text(store) == before


def test_a_rootless_record_is_up_to_date_until_the_first_commit(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo", committed=False)
    mine = clone_id(repo, create=True)
    store = _store(tmp_path, checkout=str(repo.main_checkout), clone=mine, root=None)
    before = _text(store)
    keep_record(repo, store)
    keep_record(repo, store, only_if_missing=True)
    assert _text(store) == before


def test_a_rootless_record_of_this_clone_gets_its_root_once_it_has_one(
        tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo")
    mine = clone_id(repo, create=True)
    for only_if_missing in (False, True):
        store = _store(tmp_path, checkout=str(repo.main_checkout), clone=mine, root=None)
        keep_record(repo, store, only_if_missing=only_if_missing)
        assert read_record(store) == record_of(repo) and first_root(repo) is not None
        shutil.rmtree(store)


def test_the_record_of_this_clone_moved_names_its_new_checkout(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo")
    mine = clone_id(repo, create=True)
    store = _store(tmp_path, checkout=str(tmp_path / "old" / "repo"), clone=mine,
                   root=first_root(repo))
    keep_record(repo, store)
    assert read_record(store) == record_of(repo)


def test_a_store_named_by_omh_local_store_keeps_its_makers_checkout(tmp_path: Path) -> None:
    # only_if_missing: the same clone's record, naming where the clone was, is kept.
    repo = _repo(tmp_path / "repo")
    mine = clone_id(repo, create=True)
    store = _store(tmp_path, checkout=str(tmp_path / "old" / "repo"), clone=mine,
                   root=first_root(repo))
    before = _text(store)
    keep_record(repo, store, only_if_missing=True)
    assert _text(store) == before


def test_a_store_named_by_omh_local_store_keeps_an_older_record_of_another_checkout(
        tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo")
    for root in (None, first_root(repo)):
        store = _store(tmp_path, checkout="/home/someone/api", clone=None, root=root)
        before = _text(store)
        keep_record(repo, store, only_if_missing=True)
        assert _text(store) == before
        shutil.rmtree(store)


def test_a_store_named_by_omh_local_store_with_no_record_gets_one(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo")
    store = _store(tmp_path)
    keep_record(repo, store, only_if_missing=True)
    assert read_record(store) == record_of(repo)


def test_another_clones_record_is_kept(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo")
    for root in (first_root(repo), None):
        store = _store(tmp_path, checkout=str(repo.main_checkout), clone=OTHER_CLONE,
                       root=root)
        before = _text(store)
        keep_record(repo, store)
        keep_record(repo, store, only_if_missing=True)
        assert _text(store) == before
        shutil.rmtree(store)


def test_an_older_record_of_this_repository_is_claimed_with_the_clone_id(
        tmp_path: Path) -> None:
    # A record from before clone ids, in a clone that has no id yet either: the id
    # is made, and the record names it.
    repo = _repo(tmp_path / "repo")
    store = _store(tmp_path, checkout=str(repo.main_checkout), clone=None,
                   root=first_root(repo))
    keep_record(repo, store)
    found = read_record(store)
    assert found == record_of(repo) and found is not None and found.clone is not None


def test_an_older_record_that_names_no_root_is_claimed(tmp_path: Path) -> None:
    # Nothing tells it is another repository's.
    repo = _repo(tmp_path / "repo")
    store = _store(tmp_path, checkout="/home/someone/api", clone=None, root=None)
    keep_record(repo, store)
    assert read_record(store) == record_of(repo)


def test_an_older_record_of_another_repository_is_kept(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo")
    store = _store(tmp_path, checkout=str(repo.main_checkout), clone=None, root="1" * 40)
    before = _text(store)
    keep_record(repo, store)
    assert _text(store) == before


def test_a_link_at_the_records_path_is_replaced_never_followed(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo")
    store = _store(tmp_path)
    theirs = tmp_path / "theirs.json"
    record = json.dumps({"checkout": str(repo.main_checkout), "clone": None,
                         "root": first_root(repo)})
    theirs.write_text(record)
    (store / MARKER).symlink_to(theirs)
    assert read_record(store) is None
    keep_record(repo, store)
    assert not (store / MARKER).is_symlink()
    assert read_record(store) == record_of(repo)
    assert theirs.read_text() == record


def test_a_fifo_at_the_records_path_is_never_read_from(tmp_path: Path) -> None:
    # Opened for reading, a FIFO with no writer would block forever.
    repo = _repo(tmp_path / "repo")
    store = _store(tmp_path)
    os.mkfifo(store / MARKER)
    assert read_record(store) is None
    keep_record(repo, store)
    assert read_record(store) == record_of(repo)


def test_a_folder_at_the_records_path_is_left_and_nothing_raised(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo")
    store = _store(tmp_path)
    (store / MARKER).mkdir()
    (store / MARKER / "inside").write_text("kept")
    keep_record(repo, store)
    assert (store / MARKER / "inside").read_text() == "kept"
    assert read_record(store) is None


def test_a_link_at_the_clone_ids_path_is_never_followed(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo")
    elsewhere = tmp_path / "clone-id"
    elsewhere.write_text(OTHER_CLONE + "\n")
    (repo.common_dir / "omh").mkdir()
    (repo.common_dir / CLONE_ID).symlink_to(elsewhere)
    assert clone_id(repo) is None
    assert clone_id(repo, create=True) is None
    assert elsewhere.read_text() == OTHER_CLONE + "\n"


def _recorded(checkout: Path, clone: str | None) -> StoreRecord:
    return StoreRecord(str(checkout), clone, None)


def test_the_clone_that_made_a_store_is_still_there(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo")
    mine = clone_id(repo, create=True)
    assert still_there(_recorded(repo.main_checkout, mine))
    assert still_there(_recorded(repo.main_checkout, None))  # an older record


def test_a_clone_with_no_id_at_the_checkout_is_taken_for_the_one_recorded(
        tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo")
    assert still_there(_recorded(repo.main_checkout, OTHER_CLONE))


def test_another_clone_at_the_recorded_checkout_is_not_the_one_that_made_it(
        tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo")
    assert clone_id(repo, create=True) != OTHER_CLONE
    assert not still_there(_recorded(repo.main_checkout, OTHER_CLONE))


def test_no_repository_at_the_recorded_checkout_is_not_still_there(tmp_path: Path) -> None:
    assert not still_there(_recorded(tmp_path / "gone", None))
    (tmp_path / "folder").mkdir()
    assert not still_there(_recorded(tmp_path / "folder", None))
    # A HEAD file alone, or an objects folder alone, is no bare repository.
    (tmp_path / "folder" / "HEAD").write_text("ref: refs/heads/main\n")
    assert not still_there(_recorded(tmp_path / "folder", None))
    (tmp_path / "objects-only" / "objects").mkdir(parents=True)
    assert not still_there(_recorded(tmp_path / "objects-only", None))


def test_a_bare_repository_is_told_by_its_own_clone_id(tmp_path: Path) -> None:
    bare = tmp_path / "api.git"
    pygit2.init_repository(str(bare), bare=True)
    assert still_there(_recorded(bare, OTHER_CLONE))  # no id there: cannot tell
    mine = clone_id(open_repo(bare), create=True)
    assert mine is not None and mine != OTHER_CLONE
    assert still_there(_recorded(bare, mine))
    assert not still_there(_recorded(bare, OTHER_CLONE))
