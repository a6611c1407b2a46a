"""Loading the cached index fast changes nothing else: the cycle collector paused
while it loads is left as it was found, after a good cache, a corrupt one and a
failing block alike; the loaded documents equal the ones that were built."""

from __future__ import annotations

import gc
import marshal
from collections.abc import Iterator
from pathlib import Path

import pytest

from omh_git_memory.actions.workspace import open_workspace
from omh_git_memory.recall.build import snapshot_for
from omh_git_memory.recall.cache_files import (
    collector_paused,
    index_dir,
    read_checked,
    write_checked,
)
from omh_git_memory.recall.snapshot import VERSION
from tests.helpers import make_repo, note_text


@pytest.fixture
def collector_on() -> Iterator[None]:
    was_on = gc.isenabled()
    gc.enable()
    yield
    if not was_on:
        gc.disable()


def _indexed(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    make_repo(repo, {"README.md": "# Tiny\n\n## Install\n\nRun it.\n",
                     **{f".omh/notes/n{i}.md": note_text(f"n{i}", body=f"## Why\n\nword{i}\n")
                        for i in range(5)}})
    return repo


def test_the_collector_resumes_after_a_block_even_when_it_fails(collector_on: None) -> None:
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("a failing block")
    assert gc.isenabled()
    gc.disable()  # a caller that turned it off keeps it off
    with collector_paused():
        pass
    assert not gc.isenabled()


def test_loading_a_good_or_a_corrupt_index_leaves_the_collector_on(
        tmp_path: Path, collector_on: None) -> None:
    repo = _indexed(tmp_path)
    ws = open_workspace(repo)
    built = snapshot_for(ws.repo, ws.config())
    loaded = snapshot_for(ws.repo, ws.config())  # from the cache files
    assert gc.isenabled()
    assert loaded.docs == built.docs and loaded.postings.table == built.postings.table
    assert ws.searcher().count == len(loaded.docs) and gc.isenabled()
    (idx,) = index_dir(ws.repo).glob("*.idx")
    post = idx.with_suffix(".post")
    # Files that pass their checks but fail inside the paused block: another
    # version's index, then postings another write left.
    write_checked(idx, marshal.dumps((VERSION - 1, *marshal.loads(read_checked(idx))[1:])))
    assert snapshot_for(ws.repo, ws.config()).docs == built.docs and gc.isenabled()
    write_checked(post, read_checked(post) + b"\0" * 8)
    assert snapshot_for(ws.repo, ws.config()).docs == built.docs and gc.isenabled()
    idx.write_bytes(idx.read_bytes()[:-7])  # truncated: fails its check
    assert snapshot_for(ws.repo, ws.config()).docs == built.docs and gc.isenabled()


def test_an_index_whose_marshal_data_is_cut_short_behind_a_good_digest_is_rebuilt(
        tmp_path: Path) -> None:
    repo = _indexed(tmp_path)
    ws = open_workspace(repo)
    built = snapshot_for(ws.repo, ws.config())
    (idx,) = index_dir(ws.repo).glob("*.idx")
    write_checked(idx, read_checked(idx)[:-50])  # the digest holds; marshal meets its end
    assert snapshot_for(ws.repo, ws.config()).docs == built.docs
    assert marshal.loads(read_checked(idx))[0] == VERSION  # written again, whole


def test_an_index_whose_documents_are_numbers_behind_a_good_digest_is_rebuilt(
        tmp_path: Path) -> None:
    repo = _indexed(tmp_path)
    ws = open_workspace(repo)
    built = snapshot_for(ws.repo, ws.config())
    (idx,) = index_dir(ws.repo).glob("*.idx")
    loaded = list(marshal.loads(read_checked(idx)))
    loaded[3] = [1] * len(loaded[3])  # the documents: numbers where tuples were
    write_checked(idx, marshal.dumps(tuple(loaded)))
    assert snapshot_for(ws.repo, ws.config()).docs == built.docs
