"""`omh adopt` and whose store may be opened (omh_git_memory/stores/adopt.py): a store
left behind by another repository is never adopted nor taken over, a clone's own
store is nothing to adopt, and what is adopted arrives byte for byte.

Found by mutation testing (docs/records/mutation-newer-stores.md): each case holds a
guard of adopt.py that a removed check would let through."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.helpers import make_repo, omh
from tests.helpers.notes import remember_seed

SEED_KEY = "surprise/mounting-a-credential-file-returns-ebusy"


def _store_of(repo: Path) -> Path:
    return Path(omh(repo, "memory", "--json").json()["local_store"])


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


def _local_keys(repo: Path) -> list[str]:
    run = omh(repo, "memory", "--json")
    assert run.code == 0, run.err
    return sorted(n["key"] for n in run.json()["notes"] if n["layer"] == "local")


def test_adopt_never_takes_the_notes_of_another_repository(tmp_path: Path) -> None:
    other = tmp_path / "other"
    make_repo(other, {"README.md": "# another project\n"})
    remember_seed(other)
    left = _store_of(other)
    shutil.rmtree(other)  # that repository is gone; its store stays behind
    before = _files(left)
    mine = tmp_path / "mine"
    make_repo(mine, {"main.py": "print('mine')\n"})
    for named in (str(left), str(other)):  # the store's folder, or its clone's old path
        run = omh(mine, "adopt", named)
        assert run.code == 1, run.out
        assert f"{left} belongs to another repository" in run.err, run.err
        assert "nothing was moved" in run.err and run.err.count("\n") == 1
    assert _files(left) == before
    assert _local_keys(mine) == []


def test_adopt_never_takes_over_another_repositorys_store_at_this_path(
        tmp_path: Path) -> None:
    # Another repository was moved away; this one now sits at its old path, so its
    # default store's name is the other's store.
    path = tmp_path / "api"
    make_repo(path, {"README.md": "# the first\n"})
    remember_seed(path)
    store = _store_of(path)
    path.rename(tmp_path / "api-moved")
    make_repo(path, {"README.md": "# the second\n"})
    before = _files(store)
    run = omh(path, "adopt", str(store))
    assert run.code == 1, run.out
    assert f"{store} holds the notes of another repository" in run.err, run.err
    assert "it cannot be taken over" in run.err
    assert _files(store) == before


def test_adopt_of_the_clones_own_store_is_nothing_to_adopt(tmp_path: Path) -> None:
    repo = tmp_path / "api"
    make_repo(repo)
    remember_seed(repo)
    store = _store_of(repo)
    before = _files(store)
    run = omh(repo, "adopt", str(store))
    assert run.code == 1 and "this clone's own store already; nothing to adopt" in run.err
    assert _files(store) == before
    assert _local_keys(repo) == [SEED_KEY]
