"""`omh memory`'s own options (cli/memory.py): each of --layer, --type and --all given
before a command is refused alone, not only together, and nothing runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import omh


@pytest.mark.parametrize("option", [("--layer", "local"), ("--type", "stub"), ("--all",)])
def test_each_listing_option_before_a_command_is_refused_alone(
        repo_dir: Path, option: tuple[str, ...]) -> None:
    run = omh(repo_dir, "memory", *option, "reindex")
    assert run.code == 2 and run.out == "", run.out
    assert "--layer, --type and --all choose what `omh memory` lists" in run.err
    assert "not before `reindex`" in run.err
