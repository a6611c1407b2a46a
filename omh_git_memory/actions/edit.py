"""`omh memory edit`: a note opened in the user's editor, written back as `update`
writes it.

The editor gets a private copy outside the checkout, never the note itself, so a
half-saved or refused text never reaches the store or a commit: it stays in the
copy, whose path the refusal names, and the note is left exactly as it was.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omh_git_memory.actions.promote import finish_team_commit
from omh_git_memory.actions.update import (
    Updated,
    check_text,
    derived_sources,
    find_target,
    write_back,
)
from omh_git_memory.actions.workspace import Workspace
from omh_git_memory.git import nofollow
from omh_git_memory.git.repository import checkout_holding
from omh_git_memory.model.errors import (
    EditorFailed,
    EditRefused,
    NoteParseError,
    NoteRefused,
    OmhError,
    UnsafePath,
)
from omh_git_memory.model.keys import Key
from omh_git_memory.model.layers import Layer
from omh_git_memory.model.note import MAX_NOTE_BYTES, decode
from omh_git_memory.stores.reading import read_regular


@dataclass(frozen=True)
class Edited:
    updated: Updated | None  # None: the text was saved unchanged


def editor_command(environ: Mapping[str, str]) -> list[str]:
    """`$VISUAL`, else `$EDITOR`, split as a shell would split a command line
    (`code --wait` is a command and an argument), or a refusal when neither is set."""
    for name in ("VISUAL", "EDITOR"):
        value = environ.get(name, "").strip()
        if not value:
            continue
        try:
            argv = shlex.split(value)
        except ValueError as err:
            raise EditorFailed(f"${name} ({value!r}) is not a command line: {err}") from None
        if argv:
            return argv
    raise EditorFailed("no editor: set VISUAL or EDITOR (for instance EDITOR=nano, or "
                       "VISUAL='code --wait'), or change the note with `omh memory update`")


def _scratch_file(ws: Workspace, key: Key, data: bytes) -> Path:
    """A private copy of the note (a directory only the user may enter, a file only
    the user may read) outside the checkout, named like the note so an editor
    knows it for Markdown."""
    folder = Path(tempfile.mkdtemp(prefix="omh-edit-"))
    # Every checkout of the clone, not only this one: from a linked worktree, a
    # TMPDIR in the main checkout is as exposed to its `git add -A`.
    holder = checkout_holding(ws.repo, folder)
    if holder is not None:
        shutil.rmtree(folder, ignore_errors=True)
        this = "the checkout" if holder == ws.checkout.resolve() else "a checkout of this clone"
        raise UnsafePath(f"the temporary directory ({folder.parent}) is inside {this} "
                         f"({holder}), where an edit could be committed by mistake; set TMPDIR "
                         "elsewhere")
    path = folder / key.relpath().name
    fd = nofollow.open_root(folder)
    try:  # create-once: the folder is new, so nothing has the name
        if not nofollow.put(fd, path.name, data, new_mode=0o600, create_only=True):
            raise FileExistsError(errno.EEXIST, "File exists", str(path))
    finally:
        os.close(fd)
    return path


def _run_editor(argv: list[str]) -> int:
    """Run the editor in the foreground and return its exit status. While it runs,
    omh ignores Ctrl-C and Ctrl-\\ as git does: they are keys of the editor's
    (Vim cancels with Ctrl-C), not a reason to kill it with unsaved work. The
    child starts before they are ignored, so it gets the usual handling itself."""
    proc = subprocess.Popen(argv)
    ignored: list[tuple[signal.Signals, Any]] = []
    with contextlib.suppress(ValueError):  # not the main thread: nothing to ignore
        for number in (signal.SIGINT, signal.SIGQUIT):
            ignored.append((number, signal.signal(number, signal.SIG_IGN)))
    try:
        return proc.wait()
    finally:
        for number, handler in ignored:
            signal.signal(number, handler)


def edit(ws: Workspace, key: str, layer: Layer | None = None, strict: bool = False,
         environ: Mapping[str, str] | None = None) -> Edited:
    """`omh memory edit`: open the note in the user's editor and write back what
    was saved, if it passes the checks. A refused text is kept, and named."""
    argv = editor_command(os.environ if environ is None else environ)
    finish_team_commit(ws)
    graph = ws.graph()
    target = find_target(graph, derived_sources(ws), key, layer)
    scratch = _scratch_file(ws, target.key, target.data)
    try:
        status = _run_editor([*argv, str(scratch)])
    except OSError as err:
        shutil.rmtree(scratch.parent, ignore_errors=True)
        raise EditorFailed(f"cannot start the editor {argv[0]!r}: {err.strerror}; nothing "
                           "changed") from None
    saved = read_regular(scratch, MAX_NOTE_BYTES + 1)  # decode refuses what is over
    if saved is None:
        shutil.rmtree(scratch.parent, ignore_errors=True)
        raise EditorFailed(f"the edited copy {scratch} is gone or not a regular file; "
                           "nothing changed")
    if status != 0:
        if saved == target.data:
            shutil.rmtree(scratch.parent, ignore_errors=True)
            raise EditorFailed(f"the editor exited with status {status} before anything "
                               "was saved; nothing changed, and its copy held no edit to keep, "
                               "so it was removed")
        raise EditRefused(f"the editor exited with status {status}", scratch)
    if saved == target.data:
        shutil.rmtree(scratch.parent, ignore_errors=True)
        return Edited(None)
    try:
        try:
            text = decode(saved)
        except NoteParseError as err:
            at = f" (line {err.line})" if err.line else ""
            raise NoteRefused(f"the saved text{at} {err}") from None
        check_text(text, target, graph, strict)
        updated = write_back(ws, target, text, verb="edit")
    except OmhError as err:
        raise EditRefused(str(err), scratch) from None
    shutil.rmtree(scratch.parent, ignore_errors=True)
    return Edited(updated)
