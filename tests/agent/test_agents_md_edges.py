"""The AGENTS.md block's edges: where it goes in a file without one, what the
markers must be, what is not text, and the size read (agent/agents_md.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from omh_git_memory.agent.agents_md import BEGIN, END, block, refresh
from omh_git_memory.agent.census import Census
from omh_git_memory.model.errors import ConfigError, OmhError

CENSUS = Census(3, {"team": 2, "local": 1}, [("docs", 2), ("other", 1)])
BLOCK = block(CENSUS)


def _agents(repo: Path, text: str | bytes) -> Path:
    path = repo / "AGENTS.md"
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def test_the_block_carries_the_census_between_its_markers() -> None:
    assert BLOCK.startswith(BEGIN + "\n## Repository memory (omh)\n\n")
    assert "This repository has a memory of 3 notes (2 team, 1 local): 2 docs, 1 other. " in BLOCK
    assert BLOCK.endswith("\n" + END + "\n")


def test_a_new_file_holds_the_block_alone(tmp_path: Path) -> None:
    assert refresh(tmp_path, CENSUS) == (False, True)
    assert (tmp_path / "AGENTS.md").read_text() == BLOCK
    assert refresh(tmp_path, CENSUS) == (True, False)  # current: nothing written


def test_the_block_follows_other_text_after_one_blank_line(tmp_path: Path) -> None:
    path = _agents(tmp_path, "# Rules")  # no newline at the end
    assert refresh(tmp_path, CENSUS) == (True, True)
    assert path.read_text() == "# Rules\n\n" + BLOCK
    path = _agents(tmp_path, "# Rules\n")
    refresh(tmp_path, CENSUS)
    assert path.read_text() == "# Rules\n\n" + BLOCK
    path = _agents(tmp_path, "")  # an empty file: the block alone
    assert refresh(tmp_path, CENSUS) == (True, True)
    assert path.read_text() == BLOCK


def test_a_block_is_replaced_in_place_with_its_newline(tmp_path: Path) -> None:
    old = f"{BEGIN}\nold\n{END}"
    for after in ("\nnext\n", "next\n", ""):
        path = _agents(tmp_path, f"head\n{old}{after}")
        refresh(tmp_path, CENSUS)
        rest = after[1:] if after.startswith("\n") else after
        assert path.read_text() == f"head\n{BLOCK}{rest}", after


@pytest.mark.parametrize("text", [
    f"{END}\nx\n{BEGIN}\n",  # the end before the beginning
    f"{BEGIN}\n{END}\n{BEGIN}\n{END}\n",  # two pairs
    f"{BEGIN}\n{BEGIN}\n{END}\n",
    f"{BEGIN}\n{END}\n{END}\n",
    f"{END}\n",
])
def test_markers_other_than_one_pair_in_order_are_refused(tmp_path: Path, text: str) -> None:
    path = _agents(tmp_path, text)
    with pytest.raises(ConfigError, match="leave exactly one pair"):
        refresh(tmp_path, CENSUS)
    assert path.read_text() == text


def test_a_file_that_is_not_utf8_is_refused_and_kept(tmp_path: Path) -> None:
    path = _agents(tmp_path, b"caf\xe9\n")
    with pytest.raises(ConfigError, match="is not UTF-8 text"):
        refresh(tmp_path, CENSUS)
    assert path.read_bytes() == b"caf\xe9\n"


def test_a_file_up_to_16_mib_is_read_and_a_larger_one_refused(tmp_path: Path) -> None:
    limit = 16 * 1024 * 1024
    path = tmp_path / "AGENTS.md"
    with open(path, "wb") as f:
        f.truncate(limit - 1)
        f.seek(limit - 1)
        f.write(b"\n")
    assert refresh(tmp_path, CENSUS) == (True, True)
    with open(path, "wb") as f:
        f.truncate(limit + 1)
    with pytest.raises(OmhError):
        refresh(tmp_path, CENSUS)
    assert path.stat().st_size == limit + 1
