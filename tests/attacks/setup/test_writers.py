"""The files omh writes outside the note stores: harness configs, the Stop hook's
settings, AGENTS.md, git hooks, `omh init` — and what `omh doctor` runs.

Items of the second hostile review (docs/records/review-issue-23.md): 5 (no write
through a symlink, one no-follow write path), 6 (doctor never runs a repository's
command unasked), 7 (second half: modes kept), 14 (config files edited by a
round-tripping parser), 20 (a FIFO or a folder at a hook path) and 22 (odd but
valid JSON/TOML shapes).
"""

from __future__ import annotations

import json
import os
import socket
import stat
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omh_git_memory import cli
from omh_git_memory.agent.config_edit import MAX_DEPTH
from omh_git_memory.agent.harness import HARNESSES
from tests.helpers import Run, git, omh, omh_in_process

HARNESS_FILES = {"claude": ".mcp.json", "cursor": ".cursor/mcp.json",
                 "opencode": "opencode.json", "codex": ".codex/config.toml"}


def run(cwd: Path, *args: str) -> Run:
    """`omh ARGS` in this process."""
    return omh_in_process(cwd, *args)


def one_line_refusal(result: Run, *words: str) -> None:
    assert result.code == 1, (result.code, result.out, result.err)
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("omh: "), result.err
    for word in words:
        assert word in lines[0], (word, lines[0])


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A file outside the checkout, such as ~/.gitconfig, that a link may name."""
    target = tmp_path / "outside" / "gitconfig"
    target.parent.mkdir()
    target.write_text("[user]\n\tname = Someone\n")
    target.chmod(0o600)
    return target


def unchanged(target: Path) -> None:
    assert target.read_text() == "[user]\n\tname = Someone\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


# -- item 5: no write through a link -------------------------------------------------


def test_escape_agents_md_never_follows_a_committed_symlink(repo_dir: Path, outside: Path) -> None:
    """Item 5: a committed AGENTS.md link to ~/.gitconfig got omh's block appended to
    the user's git config, after which every git command failed."""
    assert run(repo_dir, "init").code == 0
    (repo_dir / "AGENTS.md").symlink_to(outside)
    one_line_refusal(run(repo_dir, "memory", "agents-md"), "AGENTS.md", "symlink")
    unchanged(outside)


def test_escape_hooks_install_never_creates_a_file_through_a_dangling_link(
    repo_dir: Path, tmp_path: Path
) -> None:
    """Item 5: a dangling hook link made omh create the file it names, anywhere."""
    hooks = repo_dir / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    target = tmp_path / "elsewhere" / "planted"
    target.parent.mkdir()
    (hooks / "post-merge").symlink_to(target)
    one_line_refusal(run(repo_dir, "hooks", "install"), "post-merge", "symlink")
    assert not target.exists()


def test_escape_hooks_install_force_never_overwrites_what_a_hook_link_names(
    repo_dir: Path, outside: Path
) -> None:
    """Item 5: `hooks install --force` overwrote the file a hook link points at and
    made it 0755."""
    hooks = repo_dir / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    (hooks / "post-checkout").symlink_to(outside)
    one_line_refusal(run(repo_dir, "hooks", "install", "--force"), "post-checkout", "symlink")
    unchanged(outside)


def test_escape_hooks_install_never_writes_below_a_committed_linked_hooks_path(
    repo_dir: Path, tmp_path: Path
) -> None:
    """Item 5, sibling: `core.hooksPath` names a folder the repository committed as a
    link; the hooks would have been written wherever it points."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (repo_dir / ".githooks").symlink_to(elsewhere)
    git(repo_dir, "config", "core.hooksPath", ".githooks")
    one_line_refusal(run(repo_dir, "hooks", "install"), ".githooks", "symlink")
    assert list(elsewhere.iterdir()) == []


def test_escape_init_never_writes_through_a_linked_omh_folder(
    repo_dir: Path, tmp_path: Path
) -> None:
    """Item 5: with `.omh` a link, init wrote memory.toml and .gitignore wherever it
    pointed (and made the local store first)."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (repo_dir / ".omh").symlink_to(elsewhere)
    one_line_refusal(run(repo_dir, "init"), ".omh", "symlink")
    assert list(elsewhere.iterdir()) == []
    assert not (Path(os.environ["OMH_HOME"]) / "memory").exists()


def test_dataloss_init_run_twice_keeps_its_files_and_leaves_no_temporary_file(
    repo_dir: Path
) -> None:
    """Item 5, the write path's own contract: a file that exists is kept byte for byte
    (init never rewrites memory.toml), and the temporary file a create-once write
    made is never left behind beside it."""
    assert run(repo_dir, "init").code == 0
    config = repo_dir / ".omh" / "memory.toml"
    config.write_text(config.read_text() + "# mine\n")
    assert run(repo_dir, "init").code == 0
    assert config.read_text().endswith("# mine\n")
    assert sorted(p.name for p in (repo_dir / ".omh").iterdir()) == [".gitignore",
                                                                     "memory.toml"]


