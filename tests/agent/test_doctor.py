from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tests.helpers import omh


@pytest.fixture
def on_path(tmp_path: Path) -> dict[str, str]:
    """PATH with an `omh` that runs this checkout's package, as a harness would find it."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "omh").write_text(f"#!/bin/sh\nexec {sys.executable} -m omh_git_memory \"$@\"\n")
    (bindir / "omh").chmod(0o755)
    return {"PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}"}


def _checks(run_out: str) -> dict[str, str]:
    return {c["check"]: c["status"] for c in json.loads(run_out)}


def test_doctor_passes_on_a_good_set_up(repo_dir: Path, on_path: dict[str, str]) -> None:
    assert omh(repo_dir, "init").code == 0
    run = omh(repo_dir, "doctor", "--json", env=on_path)
    assert run.code == 0, run.out + run.err
    assert _checks(run.out) == {"repository": "ok", "local store": "ok", "census": "ok",
                                "server": "ok", "start": "ok", "tools": "ok"}


def test_doctor_fails_when_the_store_is_missing(repo_dir: Path, on_path: dict[str, str]) -> None:
    run = omh(repo_dir, "doctor", env=on_path)
    assert run.code == 1 and "omh init" in run.out


def test_doctor_fails_on_an_empty_mounted_store(
    repo_dir: Path, on_path: dict[str, str], tmp_path: Path
) -> None:
    mount = tmp_path / "mount"
    mount.mkdir()
    run = omh(repo_dir, "doctor", env={**on_path, "OMH_LOCAL_STORE": str(mount)})
    assert run.code == 1 and "check the mount" in run.out


def test_doctor_fails_when_the_server_does_not_start(
    repo_dir: Path, on_path: dict[str, str]
) -> None:
    omh(repo_dir, "init")
    (repo_dir / ".mcp.json").write_text(json.dumps(
        {"mcpServers": {"omh": {"command": "false", "args": []}}}))
    run = omh(repo_dir, "doctor", "--json", "--trust-config", env=on_path)
    assert run.code == 1
    assert _checks(run.out)["server"] == "fail"


def test_doctor_fails_when_the_command_is_not_on_path(repo_dir: Path) -> None:
    omh(repo_dir, "init")
    (repo_dir / ".mcp.json").write_text(json.dumps(
        {"mcpServers": {"omh": {"command": "omh-not-installed", "args": ["mcp", "serve"]}}}))
    run = omh(repo_dir, "doctor")
    assert run.code == 1 and "not on PATH" in run.out


def test_a_server_that_dies_is_reported_in_its_own_words(
    repo_dir: Path, on_path: dict[str, str]
) -> None:
    omh(repo_dir, "init")
    (repo_dir / ".mcp.json").write_text(json.dumps({"mcpServers": {"omh": {
        "command": "sh", "args": ["-c", "echo 'omh: the real cause' >&2; exit 1"]}}}))
    run = omh(repo_dir, "doctor", "--json", "--trust-config", env=on_path)
    assert run.code == 1
    server = next(c for c in json.loads(run.out) if c["check"] == "server")
    assert "it said: omh: the real cause" in server["detail"]
    assert "TaskGroup" not in server["detail"]


def test_doctor_starts_a_hand_set_full_path_and_a_repo_given_server(
    repo_dir: Path, tmp_path: Path
) -> None:
    omh(repo_dir, "init")
    hidden = tmp_path / "not-on-path"  # a full path, so PATH need not hold omh
    hidden.mkdir()
    binary = hidden / "omh"
    binary.write_text(f"#!/bin/sh\nexec {sys.executable} -m omh_git_memory \"$@\"\n")
    binary.chmod(0o755)
    args = ["mcp", "config", "claude", "--write", "--command", str(binary)]
    assert omh(repo_dir, *args).code == 0
    run = omh(repo_dir, "doctor", "--json", "--trust-config")
    assert run.code == 0, run.out + run.err
    assert str(binary) in next(c["detail"] for c in json.loads(run.out) if c["check"] == "server")
    (repo_dir / ".mcp.json").write_text(json.dumps({"mcpServers": {"omh": {
        "command": str(binary), "args": ["mcp", "serve", "--repo", str(repo_dir)]}}}))
    # started from an empty folder elsewhere
    run = omh(repo_dir, "doctor", "--json", "--trust-config")
    assert run.code == 0, run.out + run.err
    assert _checks(run.out)["tools"] == "ok"
    binary.unlink()
    run = omh(repo_dir, "doctor", "--json", "--trust-config")
    server = next(c for c in json.loads(run.out) if c["check"] == "server")
    assert run.code == 1 and "does not exist" in server["detail"] and "--command" in server[
        "detail"]


def test_doctor_says_when_no_harness_file_starts_the_server_yet(
    repo_dir: Path, on_path: dict[str, str]
) -> None:
    assert omh(repo_dir, "init").code == 0

    def server() -> dict[str, str]:
        run = omh(repo_dir, "doctor", "--json", env=on_path)
        assert run.code == 0, run.out + run.err
        found: dict[str, str] = next(c for c in json.loads(run.out) if c["check"] == "server")
        return found

    bare = server()
    assert bare["status"] == "ok"
    assert bare["detail"].endswith("; no harness file here starts it yet: "
                                   "`omh mcp config HARNESS --write` writes one"), bare
    assert omh(repo_dir, "mcp", "config", "cursor", "--write").code == 0
    assert "no harness file" not in server()["detail"]


def test_doctor_warns_of_notes_that_cannot_be_read(repo_dir: Path) -> None:
    """A note recall can never return (a hand edit that broke its frontmatter) is
    a warning that names it; the rest of the checks go on."""
    from omh_git_memory.actions.workspace import open_workspace
    from omh_git_memory.agent.doctor import NAMED, Status, diagnose
    from tests.helpers import commit_files, local_store

    assert omh(repo_dir, "init").code == 0
    broken = "---\nkey: {k}\ntype: surprise\n---\n\n# {k}\n"
    commit_files(repo_dir, {f".omh/notes/bad-{i}.md": broken.format(k=f"bad-{i}")
                            for i in range(NAMED + 1)})
    (local_store(repo_dir) / "mine.md").write_text(broken.format(k="mine"), encoding="utf-8")
    checks = {c.name: c for c in diagnose(open_workspace(repo_dir), {"PATH": "/nowhere"})}
    notes = checks["notes"]
    assert notes.status is Status.WARN
    assert notes.detail.startswith(f"{NAMED + 2} notes cannot be read, so recall never "
                                   "returns them: ")
    assert notes.detail.endswith(" and 2 more; `omh memory lint` says why")
    assert checks["census"].status is Status.OK and "server" in checks
