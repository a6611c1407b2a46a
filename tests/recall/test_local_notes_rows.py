"""What the cache of parsed local notes (recall/local_notes.py) keeps of a note,
and what of a cache file it believes. A note taken from the cache is the note
parsing its bytes makes, every field of it; a file that failed to parse keeps
its problem; the cache names a section's text by where it is in the file, never
by a copy (docs/recall.md: it holds "the structure and the indexed words of the
notes ..., not their text"). A cache file of another version, of a shape the code
did not write or with a row it did not make is not believed: each note is parsed
afresh and recall stays correct.

Its cases came from a mutation pass (docs/records/mutation-passes.md)."""

from __future__ import annotations

import marshal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from omh_git_memory.model.layers import Layer
from omh_git_memory.model.note import MAX_NOTE_BYTES
from omh_git_memory.recall.cache_files import read_checked, write_checked
from omh_git_memory.recall.local_notes import NOTES_CACHE, NoteCache
from omh_git_memory.stores.reading import StoredNote, read_note_bytes

FRONT = "---\nkey: zq/lever\ntype: topic\nsource: test\nrecorded: 2026-11-01\n---\n"
EVIDENCE = " ".join(["gauge"] * 250)
RELATED = " ".join(["needle"] * 350)
# Every part a note has: sections (one whose text starts the body, an empty one, long
# ones), a list, a fenced block, a link. The sections' texts appear nowhere else.
NOTE = (
    FRONT + "# Zqx lever\n\n"
    "## Expected\n# Zqx lever\n\n"
    "## Observed\n\n"
    f"## Evidence\n{EVIDENCE}\n\n"
    "## Answers\nmarker answers qv7\n\n- why does it stick?\n- when? [[zq/valve]]\n\n"
    "```\nlever --stuck\n```\n\n"
    f"## Related\n{RELATED}\n"
).encode("utf-8")
BAD_TYPE = FRONT.replace("topic", "nonsense").encode("utf-8") + b"\n# T\n"  # a problem on line 3
TOO_LARGE = b"x" * (MAX_NOTE_BYTES + 1)  # a problem with no line


def _read(cache: NoteCache, files: dict[str, bytes]) -> dict[str, StoredNote]:
    return {rel: cache.read(Layer.LOCAL, rel, f"/store/{rel}", data) for rel, data in files.items()}


def _parsed(files: dict[str, bytes]) -> dict[str, StoredNote]:
    return {
        rel: read_note_bytes(Layer.LOCAL, rel, f"/store/{rel}", data) for rel, data in files.items()
    }


def _cached(path: Path, files: dict[str, bytes]) -> None:
    """A cache file at `path` that holds `files`, as a command leaves it."""
    cache = NoteCache(path)
    _read(cache, files)
    cache.save()


def _rewrite(path: Path, change: Callable[[Any], Any]) -> None:
    """The cache file's payload changed by `change`, its checksum made good again."""
    payload = read_checked(path)
    assert payload is not None
    write_checked(path, marshal.dumps(change(marshal.loads(payload))), mode=0o600)


def _with_row(change: Callable[[tuple[Any, ...]], tuple[Any, ...]]) -> Callable[[Any], object]:
    """A change of the file's payload that changes every row's parsed note."""

    def rows(payload: Any) -> object:
        version, code, found = payload
        return version, code, [(digest, (change(row[0]), row[1])) for digest, row in found]

    return rows


def test_a_note_from_the_cache_is_the_note_its_bytes_parse_to(tmp_path: Path) -> None:
    path = tmp_path / NOTES_CACHE
    files = {"zq/lever.md": NOTE, "bad.md": BAD_TYPE, "large.md": TOO_LARGE}
    _cached(path, files)
    cache = NoteCache(path)
    assert _read(cache, files) == _parsed(files)
    assert cache.parsed == 0
    bad, large = _parsed(files)["bad.md"], _parsed(files)["large.md"]
    assert bad.problem and bad.problem_line == 3
    assert large.problem and large.problem_line is None


def test_the_cache_names_a_section_by_its_place_not_by_a_copy(tmp_path: Path) -> None:
    path = tmp_path / NOTES_CACHE
    _cached(path, {"zq/lever.md": NOTE})
    note = _parsed({"zq/lever.md": NOTE})["zq/lever.md"].note
    assert note is not None
    texts = [s.text for s in note.sections if s.text]
    assert len(texts) == 4 and texts[0] == "# Zqx lever" and EVIDENCE in texts
    held = path.read_bytes()
    assert [t for t in texts if t.encode("utf-8") in held] == []
    assert len(held) < len(NOTE) // 2


