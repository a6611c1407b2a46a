"""The command line built one subcommand at a time (cli/lazy.py) is typer's own.

`omh` runs the click command `lazy.command(app)` makes; these tests hold it to
`typer.main.get_command(app)`, which builds every command up front: the same
commands in the same order, the same options, the same help and the same usage
errors, byte for byte."""

from __future__ import annotations

import contextlib
import io
from typing import Any

import pytest
import typer

from omh_git_memory import cli
from omh_git_memory.cli import lazy


def _tree(command: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    found = [(path, command)]
    for name in getattr(command, "commands", {}):
        found += _tree(command.commands[name], (*path, name))
    return found


def _run(command: Any, args: list[str]) -> tuple[object, str, str]:
    """What running `omh ARGS` through `command` prints and how it exits."""
    out, err = io.StringIO(), io.StringIO()
    code: object = None
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            command.main(args=args, prog_name="omh", standalone_mode=True)
        except SystemExit as done:
            code = done.code
    return code, out.getvalue(), err.getvalue()


def _params(command: Any) -> list[tuple[object, ...]]:
    return [(type(p).__name__, p.name, p.opts, p.secondary_opts, p.required, p.multiple,
             p.hidden if hasattr(p, "hidden") else None, repr(p.default), p.is_eager,
             getattr(p, "help", None), repr(p.type))
            for p in command.params]


EAGER = _tree(typer.main.get_command(cli.app))


def test_the_lazy_tree_has_typers_commands_in_typers_order() -> None:
    built = _tree(lazy.command(cli.app))
    assert [path for path, _ in built] == [path for path, _ in EAGER]
    assert len(EAGER) > 25  # every memory, mcp and hooks command, not just the groups
    for (path, mine), (_, theirs) in zip(built, EAGER, strict=True):
        assert type(mine) is type(theirs), path
        assert _params(mine) == _params(theirs), path
        assert (mine.help, mine.short_help, mine.hidden, mine.no_args_is_help) == (
            theirs.help, theirs.short_help, theirs.hidden, theirs.no_args_is_help), path
        assert (getattr(mine, "invoke_without_command", None)
                == getattr(theirs, "invoke_without_command", None)), path


def _argvs() -> list[list[str]]:
    """Every command's --help, and usage errors that stop before any command runs."""
    argvs: list[list[str]] = [[], ["--help"], ["nope"], ["memory", "recal"], ["mcp", "serv"],
                              ["hooks", "instal"], ["--version-nope"], ["mcp"], ["hooks"],
                              ["memory", "--json", "--nope"]]
    for path, command in EAGER:
        argvs.append([*path, "--help"])
        if path and not hasattr(command, "commands"):
            argvs.append([*path, "--no-such-option"])
            if any(p.required for p in command.params):
                argvs.append(list(path))  # a missing argument or option
    return argvs


@pytest.mark.parametrize("argv", _argvs(), ids=" ".join)
def test_help_and_usage_errors_are_typers_byte_for_byte(argv: list[str]) -> None:
    theirs = _run(typer.main.get_command(cli.app), argv)
    mine = _run(lazy.command(cli.app), argv)
    assert mine == theirs
    assert theirs[1] or theirs[2]  # it printed something: help or the usage error


def test_running_a_command_builds_that_command_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[str] = []
    real = typer.main.get_command_from_info

    def counting(info: Any, **kwargs: Any) -> Any:
        command = real(info, **kwargs)
        built.append(command.name)
        return command

    monkeypatch.setattr(typer.main, "get_command_from_info", counting)
    with pytest.raises(SystemExit) as done, contextlib.redirect_stdout(io.StringIO()) as out:
        cli.main(["memory", "recall", "--help"])  # what `omh` itself runs
    assert done.value.code == 0 and "Usage: omh memory recall" in out.getvalue()
    assert built == ["recall"]


def test_a_group_lists_its_commands_without_building_them() -> None:
    root = lazy.command(cli.app)
    assert root.commands.built() == []  # type: ignore[attr-defined]
    memory = root.commands["memory"]  # type: ignore[attr-defined]
    assert "recall" in list(memory.commands) and memory.commands.built() == []
    assert memory.get_command(None, "recall").name == "recall"
    assert memory.commands.built() == ["recall"]
    assert memory.get_command(None, "no-such-command") is None
