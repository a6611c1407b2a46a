"""Project-scoped MCP configuration for the common coding-agent harnesses.

Each harness is one registry entry: where its project configuration lives and
how our server entry is written there. Writing merges into the existing file —
other servers are never touched — and removing takes out only our entry.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from omh_git_memory.errors import ConfigError

SERVER_NAME: Final = "omh"
COMMAND: Final = ("omh", "mcp", "serve")


@dataclass(frozen=True)
class Harness:
    name: str
    path: str  # relative to the repository's top level
    snippet: Callable[[], str]  # the configuration as printed
    add: Callable[[str], str]  # existing file text ("" if none) -> text with our entry
    remove: Callable[[str], str]  # existing file text -> text without our entry


def _json_load(text: str, path: str) -> dict[str, Any]:
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


def _json_harness(name: str, path: str, table: str, entry: dict[str, Any],
                  base: dict[str, Any] | None = None) -> Harness:
    def snippet() -> str:
        return json.dumps({**(base or {}), table: {SERVER_NAME: entry}}, indent=2) + "\n"

    def add(text: str) -> str:
        data = _json_load(text, path) or dict(base or {})
        servers = data.setdefault(table, {})
        if not isinstance(servers, dict):
            raise ConfigError(f"{path}: `{table}` is not an object; fix it, then run this again")
        servers[SERVER_NAME] = entry
        return json.dumps(data, indent=2) + "\n"

    def remove(text: str) -> str:
        data = _json_load(text, path)
        servers = data.get(table)
        if isinstance(servers, dict):
            servers.pop(SERVER_NAME, None)
        return json.dumps(data, indent=2) + "\n"

    return Harness(name, path, snippet, add, remove)


_TOML_TABLE = f"[mcp_servers.{SERVER_NAME}]"
_TOML_ENTRY = (f'{_TOML_TABLE}\ncommand = "{COMMAND[0]}"\n'
               f"args = [{', '.join(json.dumps(a) for a in COMMAND[1:])}]\n")
_TOML_OURS = re.compile(rf"(?ms)^{re.escape(_TOML_TABLE)}[ \t]*\n.*?(?=^\[|\Z)")


def _toml_check(text: str, path: str) -> None:
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(
            f"{path} is not valid TOML ({err}); fix it, then run this again"
        ) from None


def _toml_add(text: str) -> str:
    _toml_check(text, ".codex/config.toml")
    if _TOML_OURS.search(text):
        return _TOML_OURS.sub(_TOML_ENTRY + "\n", text, count=1).rstrip("\n") + "\n"
    sep = "" if not text or text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
    return text + sep + _TOML_ENTRY


def _toml_remove(text: str) -> str:
    _toml_check(text, ".codex/config.toml")
    return _TOML_OURS.sub("", text).rstrip("\n") + ("\n" if text.strip() else "")


_STDIO = {"command": COMMAND[0], "args": list(COMMAND[1:])}

HARNESSES: Final[dict[str, Harness]] = {
    h.name: h
    for h in (
        _json_harness("claude", ".mcp.json", "mcpServers", {"type": "stdio", **_STDIO}),
        _json_harness("cursor", ".cursor/mcp.json", "mcpServers", dict(_STDIO)),
        _json_harness("opencode", "opencode.json", "mcp",
                      {"type": "local", "command": list(COMMAND), "enabled": True},
                      base={"$schema": "https://opencode.ai/config.json"}),
        Harness("codex", ".codex/config.toml", lambda: _TOML_ENTRY, _toml_add, _toml_remove),
    )
}


def harness(name: str) -> Harness:
    try:
        return HARNESSES[name]
    except KeyError:
        known = ", ".join(HARNESSES)
        raise ConfigError(f"no harness called {name!r}; omh knows {known}") from None


def write(checkout: Path, h: Harness) -> Path:
    path = checkout / h.path
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    updated = h.add(text)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(updated, encoding="utf-8")
    return path


def remove(checkout: Path, h: Harness) -> Path | None:
    """Take our entry out of `h`'s file; the path changed, or None when it had none."""
    path = checkout / h.path
    if not path.exists():
        return None
    text = path.read_text(encoding="utf-8")
    updated = h.remove(text)
    if updated == text:
        return None
    path.write_text(updated, encoding="utf-8")
    return path


def configured_command(checkout: Path) -> tuple[str, list[str]]:
    """The server command a harness in this checkout would start: the first
    configured omh entry found, else the default."""
    for h in HARNESSES.values():
        path = checkout / h.path
        if not path.exists():
            continue
        text = path.read_text(encoding="utf-8")
        if h.name == "codex":
            table = tomllib.loads(text).get("mcp_servers", {}).get(SERVER_NAME)
            if isinstance(table, dict) and "command" in table:
                return str(table["command"]), [str(a) for a in table.get("args", [])]
            continue
        data = _json_load(text, h.path)
        servers = data.get("mcp" if h.name == "opencode" else "mcpServers", {})
        entry = servers.get(SERVER_NAME) if isinstance(servers, dict) else None
        if isinstance(entry, dict):
            command = entry.get("command")
            if isinstance(command, list) and command:
                return str(command[0]), [str(a) for a in command[1:]]
            if isinstance(command, str):
                return command, [str(a) for a in entry.get("args", [])]
    return COMMAND[0], list(COMMAND[1:])
