"""Project-scoped MCP configuration for the common coding-agent harnesses.

Each harness is one registry entry: where its project configuration lives and
how our server entry is written there. Writing merges into the existing file —
other servers are never touched — and removing takes out only our entry.
"""

from __future__ import annotations

import json
import os
import shlex
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from omh_git_memory.agent.config_edit import (
    BOM,
    JsonEditor,
    fresh_json,
    json_value,
    line_end,
    parse_json,
    toml_append,
    toml_edit,
    toml_unappend,
)
from omh_git_memory.git import nofollow
from omh_git_memory.model.errors import ConfigError, ForeignServer
from omh_git_memory.model.keys import printable

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
    """The plain value of a JSON harness file ({} when empty); numbers stay as
    written (:class:`config_edit.Number`), so nothing here ever re-encodes one."""
    return json_value(text, path)


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
        doc = parse_json(text, path)
        if doc is None:
            ours = entry(command or COMMAND[0], list(ARGS))
            return fresh_json({**(base or {}), table: {SERVER_NAME: ours}})
        edit = JsonEditor(doc)
        if not edit.root.children:  # `{}`: as a new file, the harness's schema line too
            for key, value in (base or {}).items():
                edit.set_member((), key, value)
        servers = edit.member((), table, table)
        existing = None
        if servers is not None and servers.kind not in ("object", "null"):
            raise ConfigError(f"{path}: `{table}` is not an object; fix it, then run this again")
        if servers is not None and servers.kind == "object":
            existing = edit.member((table,), SERVER_NAME, f"{table}.{SERVER_NAME}")
        if existing is not None and existing.kind not in ("object", "null"):
            raise ConfigError(f"{path}: `{table}.{SERVER_NAME}` is not an object; fix it, "
                              "then run this again")
        kept = command_of(existing.value()) if command is None and existing else None
        ours = entry(*kept) if kept else entry(command or COMMAND[0], list(ARGS))
        if servers is None or servers.kind == "null":
            edit.set_member((), table, {SERVER_NAME: ours})
        elif existing is None or existing.kind == "null":
            edit.set_member((table,), SERVER_NAME, ours)
        else:  # what else the user put in our entry (an `env`, say) stays, as written
            for key, value in ours.items():
                edit.member((table, SERVER_NAME), key, f"{table}.{SERVER_NAME}.{key}")
                edit.set_member((table, SERVER_NAME), key, value)
        updated = edit.text()
        _same_but_ours(text, updated, path, table, base)
        return updated

    def remove(text: str) -> tuple[str | None, bool]:
        doc = parse_json(text, path)
        if doc is None:
            return None, False
        edit = JsonEditor(doc)
        servers = edit.member((), table, table)
        if servers is None or servers.kind != "object" or not servers.members(SERVER_NAME):
            return None, False
        for _ in servers.members(SERVER_NAME):  # every copy of our entry goes
            edit.delete((table,), edit.find((table,)).members(SERVER_NAME)[-1])
        updated = edit.text()
        _same_but_ours(text, updated, path, table, base)
        data = json_object(updated, path)
        rest = {k: v for k, v in data.items() if (base or {}).get(k, _NONE) != v}
        nothing_left = rest in ({}, {table: {}})
        return updated, nothing_left

    def command_in(text: str) -> tuple[str, list[str]] | None:
        servers = json_object(text, path).get(table)
        return command_of(servers.get(SERVER_NAME)) if isinstance(servers, dict) else None

    return Harness(name, path, snippet, add, remove, command_in)


def _same_but_ours(before: str, after: str, path: str, table: str,
                   base: dict[str, Any] | None) -> None:
    """Never write a file that lost anything but our entry: compare both, ours (and
    the schema line a new file gets) aside."""
    def others(text: str) -> Any:
        data = json_object(text, path)
        servers = data.get(table)
        if isinstance(servers, dict):
            servers = {k: v for k, v in servers.items() if k != SERVER_NAME}
            data[table] = servers or None
        return {k: v for k, v in data.items()
                if v is not None and (base or {}).get(k, _NONE) != v}

    if others(before) != others(after):
        raise ConfigError(f"{path}: omh could not rewrite its entry without changing "
                          "something else; edit it by hand")


_NONE: Final = object()
_TOML_TABLE = f"[mcp_servers.{SERVER_NAME}]"
CODEX_PATH: Final = ".codex/config.toml"


