"""The clone's cache folder (recall/cache_files.py): which snapshots pruning keeps
(docs/store.md: "the eight newest are kept"), and the mode a checked file is
written with — a shared cache file less the umask, a private one 0600 whatever
the umask.

Its cases came from a mutation pass (docs/records/mutation-passes.md)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from omh_git_memory.recall.cache_files import prune, rank_below, read_checked, write_checked

SIDE = (".idx", ".post", ".vec.npy", ".vec.keys")  # one commit's files


@contextmanager
def _umask(mask: int) -> Iterator[None]:
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def test_pruning_keeps_the_eight_newest_snapshots_and_their_files(tmp_path: Path) -> None:
    now = 1_700_000_000
    for age in range(11):  # commit c0 the newest, c10 the oldest
        for suffix in SIDE:
            path = tmp_path / f"c{age}{suffix}"
            path.write_bytes(b"x")
            os.utime(path, (now - age, now - age))
    (tmp_path / "lint-0123.json").write_bytes(b"x")  # no snapshot: never pruned
    (tmp_path / "local-notes.cache").write_bytes(b"x")  # an older omh's: local notes
    prune(tmp_path)
    kept = sorted(p.name for p in tmp_path.iterdir())
    assert kept == sorted(
        ["lint-0123.json", *(f"c{age}{suffix}" for age in range(8) for suffix in SIDE)]
    )


def test_a_shared_cache_file_is_written_less_the_umask(tmp_path: Path) -> None:
    path = tmp_path / "c.idx"
    with _umask(0o027):
        write_checked(path, b"payload")
    assert path.stat().st_mode & 0o777 == 0o640
    assert read_checked(path) == b"payload"


def test_a_private_cache_file_is_0600_whatever_the_umask(tmp_path: Path) -> None:
    path = tmp_path / "local-notes.cache"
    with _umask(0o277):  # a umask that would leave even the owner unable to write it
        write_checked(path, b"payload", mode=0o600)
    assert path.stat().st_mode & 0o777 == 0o600
    assert read_checked(path) == b"payload"


def test_pruning_never_removes_the_snapshots_it_is_told_to_keep(tmp_path: Path) -> None:
    # HEAD's index, however old its file, outlives the indexes of past commits
    # (`--ref`) built after it; the folder still holds eight snapshots in all.
    now = 1_700_000_000
    for age in range(11):
        for suffix in SIDE:
            path = tmp_path / f"c{age}{suffix}"
            path.write_bytes(b"x")
            os.utime(path, (now - age, now - age))
    prune(tmp_path, keep={"c10", "c9", "gone"})
    kept = {p.name.split(".", 1)[0] for p in tmp_path.iterdir()}
    assert kept == {"c10", "c9", *(f"c{age}" for age in range(5))}
    assert all((tmp_path / f"c10{suffix}").is_file() for suffix in SIDE)


def test_pruning_with_as_many_kept_as_it_keeps_removes_every_other_snapshot(
        tmp_path: Path) -> None:
    now = 1_700_000_000
    for age in range(10):  # c0 the newest
        path = tmp_path / f"c{age}.idx"
        path.write_bytes(b"x")
        os.utime(path, (now - age, now - age))
    kept = {f"c{age}" for age in range(2, 10)}  # eight, the number kept in all
    prune(tmp_path, keep=kept)
    assert {p.stem for p in tmp_path.iterdir()} == kept


def test_a_snapshot_ranked_below_is_dated_a_millisecond_before_and_never_through_a_link(
        tmp_path: Path) -> None:
    newer, past = tmp_path / "head.idx", tmp_path / "past.idx"
    outside = tmp_path / "outside"
    for path in (newer, past, outside):
        path.write_bytes(b"x")
    when = 1_700_000_000_000_000_000
    os.utime(newer, ns=(when, when))
    os.utime(outside, ns=(when, when))
    link = tmp_path / "past.post"
    link.symlink_to(outside)
    rank_below([past, link], newer)
    assert past.stat().st_mtime_ns == when - 1_000_000
    assert link.lstat().st_mtime_ns == when - 1_000_000
    assert outside.stat().st_mtime_ns == when  # the file a link names is not touched
