"""The local layer at query time (recall/local_notes.py), seen from its callers:
`local_docs` and the cache of parsed notes, `NoteCache`. A note whose bytes were
parsed and analysed before is neither parsed nor analysed again, whichever cache
object reads it next; the cache file is written when what was read differs from
it and only then; a note removed from the store leaves it; a cache that cannot be
written leaves recall as it is (docs/recall.md, "Parsed once").

Its cases came from a mutation pass (docs/records/mutation-passes.md): the commands
run end to end used the cache, but almost none of its decisions was checked on its
own."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from omh_git_memory.model.layers import Layer
from omh_git_memory.model.note import parse
from omh_git_memory.recall.document import analyse
from omh_git_memory.recall.local_notes import NOTES_CACHE, NoteCache, local_docs
from omh_git_memory.stores.reading import StoredNote, read_note_bytes
from tests.helpers import note_text

BROKEN = b"---\nkey: broken\n---\n\n# no type, no source\n"


def _files(*names: str) -> dict[str, bytes]:
    """A local store's files: a small note for each of `names`."""
    return {
        f"{name}.md": note_text(name, body=f"## Observed\nthe {name} lever sticks\n").encode(
            "utf-8"
        )
        for name in names
    }


def _read(cache: NoteCache, files: dict[str, bytes]) -> list[StoredNote]:
    """The store's files read through `cache`, as the local store's scan reads them."""
    return [cache.read(Layer.LOCAL, rel, f"/store/{rel}", data) for rel, data in files.items()]


def _recall_view(cache: NoteCache, files: dict[str, bytes]) -> list[tuple[str, dict[str, int]]]:
    """What one command's recall sees of the store: each readable note's key and the
    words it is indexed under, read and analysed through `cache`."""
    return [(note.key.value, terms) for _, terms, note in local_docs(_read(cache, files), cache)]


def _written(path: Path) -> tuple[int, int]:
    """Which write of the cache file is on disk (each write renames a new file in)."""
    info = path.stat()
    return info.st_ino, info.st_mtime_ns


def test_without_a_cache_every_readable_note_is_analysed(tmp_path: Path) -> None:
    files = {**_files("alpha", "beta"), "broken.md": BROKEN}
    entries = [
        read_note_bytes(Layer.LOCAL, rel, f"/store/{rel}", data) for rel, data in files.items()
    ]
    docs = local_docs(entries)
    assert [note.key.value for _, _, note in docs] == ["alpha", "beta"]  # the problem left out
    for doc, terms, note in docs:
        assert terms == dict(analyse(note))
        assert (doc.key, doc.layer, doc.location) == (
            note.key.value,
            "local",
            f"/store/{note.key.value}.md",
        )
    assert not list(tmp_path.iterdir())  # no cache, nothing written anywhere


def test_a_note_read_before_is_neither_parsed_nor_analysed_again(tmp_path: Path) -> None:
    path = tmp_path / NOTES_CACHE
    files = _files("alpha", "beta")
    first = NoteCache(path)
    seen = _recall_view(first, files)
    assert (first.parsed, first.analysed) == (2, 2)
    assert path.is_file()

    again = NoteCache(path)  # the next command
    assert _recall_view(again, files) == seen
    assert (again.parsed, again.analysed) == (0, 0)
    for key, terms in seen:
        assert Counter(terms) == analyse(parse(files[f"{key}.md"].decode("utf-8")))


def test_only_a_changed_note_is_parsed_again(tmp_path: Path) -> None:
    path = tmp_path / NOTES_CACHE
    files = _files("alpha", "beta")
    _recall_view(NoteCache(path), files)
    files["beta.md"] = note_text("beta", body="## Observed\nthe valve leaks\n").encode("utf-8")
    later = NoteCache(path)
    seen = dict(_recall_view(later, files))
    assert (later.parsed, later.analysed) == (1, 1)
    assert Counter(seen["beta"]) == analyse(parse(files["beta.md"].decode("utf-8")))


