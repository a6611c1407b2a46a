"""`.omh/memory.toml` swapped for a FIFO between the check and the open, and read
when a system call fails as it would for an account that is not root.

The race is placed by a wrapper on os.stat (tests/helpers/races.py). A
review found the open's O_NONBLOCK listed as equivalent ("only that race tells
them apart"); this tells them apart."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from omh_git_memory.model.config import load_config
from omh_git_memory.model.errors import ConfigError
from tests.helpers.races import fail_on, never_blocks, read_fails, swap_after


@pytest.fixture
def settings(tmp_path: Path) -> Path:
    (tmp_path / ".omh").mkdir()
    path = tmp_path / ".omh" / "memory.toml"
    path.write_text("[repo]\nname = \"here\"\n", encoding="utf-8")
    return path


def test_settings_swapped_for_a_fifo_after_the_check_are_refused_without_waiting(
        tmp_path: Path, settings: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def swap() -> None:
        os.unlink(settings)
        os.mkfifo(settings)

    swap_after(monkeypatch, "stat", settings, swap, after=1)  # after exists(), the check
    with never_blocks(), pytest.raises(ConfigError) as raised:  # no O_NONBLOCK: waits
        load_config(tmp_path)
    assert str(raised.value) == (
        f"{settings} is not a regular file; replace it with one, or delete it")


def test_settings_read_as_they_are(tmp_path: Path, settings: Path) -> None:
    assert load_config(tmp_path).repo_name == "here"


@pytest.mark.parametrize(("call", "after"), [("stat", 1), ("open", 0)])
def test_settings_the_system_will_not_let_omh_read_are_a_config_error(
        tmp_path: Path, settings: Path, monkeypatch: pytest.MonkeyPatch,
        call: str, after: int) -> None:
    # stat: the first call is load_config's exists(), the second _read_regular's
    fail_on(monkeypatch, call, settings, after=after)
    with pytest.raises(ConfigError) as raised:
        load_config(tmp_path)
    assert str(raised.value) == f"cannot read {settings}: Permission denied"


def test_settings_whose_read_fails_are_a_config_error(
        tmp_path: Path, settings: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    read_fails(monkeypatch, settings)
    with pytest.raises(ConfigError) as raised:
        load_config(tmp_path)
    assert str(raised.value) == f"cannot read {settings}: Input/output error"