def test_escape_init_never_writes_through_a_linked_settings_file(
    repo_dir: Path, outside: Path
) -> None:
    """Item 5, sibling: a dangling or live link at `.omh/.gitignore`."""
    (repo_dir / ".omh").mkdir()
    (repo_dir / ".omh" / ".gitignore").symlink_to(outside)
    one_line_refusal(run(repo_dir, "init"), ".gitignore", "symlink")
    unchanged(outside)
    assert not (repo_dir / ".omh" / "memory.toml").exists()


@pytest.mark.parametrize("harness", sorted(HARNESS_FILES))
@pytest.mark.parametrize("where", ["file", "folder"])
def test_escape_no_harness_file_is_written_through_a_link(
    repo_dir: Path, tmp_path: Path, harness: str, where: str
) -> None:
    """Item 5, the class: every harness file and its folder, as a link."""
    rel = Path(HARNESS_FILES[harness])
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    target = elsewhere / rel.name
    target.write_text("")
    if where == "folder" and len(rel.parts) > 1:
        (repo_dir / rel.parent).symlink_to(elsewhere)
    else:
        (repo_dir / rel.parent).mkdir(exist_ok=True)
        (repo_dir / rel).symlink_to(target)
    one_line_refusal(run(repo_dir, "mcp", "config", harness, "--write", "--no-stop-hook"),
                     "symlink")
    assert target.read_text() == ""


# -- item 20: a FIFO, a socket or a folder where a file goes ---------------------------


def _plant(path: Path, kind: str) -> Iterator[None] | None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    else:
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(path))
        sock.close()
    return None


@pytest.mark.parametrize("kind", ["fifo", "directory", "socket"])
def test_hang_hooks_install_refuses_a_fifo_socket_or_folder_at_a_hook_path(
    repo_dir: Path, kind: str
) -> None:
    """Item 20: a FIFO at a hook path hung `omh hooks install` forever; a folder made
    it exit 3. (A subprocess, so a hang fails the test instead of the run.)"""
    _plant(repo_dir / ".git" / "hooks" / "post-rewrite", kind)
    result = omh(repo_dir, "hooks", "install", "--force", timeout=30)
    one_line_refusal(result, "post-rewrite")


@pytest.mark.parametrize("rel,args", [
    ("AGENTS.md", ["memory", "agents-md"]),
    (".mcp.json", ["mcp", "config", "claude", "--write"]),
    (".claude/settings.json", ["mcp", "config", "claude", "--write"]),
    (".codex/config.toml", ["mcp", "config", "codex", "--write"]),
    (".omh/memory.toml", ["init"]),
])
def test_hang_every_writer_refuses_a_fifo_at_its_path(
    repo_dir: Path, rel: str, args: list[str]
) -> None:
    """Item 20, siblings: every file omh writes outside the stores, a FIFO there."""
    if args != ["init"]:
        assert run(repo_dir, "init").code == 0
    _plant(repo_dir / rel, "fifo")
    one_line_refusal(omh(repo_dir, *args, timeout=30), rel.rsplit("/", 1)[-1])


# -- item 7, second half: modes kept ----------------------------------------------------


@pytest.mark.parametrize("harness", sorted(HARNESS_FILES))
def test_secret_mcp_config_write_and_rm_keep_a_private_files_mode(
    repo_dir: Path, harness: str
) -> None:
    """Item 7: `mcp config … --write` turned a 0600 file (it may hold tokens in an
    `env`) into 0644, readable by every account."""
    path = repo_dir / HARNESS_FILES[harness]
    path.parent.mkdir(exist_ok=True)
    other = ('[mcp_servers.other]\ncommand = "x"\n' if harness == "codex"
             else json.dumps({"mcp": {"other": {"type": "local", "command": ["x"]}}}
                             if harness == "opencode" else
                             {"mcpServers": {"other": {"command": "x"}}}))
    path.write_text(other)
    path.chmod(0o600)
    assert run(repo_dir, "mcp", "config", harness, "--write").code == 0
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert run(repo_dir, "mcp", "rm", harness).code == 0
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_secret_the_stop_hook_and_agents_md_keep_their_mode(repo_dir: Path) -> None:
    """Item 7, siblings: `.claude/settings.json` and AGENTS.md, rewritten."""
    assert run(repo_dir, "init").code == 0
    settings = repo_dir / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"env": {"TOKEN": "x"}}\n')
    settings.chmod(0o600)
    agents = repo_dir / "AGENTS.md"
    agents.write_text("# Agents\n")
    agents.chmod(0o640)
    assert run(repo_dir, "mcp", "config", "claude", "--write").code == 0
    assert run(repo_dir, "memory", "agents-md").code == 0
    assert stat.S_IMODE(settings.stat().st_mode) == 0o600
    assert stat.S_IMODE(agents.stat().st_mode) == 0o640


