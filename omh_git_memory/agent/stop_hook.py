"""The end-of-session hook: Claude Code runs `omh memory review --summary` when it stops.

Claude Code reads hooks from `.claude/settings.json` (project scope, committed
like `.mcp.json`): `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command":
…}]}]}}`. Writing merges our one hook into that file — every other setting, event
and hook is kept as it was — and removing takes out only the hook omh wrote,
recognised by its arguments, then whatever that left empty. A file that is not a
JSON object, or whose `hooks` has another shape, is refused and left as it is,
as the harness files are (harness.py).
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import stat
from pathlib import Path
from typing import Any, Final

from omh_git_memory.agent.harness import json_object, replace_whole
from omh_git_memory.errors import ConfigError
from omh_git_memory.store import read_regular

SETTINGS: Final = ".claude/settings.json"
EVENT: Final = "Stop"
# Claude Code shows a hook's plain stdout only in its verbose view; a JSON
# `systemMessage` is shown to the person, hence --for claude.
ARGS: Final = ("memory", "review", "--summary", "--for", "claude")
_LIMIT: Final = 4 * 1024 * 1024  # a settings file is small; more is not one


def command(program: str = "omh") -> str:
    """The hook's shell command line."""
    return shlex.join([program, *ARGS])


def _ours(hook: object) -> bool:
    if not isinstance(hook, dict) or hook.get("type") != "command":
        return False
    line = hook.get("command")
    if not isinstance(line, str):
        return False
    try:
        words = shlex.split(line)
    except ValueError:
        return False
    return len(words) == len(ARGS) + 1 and tuple(words[1:]) == ARGS


def _entry(program: str) -> dict[str, Any]:
    return {"hooks": [{"type": "command", "command": command(program)}]}


def snippet(program: str = "omh") -> str:
    return json.dumps({"hooks": {EVENT: [_entry(program)]}}, indent=2) + "\n"


def _groups(data: dict[str, Any]) -> list[Any] | None:
    hooks = data.get("hooks")
    if hooks is None:
        return None
    if not isinstance(hooks, dict):
        raise ConfigError(f"{SETTINGS}: `hooks` is not an object; fix it, then run this again")
    groups = hooks.get(EVENT)
    if groups is None:
        return None
    if not isinstance(groups, list):
        raise ConfigError(f"{SETTINGS}: `hooks.{EVENT}` is not a list; fix it, then run "
                          "this again")
    return groups


def installed(data: dict[str, Any]) -> bool:
    for group in _groups(data) or []:
        hooks = group.get("hooks") if isinstance(group, dict) else None
        if isinstance(hooks, list) and any(_ours(h) for h in hooks):
            return True
    return False


def add(text: str, program: str = "omh") -> str:
    """`text` (the settings file, "" when there is none) with our Stop hook in it."""
    data = json_object(text, SETTINGS)
    if installed(data):
        return text
    if _groups(data) is None:
        data.setdefault("hooks", {})[EVENT] = []
    groups = _groups(data)
    assert groups is not None
    groups.append(_entry(program))
    return json.dumps(data, indent=2) + "\n"


def remove(text: str) -> str:
    """`text` without the hook omh wrote; a group, the Stop list and `hooks` that held
    nothing else go with it. Unchanged text when it holds no such hook."""
    data = json_object(text, SETTINGS)
    if not installed(data):
        return text
    groups = _groups(data)
    assert groups is not None
    kept: list[Any] = []
    for group in groups:
        if isinstance(group, dict) and isinstance(group.get("hooks"), list):
            before = group["hooks"]
            group["hooks"] = [h for h in before if not _ours(h)]
            if not group["hooks"] and len(before) and set(group) <= {"hooks", "matcher"}:
                continue  # it held our hook and nothing else
        kept.append(group)
    hooks = data["hooks"]
    if kept:
        hooks[EVENT] = kept
    else:
        del hooks[EVENT]
    if not hooks:
        del data["hooks"]
    return json.dumps(data, indent=2) + "\n" if data else ""


def _refuse_links(checkout: Path) -> Path:
    """The settings path, refusing a symlink (or another kind of file) at `.claude`
    or at the file itself: omh never writes through a link."""
    path = checkout / SETTINGS
    for target, want in ((path.parent, stat.S_ISDIR), (path, stat.S_ISREG)):
        try:
            mode = os.lstat(target).st_mode
        except FileNotFoundError:
            continue
        if not want(mode):
            what = "a symlink" if stat.S_ISLNK(mode) else "not a regular " + (
                "directory" if want is stat.S_ISDIR else "file")
            raise ConfigError(f"{target} is {what}; omh writes nothing through it: replace "
                              "it with a plain file or directory, or add the hook by hand")
    return path


def _read(path: Path) -> str:
    if not path.exists():
        return ""
    data = read_regular(path, _LIMIT + 1)
    if data is None or len(data) > _LIMIT:
        raise ConfigError(f"{SETTINGS} cannot be read as a settings file; fix it, then run "
                          "this again")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{SETTINGS} is not UTF-8 text; fix it, then run this again") from None



def check(checkout: Path, program: str = "omh") -> None:
    """Refuse now what :func:`write` would refuse, so that nothing else is written
    first (the server's entry) when the settings file cannot take the hook."""
    add(_read(_refuse_links(checkout)), program)


def write(checkout: Path, program: str = "omh") -> tuple[Path, bool]:
    """Merge our Stop hook into the checkout's settings; the path, and whether it
    changed (False when the hook was there already)."""
    path = _refuse_links(checkout)
    text = _read(path)
    updated = add(text, program)
    if updated == text:
        return path, False
    path.parent.mkdir(exist_ok=True)
    _refuse_links(checkout)  # .claude made meanwhile by something else
    replace_whole(path, updated)
    return path, True


def check_removal(checkout: Path) -> None:
    """Refuse now what :func:`remove_from` would refuse, before anything else is
    removed (the server's entries)."""
    text = _read(_refuse_links(checkout))
    if text:
        remove(text)


def remove_from(checkout: Path) -> Path | None:
    """Take our hook out of the checkout's settings; the path changed, or None when it
    held none. A file left holding nothing is removed; `.claude/` too, when empty."""
    path = _refuse_links(checkout)
    text = _read(path)
    if not text:
        return None
    updated = remove(text)
    if updated == text:
        return None
    if updated:
        replace_whole(path, updated)
    else:
        path.unlink()
        with contextlib.suppress(OSError):
            path.parent.rmdir()  # only when empty
    return path
