"""Citations: the files a note's Evidence names, and whether they changed since.

When a note is written, each file of the repository its Evidence names — a
repository-relative path (`src/app.py`, `src/app.py:12`, `src/app.py#L3-L9`) or,
in a code span, a symbol one file of HEAD defines (`` `parse_header` ``) — is
recorded with its blob id in the frontmatter field `cites`: the blob of the file as
the writer saw it, which is the working tree's when it holds an edit not yet
committed (`git add`'s filters applied), else HEAD's:

    cites: src/app.py@e37a4e23…, src/util.py@69ebd7c4…

Recall then compares each recorded blob id with the blob at the same path in the
tree of the commit it answers from: a different blob, or no regular file there
any more, is a change — unless, when recall answers at HEAD, the working tree holds
the recorded blob (the edit the note saw, not committed yet, or put back). This is
a soft signal, unlike `invalidated_by` (one
declared trigger whose firing makes the note stale): a note may cite several
files, a citation never refuses a write, and a changed citation says only "look
again", not "wrong". Deterministic and read from blob ids alone, no model; only a
file no longer there costs a diff, of the one commit that took it away, to say
where it was moved (git's rename detection).

Only regular files of HEAD's tree count: a folder, a symlink (never followed), a
submodule, a path with `..` or one starting with `/` is not recorded, nor one that
would not read back as itself (a symbol's file named `a, b.py`, or holding a line
break). At most
MAX_CITES files are recorded, in the order the Evidence names them, and at most
MAX_CITES entries of a field are read (a hand edit may hold thousands).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Final, NamedTuple, Protocol

from omh_git_memory.git.last_changed import changes_since, renamed_to
from omh_git_memory.git.repository import GitRepo
from omh_git_memory.git.trees import regular_blob_at
from omh_git_memory.model.plural import count

FIELD: Final = "cites"
MAX_CITES: Final = 8  # files one note records: a page of prose names a few, not a tree
# The commits a recall walks back, for all the changed citations of its results
# together, to count how many of them changed each file since (docs/recall.md).
MAX_WALK: Final = 200

# A path as Evidence writes it: path characters, segments joined by `/`, not right
# after another path character or `/` (so neither `/etc/x` nor the tail of
# `a/../b` is a path of its own). A line after it (`:12`, `#L3-L9`) ends the match.
_PATH: Final = re.compile(r"(?<![\w./+-])([\w.+-]+(?:/[\w.+-]+)*)")
# A symbol in a code span: `name`, `name()`, `a.b`, `A::b` (the last part is looked for).
_SYMBOL_SPAN: Final = re.compile(
    r"`([A-Za-z_$][\w$]*(?:(?:\.|::)[A-Za-z_$][\w$]*)*)(?:\(\))?`")
_BLOB: Final = re.compile(r"[0-9a-f]{7,64}")


class Citation(NamedTuple):
    path: str
    blob: str  # the blob id recorded when the note was written


class Tree(Protocol):
    """What finding citations asks of HEAD."""

    def blob_at(self, path: str) -> str | None: ...  # a regular file's blob id, or None
    def defined_in(self, symbols: Iterable[str]) -> dict[str, tuple[str, ...]]: ...


class AsWritten:
    """HEAD's files as the writer of a note sees them: a file of HEAD is cited by the
    blob of its working-tree copy when there is one (`on_disk`), else by HEAD's. Which
    files count, and which file defines a symbol, stay HEAD's."""

    def __init__(self, head: Tree, on_disk: Callable[[str], str | None]) -> None:
        self.head = head
        self.on_disk = on_disk

    def blob_at(self, path: str) -> str | None:
        committed = self.head.blob_at(path)
        if committed is None:
            return None
        return self.on_disk(path) or committed

    def defined_in(self, symbols: Iterable[str]) -> dict[str, tuple[str, ...]]:
        return self.head.defined_in(symbols)


def as_written(repo: GitRepo, head: Tree) -> AsWritten:
    """`head`'s files as the writer of a note in `repo`'s working tree sees them."""
    from omh_git_memory.git.filters import worktree_blob

    return AsWritten(head, lambda path: worktree_blob(repo, path))


def on_disk(repo: GitRepo) -> Callable[[str], str | None]:
    """The working tree's blob of a path (None: none), for `check`."""
    from omh_git_memory.git.filters import worktree_blob

    return lambda path: worktree_blob(repo, path)


def parse_cites(value: str | None) -> tuple[Citation, ...]:
    """The citations a `cites` value holds, at most MAX_CITES, each path once (the
    first entry naming it); an entry that is not `<path>@<blob id>` (a hand edit) is
    skipped: a soft signal never refuses a note."""
    found: dict[str, Citation] = {}
    for entry in (value or "").split(","):
        if len(found) >= MAX_CITES:
            break
        path, sep, blob = entry.strip().rpartition("@")
        if sep and _usable(path) and _BLOB.fullmatch(blob) and path not in found:
            found[path] = Citation(path, blob)
    return tuple(found.values())


def format_cites(cites: Iterable[Citation]) -> str:
    """The field's value: `<path>@<blob id>` entries joined by `, `."""
    return ", ".join(f"{c.path}@{c.blob}" for c in cites)


def _usable(path: str) -> bool:
    """A repository-relative path with `/` separators and no empty, `.` or `..`
    segment (what `_PATH` finds may still hold those)."""
    return bool(path) and not path.startswith("/") and "\\" not in path and all(
        part not in ("", ".", "..") for part in path.split("/"))


