from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from omh_git_memory.agent.harness import HARNESSES, configured_command
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
    # A value outside its choices is a usage error (exit 2), as for any option.
    for args in (["config", "vim"], ["config", "vim", "--write"], ["rm", "vim"]):
        run = omh(repo_dir, "mcp", *args)
        assert run.code == 2 and "claude, cursor, opencode, codex" in run.err, args
    assert not list(repo_dir.glob(".*.json"))


@pytest.mark.parametrize("name", sorted(HARNESSES))
def test_rm_removes_the_files_and_folders_only_omh_filled(repo_dir: Path, name: str) -> None:
    path = repo_dir / HARNESSES[name].path
    assert omh(repo_dir, "mcp", "config", name, "--write").code == 0
    run = omh(repo_dir, "mcp", "rm", name, "--json")
    assert run.code == 0, run.err
    removed, *hook = run.json()["removed"]
    assert removed["harness"] == name and removed["file_removed"] is True
    if name == "claude":  # the Stop hook config --write added, and .claude/ it made
        settings = repo_dir / ".claude/settings.json"
        assert hook == [{"harness": "claude", "path": str(settings), "file_removed": True,
                         "folder_removed": str(settings.parent)}]
        assert not settings.parent.exists()
    else:
        assert hook == []
    assert not path.exists()
    if path.parent != repo_dir:  # .codex/, .cursor/: omh made them, nothing else is there
        assert removed["folder_removed"] == str(path.parent) and not path.parent.exists()
    again = omh(repo_dir, "mcp", "rm", name)
    assert again.code == 0 and again.out.startswith("nothing to remove")
    assert omh(repo_dir, "mcp", "rm", "--json").json() == {"removed": []}


def test_rm_keeps_whatever_else_the_user_has(repo_dir: Path) -> None:
    codex = repo_dir / ".codex/config.toml"
    codex.parent.mkdir()
    codex.write_text("# my codex settings\n")
    (repo_dir / ".codex/notes.txt").write_text("mine")
    cursor = repo_dir / ".cursor/mcp.json"
    cursor.parent.mkdir()
    cursor.write_text('{"theme": "dark"}')
    (repo_dir / ".cursor/rules").write_text("mine")
    for name in ("codex", "cursor", "claude"):
        assert omh(repo_dir, "mcp", "config", name, "--write").code == 0
    run = omh(repo_dir, "mcp", "rm")
    assert run.code == 0
    assert codex.read_text() == "# my codex settings\n"  # a comment is the user's too
    assert json.loads(cursor.read_text()) == {"theme": "dark", "mcpServers": {}}
    assert not (repo_dir / ".mcp.json").exists()
    assert "removed the omh server from" in run.out and "(the rest kept)" in run.out
    assert omh(repo_dir, "mcp", "rm").out.startswith("nothing to remove")


def test_a_leftover_one_byte_codex_file_is_not_claimed_again(repo_dir: Path) -> None:
    codex = repo_dir / ".codex/config.toml"
    codex.parent.mkdir()
    codex.write_text("\n")  # what an earlier omh mcp rm left behind
    run = omh(repo_dir, "mcp", "rm", "--json")
    assert run.json() == {"removed": []} and codex.read_text() == "\n"


@pytest.mark.parametrize("name", sorted(HARNESSES))
def test_command_is_written_and_a_hand_set_command_is_kept(repo_dir: Path, name: str) -> None:
    binary = "/opt/tools/bin/omh"
    run = omh(repo_dir, "mcp", "config", name, "--write", "--command", binary, "--json")
    assert run.code == 0, run.err
    assert run.json()["command"] == binary and run.json()["args"] == ["mcp", "serve"]
    assert configured_command(repo_dir) == (binary, ["mcp", "serve"])
    assert omh(repo_dir, "mcp", "config", name, "--write").code == 0  # no --command: kept
    assert configured_command(repo_dir) == (binary, ["mcp", "serve"])
    printed = omh(repo_dir, "mcp", "config", name, "--command", "/x/omh")
    assert "/x/omh" in printed.out


