"""Each store's record of whose it is (omh_git_memory/stores/record.py): a record
that names another repository is never rewritten to claim its store.

Found by mutation testing (docs/records/mutation-newer-stores.md)."""

from __future__ import annotations

import json
from pathlib import Path

from omh_git_memory.git.repository import open_repo
from omh_git_memory.stores.location import local_store_root
from tests.helpers import note_text, omh


def test_an_older_record_of_another_repository_is_never_claimed(repo_dir: Path) -> None:
    # A record from before clone ids (no `clone`) naming another first commit, at
    # this clone's default store: the store is another repository's.
    store = local_store_root(open_repo(repo_dir))
    store.mkdir(parents=True)
    (store / "theirs.md").write_text(note_text("theirs"))
    record = {"checkout": str(repo_dir), "clone": None, "root": "1" * 40}
    (store / ".omh-store").write_text(json.dumps(record))
    for _ in range(2):
        run = omh(repo_dir, "memory", "--json")
        assert run.code == 1 and "another repository" in run.err, run.out + run.err
    assert json.loads((store / ".omh-store").read_text()) == record