def test_secret_hooks_install_force_keeps_a_hooks_mode_and_makes_it_runnable(
    repo_dir: Path
) -> None:
    """Item 7, sibling: a hook replaced with --force keeps its owner-only mode (plus
    the execute bit it needs to run)."""
    hook = repo_dir / ".git" / "hooks" / "post-merge"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text("#!/bin/sh\necho mine\n")
    hook.chmod(0o600)
    assert run(repo_dir, "hooks", "install", "--force").code == 0
    assert stat.S_IMODE(hook.stat().st_mode) == 0o700
    assert "omh" in hook.read_text()


# -- item 14: config files edited by a parser that round-trips them -------------------


def _strict(text: str) -> Any:
    def refuse(word: str) -> None:
        raise ValueError(f"{word} is not JSON")

    return json.loads(text, parse_constant=refuse, parse_int=str, parse_float=str)


def test_wrong_settings_json_numbers_are_kept_as_written(repo_dir: Path) -> None:
    """Item 14: rewriting `.claude/settings.json` turned 1e400 into Infinity, which is
    not JSON: Claude Code then refused the whole file."""
    settings = repo_dir / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{\n  "big": 1e400,\n  "exact": 1.10,\n  "long": 123456789012345678901'
                        '234567890,\n  "neg": -0\n}\n')
    assert run(repo_dir, "mcp", "config", "claude", "--write").code == 0
    text = settings.read_text()
    assert "1e400" in text and "1.10" in text and "123456789012345678901234567890" in text
    assert '"neg": -0' in text
    _strict(text)


@pytest.mark.parametrize("harness", ["claude", "cursor", "opencode"])
def test_wrong_write_then_rm_gives_back_the_file_byte_for_byte(
    repo_dir: Path, harness: str
) -> None:
    """Item 14: everything omh does not change is kept as written — indentation, key
    order, escapes, numbers — so writing and removing our entry is a round trip."""
    table = "mcp" if harness == "opencode" else "mcpServers"
    original = ('{\n    "x": [1e400, 2.50, "\\u00e9\\ud83d"],\n    "TABLE": {\n        "other": '
                '{"command": "a", "args": ["b"]}\n    },\n    "z": {}\n}\n').replace("TABLE", table)
    path = repo_dir / HARNESS_FILES[harness]
    path.parent.mkdir(exist_ok=True)
    path.write_text(original)
    assert run(repo_dir, "mcp", "config", harness, "--write", "--no-stop-hook").code == 0
    written = path.read_text()
    assert _strict(written)[table]["omh"]
    assert '"other": {"command": "a", "args": ["b"]}' in written
    assert '\n        "omh": {\n            ' in written  # the file's own indentation
    assert run(repo_dir, "mcp", "rm", harness).code == 0
    assert path.read_text() == original


def test_wrong_a_number_in_the_entrys_args_stays_that_number(repo_dir: Path) -> None:
    """Item 14, sibling: numbers are kept as written, so the args of a kept entry must
    still read as the words a harness passes (`5`, never a Python repr)."""
    (repo_dir / ".mcp.json").write_text(
        '{"mcpServers": {"omh": {"command": "omh", "args": ["mcp", "serve", "--repo", 5]}}}\n')
    assert run(repo_dir, "mcp", "config", "claude", "--write", "--no-stop-hook").code == 0
    entry = json.loads((repo_dir / ".mcp.json").read_text())["mcpServers"]["omh"]
    assert entry["args"] == ["mcp", "serve", "--repo", "5"]


def test_wrong_codex_multi_line_args_are_accepted_and_kept(repo_dir: Path) -> None:
    """Item 14: a valid `.codex/config.toml` whose omh entry has a multi-line `args`
    was refused as not valid TOML (the line-based rewrite dropped `args = [`)."""
    config = repo_dir / ".codex" / "config.toml"
    config.parent.mkdir()
    original = ('model = "o3"  # a comment\n\n[mcp_servers.omh]\ncommand = "omh"\nargs = [\n'
                '  "mcp",\n  "serve",\n]\nenv = { A = "1" }\n\n[mcp_servers.other]\n'
                'command = "x"\nargs = [\n  "y",\n]\n')
    config.write_text(original)
    result = run(repo_dir, "mcp", "config", "codex", "--write")
    assert result.code == 0, result.err
    assert config.read_text() == original  # the entry says what omh writes already
    result = run(repo_dir, "mcp", "config", "codex", "--write", "--command", "/opt/omh")
    assert result.code == 0, result.err
    data = tomllib.loads(config.read_text())
    assert data["mcp_servers"]["omh"] == {"command": "/opt/omh", "args": ["mcp", "serve"],
                                          "env": {"A": "1"}}
    assert '  "mcp",\n  "serve",\n]' in config.read_text()  # args unchanged: kept as written
    assert "# a comment" in config.read_text()
    assert run(repo_dir, "mcp", "rm", "codex").code == 0
    after = tomllib.loads(config.read_text())
    assert after == {"model": "o3", "mcp_servers": {"other": {"command": "x", "args": ["y"]}}}


