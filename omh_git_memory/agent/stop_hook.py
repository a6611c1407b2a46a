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

import json
import shlex
from pathlib import Path
from typing import Any, Final

from omh_git_memory.agent.config_edit import JsonEditor, fresh_json, json_value, parse_json
from omh_git_memory.agent.harness import omh_program, read_text, write_text
from omh_git_memory.git import nofollow
from omh_git_memory.model.errors import ConfigError
from omh_git_memory.model.keys import printable

SETTINGS: Final = ".claude/settings.json"
EVENT: Final = "Stop"
# Claude Code shows a hook's plain stdout only in its verbose view; a JSON
# `systemMessage` is shown to the person, hence --for claude.
ARGS: Final = ("memory", "review", "--summary", "--for", "claude")


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
    if hooks is None:  # absent, or `null`: no hooks
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
    """`text` (the settings file, "" when there is none) with our Stop hook in it;
    everything else in it kept as written (config_edit.py)."""
    doc = parse_json(text, SETTINGS)
    if doc is None:
        return fresh_json({"hooks": {EVENT: [_entry(program)]}})
    if installed(doc.root.value()):
        return text
    edit = JsonEditor(doc)
    hooks = edit.member((), "hooks", "hooks")
    stop = edit.member(("hooks",), EVENT, f"hooks.{EVENT}") if (
        hooks is not None and hooks.kind == "object") else None
    if hooks is None or hooks.kind == "null":
        edit.set_member((), "hooks", {EVENT: [_entry(program)]})
    elif stop is None or stop.kind == "null":
        edit.set_member(("hooks",), EVENT, [_entry(program)])
    else:
        edit.append(("hooks", EVENT), _entry(program))
    return _checked(text, edit.text())


def remove(text: str) -> str:
    """`text` without the hook omh wrote; a group, the Stop list and `hooks` that held
    nothing else go with it. Unchanged text when it holds no such hook."""
    doc = parse_json(text, SETTINGS)
    if doc is None or not installed(doc.root.value()):
        return text
    edit = JsonEditor(doc)
    edit.member((), "hooks", "hooks")
    edit.member(("hooks",), EVENT, f"hooks.{EVENT}")
    where: tuple[str | int, ...] = ("hooks", EVENT)
    for index in reversed(range(len(edit.find(where).children))):
        group = edit.find((*where, index)).value()
        inner = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(inner, list):
            continue
        ours = [j for j, h in enumerate(inner) if _ours(h)]
        if not ours:
            continue
        if len(ours) == len(inner) and set(group) <= {"hooks", "matcher"}:
            edit.delete(where, index)  # it held our hook and nothing else
            continue
        for j in reversed(ours):
            edit.delete((*where, index, "hooks"), j)
    if not edit.find(where).children:
        edit.delete(("hooks",), edit.find(("hooks",)).members(EVENT)[-1])
    if not edit.find(("hooks",)).children:
        edit.delete((), edit.root.members("hooks")[-1])
    return _checked(text, "" if not edit.root.children else edit.text())


def _checked(before: str, after: str) -> str:
    """`after`, once it is certain that nothing but omh's hook differs from `before`:
    a settings file is never written with anything else lost or changed."""
    if _without_ours(before) != _without_ours(after):
        raise ConfigError(f"{SETTINGS}: omh could not change its Stop hook without changing "
                          "something else; make the change by hand")
    return after


def _without_ours(text: str) -> Any:
    data = json_value(text, SETTINGS)
    hooks = data.get("hooks")
    if isinstance(hooks, dict) and EVENT in hooks and hooks[EVENT] is None:
        hooks = {k: v for k, v in hooks.items() if k != EVENT}  # `null`: no Stop hooks
        data = {**data, "hooks": hooks}
    if isinstance(hooks, dict) and isinstance(hooks.get(EVENT), list):
        groups = []
        for group in hooks[EVENT]:
            inner = group.get("hooks") if isinstance(group, dict) else None
            if isinstance(inner, list) and any(_ours(h) for h in inner):
                group = {**group, "hooks": [h for h in inner if not _ours(h)]}
                if not group["hooks"] and set(group) <= {"hooks", "matcher"}:
                    continue
            groups.append(group)
        hooks = {**hooks, EVENT: groups} if groups else {
            k: v for k, v in hooks.items() if k != EVENT}
        data = {**data, "hooks": hooks}
    if not data.get("hooks"):  # absent, null or left empty: the same to Claude Code
        data.pop("hooks", None)
    return data


def _read(checkout: Path) -> str:
    return read_text(checkout, SETTINGS) or ""


def _as_written(checkout: Path, line: str) -> bool:
    """Whether a hook line with omh's arguments is exactly the line omh writes, for a
    program omh writes (:func:`harness.omh_program`): the shell then runs what it says."""
    program = shlex.split(line)[0]
    return line == command(program) and omh_program(checkout, program)


def refuse_foreign(checkout: Path, text: str) -> None:
    """Refuse a settings file holding a Stop hook that passes for omh's (its arguments)
    but runs a line omh does not write: a committed file may run anything there, and
    calling it "there already" would vouch for it."""
    data = json_value(text, SETTINGS) if text.strip() else {}
    for group in _groups(data) or []:
        hooks = group.get("hooks") if isinstance(group, dict) else None
        for hook in hooks if isinstance(hooks, list) else []:
            if _ours(hook) and not _as_written(checkout, hook["command"]):
                raise ConfigError(
                    f"{SETTINGS} holds a Stop hook `{printable(hook['command'])}`: omh's "
                    "summary behind a command line omh does not write, so omh left the file "
                    "as it is; read that hook, then remove it by hand (or with `omh mcp rm "
                    "claude`, which takes out omh's server entry too) and run this again, "
                    "or leave the hook out with --no-stop-hook")


def check(checkout: Path, program: str = "omh") -> None:
    """Refuse now what :func:`write` would refuse, so that nothing else is written
    first (the server's entry) when the settings file cannot take the hook."""
    text = _read(checkout)
    refuse_foreign(checkout, text)
    add(text, program)
    nofollow.check_writable(checkout, SETTINGS)


def write(checkout: Path, program: str = "omh") -> tuple[Path, bool]:
    """Merge our Stop hook into the checkout's settings; the path, and whether it
    changed (False when the hook was there already)."""
    text = _read(checkout)
    refuse_foreign(checkout, text)
    updated = add(text, program)
    if updated == text:
        return checkout / SETTINGS, False
    write_text(checkout, SETTINGS, updated)
    return checkout / SETTINGS, True


def check_removal(checkout: Path) -> None:
    """Refuse now what :func:`remove_from` would refuse, before anything else is
    removed (the server's entries)."""
    text = _read(checkout)
    if text:
        remove(text)


def remove_from(checkout: Path) -> Path | None:
    """Take our hook out of the checkout's settings; the path changed, or None when it
    held none. A file left holding nothing is removed; `.claude/` too, when empty."""
    text = _read(checkout)
    if not text:
        return None
    updated = remove(text)
    if updated == text:
        return None
    if updated:
        write_text(checkout, SETTINGS, updated)
    else:
        nofollow.remove(checkout, SETTINGS, folder_too=True)
    return checkout / SETTINGS
