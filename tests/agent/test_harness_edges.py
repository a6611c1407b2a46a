"""harness.py at its edges: which entries omh calls its own, the refusals of a file
it cannot read or rewrite safely, and the checks that never write a file that lost
something. The CLI round trips are in test_harness.py and
tests/attacks/setup/test_writers.py."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

from omh_git_memory.agent import harness
from omh_git_memory.agent.config_edit import toml_edit
from omh_git_memory.agent.harness import (
    HARNESSES,
    ServerCommand,
    configured_in,
    merge,
    omh_program,
    own_args,
    read_text,
    written_by_omh,
)
from omh_git_memory.model.errors import ConfigError, ForeignServer, UnsafePath


@pytest.mark.parametrize("args,own", [
    (["mcp", "serve"], True),
    (["mcp", "serve", "--repo", "x"], True),
    (["mcp", "serve", "--repo=x"], True),
    (["mcp"], False),
    (["mcp", "run"], False),
    (["mcp", "serve", "--other", "x"], False),
    (["mcp", "serve", "x"], False),
    (["mcp", "serve", "--repo"], False),
    (["mcp", "serve", "--repo=x", "y"], False),
    (["mcp", "serve", "--repo", "x", "y"], False),
], ids=["plain", "repo", "repo joined", "short", "another verb", "another option", "a word",
        "repo without a folder", "repo joined and a word", "repo and a word"])
def test_own_args_are_exactly_the_ones_omh_writes(args: list[str], own: bool) -> None:
    assert own_args(args) is own


def test_an_omh_program_is_omh_or_an_absolute_path_to_omh_outside(repo_dir: Path,
                                                                   tmp_path: Path) -> None:
    assert omh_program(repo_dir, "omh")
    assert omh_program(repo_dir, str(tmp_path / "bin" / "omh"))
    assert not omh_program(repo_dir, "bin/omh")  # relative: wherever the harness starts
    assert not omh_program(repo_dir, "/usr/bin/other")
    assert not omh_program(repo_dir, str(repo_dir / "tools" / "omh"))  # inside the checkout
    assert not omh_program(repo_dir, "/opt/\x1b[2J/omh")  # a path that would not print as is


def test_a_path_through_a_symlink_loop_is_no_omh_program(repo_dir: Path, tmp_path: Path) -> None:
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    assert not omh_program(repo_dir, str(loop / "omh"))


def test_written_by_omh_needs_both_the_program_and_the_args(repo_dir: Path) -> None:
    assert written_by_omh(repo_dir, "omh", ["mcp", "serve"])
    assert not written_by_omh(repo_dir, "sh", ["mcp", "serve"])
    assert not written_by_omh(repo_dir, "omh", ["-c", "x"])


def test_looks_own_needs_both_the_name_and_the_args() -> None:
    assert ServerCommand("/opt/omh", ["mcp", "serve"], None).looks_own
    assert not ServerCommand("/opt/omh", ["run"], None).looks_own
    assert not ServerCommand("/opt/other", ["mcp", "serve"], None).looks_own


def test_an_unknown_harness_is_refused_naming_the_known_ones() -> None:
    with pytest.raises(ConfigError) as err:
        harness.harness("vim")
    assert str(err.value) == "no harness called 'vim'; omh knows claude, cursor, opencode, codex"


def test_the_snippet_is_the_file_as_omh_writes_it() -> None:
    assert HARNESSES["claude"].snippet("omh") == (
        '{\n  "mcpServers": {\n    "omh": {\n      "type": "stdio",\n      "command": "omh",\n'
        '      "args": [\n        "mcp",\n        "serve"\n      ]\n    }\n  }\n}\n')


def test_opencode_written_into_an_empty_object_gets_its_schema_line() -> None:
    added = json.loads(HARNESSES["opencode"].add("{}", None))
    assert added["$schema"] == "https://opencode.ai/config.json"
    assert added["mcp"]["omh"]["command"] == ["omh", "mcp", "serve"]


@pytest.mark.parametrize("entry", [{"command": "omh mcp serve"}, {"command": []},
                                   {"command": ["omh", 5]}, {"command": "omh"}],
                         ids=["a string", "empty", "a number", "one word"])
def test_an_opencode_command_that_is_no_list_of_words_starts_nothing(entry: Any) -> None:
    text = json.dumps({"mcp": {"omh": entry}})
    assert HARNESSES["opencode"].command_in(text) is None


@pytest.mark.parametrize("name", ["claude", "cursor", "opencode", "codex"])
def test_a_file_without_our_entry_has_nothing_to_remove(name: str) -> None:
    text = 'model = "x"\n' if name == "codex" else '{"a": 1}'
    assert HARNESSES[name].remove(text) == (None, False)


def test_the_default_command_when_no_file_names_one(repo_dir: Path) -> None:
    assert configured_in(repo_dir, HARNESSES["claude"]) == ("omh", ["mcp", "serve"])


def test_write_returns_the_files_path(repo_dir: Path) -> None:
    assert harness.write(repo_dir, HARNESSES["cursor"]) == repo_dir / ".cursor/mcp.json"


def test_merge_refuses_an_entry_omh_did_not_write_naming_its_command(repo_dir: Path) -> None:
    text = json.dumps({"mcpServers": {"omh": {"command": "sh", "args": ["-c", "x"]}}})
    (repo_dir / ".mcp.json").write_text(text)
    with pytest.raises(ForeignServer) as err:
        merge(repo_dir, HARNESSES["claude"])
    server = err.value.server
    assert isinstance(server, ServerCommand)
    assert (server.command, server.args) == ("sh", ["-c", "x"])
    assert "names `sh -c x` as the omh server" in str(err.value)
    assert (repo_dir / ".mcp.json").read_text() == text


def test_a_file_that_is_not_utf8_is_refused_in_one_line(repo_dir: Path) -> None:
    (repo_dir / ".mcp.json").write_bytes(b'{"a": "\xff"}')
    with pytest.raises(ConfigError) as err:
        read_text(repo_dir, ".mcp.json")
    assert str(err.value) == (f"{repo_dir / '.mcp.json'} is not UTF-8 text; fix it, then run "
                              "this again")


def test_a_harness_file_over_four_mebibytes_is_not_read(repo_dir: Path) -> None:
    limit = 4 * 1024 * 1024
    path = repo_dir / ".mcp.json"
    path.write_bytes(b"{" + b" " * (limit - 2) + b"}")
    assert read_text(repo_dir, ".mcp.json") is not None  # exactly the limit: read
    path.write_bytes(b"{" + b" " * (limit - 1) + b"}")
    with pytest.raises(UnsafePath) as err:
        read_text(repo_dir, ".mcp.json")
    assert f"is larger than {limit} bytes" in str(err.value)


# -- codex: TOML -----------------------------------------------------------------------


def test_codex_keeps_a_command_that_says_the_same_as_written() -> None:
    text = '[mcp_servers.omh]\ncommand = """omh"""\nargs = ["x"]\n'  # tomlkit would rewrite it
    assert harness._toml_add(text, "omh") == (
        '[mcp_servers.omh]\ncommand = """omh"""\nargs = ["mcp", "serve"]\n')


def test_codex_writes_a_non_ascii_command_as_it_reads() -> None:
    assert harness._toml_add('model = "x"\n', "/opt/café/omh") == (
        'model = "x"\n\n[mcp_servers.omh]\ncommand = "/opt/café/omh"\nargs = ["mcp", "serve"]\n')


def test_codex_rm_keeps_an_inline_servers_table_the_person_wrote() -> None:
    text = 'mcp_servers = { omh = { command = "omh", args = ["mcp", "serve"] } }\nmodel = "x"\n'
    updated, nothing_left = harness._toml_remove(text)
    assert updated is not None and not nothing_left
    assert tomllib.loads(updated) == {"mcp_servers": {}, "model": "x"}


def _losing(lost: str) -> Any:
    """toml_edit as a faulty rewrite would be: the edit made, and `lost` dropped."""
    real = toml_edit

    def edit(text: str, path: str, change: Any) -> str:
        return real(text, path, change).replace(lost, "")
    return edit


@pytest.mark.parametrize("lost", ['[mcp_servers.other]\ncommand = "o"\n', 'A = "1"'],
                         ids=["another server", "our entry's env"])
def test_codex_write_never_leaves_a_file_that_lost_something(
    repo_dir: Path, monkeypatch: pytest.MonkeyPatch, lost: str
) -> None:
    text = ('[mcp_servers.omh]\ncommand = "omh"\nargs = ["x"]\nenv = { A = "1" }\n\n'
            '[mcp_servers.other]\ncommand = "o"\n')
    monkeypatch.setattr(harness, "toml_edit", _losing(lost))
    with pytest.raises(ConfigError) as err:
        harness._toml_add(text, "omh")
    assert str(err.value) == (".codex/config.toml: omh could not rewrite its entry safely; "
                              "edit [mcp_servers.omh] by hand")


@pytest.mark.parametrize("lost", ['[mcp_servers.other]\ncommand = "o"\n', "env = {}\n"],
                         ids=["another server", "our entry kept"])
def test_codex_rm_never_leaves_a_file_that_lost_something_or_kept_our_entry(
    monkeypatch: pytest.MonkeyPatch, lost: str
) -> None:
    text = ('[mcp_servers.omh]\ncommand = "omh"\nargs = ["mcp", "serve"]\nenv = {}\n\n'
            '[mcp_servers.other]\ncommand = "o"\n')
    real = toml_edit

    def faulty(text: str, path: str, change: Any) -> str:
        if lost.startswith("env"):  # the edit forgot to delete our entry
            return text
        return real(text, path, change).replace(lost, "")

    monkeypatch.setattr(harness, "toml_edit", faulty)
    with pytest.raises(ConfigError) as err:
        harness._toml_remove(text)
    assert "sets mcp_servers.omh in a form omh does not rewrite" in str(err.value)


@pytest.mark.parametrize(("name", "text", "said"), [
    ("claude", '{"mcpServers": [1]}', "`mcpServers` is not an object"),
    ("cursor", '{"mcpServers": {"omh": "omh mcp serve"}}', "`mcpServers.omh` is not an object"),
    ("opencode", '{"mcp": 5}', "`mcp` is not an object"),
    ("codex", "mcp_servers = [1]\n", "`mcp_servers` is not a table"),
    ("codex", "[mcp_servers]\nomh = 1\n", "`mcp_servers.omh` is not a table"),
], ids=["claude table", "cursor entry", "opencode table", "codex table", "codex entry"])
def test_a_servers_table_or_entry_of_another_kind_is_refused_by_name(
        name: str, text: str, said: str) -> None:
    with pytest.raises(ConfigError) as err:
        HARNESSES[name].add(text, None)
    assert said in str(err.value) and str(err.value).endswith("fix it, then run this again")


@pytest.mark.parametrize("verb", ["add", "remove"])
def test_a_json_rewrite_that_lost_something_else_is_never_written(
        monkeypatch: pytest.MonkeyPatch, verb: str) -> None:
    text = ('{"mcpServers": {"omh": {"command": "omh", "args": ["mcp", "serve"]}, '
            '"other": {"command": "o"}}, "theme": "dark"}')
    real = harness.JsonEditor.text

    def losing(self: Any) -> str:  # the edit made, and the person's setting dropped
        return real(self).replace('"theme": "dark"', '"theme": "light"')

    monkeypatch.setattr(harness.JsonEditor, "text", losing)
    with pytest.raises(ConfigError) as err:
        if verb == "add":
            HARNESSES["claude"].add(text, None)
        else:
            HARNESSES["claude"].remove(text)
    assert str(err.value) == (".mcp.json: omh could not rewrite its entry without changing "
                              "something else; edit it by hand")