@pytest.mark.parametrize("shape", [
    'omh = { command = "omh", args = ["mcp", "serve"] }\n',
    'mcp_servers.omh.command = "omh"\nmcp_servers.omh.args = ["mcp", "serve"]\n',
])
def test_wrong_codex_entries_in_other_toml_forms_are_edited_not_refused(
    repo_dir: Path, shape: str
) -> None:
    """Item 14, siblings: an inline table or dotted keys are valid TOML for the same
    entry; omh edits them through the parser instead of refusing them."""
    config = repo_dir / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text(("[mcp_servers]\n" if shape.startswith("omh") else "") + shape)
    result = run(repo_dir, "mcp", "config", "codex", "--write", "--command", "/opt/omh")
    assert result.code == 0, result.err
    assert tomllib.loads(config.read_text())["mcp_servers"]["omh"] == {
        "command": "/opt/omh", "args": ["mcp", "serve"]}


# -- item 22: odd but valid shapes: a correct edit or a one-line refusal ---------------

DEEP = '{"deep": ' + "[" * (MAX_DEPTH + 50) + "]" * (MAX_DEPTH + 50) + "}"

JSON_SHAPES = [
    # (name, text, refused)
    ("lone surrogate escape", '{"mcpServers": {"other": {"command": "\\ud83d"}}}', False),
    ("null table", '{"mcpServers": null}', False),
    ("null entry", '{"mcpServers": {"omh": null}}', False),
    ("array table", '{"mcpServers": []}', True),
    ("string entry", '{"mcpServers": {"omh": "omh mcp serve"}}', True),
    ("duplicate table", '{"mcpServers": {}, "mcpServers": {"a": {}}}', True),
    ("duplicate entry", '{"mcpServers": {"omh": {}, "omh": {"env": {}}}}', True),
    ("duplicate elsewhere", '{"a": 1, "a": 2, "mcpServers": {}}', False),
    ("byte-order mark", '\ufeff{"a": 1}', False),
    ("huge numbers", '{"a": 1e400, "b": -1e-400, "c": ' + "9" * 5000 + "}", False),
    ("deep nesting", DEEP, True),
    ("moderate nesting", '{"deep": ' + "[" * 50 + "]" * 50 + "}", False),
    ("top-level array", "[]", True),
    ("empty object", "{}", False),
    ("whitespace only", " \n", False),
    ("NaN (not JSON)", '{"a": NaN}', True),
    ("control escapes", '{"a": "\\u0000\\n\\t"}', False),
    ("crlf line ends", '{\r\n  "a": 1,\r\n  "mcpServers": {\r\n    "b": {}\r\n  }\r\n}\r\n', False),
]


@pytest.mark.parametrize("harness", ["claude", "cursor", "opencode"])
@pytest.mark.parametrize("name,text,refused", JSON_SHAPES, ids=[s[0] for s in JSON_SHAPES])
def test_crash_odd_but_valid_json_gets_a_correct_edit_or_a_one_line_refusal(
    repo_dir: Path, harness: str, name: str, text: str, refused: bool
) -> None:
    """Item 22: a lone-surrogate escape in `.mcp.json` made `mcp config --write` exit 3;
    the class: every odd shape gets a correct rewrite or one line, never lost content."""
    table = "mcp" if harness == "opencode" else "mcpServers"
    text = text.replace("mcpServers", table)
    path = repo_dir / HARNESS_FILES[harness]
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(text.encode("utf-8"))
    result = run(repo_dir, "mcp", "config", harness, "--write", "--no-stop-hook")
    if refused:
        one_line_refusal(result, HARNESS_FILES[harness])
        assert path.read_bytes() == text.encode("utf-8")
        return
    assert result.code == 0, (result.code, result.err)
    written = path.read_bytes().decode("utf-8")
    assert written.startswith("\ufeff") == text.startswith("\ufeff")
    data = _strict(written.removeprefix("\ufeff"))
    assert data[table]["omh"]
    if "\r\n" in text:  # the file's own line ends, never a mix
        assert written.count("\n") == written.count("\r\n")
    before = _strict(text.removeprefix("\ufeff")) if text.strip() else {}
    for key, value in before.items():  # nothing lost
        if key != table:
            assert data[key] == value
        elif isinstance(value, dict):
            assert {k: v for k, v in data[key].items() if k != "omh"} == {
                k: v for k, v in value.items() if k != "omh"}
    assert run(repo_dir, "mcp", "rm", harness).code == 0