def test_a_cache_that_holds_what_was_read_is_not_written_again(tmp_path: Path) -> None:
    path = tmp_path / NOTES_CACHE
    files = _files("alpha", "beta")
    _recall_view(NoteCache(path), files)
    before = _written(path)
    _recall_view(NoteCache(path), files)
    assert _written(path) == before


def test_a_long_running_reader_writes_the_cache_once(tmp_path: Path) -> None:
    """A server reads the store again and again through one cache: the second read
    takes every note from it and leaves the file as it is."""
    path = tmp_path / NOTES_CACHE
    files = _files("alpha", "beta")
    cache = NoteCache(path)
    seen = _recall_view(cache, files)
    before = _written(path)
    assert _recall_view(cache, files) == seen
    assert (cache.parsed, cache.analysed) == (2, 2)
    assert _written(path) == before


def test_a_note_removed_from_the_store_leaves_the_cache(tmp_path: Path) -> None:
    path = tmp_path / NOTES_CACHE
    files = _files("alpha", "beta")
    _recall_view(NoteCache(path), files)
    del files["beta.md"]
    _recall_view(NoteCache(path), files)  # nothing new was parsed, yet the file changes
    back = NoteCache(path)
    _read(back, _files("beta"))
    assert back.parsed == 1


def test_words_analysed_after_a_plain_read_are_kept(tmp_path: Path) -> None:
    """A read that only parsed (a listing) saved notes without their words; the
    recall after it analyses them once and keeps the words for the next one."""
    path = tmp_path / NOTES_CACHE
    files = _files("alpha", "beta")
    listing = NoteCache(path)
    _read(listing, files)
    listing.save()
    recall = NoteCache(path)
    _recall_view(recall, files)
    assert (recall.parsed, recall.analysed) == (0, 2)
    after = NoteCache(path)
    _recall_view(after, files)
    assert (after.parsed, after.analysed) == (0, 0)


def test_a_note_this_cache_did_not_read_is_analysed_and_not_kept(tmp_path: Path) -> None:
    path = tmp_path / NOTES_CACHE
    cache = NoteCache(path)
    ((rel, data),) = _files("alpha").items()
    elsewhere = read_note_bytes(Layer.LOCAL, rel, f"/store/{rel}", data)
    assert elsewhere.note is not None
    assert cache.terms(elsewhere.note) is None
    cache.keep_terms(elsewhere.note, {"lever": 1})
    assert cache.analysed == 0
    [(_, terms, _)] = local_docs([elsewhere], cache)
    assert terms == dict(analyse(elsewhere.note))
    assert cache.analysed == 0


def test_the_cache_never_makes_its_folder(tmp_path: Path) -> None:
    """The cache lives in the local store: before the store exists there is none,
    and the cache does not make the store (only a write of a note does)."""
    store = tmp_path / "store"
    path = store / NOTES_CACHE
    assert [key for key, _ in _recall_view(NoteCache(path), _files("alpha"))] == ["alpha"]
    assert not store.exists()
    store.mkdir(mode=0o700)
    _recall_view(NoteCache(path), _files("alpha"))
    assert path.is_file()
    assert path.stat().st_mode & 0o777 == 0o600
    again = NoteCache(path)
    _read(again, _files("alpha"))
    assert again.parsed == 0


def test_a_cache_that_cannot_be_written_leaves_recall_as_it_is(tmp_path: Path) -> None:
    blocker = tmp_path / "index"
    blocker.write_text("a file where the cache folder should be\n")
    files = _files("alpha", "beta")
    cache = NoteCache(blocker / NOTES_CACHE)
    seen = _recall_view(cache, files)
    assert [key for key, _ in seen] == ["alpha", "beta"]
    assert blocker.read_text() == "a file where the cache folder should be\n"
    assert _recall_view(NoteCache(blocker / NOTES_CACHE), files) == seen
