"""The `omh` command line: a thin layer over the core.

Exit status: 0 success; 1 an expected failure (the message says what to do) or
a check that found problems (lint refusals); 2 a usage error; 3 a bug (the
message points at a log); 130 interrupted. Core modules are imported inside
the commands so `omh --help` pays for typer alone.
"""

from __future__ import annotations

import errno
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from omh_git_memory.cli import adopt, memory

if TYPE_CHECKING:
    from omh_git_memory.agent.harness import Harness
    from omh_git_memory.model.errors import OmhError

EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_BUG = 3
EXIT_INTERRUPTED = 130
_FULL = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)  # the output's device or quota is full

app = typer.Typer(
    name="omh",
    help="Git-native, repo-scoped memory for coding agents.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
app.add_typer(memory.app, name="memory")


def _print_version(wanted: bool) -> None:
    if wanted:
        from importlib.metadata import PackageNotFoundError, version  # only when asked

        try:
            typer.echo(f"omh {version('omh-git-memory')}")
        except PackageNotFoundError:  # run from a source tree nobody installed
            typer.echo("omh (version unknown: omh-git-memory is not installed)")
        raise typer.Exit()


@app.callback()
def root(
    _version: Annotated[
        bool,
        typer.Option("--version", callback=_print_version, is_eager=True,
                     help="Print the installed version and exit."),
    ] = False,
) -> None:
    """Git-native, repo-scoped memory for coding agents."""


JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")]


@app.command()
def init(as_json: JsonFlag = False) -> None:
    """Set up omh in this repository: .omh/memory.toml, .omh/.gitignore, the local store."""
    from omh_git_memory.actions.init import initialise
    from omh_git_memory.cli.output import emit_json, here, say

    report = initialise(here())
    for found in report.left_behind:  # not a refusal: perhaps this clone's, perhaps not
        typer.echo(f"omh: {found.message()}", err=True)
    if as_json:
        emit_json(
            {
                "config": str(report.config),
                "config_created": report.config_created,
                "gitignore": str(report.gitignore),
                "gitignore_created": report.gitignore_created,
                "store": str(report.store),
                "store_created": report.store_created,
            }
        )
        return
    for path, created, what in (
        (report.config, report.config_created, "key templates; commit it"),
        (report.gitignore, report.gitignore_created, "commit it"),
    ):
        if created:
            say(f"created {path} ({what})")
        else:
            say(f"kept {path} as it is (init never rewrites it)")
    state = "created" if report.store_created else "found"
    say(f"{state} the local store at {report.store}")
    typer.echo(NEXT_STEPS, nl=False)


NEXT_STEPS = """\
next:
  omh memory remember --expected … --observed … --evidence … --answers …
      record what surprised you, as a note in your local layer
  omh memory recall "QUESTION"
      ask what earlier sessions learned (team notes, stubs of the docs, your notes)
  omh mcp config claude --write   (or cursor, opencode, codex)
      give an agent the remember and recall tools
  omh hooks install
      keep the recall index warm after pulls, checkouts and rebases
"""


app.command("adopt")(adopt.adopt)

mcp_app = typer.Typer(help="The MCP server agents use, and its harness set-up.",
                       rich_markup_mode=None)
app.add_typer(mcp_app, name="mcp")


@mcp_app.command("serve")
def mcp_serve(
    repo: Annotated[
        str | None,
        typer.Option("--repo", metavar="DIR",
                     help="Find the repository and its store from DIR, not from the folder "
                     "the harness starts the server in."),
    ] = None,
) -> None:
    """Serve the remember and recall tools over MCP on stdin/stdout."""
    from pathlib import Path

    from omh_git_memory.agent.transport import serve

    if repo is not None and not repo.strip():
        raise typer.BadParameter("--repo needs a folder", param_hint="--repo")
    serve(Path(repo) if repo is not None else Path.cwd())


@mcp_app.command("config")
def mcp_config(
    harness: Annotated[str, typer.Argument(help="claude, cursor, opencode or codex.")],
    write: Annotated[
        bool, typer.Option("--write", help="Merge it into the harness's project file.")
    ] = False,
    command: Annotated[
        str | None,
        typer.Option("--command", metavar="PATH",
                     help="The command the harness starts (a full path, say); default: the "
                     "one already in the omh entry, else `omh`."),
    ] = None,
    offer_hook: Annotated[
        bool,
        typer.Option("--stop-hook/--no-stop-hook",
                     help="claude: also the Stop hook that says how many notes the session "
                     "recorded, in .claude/settings.json."),
    ] = True,
    as_json: JsonFlag = False,
) -> None:
    """Print the project-scoped MCP configuration for a harness (or write it)."""
    from omh_git_memory.agent import harness as harnesses
    from omh_git_memory.cli.output import emit_json, here, say

    chosen = harnesses.harness(_known_harness(harness))
    with_hook = offer_hook and chosen.name == "claude"
    if command is not None and not command.strip():
        raise typer.BadParameter("--command needs a command or a path", param_hint="--command")
    if not write:
        snippet = chosen.snippet(command or harnesses.COMMAND[0])
        if as_json:
            emit_json({"harness": chosen.name, "path": chosen.path, "config": snippet})
            return
        typer.echo(f"# {chosen.path}")
        typer.echo(snippet, nl=False)
        if with_hook:
            _print_stop_hook(command or harnesses.COMMAND[0])
        return
    checkout = here().checkout
    if with_hook:
        from omh_git_memory.agent.stop_hook import check

        check(checkout)  # a settings file that cannot take the hook: write nothing
    path, changed = harnesses.merge(checkout, chosen, command)
    started, args = harnesses.configured_in(checkout, chosen)
    hook = _write_stop_hook(checkout, started) if with_hook else None
    if as_json:
        emit_json({"harness": chosen.name, "path": str(path), "command": started,
                   "args": args, "changed": changed,
                   **({"stop_hook": {"path": str(hook[0]), "changed": hook[1]}}
                      if hook is not None else {})})
        return
    entry = harnesses.shown_command(started, args)
    say(f"wrote the omh server ({entry}) into {path} (other servers untouched)" if changed
        else f"the omh server ({entry}) is in {path} already")
    if hook is not None:
        hook_path, hook_changed = hook
        say(f"wrote the omh Stop hook into {hook_path} (other settings and hooks untouched)"
            if hook_changed else f"the omh Stop hook is in {hook_path} already")
        if hook_changed and not os.environ.get("OMH_SESSION"):
            say("note: the hook counts the notes of the session OMH_SESSION names, so it says "
                "nothing while OMH_SESSION is unset: set it where Claude Code starts "
                "(docs/mcp.md, The Stop hook)")


def _known_harness(name: str) -> str:
    """`name`, or a usage error (exit 2) naming the harnesses omh knows: a value
    outside its choices, as for any option."""
    from omh_git_memory.agent.harness import HARNESSES
    from omh_git_memory.cli.output import usage_error

    if name not in HARNESSES:
        raise usage_error(f"no harness called {name!r}; omh knows {', '.join(HARNESSES)}")
    return name


def _print_stop_hook(program: str) -> None:
    from omh_git_memory.agent import stop_hook

    typer.echo(f"# {stop_hook.SETTINGS} — the Stop hook: at the end of each turn, how many "
               "notes this session (OMH_SESSION) recorded; --no-stop-hook leaves it out")
    typer.echo(stop_hook.snippet(program), nl=False)


def _write_stop_hook(checkout: Path, program: str) -> tuple[Path, bool]:
    """Merge the Stop hook into the settings: where, and whether the file changed."""
    from omh_git_memory.agent import stop_hook

    return stop_hook.write(checkout, program)


@mcp_app.command("rm")
def mcp_rm(
    harness: Annotated[
        str | None, typer.Argument(help="One harness (default: every one configured).")
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Remove the omh server (and claude's Stop hook) from the harnesses' project files,
    leaving the rest."""
    from omh_git_memory.agent import harness as harnesses
    from omh_git_memory.cli.output import emit_json, here, say

    if harness:
        _known_harness(harness)  # a usage error before anything is read
    checkout = here().checkout
    chosen = [harnesses.harness(harness)] if harness else list(harnesses.HARNESSES.values())
    _check_removal(checkout, chosen)  # one file that refuses: none is changed
    done = [r for r in (harnesses.remove(checkout, h) for h in chosen) if r is not None]
    hook = _remove_stop_hook(checkout) if any(h.name == "claude" for h in chosen) else None
    if as_json:
        emit_json({"removed": [
            {"harness": r.harness, "path": str(r.path), "file_removed": r.file_removed,
             "folder_removed": str(r.folder_removed) if r.folder_removed else None}
            for r in done] + ([] if hook is None else [
            {"harness": "claude", "path": str(hook[0]), "file_removed": hook[1],
             "folder_removed": None if hook[0].parent.exists() else str(hook[0].parent)}])})
        return
    for r in done:
        if r.folder_removed is not None:
            say(f"removed {r.path} and the folder {r.folder_removed}: the omh server was "
                "all they held")
        elif r.file_removed:
            say(f"removed {r.path}: the omh server was all it held")
        else:
            say(f"removed the omh server from {r.path} (the rest kept)")
    if hook is not None:
        gone = "; nothing else was left in it, so the file went too" if hook[1] else ""
        say(f"removed the omh Stop hook from {hook[0]}{gone}")
    if not done and hook is None:
        typer.echo("nothing to remove: no harness file here configures the omh server")


def _check_removal(checkout: Path, chosen: list[Harness]) -> None:
    from omh_git_memory.agent import harness as harnesses
    from omh_git_memory.agent import stop_hook

    for h in chosen:
        harnesses.check_removal(checkout, h)
    if any(h.name == "claude" for h in chosen):
        stop_hook.check_removal(checkout)


def _remove_stop_hook(checkout: Path) -> tuple[Path, bool] | None:
    """Take out omh's Stop hook: where it was, and whether the file went with it."""
    from omh_git_memory.agent import stop_hook

    path = stop_hook.remove_from(checkout)
    return None if path is None else (path, not path.exists())


@app.command()
def doctor(
    trust_config: Annotated[
        bool,
        typer.Option("--trust-config", "--yes",
                     help="Start the server command a harness file in the repository names "
                     "without asking (it is printed first). Without it, doctor asks on a "
                     "terminal and refuses elsewhere; omh's own `omh mcp serve` needs no "
                     "asking."),
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Start the MCP server as a harness would and check it, the store and its census."""
    from omh_git_memory.agent.doctor import Status, describe, diagnose
    from omh_git_memory.agent.harness import ServerCommand
    from omh_git_memory.cli.output import emit_json, here, progress_bar, say

    def trust(server: ServerCommand) -> bool:
        from omh_git_memory.model.keys import printable

        # The command is the repository's text: escaped, so it cannot forge a line.
        typer.echo(f"omh: {printable(describe(server))}", err=True)
        if trust_config:
            typer.echo("omh: starting it (--trust-config)", err=True)
            return True
        return _confirm_on_terminal("Start it to check it?")

    checks = diagnose(here(), trust=trust, progress=progress_bar())
    if as_json:
        emit_json([{"check": c.name, "status": c.status.value, "detail": c.detail}
                   for c in checks])
    else:
        for c in checks:
            say(f"{c.status.value:<4}  {c.name:<11}  {c.detail}")
    if any(c.status is Status.FAIL for c in checks):
        raise typer.Exit(EXIT_FAILURE)


def _confirm_on_terminal(question: str) -> bool:
    """A yes from the person at the terminal; False (nobody asked) when stdin or
    stderr is not one, so a script never hangs on the question."""
    try:
        from omh_git_memory.cli.output import is_terminal

        on_terminal = is_terminal(sys.stdin) and is_terminal(sys.stderr)
    except (AttributeError, ValueError):  # no stdin at all, or a closed one
        on_terminal = False
    if not on_terminal:
        return False
    return bool(typer.confirm(question, default=False, err=True))


hooks_app = typer.Typer(help="Git hooks that keep the recall index warm.", rich_markup_mode=None)
app.add_typer(hooks_app, name="hooks")


@hooks_app.command("install")
def hooks_install(
    force: Annotated[
        bool, typer.Option("--force", help="Replace hooks omh did not write.")
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Install post-merge, post-checkout and post-rewrite hooks that warm the index."""
    from omh_git_memory.cli.output import emit_json, here, say
    from omh_git_memory.recall.hooks import install

    results = install(here().repo, force)
    if as_json:
        emit_json([{"hook": r.name, "path": str(r.path), "action": r.action,
                    "reason": r.reason} for r in results])
    else:
        for r in results:
            say(f"{r.action} {r.path}" + (f": {r.reason}" if r.reason else ""))
    if any(r.action == "skipped" for r in results):
        raise typer.Exit(EXIT_FAILURE)


@app.command()
def demo(
    keep: Annotated[
        bool, typer.Option("--keep", help="Keep the demo repository instead of deleting it.")
    ] = False,
) -> None:
    """Walk through omh on a throw-away repository made from the bundled fixtures."""
    from omh_git_memory.cli.demo import run_demo

    run_demo(keep=keep)


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the app and turn failures into one line and an exit status.

    Run as a program (no `argv`), the process ends at once when the command is done
    (see `_leave`); called with `argv`, as the tests do, it raises `SystemExit`."""
    try:
        _run(sys.argv[1:] if argv is None else argv)
    except SystemExit as done:
        if argv is None:
            _leave(done.code)
        raise


def _leave(code: object) -> None:
    """End the process now, without Python's tear-down, unless that would lose something.

    At shutdown Python frees every object the command made, one at a time: after a
    recall, the whole loaded index, about a quarter of a cold recall's CPU time
    (docs/recall.md). None of it needs freeing. Every file omh writes is written
    whole, closed and renamed before its command returns, so what is left to do is
    what asked to run at exit (atexit: coverage, logging, temporary folders) and
    the output still buffered. Returns, leaving the usual shutdown to run, when
    another thread still runs (Python would wait for it), when the code is a
    message rather than a number, under a profiler or a debugger, or when the
    output cannot be flushed (a closed pipe: Python reports that as it always
    does)."""
    import atexit
    import threading

    if threading.active_count() > 1 or not (code is None or isinstance(code, int)):
        return
    if sys.getprofile() is not None or sys.gettrace() is not None:
        return  # a profiler or debugger writes its results at the usual shutdown
    if not _flushed():
        return
    atexit._run_exitfuncs()  # CPython's own, the only way to run them before leaving
    if _flushed():
        os._exit(code or 0)


def _flushed() -> bool:
    """Both streams flushed; False when one cannot be (a closed pipe, a full disk).
    A stream Python has as None (its descriptor was closed at start) has nothing to
    flush."""
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):
        return False
    return True


def _run(args: list[str]) -> None:
    from omh_git_memory.model.errors import OmhError

    problem = _undecodable(args)
    if problem is not None:
        typer.echo(f"omh: {problem}", err=True)
        sys.exit(EXIT_USAGE)
    misplaced = _memory_command(args)
    if misplaced is not None:
        typer.echo(f"omh: there is no `omh {misplaced}`: it is `omh memory {misplaced}` "
                   f"(`omh memory --help` lists the memory commands)", err=True)
        sys.exit(EXIT_USAGE)
    from omh_git_memory.cli.lazy import command as lazy_command

    command = lazy_command(app)  # builds only the subcommand that runs
    try:
        command.main(args=args, prog_name="omh", standalone_mode=True)
    except OmhError as err:
        for line in _error_lines(err):
            typer.echo(line, err=True)
        sys.exit(EXIT_FAILURE)
    except KeyboardInterrupt:
        sys.exit(EXIT_INTERRUPTED)
    except Exception as err:
        if _interrupted(err):
            sys.exit(EXIT_INTERRUPTED)
        if isinstance(err, OSError) and err.errno in _FULL and _writing_stdout(err):
            typer.echo(f"omh: could not write the output: {err.strerror}; "
                       "free some space, or send it elsewhere, and run it again", err=True)
            sys.exit(EXIT_FAILURE)
        log = _write_crash_log()
        typer.echo(f"omh: internal error (a bug); the traceback is in {log}", err=True)
        sys.exit(EXIT_BUG)


def _interrupted(err: BaseException) -> bool:
    """Whether `err` stands for a Ctrl-C: Python wraps an interrupt that lands while
    a class is being made (a lazy import, `__set_name__`) in a RuntimeError whose
    cause is the KeyboardInterrupt. Not a bug, so not a crash log."""
    seen: set[int] = set()
    cause: BaseException | None = err
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, KeyboardInterrupt):
            return True
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return False


def _writing_stdout(err: BaseException) -> bool:
    """Whether `err` was raised by a write to standard output (`omh … >/dev/full`):
    the frame it left from holds the stream. A full disk anywhere else is a core
    write, which says so itself, or a bug."""
    tb = err.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    return any(value is sys.stdout for value in tb.tb_frame.f_locals.values())


def _memory_command(args: list[str]) -> str | None:
    """The name of an `omh memory` command given as the first word (`omh recall`),
    which is no top-level command: the likeliest slip with this command line."""
    if not args:
        return None
    first = args[0]

    # (no top-level command shares a name with one: tests/cli/test_cli.py)
    return first if first in memory_command_names() else None


def memory_command_names() -> set[str]:
    return {c.name or c.callback.__name__
            for c in memory.app.registered_commands if c.callback is not None}


def _error_lines(err: OmhError) -> list[str]:
    """What an expected failure prints: `omh: message`, and a line per problem when it
    lists several. Each line is escaped on its own, so whatever a key or a path in it
    holds, it cannot add a line."""
    from omh_git_memory.model.keys import printable

    first, *rest = err.lines()
    return [f"omh: {printable(first)}", *(printable(line) for line in rest)]


def _undecodable(args: list[str]) -> str | None:
    """Why the command line cannot be read as text, or None.

    Python hands over bytes that are not UTF-8 as lone surrogates (U+DC80–U+DCFF,
    PEP 383); refusing them here, before any command runs, means no command ever
    writes, or half-writes, what it could not read."""
    from omh_git_memory.model.keys import printable

    for position, arg in enumerate(args, start=1):
        bad = next((c for c in arg if "\ud800" <= c <= "\udfff"), None)
        if bad is None:
            continue
        byte = f"byte 0x{ord(bad) - 0xDC00:02x}" if ord(bad) >= 0xDC80 else f"U+{ord(bad):04X}"
        shown = printable(arg if len(arg) <= 60 else arg[:60] + "…")
        return (f"argument {position} ({shown}) is not valid UTF-8 ({byte}); omh reads its "
                "arguments as UTF-8 text: fix the encoding and run it again")
    return None


def _write_crash_log() -> str:
    import tempfile  # only after a bug: not on every command's start-up
    import traceback

    fd, path = tempfile.mkstemp(prefix="omh-crash-", suffix=".log")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(f"argv: {sys.argv!r}\n")
        traceback.print_exc(file=handle)
    return path