SETTINGS_SHAPES = [
    ("hooks null", '{"hooks": null}', False),
    ("Stop null", '{"hooks": {"Stop": null}}', False),
    ("hooks array", '{"hooks": []}', True),
    ("Stop object", '{"hooks": {"Stop": {}}}', True),
    ("odd groups kept", '{"hooks": {"Stop": [1, null, {"hooks": "x"}]}}', False),
    ("duplicate hooks", '{"hooks": {}, "hooks": {}}', True),
    ("byte-order mark", '\ufeff{"model": "x"}', False),
    ("huge number", '{"n": 1e400}', False),
    ("lone surrogate", '{"s": "\\udc00"}', False),
]


@pytest.mark.parametrize("name,text,refused", SETTINGS_SHAPES,
                         ids=[s[0] for s in SETTINGS_SHAPES])
def test_crash_odd_but_valid_settings_get_a_correct_edit_or_a_one_line_refusal(
    repo_dir: Path, name: str, text: str, refused: bool
) -> None:
    """Item 22: `"hooks": null` in `.claude/settings.json` made `mcp config claude
    --write` exit 3; the class of odd settings shapes."""
    settings = repo_dir / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_bytes(text.encode("utf-8"))
    result = run(repo_dir, "mcp", "config", "claude", "--write")
    if refused:
        one_line_refusal(result, "settings.json")
        assert settings.read_bytes() == text.encode("utf-8")
        assert not (repo_dir / ".mcp.json").exists()  # checked before anything is written
        return
    assert result.code == 0, (result.code, result.err)
    written = settings.read_text(encoding="utf-8")
    data = _strict(written.removeprefix("\ufeff"))
    assert any("review --summary" in h["command"] for g in data["hooks"]["Stop"]
               if isinstance(g, dict) and isinstance(g.get("hooks"), list) for h in g["hooks"])
    assert run(repo_dir, "mcp", "rm", "claude").code == 0
    left = settings.read_bytes().decode("utf-8") if settings.exists() else ""
    if name in ("hooks null", "Stop null"):
        assert left == ""  # nothing but what omh wrote was there... and null
    else:
        assert left == text


TOML_SHAPES = [
    ("servers not a table", 'mcp_servers = 1\n', True),
    ("array of tables", '[[mcp_servers]]\nname = "x"\n', True),
    ("entry not a table", 'mcp_servers = { omh = "x" }\n', True),
    ("byte-order mark", '\ufeffmodel = "x"\n', False),
    ("crlf", 'model = "x"\r\n[mcp_servers.other]\r\ncommand = "y"\r\n', False),
    ("deep arrays", "a = " + "[" * 60 + "]" * 60 + "\n", False),
    ("huge numbers", "a = 1e400\nb = " + "9" * 30 + "\n", False),  # kept as written
    ("not toml", "a = \n", True),
    ("inline servers", 'mcp_servers = { other = { command = "x" } }\n', False),
    ("very deep arrays", "a = " + "[" * 2000 + "]" * 2000 + "\n", True),
]


@pytest.mark.parametrize("name,text,refused", TOML_SHAPES, ids=[s[0] for s in TOML_SHAPES])
def test_crash_odd_toml_gets_a_correct_edit_or_a_one_line_refusal(
    repo_dir: Path, name: str, text: str, refused: bool
) -> None:
    """Item 22, the TOML side: `.codex/config.toml` in odd shapes."""
    config = repo_dir / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_bytes(text.encode("utf-8"))
    result = run(repo_dir, "mcp", "config", "codex", "--write")
    if refused:
        one_line_refusal(result, "config.toml")
        assert config.read_bytes() == text.encode("utf-8")
        return
    assert result.code == 0, (result.code, result.err)
    written = config.read_text(encoding="utf-8")
    assert written.startswith("\ufeff") == text.startswith("\ufeff")
    data = tomllib.loads(written.removeprefix("\ufeff"))
    before = tomllib.loads(text.removeprefix("\ufeff"))
    assert data["mcp_servers"]["omh"] == {"command": "omh", "args": ["mcp", "serve"]}
    assert {k: v for k, v in data.items() if k != "mcp_servers"} == {
        k: v for k, v in before.items() if k != "mcp_servers"}


# -- item 6: doctor never runs a repository's command unasked -------------------------


def _planted_command(repo: Path, marker: Path) -> None:
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"omh": {
        "command": "sh", "args": ["-c", f"touch {marker}; exit 1"]}}}))


