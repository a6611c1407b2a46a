"""`omh doctor`: prove the server a harness will start actually starts and answers.

It starts the configured server command the way a harness would (a subprocess
speaking MCP over stdio), runs initialize and tools/list, checks both tools and
their descriptions, and reports the store's path and census, and any store this
clone left behind when it was moved (see left_behind.py), which `omh init` would not
fix. What it cannot prove is whether a harness re-reads the description every
session.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Final

from omh_git_memory.actions.workspace import Workspace
from omh_git_memory.agent.census import own_prefixes, take_census
from omh_git_memory.agent.harness import (
    ServerCommand,
    configured_harnesses,
    server_command,
    shown_command,
)
from omh_git_memory.model.keys import printable
from omh_git_memory.model.plural import count
from omh_git_memory.stores.left_behind import Match

if TYPE_CHECKING:
    from omh_git_memory.agent.probe import Probe
    from omh_git_memory.recall.build import Progress


class Status(StrEnum):
    OK = "ok"
    WARN = "warn"
    FAIL = "fail"


@dataclass(frozen=True)
class Check:
    name: str
    status: Status
    detail: str


# Asked before doctor starts a server command that is not omh's own: True starts it;
# False (declined, or nobody to ask) leaves it unstarted, and the server check fails.
Trust = Callable[[ServerCommand], bool]


def never(_server: ServerCommand) -> bool:
    return False


def diagnose(ws: Workspace, environ: Mapping[str, str] | None = None,
             trust: Trust = never, progress: Progress | None = None) -> list[Check]:
    """The checks, in order. A server command that a harness file names, other than
    omh's own `omh mcp serve`, is started only when `trust` says so: the file is the
    repository's, and a clone must not run what it names unasked. `progress` is told
    of the index's documents read, when doctor builds it."""
    env = dict(os.environ if environ is None else environ)
    checks = [Check("repository", Status.OK, str(ws.checkout))]
    root = ws.local.root
    left = ws.left_behind(every=True)
    moved = [lb for lb in left if lb.match is Match.MOVED]
    hints = "".join(f"; {lb.message()}" for lb in left if lb.match is not Match.MOVED)
    if not root.is_dir():
        fix = moved[0].message() if moved else "run `omh init` (or fix OMH_LOCAL_STORE)"
        checks.append(Check("local store", Status.FAIL, f"{root} does not exist: {fix}{hints}"))
        return checks
    checks.append(Check("local store", Status.OK, str(root)))
    if left:
        checks.append(Check("moved", Status.FAIL if moved else Status.WARN,
                            "; ".join(lb.message() for lb in left)))
    # Without an index the server is started first, as a harness's first start finds
    # it (it builds the index meanwhile); the census is counted from that index after.
    cold = ws.cached_searcher() is None
    server = _server_checks(ws, env, None, trust) if cold else []
    local_files = ws.local_entries()
    docs = ws.searcher(progress=progress, local=local_files).docs
    census = take_census(docs, own_prefixes(ws.config().keys.templates))
    local = census.by_layer.get("local", 0)
    if env.get("OMH_LOCAL_STORE") and local == 0:
        checks.append(Check("census", Status.FAIL,
                            f"0 local notes in {root}, which OMH_LOCAL_STORE names: a mounted "
                            "store is expected to hold notes; check the mount"))
    elif census.total == 0:
        checks.append(Check("census", Status.WARN,
                            "0 notes: nothing committed, no documents, nothing remembered yet"))
    else:
        checks.append(Check("census", Status.OK, census.sentence()))
    unreadable = [d.location for d in docs if d is not None and d.problem]
    unreadable += [e.location for e in local_files if e.note is None]
    if unreadable:
        checks.append(Check("notes", Status.WARN, _unreadable(unreadable)))
    checks.extend(server if cold else _server_checks(ws, env, census.total, trust))
    return checks


def _unreadable(files: list[str]) -> str:
    """`2 notes cannot be read, so recall never returns them: .omh/notes/a.md,
    /home/me/.omh/memory/…/b.md; `omh memory lint` says why`."""
    named = ", ".join(printable(f) for f in files[:NAMED])
    more = f" and {len(files) - NAMED} more" if len(files) > NAMED else ""
    one = len(files) == 1
    return (f"{count(len(files), 'note')} cannot be read, so recall never returns "
            f"{'it' if one else 'them'}: {named}{more}; `omh memory lint` says why")


NAMED: Final = 3  # unreadable notes named by the check


# The least time a harness omh configures gives a server to answer its handshake by
# default: Codex's `startup_timeout_sec` (10 s); Claude Code's MCP_TIMEOUT is longer.
START_LIMIT: Final = 10.0  # seconds


def _start_check(seen: Probe) -> Check:
    took = (f"tools/list answered {seen.listed_after:.1f} s after the start, a first recall "
            f"{seen.answered_after:.1f} s")
    if seen.listed_after > START_LIMIT:
        return Check("start", Status.WARN,
                     f"{took}: a harness may give up first (Codex waits {START_LIMIT:.0f} s by "
                     "default: raise `startup_timeout_sec` in .codex/config.toml)")
    if "still being built" in seen.recall_text:
        return Check("start", Status.OK,
                     f"{took}; the first recall came while the server built the first index, "
                     "and was asked to come again (the index is kept for the next start)")
    return Check("start", Status.OK, took)


