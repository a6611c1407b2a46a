"""Builders the tests share: real repositories, the real CLI in a subprocess."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pygit2

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"
IDENTITY = ("Test Person", "test@example.invalid")

# The note seed page 001 shows `omh memory remember` writing, byte for byte.
SEED_NOTE = """\
---
key: surprise/mounting-a-credential-file-returns-ebusy
type: surprise
source: cli
recorded: 2026-10-11
---

# Mounting a credential file returns EBUSY.

## Expected
A bind mount of the token file would persist the login.

## Observed
Mounting a credential file returns EBUSY.

## Evidence
EBUSY from the mount syscall

## Answers

- why does mounting the token file fail?

## Related

- [[credentials-are-a-named-volume]]
"""

SEED_ARGS = [
    "memory", "remember",
    "--expected", "A bind mount of the token file would persist the login.",
    "--observed", "Mounting a credential file returns EBUSY.",
    "--evidence", "EBUSY from the mount syscall",
    "--answers", "why does mounting the token file fail?",
    "--relates-to", "credentials-are-a-named-volume",
    "--recorded", "2026-10-11",
]


def make_repo(path: Path, files: dict[str, str] | None = None) -> pygit2.Repository:
    """A repository at `path` with one commit holding `files`."""
    path.mkdir(parents=True, exist_ok=True)
    repo = pygit2.init_repository(str(path), initial_head="main")
    repo.config["user.name"], repo.config["user.email"] = IDENTITY
    for name, text in (files or {"README.md": "# Test repo\n"}).items():
        target = path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    repo.index.add_all()
    repo.index.write()
    tree = repo.index.write_tree()
    sig = pygit2.Signature(*IDENTITY)
    repo.create_commit("HEAD", sig, sig, "first commit", tree, [])
    return repo


def git(cwd: Path, *args: str) -> str:
    """The git CLI, playing the user."""
    env = {**os.environ, "GIT_AUTHOR_NAME": IDENTITY[0], "GIT_AUTHOR_EMAIL": IDENTITY[1],
           "GIT_COMMITTER_NAME": IDENTITY[0], "GIT_COMMITTER_EMAIL": IDENTITY[1]}
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          check=True)
    return done.stdout


@dataclass
class Run:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


def omh(cwd: Path, *args: str, env: dict[str, str] | None = None,
        timeout: float | None = None) -> Run:
    """The real `omh` command in a subprocess. With `timeout`, a command that blocks
    fails the test instead of hanging the run."""
    try:
        done = subprocess.run(
            [sys.executable, "-m", "omh_git_memory", *args], cwd=cwd,
            env={**os.environ, **(env or {})}, capture_output=True, text=True, check=False,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        raise AssertionError(f"omh {' '.join(args)} hung for {timeout}s") from None
    return Run(done.returncode, done.stdout, done.stderr)


def local_store(repo: Path) -> Path:
    """The local store of the clone at `repo`, as `omh memory --json` names it."""
    return Path(omh(repo, "memory", "--json").json()["local_store"])


def remember_linked(repo: Path, observed: str, *links: str) -> str:
    """A local surprise note observing `observed`, linking to `links`; its key."""
    args = ["memory", "remember", "--expected", "e", "--observed", observed,
            "--evidence", "v", "--answers", "q?", "--json"]
    for link in links:
        args += ["--relates-to", link]
    run = omh(repo, *args)
    assert run.code == 0, run.err
    return str(run.json()["key"])


def commit_files(repo: Path, files: dict[str, str | None], message: str = "change") -> str:
    """Write `files` (None: delete it) in `repo`, commit them all; the new commit's id."""
    for name, text in files.items():
        path = repo / name
        if text is None:
            path.unlink()
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message)
    return git(repo, "rev-parse", "HEAD").strip()


def promote_ready(repo: Path, *observed: str) -> list[str]:
    """omh initialised and committed in `repo`, and one local surprise note observing
    each of `observed`, ready to promote; their keys."""
    assert omh(repo, "init").code == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "omh init")
    return [remember_linked(repo, text) for text in observed]


def start_at_fault(repo: Path, fault: str, *args: str) -> subprocess.Popen[str]:
    """`omh ARGS` started with the fault point `fault` set (it stops itself there)."""
    return subprocess.Popen([sys.executable, "-m", "omh_git_memory", *args], cwd=repo,
                            env={**os.environ, "OMH_FAULT": fault}, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def wait_stopped(proc: subprocess.Popen[str], timeout: float = 60.0) -> None:
    """Wait until `proc` has stopped itself (SIGSTOP) at its fault point."""
    deadline = time.monotonic() + timeout
    status = Path(f"/proc/{proc.pid}/stat")
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        if status.read_text().rsplit(")", 1)[1].split()[0] == "T":
            return
        time.sleep(0.02)
    proc.kill()
    raise AssertionError("the command never reached its fault point")


def resume(proc: subprocess.Popen[str]) -> Run:
    """Let a process stopped at its fault point go on, and wait for its end."""
    os.kill(proc.pid, signal.SIGCONT)
    out, err = proc.communicate(timeout=120)
    return Run(proc.returncode, out, err)


def note_text(key: str, kind: str = "topic", body: str = "", **fields: str) -> str:
    """A small hand-written note."""
    head = {"key": key, "type": kind, "source": "test", "recorded": "2026-11-01", **fields}
    lines = "".join(f"{k}: {v}\n" for k, v in head.items())
    return f"---\n{lines}---\n\n# {key}\n" + (f"\n{body}" if body else "")


def replies_until(stdout: Any, request_id: object, timeout: float) -> list[dict[str, Any]]:
    """The JSON lines a server writes to `stdout` (a subprocess pipe), up to the reply
    to `request_id`, or every one it wrote within `timeout` seconds.

    It reads the file descriptor itself: select() on a buffered pipe followed by
    readline() loses a line whenever two arrive in one read (the second waits in
    Python's buffer, where select() cannot see it), so a server that answered looked
    hung."""
    import select

    fd = stdout.fileno()
    deadline = time.monotonic() + timeout
    pending = b""
    replies: list[dict[str, Any]] = []
    while not any(r.get("id") == request_id for r in replies):
        if b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            replies.append(json.loads(line))
            continue
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        chunk = os.read(fd, 65536) if ready else b""
        if not chunk:  # timed out, or the server closed its stdout
            break
        pending += chunk
    return replies
