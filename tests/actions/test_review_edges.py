"""actions/review.py at its edges: how a `source` reads as a session, which notes a
session's end-of-session line counts (cleaned as the server cleans, by source only,
a note of the largest size allowed and not one byte more), the order of the list,
and a remove or a re-read after the file changed underneath.

A local store in a temp folder, its files written directly: no repository needed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from omh_git_memory.actions.review import (
    MAX_SESSION,
    Source,
    clean_session,
    of_session,
    pending,
    remove_pending,
    reread,
    session_line,
    session_notes,
    unreadable,
)
from omh_git_memory.model.errors import ChangedMeanwhile
from omh_git_memory.model.note import MAX_NOTE_BYTES
from omh_git_memory.stores.store import LocalStore
from tests.helpers import note_text


@pytest.fixture
def store(tmp_path: Path) -> LocalStore:
    root = tmp_path / "local"
    root.mkdir()
    return LocalStore(root)


def _write(store: LocalStore, key: str, source: str, recorded: str = "2026-11-01",
           body: str = "", mtime_ns: int | None = None) -> Path:
    path = store.root / f"{key}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(note_text(key, source=source, recorded=recorded, body=body))
    if mtime_ns is not None:
        os.utime(path, ns=(mtime_ns, mtime_ns))
    return path


# --- a source, read as who wrote it --------------------------------------------------


def test_a_source_with_an_empty_session_or_harness_names_none() -> None:
    assert Source.of("session s1") == Source("session s1", "s1", None)
    assert Source.of("session ") == Source("session ", None, None)
    assert Source.of("session , codex") == Source("session , codex", None, "codex")
    assert Source.of("mcp, ") == Source("mcp, ", None, None)
    # Only the prefixes read: a source merely holding the words is nobody's session.
    assert Source.of("cli, session s1") == Source("cli, session s1", None, None)
    assert Source.of("mcp,cursor") == Source("mcp,cursor", None, None)


def test_a_session_of_the_longest_length_is_kept_whole_and_one_longer_is_cut() -> None:
    assert MAX_SESSION == 64
    assert clean_session("x" * 64) == "x" * 64
    assert clean_session("x" * 65) == "x" * 63 + "…"
    assert clean_session("a, b  c\x07") == "a? b c?"
    assert clean_session("a\u00a0b") == "a?b"  # prints as nothing, though not unsafe
    assert clean_session("a\u202eb") == "a?b"  # a bidi control


def test_a_source_names_a_session_exactly_or_before_its_harness() -> None:
    assert of_session("session s1", "s1")
    assert of_session("session s1, codex", "s1")
    assert not of_session("session s10", "s1")
    assert not of_session("session s1x, codex", "s1")
    assert not of_session("session s1,codex", "s1")  # `, ` ends a session, not `,`
    assert not of_session("cli", "s1")


# --- the list ------------------------------------------------------------------------


def test_newest_recorded_first_then_last_written_then_by_key(store: LocalStore) -> None:
    _write(store, "b", "cli", "2026-11-01", mtime_ns=2_000_000_000_000_000_000)
    _write(store, "a", "cli", "2026-11-01", mtime_ns=2_000_000_000_000_000_000)
    _write(store, "c", "cli", "2026-11-01", mtime_ns=1_000_000_000_000_000_000)
    _write(store, "d", "cli", "2026-11-02", mtime_ns=1_000_000_000_000_000_000)
    # d: the newest day; a and b: one day, one time, so by key; c: written earlier.
    assert [p.key.value for p in pending(store.scan())] == ["d", "a", "b", "c"]


def test_a_note_removed_after_the_scan_sorts_last_among_its_day(store: LocalStore) -> None:
    _write(store, "a", "cli", mtime_ns=1_000_000_000_000_000_000)
    gone = _write(store, "b", "cli", mtime_ns=2_000_000_000_000_000_000)
    entries = store.scan()
    gone.unlink()
    items = pending(entries)
    assert [(p.key.value, p.modified_ns) for p in items] == [
        ("a", 1_000_000_000_000_000_000), ("b", 0)]


def test_only_the_session_s_notes_and_never_an_unreadable_one(store: LocalStore) -> None:
    _write(store, "mine", "session s1, codex")
    _write(store, "theirs", "session s2, codex")
    _write(store, "cli", "cli")
    (store.root / "broken.md").write_text("no frontmatter\n")
    entries = store.scan()
    assert [p.key.value for p in pending(entries, "s1")] == ["mine"]
    assert sorted(p.key.value for p in pending(entries)) == ["cli", "mine", "theirs"]
    assert [e.relpath for e in unreadable(entries)] == ["broken.md"]
    (item,) = pending(entries, "s1")
    assert item.as_dict() == {
        "key": "mine", "type": "topic", "title": "mine", "source": "session s1, codex",
        "session": "s1", "harness": "codex", "recorded": "2026-11-01",
        "path": str(store.root / "mine.md")}


# --- the end-of-session line ---------------------------------------------------------


def test_the_line_is_none_for_no_note_and_counts_one_and_many() -> None:
    assert session_line(0) is None and session_line(-1) is None
    assert session_line(1) == "1 note recorded during this session — `omh memory review` to review"
    assert session_line(2) == "2 notes recorded during this session — `omh memory review` to review"


def test_no_session_or_one_that_cleans_to_nothing_counts_no_note(store: LocalStore) -> None:
    _write(store, "blank", "session , codex")  # a session cleaned to nothing
    _write(store, "mine", "session s1, codex")
    assert session_notes(store, None) == []
    assert session_notes(store, "") == []
    assert session_notes(store, "   ") == []  # cleans to "": it would match `session ,…`
    assert [p.key.value for p in session_notes(store, "s1")] == ["mine"]
    assert [p.key.value for p in session_notes(store, "s1 ")] == ["mine"]  # cleaned


def test_the_count_is_by_source_not_by_the_words_of_a_note(store: LocalStore) -> None:
    _write(store, "quotes", "cli", body="What did session s1, codex see?\n")
    _write(store, "mine", "session s1, codex")
    assert [p.key.value for p in session_notes(store, "s1")] == ["mine"]


def test_a_link_or_a_fifo_in_the_store_is_never_read_for_the_count(
        store: LocalStore, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.md"
    elsewhere.write_text(note_text("elsewhere", source="session s1, codex"))
    (store.root / "link.md").symlink_to(elsewhere)
    os.mkfifo(store.root / "fifo.md")  # opened for reading, it would block
    _write(store, "mine", "session s1, codex")
    assert [p.key.value for p in session_notes(store, "s1")] == ["mine"]


def _of_size(store: LocalStore, key: str, size: int, end: str = "é") -> Path:
    """A note of session s1 exactly `size` bytes long, ending in `end`: cut one byte
    short, a note ending in a two-byte character no longer decodes, and one ending
    in a line break still does."""
    head = note_text(key, source="session s1, codex", body="x")
    filler = size - len(head.encode("utf-8")) - len(end.encode("utf-8"))
    path = store.root / f"{key}.md"
    path.write_bytes((head + "x" * filler + end).encode("utf-8"))
    assert path.stat().st_size == size
    return path


def test_a_note_of_the_largest_size_counts_and_one_byte_more_does_not(
        store: LocalStore) -> None:
    _of_size(store, "largest", MAX_NOTE_BYTES)
    _of_size(store, "too-large", MAX_NOTE_BYTES + 1, end="\n")  # would read cut short
    assert [p.key.value for p in session_notes(store, "s1")] == ["largest"]
    # As review lists them: the larger one is unreadable, not pending.
    assert [p.key.value for p in pending(store.scan(), "s1")] == ["largest"]


# --- acting on a listed note ---------------------------------------------------------


def test_reread_reads_the_note_as_saved_or_none_when_it_no_longer_reads(
        store: LocalStore) -> None:
    path = _write(store, "n", "cli")
    (item,) = pending(store.scan())
    path.write_text(path.read_text().replace("# n\n", "# A better title\n"))
    again = reread(store, item)
    assert again is not None and again.title == "A better title"
    _of_size(store, "n", MAX_NOTE_BYTES)
    largest = reread(store, item)
    assert largest is not None and largest.key.value == "n"
    _of_size(store, "n", MAX_NOTE_BYTES + 1, end="\n")
    assert reread(store, item) is None
    path.write_text("no frontmatter\n")
    assert reread(store, item) is None
    path.unlink()
    assert reread(store, item) is None


def test_remove_removes_the_note_shown_and_refuses_one_gone_or_changed(
        store: LocalStore) -> None:
    path = _write(store, "n", "cli")
    (item,) = pending(store.scan())
    assert remove_pending(store, item) == str(path)
    assert not path.exists()
    with pytest.raises(ChangedMeanwhile, match="is gone already; nothing was removed"):
        remove_pending(store, item)
    _write(store, "n", "cli", body="Said otherwise.\n")
    with pytest.raises(ChangedMeanwhile, match=r"changed since review showed it.*omh memory "
                                               r"show n\)"):
        remove_pending(store, item)
    assert path.is_file()
