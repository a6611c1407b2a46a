from __future__ import annotations

import multiprocessing
import os
import threading
from pathlib import Path

import pytest

from omh_git_memory.git.repository import open_repo
from omh_git_memory.model.errors import KeyConflict, StoreError
from omh_git_memory.model.keys import Key
from omh_git_memory.model.note import parse
from omh_git_memory.stores.location import local_store_root
from omh_git_memory.stores.store import IfExists, LocalStore
from tests.helpers import SEED_NOTE, git, make_repo, note_text


def _text(_key: Key) -> str:
    return SEED_NOTE


def test_the_store_lives_outside_the_checkout_under_omh_home(
    repo_dir: Path, isolated_home: Path
) -> None:
    root = local_store_root(open_repo(repo_dir))
    assert root.parent == isolated_home / ".omh" / "memory"
    assert root.name.startswith("repo-")
    assert not root.is_relative_to(repo_dir)


def test_omh_local_store_overrides_the_whole_path(repo_dir: Path, tmp_path: Path) -> None:
    env = {"OMH_LOCAL_STORE": str(tmp_path / "mounted"), "OMH_HOME": "/nowhere"}
    assert local_store_root(open_repo(repo_dir), env) == tmp_path / "mounted"


def test_linked_worktrees_and_subdirectories_share_one_store(
    repo_dir: Path, tmp_path: Path
) -> None:
    git(repo_dir, "worktree", "add", "-q", str(tmp_path / "wt"), "-b", "side")
    (repo_dir / "sub" / "deeper").mkdir(parents=True)
    main = local_store_root(open_repo(repo_dir))
    assert local_store_root(open_repo(tmp_path / "wt")) == main
    assert local_store_root(open_repo(repo_dir / "sub" / "deeper")) == main


def test_two_clones_with_one_name_get_two_stores(tmp_path: Path) -> None:
    first = make_repo(tmp_path / "a" / "api")
    second = make_repo(tmp_path / "b" / "api")
    assert local_store_root(open_repo(Path(first.workdir))) != local_store_root(
        open_repo(Path(second.workdir))
    )


def test_writing_an_existing_key_is_a_conflict_that_says_update_instead(tmp_path: Path) -> None:
    # Invariant: a taken key is refused, never copied.
    store = LocalStore(tmp_path)
    key = Key("surprise/x")
    store.write(key, _text)
    with pytest.raises(KeyConflict, match="update it instead"):
        store.write(key, _text)
    assert [p.name for p in (tmp_path / "surprise").iterdir()] == ["x.md"]


def test_if_exists_policies_are_explicit(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    key = Key("x")
    store.write(key, lambda k: "first\n")
    assert store.write(key, lambda k: "second\n", IfExists.SKIP) == (key, False)
    assert (tmp_path / "x.md").read_text() == "first\n"
    assert store.write(key, lambda k: f"for {k}\n", IfExists.SUFFIX) == (Key("x-2"), True)
    assert (tmp_path / "x-2.md").read_text() == "for x-2\n"
    store.write(key, lambda k: "third\n", IfExists.OVERRIDE)
    assert (tmp_path / "x.md").read_text() == "third\n"


def _race(root: str, barrier, results, index: int) -> None:  # type: ignore[no-untyped-def]
    barrier.wait()
    try:
        LocalStore(Path(root)).write(Key("same"), lambda k: f"writer {index}\n")
        results.put(("won", index))
    except KeyConflict:
        results.put(("conflict", index))


def test_of_eight_processes_writing_one_key_exactly_one_wins(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("fork")
    barrier, results = ctx.Barrier(8), ctx.Queue()
    procs = [ctx.Process(target=_race, args=(str(tmp_path), barrier, results, i)) for i in range(8)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(30)
    outcomes = [results.get(timeout=5) for _ in procs]
    winners = [i for what, i in outcomes if what == "won"]
    assert len(winners) == 1
    assert (tmp_path / "same.md").read_text() == f"writer {winners[0]}\n"
    # no temporary file left (the store's lock file stays: every writer takes it)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".omh-lock", "same.md"]


def test_a_reader_never_sees_a_half_written_note(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    key = Key("busy")
    big = SEED_NOTE + "\n".join(f"- line {i}" for i in range(20000)) + "\n"
    store.write(key, lambda k: big)
    stop = threading.Event()

    def writer() -> None:
        while not stop.is_set():
            store.write(key, lambda k: big, IfExists.OVERRIDE)

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        for _ in range(300):
            assert (tmp_path / "busy.md").read_text() == big
    finally:
        stop.set()
        thread.join()


def test_a_symlinked_directory_is_never_followed_out_of_the_store(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "store"
    root.mkdir()
    (root / "escape").symlink_to(outside)
    store = LocalStore(root)
    with pytest.raises(StoreError, match="it is a symlink, which could lead outside"):
        store.write(Key("escape/note"), _text)
    assert list(outside.iterdir()) == []


def test_a_symlinked_note_is_unreadable_not_followed(tmp_path: Path) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text(note_text("secret"))
    root = tmp_path / "store"
    root.mkdir()
    (root / "secret.md").symlink_to(secret)
    (found,) = LocalStore(root).scan()
    assert found.note is None
    assert "symlink" in (found.problem or "")


def test_a_directory_where_a_note_should_be_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "x.md").mkdir()
    with pytest.raises(StoreError, match="directory"):
        LocalStore(tmp_path).write(Key("x"), _text, IfExists.OVERRIDE)
    (found,) = LocalStore(tmp_path).scan() or [None]
    assert found is None  # a directory is not listed as a note


def test_scan_reads_notes_and_reports_unreadable_ones(tmp_path: Path) -> None:
    (tmp_path / "good.md").write_text(note_text("good"))
    (tmp_path / "bad.md").write_bytes(b"\xff\xfe")
    (tmp_path / "notes.txt").write_text("not a note")
    (tmp_path / ".omh-tmp-1234").write_text("a crashed writer's leftovers")
    found = {s.relpath: s for s in LocalStore(tmp_path).scan()}
    assert set(found) == {"bad.md", "good.md"}
    assert found["good.md"].note == parse(note_text("good"))
    assert found["bad.md"].note is None


def test_store_files_are_not_world_writable(tmp_path: Path) -> None:
    LocalStore(tmp_path).write(Key("x"), _text)
    assert not os.stat(tmp_path / "x.md").st_mode & 0o002