def _toml_string(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a TOML basic string


def _toml_entry(command: str, args: list[str]) -> str:
    return (f"{_TOML_TABLE}\ncommand = {_toml_string(command)}\n"
            f"args = [{', '.join(_toml_string(a) for a in args)}]\n")


def _toml_load(text: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text.removeprefix(BOM))
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(
            f"{CODEX_PATH} is not valid TOML ({err}); fix it, then run this again"
        ) from None
    except RecursionError:
        raise ConfigError(f"{CODEX_PATH} nests too deeply for omh to read; fix it, then run "
                          "this again") from None


def _toml_ours(data: dict[str, Any]) -> Any:
    servers = data.get("mcp_servers")
    return servers.get(SERVER_NAME) if isinstance(servers, dict) else None


def _toml_others(data: dict[str, Any]) -> dict[str, Any]:
    servers = data.get("mcp_servers")
    if isinstance(servers, dict):
        rest = {k: v for k, v in servers.items() if k != SERVER_NAME}
        data = {**data, "mcp_servers": rest}
        if not rest:
            del data["mcp_servers"]
    return data


def _toml_add(text: str, command: str | None) -> str:
    before = _toml_load(text)
    servers = before.get("mcp_servers")
    if servers is not None and not isinstance(servers, dict):
        raise ConfigError(f"{CODEX_PATH}: `mcp_servers` is not a table; fix it, then run "
                          "this again")
    existing = _toml_ours(before)
    if existing is not None and not isinstance(existing, dict):
        raise ConfigError(f"{CODEX_PATH}: `mcp_servers.{SERVER_NAME}` is not a table; fix "
                          "it, then run this again")
    kept = _stdio_command(existing) if command is None else None
    wanted = kept or (command or COMMAND[0], list(ARGS))
    if not text.strip():
        return _toml_entry(*wanted)

    def change(document: Any, tomlkit: Any) -> None:
        if "mcp_servers" not in document:
            document["mcp_servers"] = tomlkit.table(is_super_table=True)
        table = document["mcp_servers"]
        if SERVER_NAME not in table:  # inside an inline table, only an inline one fits
            inline = isinstance(table, tomlkit.items.InlineTable)
            table[SERVER_NAME] = tomlkit.inline_table() if inline else tomlkit.table()
        ours = table[SERVER_NAME]
        # Only what differs is set: a multi-line `args` that says the same stays.
        if ours.get("command") != wanted[0]:
            ours["command"] = wanted[0]
        if ours.get("args") != wanted[1]:
            ours["args"] = wanted[1]

    # A new entry is appended as a table of its own (in the file's line ends), which
    # removing it undoes byte for byte; tomlkit edits an entry that is there, or a file
    # where a plain table at the end would not be TOML (an inline `mcp_servers`).
    updated = toml_append(text, _toml_entry(*wanted)) if existing is None else None
    if updated is None or not _valid_toml(updated):
        updated = toml_edit(text, CODEX_PATH, change)
    after = _toml_load(updated)
    # Never leave a file that does not say what we meant, or that lost anything else.
    if (_stdio_command(_toml_ours(after)) != wanted
            or _toml_others(after) != _toml_others(before)
            or {k: v for k, v in _toml_ours(after).items() if k not in ("command", "args")}
            != {k: v for k, v in (existing or {}).items() if k not in ("command", "args")}):
        raise ConfigError(f"{CODEX_PATH}: omh could not rewrite its entry safely; edit "
                          f"{_TOML_TABLE} by hand")
    return updated


def _valid_toml(text: str) -> bool:
    try:
        tomllib.loads(text.removeprefix(BOM))
    except (tomllib.TOMLDecodeError, RecursionError):
        return False
    return True


def _toml_remove(text: str) -> tuple[str | None, bool]:
    before = _toml_load(text)
    ours = _toml_ours(before)
    if ours is None:
        return None, False

    def change(document: Any, _tomlkit: Any) -> None:
        table = document["mcp_servers"]
        del table[SERVER_NAME]
        if not table and getattr(table, "is_super_table", lambda: False)():
            del document["mcp_servers"]  # only the header our table implied

    found = _stdio_command(ours)
    # The entry as omh appended it comes off as it went on: the file given back as it was.
    updated = toml_unappend(text, _toml_entry(*found)) if found is not None else None
    if updated is None or not _valid_toml(updated):
        edited = toml_edit(text, CODEX_PATH, change).rstrip("\r\n")
        updated = edited + line_end(text) if text.endswith("\n") else edited
    after = _toml_load(updated)
    if _toml_ours(after) is not None or _toml_others(after) != _toml_others(before):
        raise ConfigError(f"{CODEX_PATH} sets mcp_servers.{SERVER_NAME} in a form omh does "
                          "not rewrite; remove it by hand")
    bare = updated.removeprefix(BOM)
    return (updated if bare.strip() else ""), not bare.strip()


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


_LIMIT: Final = 4 * 1024 * 1024  # a harness file is small; more is not one


def read_text(checkout: Path, rel: str) -> str | None:
    """The text of the configuration file `rel` in the checkout, None when there is
    none, read through the one no-follow path: a link on the way or at the file, a
    FIFO, a socket or a folder there is refused in one line (never followed, never
    read from, so never a hang)."""
    data = nofollow.read(checkout, rel, _LIMIT)
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{checkout / rel} is not UTF-8 text; fix it, then run this "
                          "again") from None


def _read(checkout: Path, h: Harness) -> str | None:
    return read_text(checkout, h.path)


def write_text(checkout: Path, rel: str, text: str) -> None:
    """Write the configuration file `rel` whole, through the one no-follow write path;
    a file replaced keeps its mode (a 0600 file stays 0600)."""
    nofollow.write(checkout, rel, text.encode("utf-8"))


