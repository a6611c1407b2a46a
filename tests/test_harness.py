from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from omh_git_memory.harness import HARNESSES, configured_command
from tests.helpers import omh


@pytest.mark.parametrize("name", sorted(HARNESSES))
def test_config_prints_the_project_file_and_its_content(repo_dir: Path, name: str) -> None:
    run = omh(repo_dir, "mcp", "config", name)
    assert run.code == 0
    assert run.out.startswith(f"# {HARNESSES[name].path}\n")
    assert "mcp" in run.out and "serve" in run.out


def test_write_merges_without_clobbering_other_servers(repo_dir: Path) -> None:
    mine = {"mcpServers": {"other": {"command": "other-server"}}, "keep": 1}
    (repo_dir / ".mcp.json").write_text(json.dumps(mine))
    assert omh(repo_dir, "mcp", "config", "claude", "--write").code == 0
    data = json.loads((repo_dir / ".mcp.json").read_text())
    assert data["mcpServers"]["other"] == {"command": "other-server"} and data["keep"] == 1
    assert data["mcpServers"]["omh"]["args"] == ["mcp", "serve"]
    assert omh(repo_dir, "mcp", "rm", "claude").code == 0
    assert json.loads((repo_dir / ".mcp.json").read_text()) == mine


def test_codex_toml_is_merged_and_removed_leaving_other_tables(repo_dir: Path) -> None:
    path = repo_dir / ".codex/config.toml"
    path.parent.mkdir()
    path.write_text('model = "x"\n\n[mcp_servers.other]\ncommand = "o"\n')
    assert omh(repo_dir, "mcp", "config", "codex", "--write").code == 0
    assert omh(repo_dir, "mcp", "config", "codex", "--write").code == 0  # idempotent
    data = tomllib.loads(path.read_text())
    assert data["mcp_servers"]["omh"] == {"command": "omh", "args": ["mcp", "serve"]}
    assert data["mcp_servers"]["other"] == {"command": "o"} and data["model"] == "x"
    assert configured_command(repo_dir) == ("omh", ["mcp", "serve"])
    omh(repo_dir, "mcp", "rm")
    assert tomllib.loads(path.read_text()) == {"model": "x", "mcp_servers": {"other": {
        "command": "o"}}}


def test_opencode_and_cursor_shapes(repo_dir: Path) -> None:
    omh(repo_dir, "mcp", "config", "opencode", "--write")
    omh(repo_dir, "mcp", "config", "cursor", "--write")
    opencode = json.loads((repo_dir / "opencode.json").read_text())
    assert opencode["mcp"]["omh"] == {"type": "local", "command": ["omh", "mcp", "serve"],
                                      "enabled": True}
    cursor = json.loads((repo_dir / ".cursor/mcp.json").read_text())
    assert cursor["mcpServers"]["omh"]["command"] == "omh"


def test_a_broken_file_is_refused_and_left_alone(repo_dir: Path) -> None:
    (repo_dir / ".mcp.json").write_text("{not json")
    run = omh(repo_dir, "mcp", "config", "claude", "--write")
    assert run.code == 1 and "not valid JSON" in run.err
    assert (repo_dir / ".mcp.json").read_text() == "{not json"


def test_an_unknown_harness_is_named(repo_dir: Path) -> None:
    run = omh(repo_dir, "mcp", "config", "vim")
    assert run.code == 1 and "claude, cursor, opencode, codex" in run.err