def _recordable(path: str) -> bool:
    """A path `format_cites` writes into a note and `parse_cites` reads back as
    itself: usable, printable (a note holds no line break, control character or
    lone surrogate), with no `,` (it separates entries) and no space at either end
    (a value's are taken off). A path in Evidence always is; a symbol's file may
    not be."""
    return (_usable(path) and path.isprintable() and "," not in path
            and path == path.strip())


def named_paths(text: str) -> Iterator[str]:
    """The path-like words of `text`, in order, a line number left off, a leading
    `./` and a sentence's closing dots taken away."""
    for match in _PATH.finditer(text):
        path = match.group(1).rstrip(".")
        while path.startswith("./"):
            path = path[2:]
        if _usable(path):
            yield path


def named_symbols(text: str) -> list[str]:
    """The identifiers `text` puts in code spans, in order, each once."""
    return list(dict.fromkeys(m.group(1) for m in _SYMBOL_SPAN.finditer(text)))


def cites_field(evidence: str | None, tree: Tree) -> str | None:
    """The `cites` value a note whose Evidence is `evidence` records, or None when
    it names no file of HEAD."""
    found = cite(evidence, tree) if evidence else ()
    return format_cites(found) if found else None


def cite(evidence: str, tree: Tree) -> tuple[Citation, ...]:
    """The files of HEAD `evidence` names, each with its blob id, at most MAX_CITES:
    paths first, in order, then the file that alone defines each symbol in a code
    span (a symbol defined in several files, or none, names no file)."""
    chosen: dict[str, str] = {}
    for path in named_paths(evidence):
        if len(chosen) >= MAX_CITES:
            break
        if path not in chosen and (blob := tree.blob_at(path)) is not None:
            chosen[path] = blob
    symbols = [s for s in named_symbols(evidence) if s not in chosen]
    if symbols and len(chosen) < MAX_CITES:
        defined = tree.defined_in(symbols)
        for symbol in symbols:
            files = defined.get(symbol, ())
            if len(chosen) >= MAX_CITES:
                break
            if len(files) == 1 and files[0] not in chosen and _recordable(files[0]):
                blob = tree.blob_at(files[0])
                if blob is not None:
                    chosen[files[0]] = blob
    return tuple(Citation(p, b) for p, b in chosen.items())


@dataclass(frozen=True)
class Checked:
    """One citation, compared with the commit recall answers from."""

    path: str
    recorded: str  # the blob id the note recorded
    now: str | None  # the blob at the path now; None when no regular file is there
    commits: int | None = None  # commits that changed it since, when the walk found out
    moved_to: str | None = None  # where a commit since moved the file, when it is gone

    @property
    def changed(self) -> bool:
        return self.now is None or not self.now.startswith(self.recorded)

    def describe(self) -> str:
        """`src/x.py` when unchanged; `src/x.py, changed since (3 commits)`;
        `src/x.py, gone since (1 commit)`; `src/x.py, moved to src/y.py since (1
        commit)`; without the count when the walk could not tell it."""
        if not self.changed:
            return self.path
        state = "changed" if self.now is not None else (
            "gone" if self.moved_to is None else f"moved to {self.moved_to}")
        what = f"{self.path}, {state} since"
        if self.commits is None:
            return what
        return f"{what} ({count(self.commits, 'commit')})"

    def as_json(self) -> dict[str, object]:
        return {"path": self.path, "recorded": self.recorded, "changed": self.changed,
                "gone": self.now is None, "moved_to": self.moved_to,
                "commits_since": self.commits if self.changed else 0}


Where = tuple[str, str]  # a note's (layer, key)


def check(repo: GitRepo, commit: str | None, cited: Mapping[Where, str | None],
          on_disk: Callable[[str], str | None] | None = None
          ) -> dict[Where, tuple[Checked, ...]]:
    """For each note of `cited` ((layer, key) → its `cites` value) that records any,
    its citations compared with commit `commit` (the one recall answered from): one
    path lookup each, and one walk of at most MAX_WALK commits for all the changed
    ones together, counting the commits that changed each since it held the blob
    recorded (unknown past the walk, or when it never held it on the line walked);
    for a file no longer there, a second walk finds where a commit moved it.
    With `on_disk` (the working tree's blob of a path), a citation whose file the
    working tree holds as recorded is not changed, whatever the commit holds."""
    if commit is None:
        return {}
    # An id longer than the repository's never matches a blob: a hand edit, skipped.
    parsed = {where: found for where, value in cited.items()
              if (found := tuple(c for c in parse_cites(value) if len(c.blob) <= len(commit)))}
    if not parsed:
        return {}
    now = {c.path: regular_blob_at(repo, commit, c.path)
           for found in parsed.values() for c in found}
    if on_disk is not None:
        for found in parsed.values():
            for c in found:
                if not str(now[c.path]).startswith(c.blob) and \
                        str(disk := on_disk(c.path)).startswith(c.blob):
                    now[c.path] = disk
    moved = {(c.path, c.blob) for found in parsed.values() for c in found
             if not str(now[c.path]).startswith(c.blob)}
    counts = changes_since(repo, commit, moved, MAX_WALK) if moved else {}
    gone = {path for path, _ in moved if now[path] is None}
    went = renamed_to(repo, commit, gone, MAX_WALK) if gone else {}
    return {where: tuple(Checked(c.path, c.blob, now[c.path], counts.get((c.path, c.blob)),
                                 went.get(c.path) if now[c.path] is None else None)
                         for c in found)
            for where, found in parsed.items()}


def line(checked: Iterable[Checked]) -> str | None:
    """`cites src/x.py, changed since (3 commits); src/y.py, gone since` when any cited
    file changed (only those are named), else None: an unchanged citation says
    nothing."""
    every = list(checked)
    changed = [c for c in every if c.changed]
    if not changed:
        return None
    return "cites " + "; ".join(c.describe() for c in changed)
