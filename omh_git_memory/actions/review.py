"""Review: the local notes waiting for a person, and what a session left there.

Every note in the local layer is one nobody has promoted yet (promote removes
the local copy). `omh memory review` lists them newest first and lets a person
promote, edit, remove or keep each; the end-of-session line counts the ones a session
recorded. Who recorded a note is read from its `source`, which the MCP server
writes as `session <id>, <client>` (or `mcp, <client>` with no session) — see
agent/tools.source_of.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from omh_git_memory.model.errors import ChangedMeanwhile, NoteNotFound
from omh_git_memory.model.keys import Key, shell_word
from omh_git_memory.model.layers import Layer
from omh_git_memory.model.note import MAX_NOTE_BYTES, render
from omh_git_memory.stores.reading import StoredNote, read_note_bytes, read_regular
from omh_git_memory.stores.store import LocalStore

SESSION_PREFIX: Final = "session "
MCP_PREFIX: Final = "mcp, "


@dataclass(frozen=True)
class Source:
    """A note's `source`, read as who wrote it: the session (when one was named) and
    the harness that connected (when the MCP server wrote it)."""

    text: str
    session: str | None
    harness: str | None

    @classmethod
    def of(cls, source: str) -> Source:
        if source.startswith(SESSION_PREFIX):
            session, _, harness = source[len(SESSION_PREFIX):].partition(", ")
            return cls(source, session or None, harness or None)
        if source.startswith(MCP_PREFIX):
            return cls(source, None, source[len(MCP_PREFIX):] or None)
        return cls(source, None, None)


@dataclass(frozen=True)
class Pending:
    """One local note waiting for review."""

    entry: StoredNote
    key: Key
    title: str
    kind: str
    source: Source
    recorded: dt.date
    modified_ns: int  # the file's modification time: the order within one day

    @property
    def path(self) -> str:
        return self.entry.location

    def as_dict(self) -> dict[str, str | None]:
        return {"key": self.key.value, "type": self.kind, "title": self.title,
                "source": self.source.text, "session": self.source.session,
                "harness": self.source.harness, "recorded": self.recorded.isoformat(),
                "path": self.path}


# As the MCP server cleans OMH_SESSION before writing it into `source`
# (agent/tools.clean_source_part; a test keeps the two the same), so that the
# session a hook names is found whatever it holds.
MAX_SESSION: Final = 64


def clean_session(text: str) -> str:
    """`text` as the server writes a session into `source`: characters a note line
    cannot carry become `?`, and so does a comma — `, ` ends the session in
    `session <id>, <client>`, so a session `s1, x` must not read as `s1` —, runs of
    spaces one space, cut to 64 with `…`."""
    from omh_git_memory.model.keys import is_unsafe

    kept = "".join("?" if c == "," or is_unsafe(c) or not c.isprintable() else c
                   for c in text)
    flat = " ".join(kept.split())
    return flat if len(flat) <= MAX_SESSION else flat[: MAX_SESSION - 1] + "…"


def of_session(source: str, session: str) -> bool:
    """Whether `source` names `session`: exactly `session <id>` or `session <id>, …`
    (a session id holds no comma once cleaned, so `s1` never finds `s10` or `s1, x`)."""
    head = SESSION_PREFIX + clean_session(session)
    return source == head or source.startswith(head + ", ")


def pending(entries: Iterable[StoredNote], session: str | None = None) -> list[Pending]:
    """The local notes that read back (of `session` only, when given), newest first:
    by `recorded`, then by when the file was last written, then by key."""
    found: list[Pending] = []
    for entry in entries:
        note = entry.note
        if note is None:
            continue
        source = Source.of(note.source)
        if session is not None and not of_session(note.source, session):
            continue
        try:
            modified = os.lstat(entry.location).st_mtime_ns
        except OSError:
            modified = 0  # removed meanwhile: it sorts last, and acting on it says so
        found.append(Pending(entry, note.key, note.title, note.type, source, note.recorded,
                             modified))
    found.sort(key=lambda p: p.key.value)
    found.sort(key=lambda p: (p.recorded, p.modified_ns), reverse=True)
    return found


def unreadable(entries: Iterable[StoredNote]) -> list[StoredNote]:
    return [e for e in entries if e.note is None]


def session_line(count: int) -> str | None:
    """The end-of-session line, or None when the session recorded nothing."""
    if count <= 0:
        return None
    noun = "note" if count == 1 else "notes"
    return f"{count} {noun} recorded during this session — `omh memory review` to review"


def session_notes(store: LocalStore, session: str | None) -> list[Pending]:
    """The local notes `session` recorded and nobody has promoted or removed yet; none
    when no session is named (there is then no way to tell which notes are its)."""
    if not session or not clean_session(session):
        return []
    # A Stop hook runs after every answer, so only the files that hold the session's
    # words are parsed (parsing is most of a scan's cost); the full parse and
    # `pending` then decide, so the count is exactly what review would list.
    needle = (SESSION_PREFIX + clean_session(session)).encode("utf-8")
    candidates: list[StoredNote] = []
    for relpath, *_identity in store.signature():
        path = store.root / relpath
        data = read_regular(path, MAX_NOTE_BYTES + 1)
        if data is not None and needle in data:
            candidates.append(read_note_bytes(Layer.LOCAL, relpath, str(path), data))
    return pending(candidates, session)


def reread(store: LocalStore, item: Pending) -> Pending | None:
    """`item` as its file reads now (after an edit), or None when it no longer reads back."""
    data = read_regular(store.root / item.entry.relpath, MAX_NOTE_BYTES + 1)
    if data is None:
        return None
    again = pending([read_note_bytes(Layer.LOCAL, item.entry.relpath, item.entry.location,
                                     data)])
    return again[0] if again else None


def remove_pending(store: LocalStore, item: Pending) -> str:
    """Remove a reviewed local note the way `omh memory rm` does: only if its file
    still holds the bytes review showed (compare and remove). Returns the path."""
    assert item.entry.note is not None
    key = Key(item.entry.relpath.removesuffix(".md"))
    try:
        removed = store.remove_if(key, render(item.entry.note).encode("utf-8"))
    except NoteNotFound:
        raise ChangedMeanwhile(f"local/{item.key} is gone already; nothing was removed") from None
    if removed is None:
        raise ChangedMeanwhile(f"local/{item.key} changed since review showed it, so nothing "
                               f"was removed; look at it (omh memory show {shell_word(item.key)})")
    return str(removed)
