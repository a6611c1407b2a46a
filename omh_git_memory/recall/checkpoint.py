"""A build's work so far, kept on disk, so that a build that is stopped resumes.

Building the index of a large tree from nothing analyses every document, and the
MCP server does it in the background: a harness that gives up on the server kills
the build with it, and every start would begin again. So, every EVERY seconds, the
documents analysed since the last checkpoint are written as one more checked file,
`<commit>.part-<random>` beside the index. The next build of the same commit, with the
same shape (settings and code), reads them back and analyses only the rest; a part
that fails its check, or was made otherwise, is not used. Once the commit's index
is saved its parts are removed.
"""

from __future__ import annotations

import contextlib
import marshal
import secrets
import time
from collections.abc import Callable
from pathlib import Path
from typing import Final

from omh_git_memory.model import faults
from omh_git_memory.recall.cache_files import cache_files, discard, read_checked, write_checked
from omh_git_memory.recall.document import Doc

EVERY: float = 2.0  # seconds between checkpoints
_FORMAT: Final = 1
_OLD: Final = 7 * 24 * 3600  # another commit's parts older than this are removed

Made = tuple[Doc, dict[str, int]]


class Checkpoints:
    """The documents a build of `sha` analysed before (read once), and those it
    analyses now (written every EVERY seconds)."""

    def __init__(self, folder: Path, sha: str, made_by: str, resume: bool = True,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.folder, self.sha, self.made_by, self.clock = folder, sha, made_by, clock
        self.saved: dict[str, Made] = {}
        for path in cache_files(folder, f"{sha}.part-*") if resume else ():
            self.saved.update(self._read(path))
        self.resumed = len(self.saved)  # what the tests and the progress line count
        self._new: list[tuple[str, tuple[object, ...], dict[str, int]]] = []
        self._last = clock()

    def known(self, source: str) -> Made | None:
        """The analysis of `source` a stopped build of this commit kept, if any."""
        return self.saved.get(source)

    def add(self, source: str, made: Made) -> None:
        self._new.append((source, made[0].as_tuple(), made[1]))
        if self.clock() - self._last >= EVERY:
            self.flush()

    def flush(self) -> None:
        """Write what was analysed since the last checkpoint (nothing if nothing was)."""
        self._last = self.clock()
        if not self._new:
            return
        rows, self._new = self._new, []
        # A name of its own: two builds of one commit at once each keep their parts.
        path = self.folder / f"{self.sha}.part-{secrets.token_hex(8)}"
        with contextlib.suppress(OSError):
            self.folder.mkdir(parents=True, exist_ok=True)
            write_checked(path, marshal.dumps((_FORMAT, self.sha, self.made_by, rows)))
            faults.point(faults.BUILD)

    def done(self) -> None:
        """The commit's index is saved: its parts, and other commits' old ones, go."""
        now = time.time()
        for path in cache_files(self.folder, "*.part-*"):
            with contextlib.suppress(OSError):
                if path.name.startswith(f"{self.sha}.") or now - path.lstat().st_mtime > _OLD:
                    path.unlink()

    def _read(self, path: Path) -> dict[str, Made]:
        raw = read_checked(path)
        if raw is None:
            return {}
        try:
            loaded = marshal.loads(raw)
            form, sha, made_by, rows = loaded
            if (form, sha) != (_FORMAT, self.sha):
                raise ValueError("another version's or another commit's")
            if made_by != self.made_by:
                return {}  # valid, for other settings or code: not used, not removed
            return {source: (Doc.from_tuple(row), dict(terms)) for source, row, terms in rows
                    if len(row) == len(Doc._fields)}
        except (ValueError, EOFError, TypeError):
            discard(path)
            return {}
