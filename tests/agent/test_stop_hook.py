"""The Claude Code Stop hook that `omh mcp config claude` offers, and `omh mcp rm` removes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from omh_git_memory.agent import stop_hook
from omh_git_memory.model.errors import ConfigError
from tests.helpers import Run, omh

OURS = {"type": "command", "command": "omh memory review --summary --for claude"}
SETTINGS = ".claude/settings.json"


def _settings(repo: Path) -> dict[str, object]:
    data = json.loads((repo / SETTINGS).read_text())
    assert isinstance(data, dict)
    return data


def test_config_prints_the_hook_beside_the_server(repo_dir: Path) -> None:
    run = omh(repo_dir, "mcp", "config", "claude")
    assert run.code == 0
    assert f"# {SETTINGS}" in run.out and '"Stop"' in run.out
    assert stop_hook.command() in run.out
    without = omh(repo_dir, "mcp", "config", "claude", "--no-stop-hook")
    assert "Stop" not in without.out
    assert "Stop" not in omh(repo_dir, "mcp", "config", "cursor").out


def test_write_installs_it_in_claude_codes_format(repo_dir: Path) -> None:
    run = omh(repo_dir, "mcp", "config", "claude", "--write")
    assert run.code == 0, run.err
    assert "wrote the omh Stop hook into" in run.out
    assert _settings(repo_dir) == {"hooks": {"Stop": [{"hooks": [OURS]}]}}
    again = omh(repo_dir, "mcp", "config", "claude", "--write")
    assert "already" in again.out
    assert _settings(repo_dir) == {"hooks": {"Stop": [{"hooks": [OURS]}]}}


def test_write_keeps_every_other_setting_and_hook(repo_dir: Path) -> None:
    theirs = {
        "permissions": {"allow": ["Bash(make test)"]},
        "hooks": {
            "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
                                                          "command": "guard"}]}],
        },
    }
    (repo_dir / ".claude").mkdir()
    (repo_dir / SETTINGS).write_text(json.dumps(theirs))
    assert omh(repo_dir, "mcp", "config", "claude", "--write").code == 0
    data = _settings(repo_dir)
    assert data["permissions"] == theirs["permissions"]
    hooks = data["hooks"]
    assert isinstance(hooks, dict)
    assert hooks["PreToolUse"] == theirs["hooks"]["PreToolUse"]  # type: ignore[index]
    assert hooks["Stop"] == [*theirs["hooks"]["Stop"], {"hooks": [OURS]}]  # type: ignore
    removed = omh(repo_dir, "mcp", "rm", "claude")
    assert removed.code == 0 and "removed the omh Stop hook" in removed.out
    assert _settings(repo_dir) == theirs


def test_rm_takes_only_our_hook_out_of_a_shared_group(repo_dir: Path) -> None:
    mixed = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "mine"}, OURS]}]}}
    (repo_dir / ".claude").mkdir()
    (repo_dir / SETTINGS).write_text(json.dumps(mixed))
    assert omh(repo_dir, "mcp", "rm").code == 0
    assert _settings(repo_dir) == {"hooks": {"Stop": [{"hooks": [
        {"type": "command", "command": "mine"}]}]}}


def test_rm_removes_a_file_left_empty_and_reports_truthfully(repo_dir: Path) -> None:
    assert omh(repo_dir, "mcp", "config", "claude", "--write").code == 0
    first = omh(repo_dir, "mcp", "rm", "claude")
    assert "nothing else was left in it" in first.out
    assert not (repo_dir / SETTINGS).exists() and not (repo_dir / ".claude").exists()
    second = omh(repo_dir, "mcp", "rm", "claude")
    assert "Stop hook" not in second.out


@pytest.mark.parametrize("text", [
    '{\n  "permissions": {"allow": ["Bash(make test)"]}\n}\n',
    '{"permissions": {"deny": ["Read(.env)"]}, "model": "x"}',
    '{"permissions": {"allow": []}, "hooks": {"PreToolUse": []}}',
], ids=["only permissions", "permissions and a model", "permissions and another hook"])
def test_rm_claude_keeps_a_settings_file_that_holds_the_persons_permissions(
    repo_dir: Path, text: str
) -> None:
    """An outside review: `omh mcp rm claude` could delete `.claude/settings.json` with
    the person's permissions in it. The hook goes; the file stays, byte for byte."""
    (repo_dir / ".claude").mkdir()
    (repo_dir / SETTINGS).write_text(text)
    assert omh(repo_dir, "mcp", "config", "claude", "--write").code == 0
    assert stop_hook.installed(_settings(repo_dir))
    removed = omh(repo_dir, "mcp", "rm", "claude")
    assert removed.code == 0 and "nothing else was left" not in removed.out
    assert (repo_dir / SETTINGS).read_text() == text


