"""Project-scoped MCP configuration for the common coding-agent harnesses.

Each harness is one registry entry: where its project configuration lives and
how our server entry is written there. Writing merges into the existing file —
other servers are never touched — and removing takes out only our entry.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from omh_git_memory.errors import ConfigError
from omh_git_memory.store import read_regular

SERVER_NAME: Final = "omh"
COMMAND: Final = ("omh", "mcp", "serve")
ARGS: Final = COMMAND[1:]


@dataclass(frozen=True)
class Harness:
    name: str
    path: str  # relative to the repository's top level
    snippet: Callable[[str], str]  # the configuration as printed, for a command
    # (existing file text, "" if none; the command to write, or None to keep the one
    # the user set in our entry, else `omh`) -> text with our entry
    add: Callable[[str, str | None], str]
    # existing file text -> (text without our entry, or None when it has none;
    # whether nothing but what omh writes around its entry is left)
    remove: Callable[[str], tuple[str | None, bool]]
    # existing file text -> the (command, args) our entry starts, or None
    command_in: Callable[[str], tuple[str, list[str]] | None]


def json_object(text: str, path: str) -> dict[str, Any]:
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise ConfigError(
            f"{path} is not valid JSON ({err}); fix it, then run this again"
        ) from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path} does not hold a JSON object; fix it, then run this again")
    return data


Entry = Callable[[str, list[str]], dict[str, Any]]  # (command, args) -> our entry
Command = Callable[[Any], tuple[str, list[str]] | None]  # an entry -> its (command, args)


def _stdio_command(entry: Any) -> tuple[str, list[str]] | None:
    """The command and args a `{"command": "...", "args": [...]}` entry starts."""
    if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
        return None
    args = entry.get("args", [])
    return (entry["command"], [str(a) for a in args]) if isinstance(args, list) else None


def _list_command(entry: Any) -> tuple[str, list[str]] | None:
    """The command an opencode entry (`"command": [cmd, *args]`) starts."""
    command = entry.get("command") if isinstance(entry, dict) else None
    if isinstance(command, list) and command and all(isinstance(c, str) for c in command):
        return command[0], list(command[1:])
    return None


def _json_harness(name: str, path: str, table: str, entry: Entry, command_of: Command,
                  base: dict[str, Any] | None = None) -> Harness:
    def snippet(command: str) -> str:
        ours = entry(command, list(ARGS))
        return json.dumps({**(base or {}), table: {SERVER_NAME: ours}}, indent=2) + "\n"

    def add(text: str, command: str | None) -> str:
        data = json_object(text, path) or dict(base or {})
        servers = data.setdefault(table, {})
        if not isinstance(servers, dict):
            raise ConfigError(f"{path}: `{table}` is not an object; fix it, then run this again")
        existing = servers.get(SERVER_NAME)
        kept = command_of(existing) if command is None else None
        ours = entry(*kept) if kept else entry(command or COMMAND[0], list(ARGS))
        # What else the user put in our entry (an `env`, say) stays.
        servers[SERVER_NAME] = {**(existing if isinstance(existing, dict) else {}), **ours}
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"

    def remove(text: str) -> tuple[str | None, bool]:
        data = json_object(text, path)
        servers = data.get(table)
        if not isinstance(servers, dict) or SERVER_NAME not in servers:
            return None, False
        del servers[SERVER_NAME]
        rest = {k: v for k, v in data.items() if (base or {}).get(k, _NONE) != v}
        nothing_left = rest in ({}, {table: {}})
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n", nothing_left

    def command_in(text: str) -> tuple[str, list[str]] | None:
        servers = json_object(text, path).get(table)
        return command_of(servers.get(SERVER_NAME)) if isinstance(servers, dict) else None

    return Harness(name, path, snippet, add, remove, command_in)


_NONE: Final = object()
_TOML_TABLE = f"[mcp_servers.{SERVER_NAME}]"
_TOML_OURS = re.compile(rf"(?ms)^{re.escape(_TOML_TABLE)}[ \t]*\n.*?(?=^\[|\Z)")
# Our table and its sub-tables ([mcp_servers.omh.env]), for removal.
_TOML_OURS_ALL = re.compile(
    rf"(?ms)^\[mcp_servers\.{SERVER_NAME}(?:\.[^\]\n]*)?\][ \t]*\n.*?(?=^\[|\Z)")
_TOML_COMMAND_LINE = re.compile(r"^[ \t]*(command|args)[ \t]*=")
CODEX_PATH: Final = ".codex/config.toml"


def _toml_string(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a TOML basic string


def _toml_entry(command: str, args: list[str]) -> str:
    return (f"{_TOML_TABLE}\ncommand = {_toml_string(command)}\n"
            f"args = [{', '.join(_toml_string(a) for a in args)}]\n")


def _toml_load(text: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(
            f"{CODEX_PATH} is not valid TOML ({err}); fix it, then run this again"
        ) from None


def _toml_ours(data: dict[str, Any]) -> Any:
    servers = data.get("mcp_servers")
    return servers.get(SERVER_NAME) if isinstance(servers, dict) else None


def _toml_add(text: str, command: str | None) -> str:
    existing = _toml_ours(_toml_load(text))
    kept = _stdio_command(existing) if command is None else None
    entry = _toml_entry(*kept) if kept else _toml_entry(command or COMMAND[0], list(ARGS))
    found = _TOML_OURS.search(text)
    if found:  # our table, rewritten; any other key the user put in it stays
        others = [line for line in found.group().splitlines(keepends=True)[1:]
                  if not _TOML_COMMAND_LINE.match(line)]
        updated = (text[: found.start()] + entry + "".join(others).rstrip("\n") + "\n\n"
                   + text[found.end():]).rstrip("\n") + "\n"
    elif existing is not None:
        raise ConfigError(f"{CODEX_PATH} sets mcp_servers.{SERVER_NAME} in a form omh does "
                          f"not rewrite; edit it by hand, or make it a {_TOML_TABLE} table")
    else:
        sep = "" if not text or text.endswith("\n\n") else (
            "\n" if text.endswith("\n") else "\n\n")
        updated = text + sep + entry
    written = _stdio_command(_toml_ours(_toml_load(updated)))
    wanted = kept or (command or COMMAND[0], list(ARGS))
    if written != wanted:  # never leave a file that does not say what we meant
        raise ConfigError(f"{CODEX_PATH}: omh could not rewrite its entry safely; edit "
                          f"{_TOML_TABLE} by hand")
    return updated


def _toml_remove(text: str) -> tuple[str | None, bool]:
    if _toml_ours(_toml_load(text)) is None:
        return None, False
    if not _TOML_OURS.search(text):
        raise ConfigError(f"{CODEX_PATH} sets mcp_servers.{SERVER_NAME} in a form omh does "
                          "not rewrite; remove it by hand")
    updated = _TOML_OURS_ALL.sub("", text).rstrip("\n")
    if _toml_ours(_toml_load(updated)) is not None:
        raise ConfigError(f"{CODEX_PATH} sets mcp_servers.{SERVER_NAME} in more places than "
                          f"{_TOML_TABLE}; remove it by hand")
    return (updated + "\n" if updated.strip() else ""), not updated.strip()


def _claude_entry(command: str, args: list[str]) -> dict[str, Any]:
    return {"type": "stdio", "command": command, "args": args}


def _cursor_entry(command: str, args: list[str]) -> dict[str, Any]:
    return {"command": command, "args": args}


def _opencode_entry(command: str, args: list[str]) -> dict[str, Any]:
    return {"type": "local", "command": [command, *args], "enabled": True}


HARNESSES: Final[dict[str, Harness]] = {
    h.name: h
    for h in (
        _json_harness("claude", ".mcp.json", "mcpServers", _claude_entry, _stdio_command),
        _json_harness("cursor", ".cursor/mcp.json", "mcpServers", _cursor_entry,
                      _stdio_command),
        _json_harness("opencode", "opencode.json", "mcp", _opencode_entry, _list_command,
                      base={"$schema": "https://opencode.ai/config.json"}),
        Harness("codex", CODEX_PATH, lambda c: _toml_entry(c, list(ARGS)), _toml_add,
                _toml_remove, lambda text: _stdio_command(_toml_ours(_toml_load(text)))),
    )
}


def harness(name: str) -> Harness:
    try:
        return HARNESSES[name]
    except KeyError:
        known = ", ".join(HARNESSES)
        raise ConfigError(f"no harness called {name!r}; omh knows {known}") from None


def _read(checkout: Path, h: Harness) -> str | None:
    """The harness file's text, None when there is none. A link, a FIFO or a folder
    there is refused: omh never writes through a link, nor blocks on a pipe."""
    path = checkout / h.path
    for at in (path.parent, path) if path.parent != checkout else (path,):
        if at.is_symlink():
            raise ConfigError(f"{at} is a symbolic link; omh does not write through links: "
                              "edit the file it points at by hand")
    if not os.path.lexists(path):
        return None
    data = read_regular(path)
    if data is None:
        raise ConfigError(f"{path} is not a regular file; omh leaves it alone")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{path} is not UTF-8 text; fix it, then run this again") from None


def replace_whole(path: Path, text: str) -> None:
    """Write `path` whole or not at all: a new file beside it, renamed over it."""
    tmp = path.with_name(f".{path.name}.omh-tmp-{os.getpid()}-{secrets.token_hex(4)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write(checkout: Path, h: Harness, command: str | None = None) -> Path:
    """Merge our entry into `h`'s file. `command`: the command to write; None keeps
    the one the user set in our entry (else `omh`)."""
    return merge(checkout, h, command)[0]


def merge(checkout: Path, h: Harness, command: str | None = None) -> tuple[Path, bool]:
    """As :func:`write`, and whether the file changed: a file that holds the entry
    already, as it would be written, is left as it is (not even rewritten)."""
    path = checkout / h.path
    existing = _read(checkout, h)
    updated = h.add(existing or "", command)
    if updated == existing:
        return path, False
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        replace_whole(path, updated)
    except OSError as err:
        raise ConfigError(f"cannot write {path}: {err.strerror or err}") from None
    return path, True


@dataclass(frozen=True)
class Removal:
    harness: str
    path: Path
    file_removed: bool  # nothing but our entry was in it, so the file went too
    folder_removed: Path | None  # the harness's folder, left empty, went too


def check_removal(checkout: Path, h: Harness) -> None:
    """Refuse now what :func:`remove` would refuse (a link, a FIFO, a file that does
    not parse), so that a removal from several files changes none when one refuses."""
    text = _read(checkout, h)
    if text is not None:
        h.remove(text)


def remove(checkout: Path, h: Harness) -> Removal | None:
    """Take our entry out of `h`'s file, or None when it has none. A file left with
    nothing else in it is removed, and so is the harness's own folder (`.codex/`)
    when that leaves it empty; anything the user put there keeps both."""
    path = checkout / h.path
    text = _read(checkout, h)
    if text is None:
        return None
    updated, nothing_left = h.remove(text)
    if updated is None:
        return None
    try:
        if not nothing_left:
            replace_whole(path, updated)
            return Removal(h.name, path, False, None)
        path.unlink()
    except OSError as err:
        raise ConfigError(f"cannot change {path}: {err.strerror or err}") from None
    folder = path.parent
    if folder != checkout:
        try:
            folder.rmdir()  # only when empty
        except OSError:
            return Removal(h.name, path, True, None)
        return Removal(h.name, path, True, folder)
    return Removal(h.name, path, True, None)


def configured_in(checkout: Path, h: Harness) -> tuple[str, list[str]]:
    """The command our entry in `h`'s file starts (the default when there is none)."""
    text = _read(checkout, h)
    return (h.command_in(text) if text else None) or (COMMAND[0], list(ARGS))


def configured_harnesses(checkout: Path) -> list[str]:
    """The harnesses whose project file in this checkout holds an omh entry."""
    found = []
    for h in HARNESSES.values():
        text = _read(checkout, h)
        if text and h.command_in(text) is not None:
            found.append(h.name)
    return found


def configured_command(checkout: Path) -> tuple[str, list[str]]:
    """The server command a harness in this checkout would start: the first
    configured omh entry found (its command as the user set it, a full path or
    `--repo` included), else the default."""
    for h in HARNESSES.values():
        text = _read(checkout, h)
        found = h.command_in(text) if text else None
        if found is not None:
            return found
    return COMMAND[0], list(ARGS)
