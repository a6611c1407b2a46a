"""Every failure a user can act on, in one place.

Every expected failure is an :class:`OmhError` whose message says what went wrong
and what to do. The edges (CLI, MCP server) turn it into one line and a non-zero
exit or a tool error; anything else is a bug. Each kind of failure has its own
class, declared here and nowhere else (tests/package/test_architecture.py checks it), so a
reader sees every way omh refuses in one file, grouped by the part that refuses.

This module imports nothing from the package when it runs: every other module
imports it, so it must be a leaf. The types named in annotations are imported for
the type checker only; an error raised by a part above the model keeps such a
value as a plain object, and the message is composed where it is raised.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from omh_git_memory.model.keys import Key
    from omh_git_memory.model.layers import Layer


class OmhError(Exception):
    """An expected failure, with a message fit to show a user as it is."""

    def lines(self) -> list[str]:
        """The message as the lines it is made of: one, unless an error lists several
        problems, each on a line of its own."""
        return [str(self)]


# --- keys and notes: what a key may be, what a note file must hold ----------------


class InvalidKey(OmhError):
    """A key that is not a safe, canonical path inside a store."""


class AmbiguousKey(OmhError):
    """The key names more than one note (one in each layer, or several files of one
    layer); the message says how to name the one meant."""


class NoteParseError(OmhError):
    """Text that does not read back as a note; `line` is 1-based when known."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


class NoteRefused(OmhError):
    """A note that fails the schema; nothing was written."""


class KeyConflict(OmhError):
    """The key already names a note in the layer being written."""


class NoteNotFound(OmhError):
    """No note with that key in the layers searched."""


# --- settings ---------------------------------------------------------------------


class ConfigError(OmhError):
    """`.omh/memory.toml` (or a file beside it) cannot be used."""


# --- git: the repository, and the files omh writes in and around it ----------------


class NotARepository(OmhError):
    """The working directory is not inside a git repository."""


class GitFailure(OmhError):
    """A git operation failed; the message names the operation."""


class NoSuchCommit(GitFailure):
    """A revision (`--ref REV`) names no commit this clone holds: unknown, a tree or
    a blob, HEAD of a branch with no commit yet, beyond a shallow clone's history."""


class UnsafePath(OmhError):
    """A path omh will not write (or read) because of what is at it or on the way,
    or because of where it is."""


# --- stores: the local store, its lock and journal, and whose store it is ---------


class StoreError(OmhError):
    """The store cannot be read or written safely."""


class ChangedMeanwhile(StoreError):
    """A note or file no longer holds what omh read before changing it (another
    command, a person's editor, a teammate's commit got there first); nothing was
    changed, and the message says what to run again."""


class StoreBusy(StoreError):
    """The store's lock stayed taken for the whole wait; nothing was read or changed."""


class BadLockTimeout(StoreError):
    """OMH_LOCK_TIMEOUT is set to something that is not a number of seconds."""


class ForeignStore(StoreError):
    """The store's record names another repository or clone: it is not opened."""


# --- recall -----------------------------------------------------------------------


class SemanticUnavailable(OmhError):
    """Semantic recall was asked for, but its extra is not installed."""

    EXTRA: Final = "pip install 'omh-git-memory[semantic]'"  # what installs it

    @staticmethod
    def fallback() -> str:
        """What is said, once, when the repository's settings turn semantic recall on
        and this machine lacks the extra: recall goes on by words alone (a committed
        setting must not take recall away from a teammate without the extra)."""
        return (f"semantic recall is on in .omh/memory.toml but its extra is not installed: "
                f"{SemanticUnavailable.EXTRA}; recalling by words only until then")


# --- actions: what each verb refuses ----------------------------------------------


