"""`omh memory review` on a store of notes waiting for a person, on a real terminal."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from tests.helpers import omh
from tests.helpers.notes import PORT_NOTE, remembered
from tests.helpers.repo import init_committed

# The keys of the notes waiting_notes leaves, newest first.
NEW = "surprise/ci-uses-port-8080"
TOPIC = "credentials"
OLD = "surprise/ports-are-taken"


def waiting_notes(repo_dir: Path) -> Path:
    """omh set up and committed in `repo_dir`, and three local notes waiting for review:
    two from session s1 (one older), one from the command line."""
    init_committed(repo_dir)
    remembered(repo_dir, "Ports are taken.", recorded="2026-11-01",
               source="session s1, claude-code 2.1", **PORT_NOTE)
    remembered(repo_dir, "CI uses port 8080.", recorded="2026-11-03",
               source="session s1, claude-code 2.1", **PORT_NOTE)
    run = omh(repo_dir, "memory", "remember", "--type", "topic", "--title", "Credentials",
              "--section", "Summary=A named volume.", "--recorded", "2026-11-02")
    assert run.code == 0, run.err
    return repo_dir


def on_a_terminal(cwd: Path, answers: list[str | Callable[[], str]], *args: str,
                  env: dict[str, str] | None = None) -> tuple[int, str]:
    """Run `omh memory review` with stdin and stdout on a pty; type each answer when
    the prompt for it appears (an answer that is a function is called then, to act
    between two prompts, and its result typed). Returns the exit status and
    everything printed."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "omh_git_memory", "memory", "review", *args],
                            cwd=cwd, stdin=slave, stdout=slave, stderr=slave, close_fds=True,
                            env=env)
    os.close(slave)
    out = b""
    pending_answers = list(answers)
    deadline = time.monotonic() + 60
    prompts_seen = 0
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            out += chunk
            while out.count(b"[p/e/r/k/v/q]") > prompts_seen:
                prompts_seen += 1
                if pending_answers:
                    answer = pending_answers.pop(0)
                    typed = answer() if callable(answer) else answer
                    os.write(master, typed.encode() + b"\n")
                else:
                    os.write(master, b"\x04")  # end of input
        elif proc.poll() is not None:
            break
    proc.wait(timeout=30)
    os.close(master)
    return proc.returncode, out.decode("utf-8", "replace").replace("\r\n", "\n")