def test_a_hand_made_hook_of_another_command_is_not_ours() -> None:
    text = json.dumps({"hooks": {"Stop": [{"hooks": [
        {"type": "command", "command": "omh memory review --summary --for claude && x"},
        {"type": "command", "command": "/opt/bin/omh memory review --summary --for claude"},
    ]}]}})
    after = json.loads(stop_hook.remove(text))
    assert after["hooks"]["Stop"][0]["hooks"] == [
        {"type": "command", "command": "omh memory review --summary --for claude && x"}]


@pytest.mark.parametrize("text", [
    "{not json", "[1]", '{"hooks": []}', '{"hooks": {"Stop": {}}}',
])
def test_a_settings_file_of_another_shape_is_refused_and_nothing_written(
    repo_dir: Path, text: str
) -> None:
    (repo_dir / ".claude").mkdir()
    (repo_dir / SETTINGS).write_text(text)
    run = omh(repo_dir, "mcp", "config", "claude", "--write")
    assert run.code == 1 and SETTINGS in run.err
    assert (repo_dir / SETTINGS).read_text() == text
    assert not (repo_dir / ".mcp.json").exists()  # refused before anything was written


def test_a_symlinked_settings_file_or_folder_is_never_written_through(
    repo_dir: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text("{}")
    (repo_dir / ".claude").mkdir()
    os.symlink(outside, repo_dir / SETTINGS)
    run = omh(repo_dir, "mcp", "config", "claude", "--write")
    assert run.code == 1 and "is a symlink" in run.err
    assert outside.read_text() == "{}"
    (repo_dir / SETTINGS).unlink()
    (repo_dir / ".claude").rmdir()
    elsewhere = tmp_path / "dir"
    elsewhere.mkdir()
    os.symlink(elsewhere, repo_dir / ".claude")
    run = omh(repo_dir, "mcp", "config", "claude", "--write")
    assert run.code == 1 and "is a symlink" in run.err
    assert list(elsewhere.iterdir()) == []


def test_remove_of_text_without_our_hook_is_unchanged() -> None:
    text = '{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x"}]}]}}'
    assert stop_hook.remove(text) == text
    with pytest.raises(ConfigError):
        stop_hook.add('{"hooks": 3}')


def test_write_without_omh_session_says_the_hook_will_stay_silent(
    repo_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OMH_SESSION", raising=False)
    env: dict[str, str] = {}
    hint = "while OMH_SESSION is unset"

    def write(environ: dict[str, str]) -> Run:
        return omh(repo_dir, "mcp", "config", "claude", "--write", env=environ)

    unset = write(env)
    assert unset.code == 0 and hint in unset.out, unset.out
    assert "docs/mcp.md" in unset.out
    (repo_dir / ".claude/settings.json").unlink()
    named = write({**env, "OMH_SESSION": "s1"})
    assert named.code == 0 and hint not in named.out
    again = write(env)  # the hook is there already: nothing new to say
    assert again.code == 0 and hint not in again.out