def describe(server: ServerCommand) -> str:
    """The command a harness file names, in words for the question doctor asks."""
    shown = server.shown
    if server.via is not None:
        what = (f"`{server.command}` is found at {server.inside} through the relative PATH "
                f"entry {server.via or '(empty)'!r}, which names another folder wherever a "
                "program starts (a harness starts it in the checkout), not an installed omh")
    elif server.inside is not None:
        what = (f"`{server.command}` is found at {server.inside}, a file inside the "
                "repository (PATH holds a folder of the checkout), not an installed omh")
    elif server.looks_own:
        what = "omh's own server, started from that path"
    else:
        what = "not the command omh writes for its own server (`omh mcp serve`)"
    named = f"{server.source} names" if server.source else "the default server command is"
    return f"{named} `{shown}` as the omh server: {what}"


def resolve(command: str, env: Mapping[str, str], cwd: Path) -> tuple[Path | None, str | None]:
    """The file a process started in `cwd` with `env` runs for `command`, as exec
    finds it (PATH from `env`, each relative or empty entry — and a command with a
    slash — taken from `cwd`), and the relative or empty PATH entry it was found
    through, if any. Doctor runs the absolute path it returns, so what it checked
    is what starts: there is no second lookup from another folder."""
    def runnable(path: Path) -> bool:
        return path.is_file() and os.access(path, os.X_OK)

    if os.sep in command:
        path = Path(command) if os.path.isabs(command) else cwd / command
        return (Path(os.path.abspath(path)) if runnable(path) else None), None
    for entry in os.get_exec_path(dict(env)):
        relative = not os.path.isabs(entry)
        path = (cwd / entry if relative else Path(entry)) / command
        if runnable(path):
            return Path(os.path.abspath(path)), (entry if relative else None)
    return None, None


def _server_checks(ws: Workspace, env: dict[str, str], total: int | None,
                   trust: Trust) -> list[Check]:
    server = server_command(ws.checkout)
    command, args = server.command, server.args
    shown = shown_command(command, args)
    from omh_git_memory.agent.probe import ProbeFailed, probe
    from omh_git_memory.model.errors import SemanticUnavailable

    with _start_dir(ws, args) as cwd:
        found, via = resolve(command, env, cwd)
        if found is None:
            where = ("does not exist or is not executable" if os.sep in command
                     else "is not on PATH")
            return [Check("server", Status.FAIL,
                          f"`{command}` {where}, so a harness cannot start `{shown}`; install "
                          "omh where the harness runs, or write its full path with `omh mcp "
                          "config HARNESS --write --command PATH`")]
        if via is not None:
            server = dataclasses.replace(server, via=via, inside=found)
        elif found.resolve().is_relative_to(ws.checkout.resolve()):
            server = dataclasses.replace(server, inside=found.resolve())
        if not server.own and not trust(server):
            return [Check("server", Status.FAIL,
                          f"not started: {describe(server)}; doctor starts a command a "
                          "repository names only when asked: read it, then run `omh doctor "
                          "--trust-config` (or run doctor on a terminal and answer yes)")]
        try:
            seen = probe(str(found), args, cwd, env)
        except ProbeFailed as err:
            said = _last_line(err.log)  # the server's own words beat the client's
            detail = f"it said: {said}" if said else str(err)
            return [Check("server", Status.FAIL, f"`{shown}` did not answer initialize and "
                          f"tools/list: {detail}; run it by hand to see its error")]
    unset = "" if configured_harnesses(ws.checkout) else (
        "; no harness file here starts it yet: `omh mcp config HARNESS --write` writes one")
    checks = [Check("server", Status.OK,
                    f"`{shown}` started and answered tools/list{unset}"), _start_check(seen)]
    if SemanticUnavailable.fallback() in seen.log:
        checks.append(Check("semantic", Status.WARN, SemanticUnavailable.fallback()))
    names = sorted(seen.tools)
    if names != ["recall", "remember"]:
        checks.append(Check("tools", Status.FAIL,
                            f"expected exactly recall and remember, got {', '.join(names)}"))
        return checks
    description = seen.tools["recall"]
    noun = "note" if total == 1 else "notes"
    if total is None:  # started without an index: its census comes with the next start
        checks.append(Check("tools", Status.OK,
                            "remember and recall; recall's description gives no census yet "
                            "(the server started while it built the first index)"
                            if "being built" in description else
                            "remember and recall, with the census in recall's description"))
    elif not re.search(rf"(?<![\d,]){total} {noun}\b", description):  # "11 notes" is no "1 note"
        checks.append(Check("tools", Status.FAIL,
                            f"recall's description does not carry the census ({total} {noun}): "
                            f"the server reads another store than this one"))
    elif "·" not in seen.recall_text and "no note matched" not in seen.recall_text:
        checks.append(Check("tools", Status.FAIL, "recall answered without layers and dates"))
    else:
        checks.append(Check("tools", Status.OK,
                            "remember and recall, with the census in recall's description"))
    return checks


def _last_line(log: str) -> str:
    """The last line a server wrote on stderr that says something (a traceback's last
    line is its error), cut to one readable line."""
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    if not lines:
        return ""
    return lines[-1] if len(lines[-1]) <= 300 else lines[-1][:299] + "…"


@contextlib.contextmanager
def _start_dir(ws: Workspace, args: list[str]) -> Iterator[Path]:
    """Where the server is started: the checkout, as most harnesses do — or, when
    the entry names the repository with an absolute `--repo DIR`, an empty folder
    elsewhere, as the harnesses that need `--repo` do (so the check proves the
    store is found from DIR, not from where it started)."""
    repo = args[args.index("--repo") + 1] if "--repo" in args[:-1] else next(
        (a.removeprefix("--repo=") for a in args if a.startswith("--repo=")), None)
    if repo is None or not Path(repo).is_absolute():
        yield ws.checkout
        return
    with tempfile.TemporaryDirectory(prefix="omh-doctor-") as elsewhere:
        yield Path(elsewhere)
