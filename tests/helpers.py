"""Builders the tests share: real repositories, the real CLI in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pygit2

ROOT = Path(__file__).resolve().parents[1]
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


def omh(cwd: Path, *args: str, env: dict[str, str] | None = None) -> Run:
    """The real `omh` command in a subprocess."""
    done = subprocess.run(
        [sys.executable, "-m", "omh_git_memory", *args],
        cwd=cwd, env={**os.environ, **(env or {})}, capture_output=True, text=True, check=False,
    )
    return Run(done.returncode, done.stdout, done.stderr)


def note_text(key: str, kind: str = "topic", body: str = "", **fields: str) -> str:
    """A small hand-written note."""
    head = {"key": key, "type": kind, "source": "test", "recorded": "2026-11-01", **fields}
    lines = "".join(f"{k}: {v}\n" for k, v in head.items())
    return f"---\n{lines}---\n\n# {key}\n" + (f"\n{body}" if body else "")