@pytest.mark.parametrize(
    "change",
    [
        lambda p: (p[0] + 1, p[1], p[2]),  # another version of the cache's format
        lambda p: (p[0], "0" * 64, p[2]),  # made by another version of the code
        lambda p: (*p, None),  # not the shape this code writes
    ],
    ids=["format", "code", "shape"],
)
def test_a_cache_file_of_another_version_is_not_believed(
    tmp_path: Path, change: Callable[[Any], object]
) -> None:
    path = tmp_path / NOTES_CACHE
    files = {"zq/lever.md": NOTE}
    _cached(path, files)
    _rewrite(path, change)
    cache = NoteCache(path)
    assert _read(cache, files) == _parsed(files)
    assert cache.parsed == 1


@pytest.mark.parametrize(
    "payload",
    [
        b"\xffnot marshal at all",  # ValueError
        b"",  # EOFError
        None,  # the right header, rows that are no list (TypeError)
    ],
    ids=["garbage", "empty", "no-rows"],
)
def test_a_cache_file_that_does_not_load_is_removed(tmp_path: Path, payload: bytes | None) -> None:
    path = tmp_path / NOTES_CACHE
    files = {"zq/lever.md": NOTE}
    _cached(path, files)
    if payload is None:
        _rewrite(path, lambda p: (p[0], p[1], 5))
    else:
        write_checked(path, payload, mode=0o600)
    cache = NoteCache(path)
    assert _read(cache, files) == _parsed(files)
    assert cache.parsed == 1
    assert not path.exists()


def test_a_row_of_the_wrong_shape_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / NOTES_CACHE
    files = {"zq/lever.md": NOTE, "bad.md": BAD_TYPE}
    _cached(path, files)
    _rewrite(
        path,
        lambda p: (
            p[0],
            p[1],
            [(digest, row[:1]) for digest, row in p[2]] + [("not bytes", row) for _, row in p[2]],
        ),
    )
    cache = NoteCache(path)
    assert _read(cache, files) == _parsed(files)
    assert cache.parsed == 2


def _set(row: tuple[Any, ...], at: int, value: object) -> tuple[Any, ...]:
    return (*row[:at], value, *row[at + 1 :])


# Rows a cache file may hold that `_stored_row` never made, each for every file.
NOT_MADE: dict[str, Callable[[tuple[Any, ...]], tuple[Any, ...]]] = {
    "key-not-text": lambda r: _set(r, 3, 5) if r[0] == "note" else r,  # TypeError
    "row-cut-short": lambda r: r[:5] if r[0] == "note" else r,  # ValueError
    "date-out-of-range": lambda r: _set(r, 6, 2**70) if r[0] == "note" else r,  # Overflow
    "key-invalid": lambda r: _set(r, 3, "Not/../A Key") if r[0] == "note" else r,  # OmhError
    "links-a-list": lambda r: _set(r, 10, list(r[10])) if r[0] == "note" else r,
    "links-not-text": lambda r: _set(r, 10, (1,)) if r[0] == "note" else r,
    "problem-not-text": lambda r: _set(r, 1, 7) if r[0] == "problem" else r,
    "problem-line-not-a-number": lambda r: _set(r, 2, "3") if r[0] == "problem" else r,
}


@pytest.mark.parametrize("change", NOT_MADE.values(), ids=NOT_MADE.keys())
def test_a_row_the_code_did_not_make_is_parsed_afresh(
    tmp_path: Path, change: Callable[[tuple[Any, ...]], tuple[Any, ...]]
) -> None:
    path = tmp_path / NOTES_CACHE
    files = {"zq/lever.md": NOTE, "bad.md": BAD_TYPE, "large.md": TOO_LARGE}
    _cached(path, files)
    _rewrite(path, _with_row(change))
    cache = NoteCache(path)
    assert _read(cache, files) == _parsed(files)
    assert cache.parsed in (1, 2)  # what was changed, the rest from the cache


def test_a_row_parsed_afresh_is_put_right_in_the_file(tmp_path: Path) -> None:
    path = tmp_path / NOTES_CACHE
    files = {"zq/lever.md": NOTE, "bad.md": BAD_TYPE}
    _cached(path, files)
    _rewrite(path, _with_row(lambda r: _set(r, 3, 5) if r[0] == "note" else _set(r, 1, 7)))
    mended = NoteCache(path)
    _read(mended, files)
    assert mended.parsed == 2
    mended.save()  # the same notes as the file held, but rows of its own
    after = NoteCache(path)
    assert _read(after, files) == _parsed(files)
    assert after.parsed == 0
