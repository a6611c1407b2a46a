"""workspace.py's `left_behind`: which stores a moved clone left behind it names, and
when it names none. test_workspace.py holds `at` (a past commit)."""

from __future__ import annotations

from pathlib import Path

import pytest

from omh_git_memory.actions.workspace import open_workspace
from omh_git_memory.stores.left_behind import Match
from omh_git_memory.stores.record import read_record
from tests.helpers import make_repo, note_text
from tests.helpers.notes import remember_seed


def _moved(tmp_path: Path) -> tuple[Path, Path]:
    """A clone with a local note, moved from tmp/a/api to tmp/b/api (its store stays
    where it was: a MOVED one), and beside it a store of the same name that no record
    says whose it is (an UNRECORDED one). The clone now, and that second store."""
    old = tmp_path / "a" / "api"
    make_repo(old)
    remember_seed(old)
    new = tmp_path / "b" / "api"
    new.parent.mkdir()
    old.rename(new)
    memory = open_workspace(new).local.root.parent
    stray = memory / "api-0123456789ab"
    (stray / "surprise").mkdir(parents=True)
    (stray / "surprise" / "x.md").write_text("a note\n")
    return new, stray


def test_only_the_certain_stores_unless_every_is_asked(tmp_path: Path) -> None:
    repo, stray = _moved(tmp_path)
    ws = open_workspace(repo)
    ws.local.root.mkdir()  # the clone's own store exists, holding nothing yet
    assert [lb.match for lb in ws.left_behind()] == [Match.MOVED]
    assert sorted(lb.match.value for lb in ws.left_behind(every=True)) == sorted(
        [Match.MOVED.value, Match.UNRECORDED.value])
    assert stray in [lb.store for lb in ws.left_behind(every=True)]


def test_every_store_while_the_clones_own_does_not_exist_yet(tmp_path: Path) -> None:
    repo, stray = _moved(tmp_path)
    ws = open_workspace(repo)
    assert not ws.local.root.exists()
    assert stray in [lb.store for lb in ws.left_behind()]


def test_none_once_the_clones_own_store_holds_a_note(tmp_path: Path) -> None:
    repo, _ = _moved(tmp_path)
    ws = open_workspace(repo)
    (ws.local.root / "surprise").mkdir(parents=True)  # as `omh adopt` leaves it, say
    (ws.local.root / "surprise" / "y.md").write_text(note_text("surprise/y"))
    assert ws.left_behind(every=True) == []


def test_none_for_a_store_named_by_omh_local_store(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    repo, _ = _moved(tmp_path)
    mounted = tmp_path / "mounted"
    mounted.mkdir()
    monkeypatch.setenv("OMH_LOCAL_STORE", str(mounted))
    ws = open_workspace(repo)
    assert ws.mounted and ws.local.root == mounted
    assert ws.left_behind(every=True) == []


def test_the_local_layer_is_read_through_the_index_unless_files_are_given(
        repo_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Recall's local layer comes from the store's index (no note parsed again);
    from the files only when the caller read them already, and none at a commit."""
    from omh_git_memory.recall.local_index import LocalIndex

    remember_seed(repo_dir)
    asked: list[int] = []
    real = LocalIndex.layer

    def layer(self: LocalIndex) -> object:
        asked.append(1)
        return real(self)

    monkeypatch.setattr(LocalIndex, "layer", layer)
    ws = open_workspace(repo_dir)
    assert len(ws.local_layer().docs) == 1 and asked == [1]
    files = ws.local_entries()
    assert len(ws.local_layer(files).docs) == 1 and asked == [1]
    assert len(ws.at("HEAD").local_layer().docs) == 0 and asked == [1]


def test_the_cached_searcher_is_none_until_the_team_index_is_built(repo_dir: Path) -> None:
    ws = open_workspace(repo_dir)  # nothing of omh's run here yet
    assert ws.cached_searcher() is None
    built = ws.searcher()  # builds and caches HEAD's team index
    cached = ws.cached_searcher()
    assert cached is not None and cached.snapshot.docs == built.snapshot.docs


def test_a_mounted_store_keeps_the_record_of_the_clone_that_made_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # OMH_LOCAL_STORE names the store, so no path finds it: its record is left as its
    # maker wrote it, even when that same clone opens it from another folder
    mounted = tmp_path / "mounted"
    monkeypatch.setenv("OMH_LOCAL_STORE", str(mounted))
    old = tmp_path / "a" / "api"
    make_repo(old)
    remember_seed(old)
    made = read_record(mounted)
    assert made is not None and made.checkout == str(old)
    new = tmp_path / "b" / "api"
    new.parent.mkdir()
    old.rename(new)
    assert open_workspace(new).local.scan()
    assert read_record(mounted) == made