def test_escape_doctor_never_runs_a_committed_command_without_asking(
    repo_dir: Path, tmp_path: Path
) -> None:
    """Item 6: `omh doctor` ran whatever command a committed `.mcp.json` named for omh
    — in a fresh clone of someone else's repository, their program, unasked."""
    assert run(repo_dir, "init").code == 0
    marker = tmp_path / "ran"
    _planted_command(repo_dir, marker)
    result = run(repo_dir, "doctor")
    assert result.code == 1
    assert not marker.exists()
    assert "not the command omh writes" in result.out and "--trust-config" in result.out
    result = run(repo_dir, "doctor", "--trust-config")
    assert marker.exists()  # asked for: started (and it fails, as it should)
    assert "sh -c" in result.err and result.code == 1


def test_escape_doctor_shows_a_planted_command_escaped_on_one_line(repo_dir: Path) -> None:
    """Item 6, sibling: the command shown before the question is the repository's
    text; a newline or an escape sequence in it must not forge a line or repaint
    the terminal around the question."""
    assert run(repo_dir, "init").code == 0
    (repo_dir / ".mcp.json").write_text(json.dumps({"mcpServers": {"omh": {
        "command": "sh", "args": ["-c", "true\nomh: ok, safe\x1b[2K"]}}}))
    result = run(repo_dir, "doctor")
    assert result.code == 1
    assert "\x1b" not in result.err + result.out
    assert not any(line.startswith("omh: ok, safe") for line in result.err.splitlines())