def write(checkout: Path, h: Harness, command: str | None = None) -> Path:
    """Merge our entry into `h`'s file. `command`: the command to write; None keeps
    the one the user set in our entry (else `omh`)."""
    return merge(checkout, h, command)[0]


def merge(checkout: Path, h: Harness, command: str | None = None) -> tuple[Path, bool]:
    """As :func:`write`, and whether the file changed: a file that holds the entry
    already, as it would be written, is left as it is (not even rewritten). Without
    `command`, an entry that is not one omh writes (:func:`written_by_omh`) is
    refused, never kept nor called "there already": the file may be a teammate's,
    and the command it names is what the harness will run."""
    path = checkout / h.path
    existing = _read(checkout, h)
    found = h.command_in(existing) if existing and command is None else None
    if found is not None and not written_by_omh(checkout, *found):
        raise _foreign(h, ServerCommand(found[0], found[1], h.path))
    updated = h.add(existing or "", command)
    if updated == existing:
        return path, False
    write_text(checkout, h.path, updated)
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
    if not nothing_left:
        write_text(checkout, h.path, updated)
        return Removal(h.name, path, False, None)
    folder_gone = nofollow.remove(checkout, h.path, folder_too=True)
    return Removal(h.name, path, True, path.parent if folder_gone else None)


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


@dataclass(frozen=True)
class ServerCommand:
    """The server command a harness in a checkout would start, and where it comes from."""

    command: str
    args: list[str]
    source: str | None  # the harness file that names it; None: omh's default
    inside: Path | None = None  # the file inside the checkout the command resolves to
    # A relative or empty PATH entry the command was found through: it names another
    # folder wherever a program starts, so what it finds is never trusted as omh.
    via: str | None = None

    @property
    def own(self) -> bool:
        """Exactly what `omh mcp config` writes without `--command`: `omh mcp serve`,
        perhaps with `--repo DIR`; found on the user's PATH, never a file of the
        repository's choosing."""
        return (self.command == COMMAND[0] and own_args(self.args) and self.inside is None
                and self.via is None)

    @property
    def looks_own(self) -> bool:
        """omh's own server started from a path (`--command PATH` writes one)."""
        return os.path.basename(self.command) == COMMAND[0] and own_args(self.args)

    @property
    def shown(self) -> str:
        """The command as one shell command line (each word quoted as a shell would
        need it), escaped to one printable line: what is shown is what runs."""
        return shown_command(self.command, self.args)


def shown_command(command: str, args: list[str]) -> str:
    """`command args` as one shell-quoted, printable line."""
    return printable(shlex.join([command, *args]))


def omh_program(checkout: Path, program: str) -> bool:
    """Whether `program` is one omh writes as its own: `omh` (found on PATH), or an
    absolute path to a file called `omh` outside the checkout (`--command PATH`).
    A relative path, or one into the checkout, is a file of the repository's choosing."""
    if program == COMMAND[0]:
        return True
    if not os.path.isabs(program) or os.path.basename(program) != COMMAND[0]:
        return False
    if printable(program) != program:
        return False
    where = Path(os.path.normpath(program))
    try:
        where = where.resolve()
    except (OSError, RuntimeError):
        return False
    return not where.is_relative_to(checkout.resolve())


def written_by_omh(checkout: Path, command: str, args: list[str]) -> bool:
    """Whether an entry starting `command args` is one omh writes for its server."""
    return own_args(args) and omh_program(checkout, command)


def _foreign(h: Harness, server: ServerCommand) -> ForeignServer:
    """The refusal of a harness file whose omh entry starts `server`, not omh's own."""
    return ForeignServer(
        f"{server.source} names `{server.shown}` as the omh server: not the command "
        f"omh writes for its own server (`omh mcp serve`), so omh left the file as it "
        f"is; read that entry, and to replace it with omh's own run `omh mcp config "
        f"{h.name} --write --command omh` (or --command PATH for an omh installed "
        "elsewhere)", server)


def own_args(args: list[str]) -> bool:
    """Whether `args` are the ones omh writes for its server (`--repo DIR` allowed)."""
    rest = args[len(ARGS):]
    return (args[: len(ARGS)] == list(ARGS)
            and (rest == [] or (len(rest) == 2 and rest[0] == "--repo")
                 or (len(rest) == 1 and rest[0].startswith("--repo="))))


def server_command(checkout: Path) -> ServerCommand:
    """The server command a harness in this checkout would start: the first
    configured omh entry found (its command as the user set it, a full path or
    `--repo` included), else the default."""
    for h in HARNESSES.values():
        text = _read(checkout, h)
        found = h.command_in(text) if text else None
        if found is not None:
            return ServerCommand(found[0], found[1], h.path)
    return ServerCommand(COMMAND[0], list(ARGS), None)


def configured_command(checkout: Path) -> tuple[str, list[str]]:
    """:func:`server_command`'s command and args."""
    found = server_command(checkout)
    return found.command, found.args
