"""The one root for failures a user can act on.

Every expected failure is an :class:`OmhError` whose message says what went wrong
and what to do. The edges (CLI, MCP server) turn it into one line and a non-zero
exit or a tool error; anything else is a bug.
"""

from __future__ import annotations


class OmhError(Exception):
    """An expected failure, with a message fit to show a user as it is."""

    def lines(self) -> list[str]:
        """The message as the lines it is made of: one, unless an error lists several
        problems, each on a line of its own."""
        return [str(self)]


class InvalidKey(OmhError):
    """A key that is not a safe, canonical path inside a store."""


class ConfigError(OmhError):
    """`.omh/memory.toml` (or a file beside it) cannot be used."""


class NoteRefused(OmhError):
    """A note that fails the schema; nothing was written."""


class KeyConflict(OmhError):
    """The key already names a note in the layer being written."""


class NoteNotFound(OmhError):
    """No note with that key in the layers searched."""


class NotARepository(OmhError):
    """The working directory is not inside a git repository."""


class GitFailure(OmhError):
    """A git operation failed; the message names the operation."""


class StoreError(OmhError):
    """The store cannot be read or written safely."""