class KeyTaken(KeyConflict):
    """`remember` found its key taken: in `layer`, by the note or document `where`
    names (`derived` when that is a stub or the repository topic). The message is
    the command line's; an agent, which has no `--if-exists`, gets :meth:`for_agent`."""

    def __init__(self, message: str, key: Key, layer: Layer, where: str,
                 derived: bool = False) -> None:
        self.key, self.layer, self.where, self.derived = key, layer, where, derived
        super().__init__(message)

    def for_agent(self, own: bool = False) -> str:
        """The message for an agent; `own` when the local note holding the key is one
        this agent's session wrote (so `replaces` may correct it)."""
        new = ("to record something new, word the first sentence of `observed` so it says "
               "what is new (it becomes the key)")
        # Layer.LOCAL, by its value: this module imports no layer when it runs.
        if self.layer.value == "local":
            mine = (f"it is your own note: pass replaces={self.key} to correct it; " if own
                    else "another writer recorded it, so you cannot change it; ")
            return (f"note {self.key} already exists in your local layer (recall shows it); "
                    f"{mine}{new}")
        if self.derived:
            return (f"{self.key} is a derived team note whose text comes from {self.where}; "
                    f"{new}")
        return (f"note {self.key} already exists in the team layer ({self.where}) and a local "
                f"note may not shadow it; a person changes it by editing {self.where} and "
                f"committing it; {new}")


class RepeatsANote(NoteRefused):
    """`remember --strict` found the new note saying what a note of the store says.
    `repeats` holds the near-duplicate pairs found (actions/near_duplicate.py's
    `Pair`), most alike first."""

    def __init__(self, message: str, repeats: Sequence[object]) -> None:
        self.repeats = tuple(repeats)
        super().__init__(message)


class NotUpdatable(OmhError):
    """The key names a note that is computed, not written (a stub, the topic): no
    command changes or removes it; its document does."""


class UncommittedTeamEdit(OmhError):
    """The team note's index or working-tree copy holds bytes HEAD does not."""


class NotYourNote(OmhError):
    """An agent asked to replace a note it did not write; `reason` says which case."""

    def __init__(self, key: Key | str, reason: str, where: str = "") -> None:
        self.key, self.reason, self.where = str(key), reason, where
        super().__init__(f"{key}: {reason}")


class EditorFailed(OmhError):
    """`edit` could not run an editor, or the editor left nothing to read back;
    nothing was changed."""


class EditRefused(OmhError):
    """An edited text that cannot be written; it is kept at `kept`."""

    def __init__(self, reason: str, kept: Path) -> None:
        self.kept = kept
        super().__init__(f"{reason}; the note was left as it was, and your edit is kept in "
                         f"{kept}")


class RenameRefused(OmhError):
    """The rename cannot be made as asked; nothing was changed."""


class PromoteRefused(OmhError):
    """One or more notes cannot be shared; nothing was committed."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        lines = "\n  ".join(self.problems)
        super().__init__(f"promote refused, nothing was committed:\n  {lines}")

    def lines(self) -> list[str]:
        return ["promote refused, nothing was committed:", *(f"  {p}" for p in self.problems)]


class UncommittedEdit(OmhError):
    """A team note's file holds bytes HEAD does not; removing it would lose them."""


# --- agent: the harness files omh writes for a coding agent ------------------------


class ForeignServer(ConfigError):
    """A harness file's omh entry starts something other than omh's own server.
    `server` is the command found there (agent/harness.py's `ServerCommand`)."""

    def __init__(self, message: str, server: object) -> None:
        super().__init__(message)
        self.server = server


class ToolRefused(OmhError):
    """A call an MCP tool answers with an error: the message is what the agent reads."""


class IndexBuilding(ToolRefused):
    """A call that came while the server builds its first index, and waited for it in
    vain (agent/tools.py's WAIT_FOR_INDEX)."""


# --- commands: what the command line refuses before any verb runs ------------------


class BadArguments(OmhError):
    """The command's arguments cannot be used as given (an empty question, options
    that contradict each other); nothing was read or changed."""


class BrokenInstall(OmhError):
    """A file omh ships with is missing from this installation."""