def test_escape_doctor_asks_on_a_terminal_and_a_no_runs_nothing(
    repo_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Item 6: on a terminal doctor shows the command and asks; only a yes runs it."""
    assert run(repo_dir, "init").code == 0
    marker = tmp_path / "ran"
    _planted_command(repo_dir, marker)
    asked: list[str] = []

    def answer(reply: bool) -> Any:
        def confirm(question: str) -> bool:
            asked.append(question)
            return reply
        return confirm

    monkeypatch.setattr(cli, "_confirm_on_terminal", answer(False))
    result = run(repo_dir, "doctor")
    assert asked and not marker.exists() and result.code == 1
    assert f"touch {marker}" in result.err  # the command was shown before the question
    monkeypatch.setattr(cli, "_confirm_on_terminal", answer(True))
    run(repo_dir, "doctor")
    assert marker.exists()


def test_escape_doctor_says_a_look_alike_of_omh_is_started_from_a_path(
    repo_dir: Path, tmp_path: Path
) -> None:
    """Item 6, siblings: `PATH/omh mcp serve` is omh's server started from a path the
    file chose, not necessarily the user's omh; a committed `./bin/omh` is the
    repository's own script. Both are asked for, and said for what they are."""
    assert run(repo_dir, "init").code == 0
    marker = tmp_path / "ran"
    for folder, said in ((tmp_path / "bin", "started from that path"),
                         (repo_dir / "bin", "inside the repository")):
        script = folder / "omh"
        script.parent.mkdir()
        script.write_text(f"#!/bin/sh\ntouch {marker}\n")
        script.chmod(0o755)
        (repo_dir / ".mcp.json").write_text(json.dumps({"mcpServers": {"omh": {
            "command": str(script), "args": ["mcp", "serve"]}}}))
        result = run(repo_dir, "doctor")
        assert result.code == 1 and not marker.exists()
        assert said in result.out


def test_escape_doctor_asks_when_path_finds_omh_inside_the_repository(
    repo_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Item 6, sibling: with `.` (or a folder of the checkout) on PATH, the plain `omh`
    a committed `.mcp.json` names is the repository's own script: asked for too."""
    assert run(repo_dir, "init").code == 0
    marker = tmp_path / "ran"
    script = repo_dir / "omh"
    script.write_text(f"#!/bin/sh\ntouch {marker}\n")
    script.chmod(0o755)
    (repo_dir / ".mcp.json").write_text(json.dumps({"mcpServers": {"omh": {
        "command": "omh", "args": ["mcp", "serve"]}}}))
    monkeypatch.setenv("PATH", f"{repo_dir}{os.pathsep}{os.environ['PATH']}")
    result = run(repo_dir, "doctor")
    assert result.code == 1 and not marker.exists()
    assert "inside the repository" in result.out


# -- the JSON editor, on any file: write then remove is the identity -------------------

_SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False,
                                                                  allow_infinity=False) | st.text()
# Two levels of nesting, spelled out (st.recursive's own check of its lambda is flaky
# under warnings-as-errors).
_LISTS = st.lists(_SCALARS, max_size=3)
_VALUES = st.one_of(_SCALARS, _LISTS, st.dictionaries(st.text(max_size=5),
                                                     st.one_of(_SCALARS, _LISTS), max_size=3))


@settings(max_examples=150, deadline=None)
@given(other=st.dictionaries(st.text(max_size=6).filter(lambda k: k != "mcpServers"), _VALUES,
                             max_size=4),
       servers=st.dictionaries(st.text(max_size=6).filter(lambda k: k != "omh"), _VALUES,
                               max_size=3),
       indent=st.sampled_from([None, 1, 2, 4, "\t"]), ascii_only=st.booleans())
def test_wrong_any_json_file_survives_write_then_rm_byte_for_byte(
    other: dict[str, Any], servers: dict[str, Any], indent: Any, ascii_only: bool
) -> None:
    """Item 14, the class: whatever else a `.mcp.json` holds, in whatever layout,
    adding omh's entry changes nothing else and removing it gives the file back."""
    claude = HARNESSES["claude"]
    text = json.dumps({**other, "mcpServers": servers}, indent=indent,
                      ensure_ascii=ascii_only) + "\n"
    added = claude.add(text, None)
    assert claude.command_in(added) == ("omh", ["mcp", "serve"])
    value = json.loads(added)
    assert value["mcpServers"].pop("omh")
    assert value == json.loads(text)
    removed, _ = claude.remove(added)
    assert removed == text


# -- second review: what the first fixes of items 6, 5 and 14 still let through ---------


def _script(path: Path, marker: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n")
    path.chmod(0o755)


@pytest.mark.parametrize("entry,planted", [(".", "omh"), ("", "omh"), ("bin", "bin/omh"),
                                           ("./bin", "bin/omh")],
                         ids=["dot", "empty", "relative", "dot-relative"])
def test_escape_doctor_from_a_subfolder_never_runs_omh_a_relative_path_entry_finds(
    repo_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, entry: str, planted: str
) -> None:
    """Item 6, second review: with `.` (or an empty or relative entry) on PATH, doctor
    run from a subfolder looked `omh` up from that subfolder — found the user's omh,
    called it omh's own — and then started the server in the checkout, where the same
    entry finds the repository's committed `omh`: the repository's program ran
    unasked, and doctor said ok."""
    assert run(repo_dir, "init").code == 0
    marker = tmp_path / "ran"
    _script(repo_dir / planted, marker)
    (repo_dir / "src").mkdir()
    (repo_dir / ".mcp.json").write_text(json.dumps({"mcpServers": {"omh": {
        "command": "omh", "args": ["mcp", "serve"]}}}))
    real = tmp_path / "realbin" / "omh"
    _script(real, tmp_path / "real-ran")
    monkeypatch.setenv("PATH", os.pathsep.join([entry, str(real.parent), os.environ["PATH"]]))
    for where in (repo_dir / "src", repo_dir):
        result = run(where, "doctor")
        assert not marker.exists(), where
        assert result.code == 1, (result.out, result.err)
        assert "relative" in result.out and "--trust-config" in result.out
    # Asked for, doctor starts exactly the file it named, not a second lookup's.
    result = run(repo_dir / "src", "doctor", "--trust-config")
    assert marker.exists()
    assert str(repo_dir / planted) in result.err


def test_wrong_doctor_finds_a_relative_command_from_the_checkout_as_a_harness_does(
    repo_dir: Path, tmp_path: Path
) -> None:
    """Item 6, sibling of the second review: a `./bin/omh` command was looked up from
    doctor's own folder, so from a subfolder doctor said it "does not exist" (a harness,
    started in the checkout, finds it) — and could have named a different file."""
    assert run(repo_dir, "init").code == 0
    marker = tmp_path / "ran"
    _script(repo_dir / "bin" / "omh", marker)
    (repo_dir / "src").mkdir()
    (repo_dir / ".mcp.json").write_text(json.dumps({"mcpServers": {"omh": {
        "command": "./bin/omh", "args": ["mcp", "serve"]}}}))
    result = run(repo_dir / "src", "doctor")
    assert result.code == 1 and not marker.exists()
    assert "does not exist" not in result.out
    assert "inside the repository" in result.out and "--trust-config" in result.out


@pytest.mark.parametrize("spelling", ["linked checkout", "dot-dot", "linked sub, dot-dot"])
def test_escape_hooks_install_never_writes_below_a_linked_hooks_path_spelled_another_way(
    repo_dir: Path, tmp_path: Path, spelling: str
) -> None:
    """Item 5, second review: `core.hooksPath` naming the committed `.githooks` link
    through a linked spelling of the checkout (or with `sub/..`) looked like a folder
    outside the checkout, so it was trusted as named and the hooks were written
    wherever the committed link points."""
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "x").mkdir(parents=True)
    (repo_dir / ".githooks").symlink_to(elsewhere)
    if spelling == "linked checkout":
        (tmp_path / "link").symlink_to(repo_dir)
        configured, named = str(tmp_path / "link" / ".githooks"), ".githooks"
    elif spelling == "dot-dot":
        (repo_dir / "sub").mkdir()
        configured, named = "sub/../.githooks", ".githooks"
    else:  # a committed link `sub` -> elsewhere/x: sub/.. is elsewhere itself
        (repo_dir / "sub").symlink_to(elsewhere / "x")
        configured, named = "sub/../hooks", "sub"
    git(repo_dir, "config", "core.hooksPath", configured)
    one_line_refusal(run(repo_dir, "hooks", "install"), named, "symlink")
    assert sorted(p.name for p in elsewhere.rglob("*")) == ["x"]


@pytest.mark.parametrize("spelling", ["linked checkout", "dot-dot", "outside, dot-dot"])
def test_escape_hooks_install_still_writes_a_plain_hooks_path_however_it_is_spelled(
    repo_dir: Path, tmp_path: Path, spelling: str
) -> None:
    """Item 5, second review: the guard of the fix above — a plain hooks folder, in the
    checkout or outside it, is written wherever git would run it from."""
    if spelling == "linked checkout":
        (tmp_path / "link").symlink_to(repo_dir)
        configured, where = str(tmp_path / "link" / "githooks"), repo_dir / "githooks"
    elif spelling == "dot-dot":
        (repo_dir / "sub").mkdir()
        configured, where = "sub/../githooks", repo_dir / "githooks"
    else:
        configured, where = "../shared/hooks", tmp_path / "shared" / "hooks"
    git(repo_dir, "config", "core.hooksPath", configured)
    result = run(repo_dir, "hooks", "install")
    assert result.code == 0, result.err
    assert (where / "post-merge").is_file()


@pytest.mark.parametrize("text", [
    'model = "o3"\r\n\r\n[mcp_servers.other]\r\ncommand = "x"\r\n',
    '\ufeffmodel = "o3"\r\n[mcp_servers.other]\r\ncommand = "x"\r\n',
    '\ufeffmodel = "o3"\n',
    'model = "o3"',
    'model = "o3"\r\n[mcp_servers.other]\r\ncommand = "x"',
    '# top\nmodel = "o3" # trailing\n\n[mcp_servers.other]\nargs = [\n  "a", # one\n]\n',
    'model = "o3"\n\n\n',
    'model = "o3"\r\n[profile]\nk = 1\n',
    'mcp_servers.other.command = "x"\r\nmodel = "m"\r\n',
    '[mcp_servers.other]\r\nargs = [\r\n  "a",\r\n]\r\n# last\r\n',
], ids=["crlf", "bom-crlf", "bom", "no-final-newline", "crlf-no-final-newline", "comments",
        "blank-lines-at-end", "mixed-line-ends", "crlf-dotted", "crlf-multi-line"])
def test_wrong_codex_config_write_then_rm_gives_back_the_file_byte_for_byte(
    repo_dir: Path, text: str
) -> None:
    """Item 14, second review: a CRLF `.codex/config.toml` got LF lines from
    `mcp config codex --write` (a file of mixed line ends, which `mcp rm` then refused
    as not TOML); the TOML side must keep the file's line ends, its byte-order mark
    and its missing final newline, so that write then rm is the identity."""
    config = repo_dir / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_bytes(text.encode("utf-8"))
    result = run(repo_dir, "mcp", "config", "codex", "--write")
    assert result.code == 0, result.err
    written = config.read_bytes().decode("utf-8")
    if "\r\n" in text and "\n" not in text.replace("\r\n", ""):  # CRLF throughout
        assert "\n" not in written.replace("\r\n", ""), repr(written)
    assert tomllib.loads(written.removeprefix("\ufeff"))["mcp_servers"]["omh"]
    result = run(repo_dir, "mcp", "rm", "codex")
    assert result.code == 0, result.err
    assert config.read_bytes() == text.encode("utf-8")


def test_wrong_codex_config_edited_in_place_keeps_its_crlf_line_ends(
    repo_dir: Path, tmp_path: Path
) -> None:
    """Item 14, second review, sibling: an omh entry already in a CRLF
    `.codex/config.toml` is edited by tomlkit, which wrote the lines it added with LF."""
    config = repo_dir / ".codex" / "config.toml"
    config.parent.mkdir()
    text = ('model = "o3"\r\n\r\n[mcp_servers.omh]\r\ncommand = "omh"\r\n'
            'startup_timeout_sec = 30\r\n\r\n[profile]\r\nk = 1\r\n')
    config.write_bytes(text.encode())
    command = str(tmp_path / "bin" / "omh")
    result = run(repo_dir, "mcp", "config", "codex", "--write", "--command", command)
    assert result.code == 0, result.err
    written = config.read_bytes().decode()
    assert "\n" not in written.replace("\r\n", ""), repr(written)
    assert tomllib.loads(written)["mcp_servers"]["omh"] == {
        "command": command, "args": ["mcp", "serve"], "startup_timeout_sec": 30}
    assert run(repo_dir, "mcp", "rm", "codex").code == 0
    left = config.read_bytes().decode()
    assert left == 'model = "o3"\r\n\r\n[profile]\r\nk = 1\r\n', repr(left)
