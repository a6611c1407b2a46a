"""The click command of a typer app, built one subcommand at a time.

typer turns an app into a click command by turning every command's signature into
click parameters first: for the ~22 commands under `omh memory`, a sixth of a cold
`omh memory recall`. `command(app)` is the same click command, but each group
holds its subcommands in a mapping that builds one the first time it is looked
up: running `omh memory recall` builds the root group, the `memory` group and
`recall`; `omh memory --help` builds what it lists. Every command is built by
typer's own functions from typer's own records, so names, order, help and
options are typer's (tests/cli/test_lazy.py holds every command, its help and its
options to typer's eager build).
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Iterator, MutableMapping
from typing import TYPE_CHECKING

import typer
import typer.main
from typer.models import TyperInfo

if TYPE_CHECKING:
    from typer._click import Command  # typer ships its own copy of click
    from typer.core import TyperGroup


class _Pending:
    """A subcommand not built yet, and how to build it."""

    def __init__(self, build: Callable[[], Command]) -> None:
        self.build = build


class LazyCommands(MutableMapping[str, "Command"]):
    """Name → subcommand, in typer's order; a subcommand is built when it is first
    looked up. Resolving a name and typer's "did you mean" read the names only; a
    group's `--help` builds each command it lists, to show its help line."""

    def __init__(self, entries: dict[str, Command | _Pending]) -> None:
        self._entries = entries

    def __getitem__(self, name: str) -> Command:
        entry = self._entries[name]
        if isinstance(entry, _Pending):
            entry = self._entries[name] = entry.build()
        return entry

    def __setitem__(self, name: str, command: Command) -> None:
        self._entries[name] = command

    def __delitem__(self, name: str) -> None:
        del self._entries[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def built(self) -> list[str]:
        """The names built so far (for tests)."""
        return [name for name, e in self._entries.items() if not isinstance(e, _Pending)]


def command(app: typer.Typer) -> Command:
    """`typer.main.get_command(app)`, its groups' subcommands built on first use."""
    if app._add_completion or not (app.registered_callback or app.info.callback
                                   or app.registered_groups or len(app.registered_commands) > 1):
        return typer.main.get_command(app)  # completion options, or a single command
    return _group(TyperInfo(app), app)


def _group(info: TyperInfo, root: typer.Typer) -> TyperGroup:
    """The group `info` describes, as typer's `get_group_from_info` builds it, with
    its subcommands left pending. `root` carries the settings typer takes from the
    top-level app for every command (pretty exceptions, markup, suggestions)."""
    app = info.typer_instance
    assert app is not None, "a typer group needs its Typer instance"
    shell = copy.copy(app)  # the same app without subcommands: typer builds only the group
    shell.registered_commands = []
    shell.registered_groups = []
    shell_info = copy.copy(info)
    shell_info.typer_instance = shell
    group = typer.main.get_group_from_info(
        shell_info, pretty_exceptions_short=root.pretty_exceptions_short,
        rich_markup_mode=root.rich_markup_mode, suggest_commands=root.suggest_commands)
    group.commands = LazyCommands(_entries(app, root))
    return group


def _entries(app: typer.Typer, root: typer.Typer) -> dict[str, Command | _Pending]:
    """`app`'s subcommands by name, in the order typer's eager build puts them."""
    entries: dict[str, Command | _Pending] = {}
    for command_info in app.registered_commands:
        assert command_info.callback is not None, "a command needs a callback"
        name = command_info.name or typer.main.get_command_name(command_info.callback.__name__)
        entries[name] = _Pending(functools.partial(
            typer.main.get_command_from_info, command_info,
            pretty_exceptions_short=root.pretty_exceptions_short,
            rich_markup_mode=root.rich_markup_mode))
    for sub_info in app.registered_groups:
        group_name = typer.main.solve_typer_info_defaults(sub_info).name
        if group_name:
            entries[group_name] = _Pending(functools.partial(_group, sub_info, root))
        elif sub_info.typer_instance is not None:  # added without a name: typer lends
            entries.update(_entries(sub_info.typer_instance, root))  # its commands to this one
    return entries
