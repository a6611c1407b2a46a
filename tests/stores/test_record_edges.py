"""Each store's record and the clone id it names, at their edges
(omh_git_memory/stores/record.py): what read_record takes for no record, the
record's exact text, that a clone id is made only when asked and never over a file
already there, and the refusals when either cannot be written.

Found by mutation testing (docs/records/mutation-s15-remember.md)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from omh_git_memory.git.repository import open_repo
from omh_git_memory.model.errors import StoreError
from omh_git_memory.stores.record import (
    CLONE_ID,
    MARKER,
    StoreRecord,
    clone_id,
    read_record,
    record_of,
    write_record,
)
from tests.helpers import make_repo

RECORD = StoreRecord("/work/api", "0123456789abcdef0123456789abcdef", "f" * 40)


def _stored(store: Path, data: bytes) -> StoreRecord | None:
    store.mkdir(exist_ok=True)
    (store / MARKER).write_bytes(data)
    return read_record(store)


def test_the_record_is_written_as_two_space_indented_json_private(tmp_path: Path) -> None:
    write_record(tmp_path, RECORD)
    assert (tmp_path / MARKER).read_text(encoding="utf-8") == (
        '{\n  "checkout": "/work/api",\n  "clone": "0123456789abcdef0123456789abcdef",\n'
        f'  "root": "{"f" * 40}"\n}}\n')
    assert (tmp_path / MARKER).stat().st_mode & 0o777 == 0o600
    assert read_record(tmp_path) == RECORD


def test_a_record_that_cannot_be_written_is_a_store_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match=r"cannot record whose store .* is"):
        write_record(tmp_path / "missing", RECORD)


@pytest.mark.parametrize("data", [
    b"\xff\xfe not utf-8",
    b"{not json",
    b'["checkout"]',
    b'"checkout"',
    b'{"checkout": 5}',
    b'{"clone": "x"}',
])
def test_what_is_no_record(tmp_path: Path, data: bytes) -> None:
    assert _stored(tmp_path / "store", data) is None


def test_a_clone_or_root_that_is_no_string_is_none(tmp_path: Path) -> None:
    found = _stored(tmp_path / "store", b'{"checkout": "/a", "clone": 7, "root": ["r"]}')
    assert found == StoreRecord("/a", None, None)


def test_only_the_first_64_kib_of_a_record_are_read(tmp_path: Path) -> None:
    def padded(size: int) -> bytes:
        head = b'{"checkout": "/a", "pad": "'
        return head + b"x" * (size - len(head) - 2) + b'"}'

    assert _stored(tmp_path / "fits", padded(64 * 1024)) == StoreRecord("/a", None, None)
    # Cut at 64 KiB, the text is no JSON: no record (a bounded read, never the whole).
    assert _stored(tmp_path / "over", padded(64 * 1024 + 4)) is None


def test_a_clone_id_is_made_only_when_asked_and_then_kept(tmp_path: Path) -> None:
    make_repo(tmp_path / "repo")
    repo = open_repo(tmp_path / "repo")
    path = repo.common_dir / CLONE_ID
    assert clone_id(repo) is None
    assert not path.exists()
    made = clone_id(repo, create=True)
    assert made is not None and re.fullmatch(r"[0-9a-f]{32}", made)
    assert clone_id(repo) == made == clone_id(repo, create=True)
    assert path.read_text(encoding="ascii") == made + "\n"


def test_a_clone_id_is_made_beside_what_omh_keeps_in_the_git_directory_already(
        tmp_path: Path) -> None:
    # A clone set up before clone ids existed: <common>/omh holds the team index.
    make_repo(tmp_path / "repo")
    repo = open_repo(tmp_path / "repo")
    (repo.common_dir / "omh" / "index").mkdir(parents=True)
    made = clone_id(repo, create=True)
    assert made is not None and clone_id(repo) == made


def test_a_clone_id_file_is_readable_by_all_less_the_umask(tmp_path: Path) -> None:
    make_repo(tmp_path / "repo")
    repo = open_repo(tmp_path / "repo")
    old = os.umask(0o022)
    try:
        clone_id(repo, create=True)
    finally:
        os.umask(old)
    assert (repo.common_dir / CLONE_ID).stat().st_mode & 0o777 == 0o644


def test_a_clone_id_file_that_holds_something_else_is_never_overwritten(
        tmp_path: Path) -> None:
    make_repo(tmp_path / "repo")
    repo = open_repo(tmp_path / "repo")
    path = repo.common_dir / CLONE_ID
    path.parent.mkdir()
    path.write_text("not an id\n", encoding="ascii")
    assert clone_id(repo, create=True) is None
    assert path.read_text(encoding="ascii") == "not an id\n"


def test_a_clone_id_that_cannot_be_made_is_none(tmp_path: Path) -> None:
    make_repo(tmp_path / "repo")
    repo = open_repo(tmp_path / "repo")
    (repo.common_dir / "omh").write_text("a file where the folder goes\n")
    assert clone_id(repo, create=True) is None


def test_the_record_of_a_clone_names_its_id_made_on_first_use(tmp_path: Path) -> None:
    make_repo(tmp_path / "repo")
    repo = open_repo(tmp_path / "repo")
    record = record_of(repo)
    assert record.clone is not None and record.clone == clone_id(repo)
    assert record.checkout == str(repo.main_checkout)
    assert record.root is not None and json.loads(record.text())["root"] == record.root
