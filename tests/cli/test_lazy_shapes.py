"""`lazy.command` on typer apps of every shape: a lone command, a group made by a
callback or by several commands, a group holding only a group, commands lent by a
group added without a name, and the completion options. Each is typer's own
command, and every group among them builds its subcommands on first use."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable
from typing import Any

import pytest
import typer

from omh_git_memory.cli import lazy


def _run(command: Any, args: list[str]) -> tuple[object, str, str]:
    """What running `prog ARGS` through `command` prints and how it exits."""
    out, err = io.StringIO(), io.StringIO()
    code: object = None
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            command.main(args=args, prog_name="prog", standalone_mode=True)
        except SystemExit as done:
            code = done.code
    return code, out.getvalue(), err.getvalue()


def _names(command: Any, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = [path]
    for name in getattr(command, "commands", {}):
        found += _names(command.commands[name], (*path, name))
    return found


def hello(name: str) -> None:
    """Greet NAME."""
    typer.echo(f"hello {name}")


def bye() -> None:
    """Say goodbye."""
    typer.echo("bye")


def group() -> None:
    """The group."""


def _one_command() -> typer.Typer:
    app = typer.Typer(add_completion=False)
    app.command()(hello)
    return app


def _callback_and_one_command() -> typer.Typer:
    app = typer.Typer(add_completion=False)
    app.callback()(group)
    app.command()(hello)
    return app


def _info_callback_and_one_command() -> typer.Typer:
    app = typer.Typer(add_completion=False, callback=group)
    app.command()(hello)
    return app


def _two_commands() -> typer.Typer:
    app = typer.Typer(add_completion=False)
    app.command()(hello)
    app.command()(bye)
    return app


def _only_a_group() -> typer.Typer:
    sub = typer.Typer()
    sub.command()(hello)
    sub.command()(bye)
    app = typer.Typer(add_completion=False)
    app.add_typer(sub, name="greet")
    return app


def _group_lent_without_a_name() -> typer.Typer:
    sub = typer.Typer()
    sub.command()(bye)
    app = typer.Typer(add_completion=False)
    app.callback()(group)
    app.command()(hello)
    app.add_typer(sub)
    return app


def _with_completion() -> typer.Typer:
    app = typer.Typer(add_completion=True)
    app.command()(hello)
    app.command()(bye)
    return app


SHAPES: dict[str, tuple[Callable[[], typer.Typer], list[list[str]]]] = {
    "one command": (_one_command, [["Ann"], ["--help"]]),
    "a callback and one command": (_callback_and_one_command, [["hello", "Ann"], ["--help"]]),
    "Typer(callback=) and one command": (_info_callback_and_one_command,
                                         [["hello", "Ann"], ["--help"]]),
    "two commands": (_two_commands, [["hello", "Ann"], ["bye"], ["--help"]]),
    "only a group": (_only_a_group, [["greet", "bye"], ["greet", "--help"], ["--help"]]),
    "a group lent without a name": (_group_lent_without_a_name,
                                    [["bye"], ["hello", "Ann"], ["--help"]]),
    "completion options": (_with_completion, [["--help"], ["bye"]]),
}

GROUPS = [name for name in SHAPES if name not in ("one command", "completion options")]


@pytest.mark.parametrize("shape", SHAPES)
def test_every_shape_of_app_runs_and_helps_as_typers_own_build(shape: str) -> None:
    make, argvs = SHAPES[shape]
    mine, theirs = lazy.command(make()), typer.main.get_command(make())
    assert _names(mine) == _names(theirs)
    assert [p.name for p in mine.params] == [p.name for p in theirs.params]
    for argv in argvs:
        ran = _run(mine, argv)
        assert ran == _run(theirs, argv), argv
        assert ran[0] in (None, 0) and ran[1], argv


def test_a_lone_command_runs_with_its_arguments_directly() -> None:
    assert _run(lazy.command(_one_command()), ["Ann"]) == (0, "hello Ann\n", "")


def test_completion_options_are_kept_when_the_app_asks_for_them() -> None:
    command = lazy.command(_with_completion())
    assert "--install-completion" in _run(command, ["--help"])[1]


@pytest.mark.parametrize("shape", GROUPS)
def test_every_group_builds_its_subcommands_on_first_use(shape: str) -> None:
    command = lazy.command(SHAPES[shape][0]())
    assert isinstance(command.commands, lazy.LazyCommands)  # type: ignore[attr-defined]
    assert command.commands.built() == []  # type: ignore[attr-defined]


def test_commands_lent_by_a_group_without_a_name_are_there_and_lazy() -> None:
    command = lazy.command(_group_lent_without_a_name())
    assert list(command.commands) == ["hello", "bye"]  # type: ignore[attr-defined]
    assert _run(command, ["bye"]) [1] == "bye\n"
    assert command.commands.built() == ["bye"]  # type: ignore[attr-defined]
