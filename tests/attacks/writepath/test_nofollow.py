"""Item 5 of the second hostile review (docs/records/review-issue-23.md), round two:
every writer moved onto the one no-follow write path (`nofollow.put` /
`open_folder`) keeps refusing a symlink at its path or on its way, and no raw write
call appears in the package outside that path but for the writers named (with the
reason) in ALLOWED."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import pytest

from omh_git_memory.git import nofollow
from omh_git_memory.git.gitfiles import WorkdirUndo, _replace_text
from omh_git_memory.model.errors import GitFailure, StoreError
from omh_git_memory.recall.cache_files import write_checked
from omh_git_memory.stores import adopt, record
from tests.helpers import ROOT

PACKAGE = ROOT / "omh_git_memory"


def _outside(tmp_path: Path) -> Path:
    target = tmp_path / "outside" / "precious"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(b"the user's own file\n")
    return target


def _kept(target: Path) -> None:
    assert target.read_bytes() == b"the user's own file\n"


def test_escape_the_index_cache_replaces_a_link_at_its_name_never_writes_through_it(
        tmp_path: Path) -> None:
    """A link at a cache file's name would have had omh's cache bytes written over
    whatever it names (a user's file). Item 5: the cache goes through
    nofollow.put, whose rename replaces the link itself."""
    target = _outside(tmp_path)
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "c.idx").symlink_to(target)
    write_checked(cache / "c.idx", b"payload", mode=0o600)
    _kept(target)
    info = os.lstat(cache / "c.idx")
    assert stat.S_ISREG(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o600
    assert [p.name for p in cache.iterdir()] == ["c.idx"]  # no temporary file left


def test_escape_the_store_record_never_writes_through_a_link(tmp_path: Path) -> None:
    """A link at `.omh-store` would have carried the store's record (and its 0600
    chmod) to the file it names. Item 5."""
    target = _outside(tmp_path)
    store = tmp_path / "store"
    store.mkdir()
    (store / record.MARKER).symlink_to(target)
    record.write_record(store, record.StoreRecord("/some/checkout", "c" * 32, "r" * 40))
    _kept(target)
    info = os.lstat(store / record.MARKER)
    assert stat.S_ISREG(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o600
    assert record.read_record(store) == record.StoreRecord("/some/checkout", "c" * 32, "r" * 40)


def test_escape_adopts_copy_never_creates_a_file_through_a_dangling_link(
        tmp_path: Path) -> None:
    """Adopt's create-once copy, at a name holding a dangling link, would have
    created the file the link names (anywhere the user can write). Item 5: the
    copy is linked into place only if nothing has the name."""
    src = tmp_path / "old" / "n.md"
    src.parent.mkdir()
    src.write_bytes(b"a note\n")
    target_root = tmp_path / "new"
    target_root.mkdir()
    aim = tmp_path / "outside" / "made-by-omh"
    aim.parent.mkdir()
    (target_root / "n.md").symlink_to(aim)
    with pytest.raises(StoreError, match="appeared with other text"):
        adopt._copy_new(src, target_root / "n.md", target_root)
    assert not aim.exists()
    assert src.read_bytes() == b"a note\n"


def test_escape_the_agent_records_never_go_through_a_linked_folder(tmp_path: Path) -> None:
    """A linked `.omh-agent/` in the local store would have had the server's
    records written into the folder it names. Items 4 and 5."""
    from omh_git_memory.actions.update import AGENT_RECORDS, record_agent_write
    from omh_git_memory.model.keys import Key
    from omh_git_memory.stores.store import LocalStore

    root = tmp_path / "store"
    root.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (root / AGENT_RECORDS).symlink_to(elsewhere)
    store = LocalStore(root)
    key = Key("a-note")
    store.path_for(key).parent.mkdir(parents=True, exist_ok=True)
    store.path_for(key).write_bytes(b"text")
    with pytest.raises(StoreError):
        record_agent_write(store, key, b"text")
    assert list(elsewhere.iterdir()) == []


def test_escape_the_index_lock_record_replaces_a_link_never_writes_through_it(
        tmp_path: Path) -> None:
    """The index-lock record in the git dir, at a name holding a link, would have
    overwritten the file the link names. Item 5."""
    target = _outside(tmp_path)
    (tmp_path / "git").mkdir()
    record = tmp_path / "git" / "omh-index.lock.pid"
    record.symlink_to(target)
    _replace_text(record, '{"pid": 1}')
    _kept(target)
    assert not record.is_symlink() and record.read_text() == '{"pid": 1}'


def test_escape_working_tree_writes_refuse_a_link_on_the_way_and_at_the_path(
        tmp_path: Path) -> None:
    """A working-tree note write (promote, update, mv) through a committed linked
    folder or at a linked name would have written outside the checkout. Item 5:
    WorkdirUndo keeps its undo, on nofollow.put underneath."""
    target = _outside(tmp_path)
    work = tmp_path / "work"
    (work / ".omh").mkdir(parents=True)
    (work / ".omh" / "notes").symlink_to(target.parent)
    undo = WorkdirUndo(work)
    with pytest.raises(GitFailure, match="symlink"):
        undo.write(".omh/notes/precious", b"omh's text\n")
    _kept(target)
    (work / ".omh" / "notes").unlink()
    (work / ".omh" / "notes").mkdir()
    (work / ".omh" / "notes" / "a.md").symlink_to(target)
    assert undo.write(".omh/notes/a.md", b"omh's text\n") is False
    _kept(target)
    assert (work / ".omh" / "notes" / "a.md").is_symlink()


def test_escape_put_create_once_never_follows_a_dangling_link(tmp_path: Path) -> None:
    """The create-once write (edit's private copy, the clone id, adopt's copies)
    at a name holding a dangling link would have created the file it names. Item 5."""
    aim = tmp_path / "made-by-omh"
    folder = tmp_path / "f"
    folder.mkdir()
    (folder / "x").symlink_to(aim)
    fd = nofollow.open_root(folder)
    try:
        assert nofollow.put(fd, "x", b"data", new_mode=0o600, create_only=True) is False
    finally:
        os.close(fd)
    assert not aim.exists()
    assert sorted(p.name for p in folder.iterdir()) == ["x"]


def test_escape_open_folder_refuses_a_link_on_the_way(tmp_path: Path) -> None:
    """The folder walk every moved writer shares refuses a link between the
    trusted folder and the file. Item 5."""
    (tmp_path / "real").mkdir()
    (tmp_path / "root").mkdir()
    (tmp_path / "root" / "sub").symlink_to(tmp_path / "real")
    with pytest.raises(nofollow.UnsafePath, match="symlink"):
        nofollow.open_folder(tmp_path / "root", "sub/deeper", make=True, dir_mode=0o700)
    assert list((tmp_path / "real").iterdir()) == []


# --- the architecture: no raw write outside the one write path -----------------------

RAW = re.compile(r"O_CREAT|\.write_text\(|\.write_bytes\(|\bopen\([^)]*[\"'][wax]b?[\"']"
                 r"|mkstemp\(")

# module -> (how many raw write calls, why they stay)
ALLOWED: dict[str, tuple[int, str]] = {
    "git/gitfiles.py": (1, "git's own index.lock: O_CREAT|O_EXCL at git's name is the lock "
                       "itself (a temporary file renamed there would not exclude git)"),
    "stores/journal.py": (2, "the staged files (written at their final name, O_EXCL) and the "
                      "store's lock file (opened, never replaced); not moved yet"),
    "git/identity.py": (2, "ssh-keygen's buffers inside a fresh private TemporaryDirectory"),
    "cli/__init__.py": (1, "the crash log: mkstemp in the temporary folder, a new name"),
    "cli/demo.py": (2, "the demo's throw-away repository and its editor script"),
}


def _raw_calls() -> dict[str, int]:
    found: dict[str, int] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel == "git/nofollow.py":
            continue
        hits = len(RAW.findall(path.read_text(encoding="utf-8")))
        if hits:
            found[rel] = hits
    return found


def test_escape_no_raw_write_outside_the_one_write_path() -> None:
    """A writer with its own `os.open(O_CREAT)`, `write_text`, `write_bytes` or
    `open(…, "w")` is one the no-follow rules can miss (how AGENTS.md, the hooks
    and `omh init` wrote through links). Item 5: every file omh writes goes
    through nofollow.py but for the writers in ALLOWED, each with its reason."""
    found = _raw_calls()
    unexpected = {m: n for m, n in found.items()
                  if m not in ALLOWED or n > ALLOWED[m][0]}
    assert not unexpected, (f"raw writes outside nofollow.py: {unexpected}; write through "
                            "nofollow.write/put, or name the writer in ALLOWED with why")
    stale = sorted(m for m in ALLOWED if found.get(m, 0) < ALLOWED[m][0])
    assert not stale, f"ALLOWED names writers that moved: {stale}; lower or drop them"


def test_escape_local_notes_never_write_through_a_link_at_their_name(tmp_path: Path) -> None:
    """A link at a local note's name would have had a new note created where it
    points (create-once) or a replaced note written over the file it names.
    Items 5 and 7: the store writes through nofollow.put, 0600."""
    from omh_git_memory.model.keys import Key
    from omh_git_memory.stores.store import LocalStore

    target = _outside(tmp_path)
    aim = tmp_path / "outside" / "made-by-omh"
    root = tmp_path / "store"
    root.mkdir()
    store = LocalStore(root)
    os.symlink(aim, store.path_for(Key("fresh")))
    assert store._link_new(Key("fresh"), "text\n") is False
    assert not aim.exists()
    os.symlink(target, store.path_for(Key("old")))
    store._replace(Key("old"), "text\n")
    _kept(target)
    info = os.lstat(store.path_for(Key("old")))
    assert stat.S_ISREG(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o600