def test_a_hand_edited_entry_keeps_its_command_args_and_env(repo_dir: Path) -> None:
    mine = {"mcpServers": {"omh": {"command": "/home/me/.local/bin/omh",
                                   "args": ["mcp", "serve", "--repo", "/src/app"],
                                   "env": {"OMH_SESSION": "x"}}}}
    (repo_dir / ".mcp.json").write_text(json.dumps(mine))
    assert omh(repo_dir, "mcp", "config", "claude", "--write").code == 0
    entry = json.loads((repo_dir / ".mcp.json").read_text())["mcpServers"]["omh"]
    assert entry == {**mine["mcpServers"]["omh"], "type": "stdio"}
    codex = repo_dir / ".codex/config.toml"
    codex.parent.mkdir()
    codex.write_text('[mcp_servers.omh]\ncommand = "/usr/bin/omh"\nargs = ["mcp", "serve"]\n'
                     'startup_timeout_sec = 30\n')
    assert omh(repo_dir, "mcp", "config", "codex", "--write").code == 0
    assert tomllib.loads(codex.read_text())["mcp_servers"]["omh"] == {
        "command": "/usr/bin/omh", "args": ["mcp", "serve"], "startup_timeout_sec": 30}
    assert omh(repo_dir, "mcp", "config", "codex", "--write", "--command", "omh").code == 0
    assert tomllib.loads(codex.read_text())["mcp_servers"]["omh"]["command"] == "omh"


def test_a_command_with_quotes_and_unicode_round_trips_in_toml(repo_dir: Path) -> None:
    odd = '/opt/my "tools"/ünï\\bin/omh'
    assert omh(repo_dir, "mcp", "config", "codex", "--write", "--command", odd).code == 0
    assert configured_command(repo_dir) == (odd, ["mcp", "serve"])


def test_a_harness_file_that_is_a_link_is_refused(repo_dir: Path, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.json"
    target.write_text("{}")
    (repo_dir / ".mcp.json").symlink_to(target)
    for args in (("config", "claude", "--write"), ("rm", "claude")):
        run = omh(repo_dir, "mcp", *args)
        assert run.code == 1 and "symbolic link" in run.err
    assert target.read_text() == "{}"


def test_codex_sub_tables_of_the_entry_go_with_it(repo_dir: Path) -> None:
    codex = repo_dir / ".codex/config.toml"
    codex.parent.mkdir()
    codex.write_text('model = "x"\n\n[mcp_servers.omh]\ncommand = "omh"\nargs = ["mcp", "serve"]'
                     '\n\n[mcp_servers.omh.env]\nOMH_SESSION = "s1"\n')
    assert omh(repo_dir, "mcp", "rm", "codex").code == 0
    assert tomllib.loads(codex.read_text()) == {"model": "x"}
    assert omh(repo_dir, "mcp", "rm", "codex").out.startswith("nothing to remove")


def test_a_file_where_the_folder_should_be_is_one_clear_line(repo_dir: Path) -> None:
    (repo_dir / ".codex").write_text("not a folder")
    run = omh(repo_dir, "mcp", "config", "codex", "--write")
    assert run.code == 1 and run.err.startswith("omh: ") and "internal error" not in run.err


@pytest.mark.parametrize("name", sorted(HARNESSES))
def test_a_second_write_says_the_entry_is_there_already_and_leaves_the_file(
    repo_dir: Path, name: str
) -> None:
    first = omh(repo_dir, "mcp", "config", name, "--write", "--no-stop-hook")
    assert first.code == 0 and first.out.startswith("wrote the omh server"), first.out
    path = repo_dir / HARNESSES[name].path
    before = path.stat()
    again = omh(repo_dir, "mcp", "config", name, "--write", "--no-stop-hook")
    assert again.code == 0, again.err
    assert again.out == f"the omh server (omh mcp serve) is in {path} already\n", again.out
    after = path.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


def test_write_json_says_what_changed_for_the_entry_and_the_stop_hook(repo_dir: Path) -> None:
    first = omh(repo_dir, "mcp", "config", "claude", "--write", "--json").json()
    settings = str(repo_dir / ".claude/settings.json")
    assert first["changed"] is True
    assert first["stop_hook"] == {"path": settings, "changed": True}
    again = omh(repo_dir, "mcp", "config", "claude", "--write", "--json").json()
    assert again["changed"] is False
    assert again["stop_hook"] == {"path": settings, "changed": False}
    bare = omh(repo_dir, "mcp", "config", "cursor", "--write", "--json").json()
    assert "stop_hook" not in bare and bare["changed"] is True
