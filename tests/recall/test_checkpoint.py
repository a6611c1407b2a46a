"""A build that is stopped keeps its work: the next build of the commit resumes.

The MCP server builds a large tree's index in the background, and a harness that
gives up on it kills the build. The checkpoints (recall/checkpoint.py) keep what
was analysed; these tests stop a build part-way (an exception in process, and a
real SIGKILL at the fault point), then count what the next build analyses and
check that its index is the one a build from nothing makes.
"""

from __future__ import annotations

import marshal
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from omh_git_memory.actions.workspace import open_workspace
from omh_git_memory.git.history import head_id
from omh_git_memory.recall import build, checkpoint
from omh_git_memory.recall.build import snapshot_for
from omh_git_memory.recall.cache_files import cache_files, index_dir, write_checked
from omh_git_memory.recall.snapshot import Snapshot
from tests.helpers import ROOT, make_repo

DOCS = {f"docs/page-{i:02d}.md": f"# Page {i}\n\nHow to tune widget {i} and gadget {i % 3}.\n"
        for i in range(12)}


_STUB_NOTE = build.stub_note


class _Stop(Exception):
    pass


def _counting(monkeypatch: pytest.MonkeyPatch, stop_after: int | None = None) -> list[str]:
    """Every document the build analyses is named in the list returned; with
    `stop_after`, the build stops (as a kill would) when it starts one more."""
    made: list[str] = []
    real = _STUB_NOTE

    def stub_note(path: str, *args: object, **kw: object) -> object:
        if stop_after is not None and len(made) >= stop_after:
            raise _Stop
        made.append(path)
        return real(path, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(build, "stub_note", stub_note)
    return made


def _index(snap: Snapshot) -> tuple[object, ...]:
    docs = sorted((d.as_tuple() for d in snap.docs if d is not None), key=repr)
    words = {w: snap.postings.get(w) for w in ("widget", "gadget", "tune", "page", "7")}
    return tuple(docs), repr(sorted(words.items()))


def _parts(repo: Path) -> list[Path]:
    return cache_files(index_dir(open_workspace(repo).repo), "*.part-*")


@pytest.fixture()
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("OMH_LOCAL_STORE", str(tmp_path / "local"))
    monkeypatch.setattr(checkpoint, "EVERY", 0.0)  # a checkpoint after every document
    path = tmp_path / "repo"
    make_repo(path, DOCS)
    return path


def _fresh(tmp_path: Path) -> Snapshot:
    """The index of the same documents built from nothing, in a clone of their own."""
    other = tmp_path / "fresh"
    make_repo(other, DOCS)
    ws = open_workspace(other)
    return snapshot_for(ws.repo, ws.config())


def test_a_stopped_build_resumes_and_analyses_only_what_it_had_not(
        repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = open_workspace(repo)
    first = _counting(monkeypatch, stop_after=5)
    with pytest.raises(_Stop):
        snapshot_for(ws.repo, ws.config())
    assert len(first) == 5 and _parts(repo)
    again = _counting(monkeypatch)
    snap = snapshot_for(ws.repo, ws.config())
    assert sorted(again) == sorted(set(DOCS) - set(first))
    monkeypatch.undo()
    assert _index(snap) == _index(_fresh(tmp_path))
    assert _parts(repo) == []  # the index is saved: its checkpoints are gone


def test_a_rebuild_analyses_everything_again(repo: Path, monkeypatch: pytest.MonkeyPatch
                                             ) -> None:
    ws = open_workspace(repo)
    with pytest.raises(_Stop):
        _counting(monkeypatch, stop_after=5)
        snapshot_for(ws.repo, ws.config())
    again = _counting(monkeypatch)
    snapshot_for(ws.repo, ws.config(), rebuild=True)
    assert sorted(again) == sorted(DOCS)


def test_a_damaged_checkpoint_is_not_used_and_the_index_is_still_right(
        repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = open_workspace(repo)
    with pytest.raises(_Stop):
        _counting(monkeypatch, stop_after=5)
        snapshot_for(ws.repo, ws.config())
    parts = _parts(repo)
    data = bytearray(parts[0].read_bytes())
    data[-3] ^= 0xFF
    parts[0].write_bytes(bytes(data))
    again = _counting(monkeypatch)
    snap = snapshot_for(ws.repo, ws.config())
    assert len(again) == len(DOCS) - 5 + 1  # the damaged part's document, analysed again
    monkeypatch.undo()
    assert _index(snap) == _index(_fresh(tmp_path))


def test_checkpoints_made_with_other_settings_are_not_used(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = open_workspace(repo)
    with pytest.raises(_Stop):
        _counting(monkeypatch, stop_after=5)
        snapshot_for(ws.repo, ws.config())
    monkeypatch.setattr(build, "shape", lambda config: "another shape")
    again = _counting(monkeypatch)
    snapshot_for(ws.repo, ws.config())
    assert sorted(again) == sorted(DOCS)


def test_checkpoints_are_written_only_as_often_as_asked(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With the default spacing a quick build writes no checkpoint at all (each one
    costs a write), and a slow one writes them as it goes."""
    monkeypatch.setattr(checkpoint, "EVERY", 3600.0)
    ws = open_workspace(repo)
    with pytest.raises(_Stop):
        _counting(monkeypatch, stop_after=5)
        snapshot_for(ws.repo, ws.config())
    assert _parts(repo) == []


def test_a_build_killed_at_a_checkpoint_resumes_in_the_next_process(repo: Path) -> None:
    """A real SIGKILL just after the first checkpoint, as a harness that gives up on
    the server would deal; the next `reindex` analyses only what that one had not."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMH_FAULT": "build:checkpoint",
           "OMH_LOCAL_STORE": os.environ["OMH_LOCAL_STORE"]}
    killed = subprocess.run([sys.executable, "-c", (
        "from omh_git_memory.recall import checkpoint; checkpoint.EVERY = 0.0\n"
        "from omh_git_memory.actions.workspace import open_workspace\n"
        "ws = open_workspace('.'); ws.snapshot()\n")],
        cwd=repo, env=env, capture_output=True, text=True, timeout=60)
    assert killed.returncode == -9, killed.stderr
    assert len(_parts(repo)) == 1
    ws = open_workspace(repo)
    saved = checkpoint.Checkpoints(index_dir(ws.repo), str(head_id(ws.repo)),
                                   build.shape(ws.config()))
    assert saved.resumed == 1


def test_a_checkpoint_is_written_once_its_spacing_has_passed(tmp_path: Path) -> None:
    now = [100.0]
    saved = checkpoint.Checkpoints(tmp_path, "c0ffee", "shape", clock=lambda: now[0])
    made = (_doc(), {"widget": 1})
    now[0] += checkpoint.EVERY - 0.01
    saved.add("s:1", made)
    assert cache_files(tmp_path, "*.part-*") == []
    now[0] = 100.0 + 2.0  # the documented spacing: two seconds
    saved.add("s:2", made)
    assert len(cache_files(tmp_path, "*.part-*")) == 1
    again = checkpoint.Checkpoints(tmp_path, "c0ffee", "shape")
    assert set(again.saved) == {"s:1", "s:2"} and again.known("s:2") == made


def _doc() -> checkpoint.Doc:
    return checkpoint.Doc("team", "docs/a", "topic", 739000, "A", (), "s:1", 3, "docs/a.md",
                          None, None)


@pytest.mark.parametrize("payload", [b"", b"not marshal data", marshal.dumps(5),
                                     marshal.dumps((1, 2)), marshal.dumps((1, "c0ffee", "x"))])
def test_a_checkpoint_that_is_not_one_is_removed_and_not_used(tmp_path: Path,
                                                             payload: bytes) -> None:
    """Whole and checked, yet not what a build writes (another version's layout):
    never used, and removed so that it is not read again."""
    part = tmp_path / "c0ffee.part-1"
    write_checked(part, payload)
    saved = checkpoint.Checkpoints(tmp_path, "c0ffee", "shape")
    assert saved.saved == {}
    assert not part.exists()


def test_only_other_commits_checkpoints_over_a_week_old_are_removed(tmp_path: Path) -> None:
    week = 7 * 24 * 3600
    old, recent, mine = (tmp_path / f"{name}.part-1" for name in ("old", "recent", "c0ffee"))
    for part, age in ((old, week + 60), (recent, week - 60), (mine, 0)):
        write_checked(part, b"x")
        os.utime(part, (time.time() - age, time.time() - age))
    checkpoint.Checkpoints(tmp_path, "c0ffee", "shape", resume=False).done()
    assert (old.exists(), recent.exists(), mine.exists()) == (False, True, False)
