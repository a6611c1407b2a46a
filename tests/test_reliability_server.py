"""Issue 23, items 4 and 21: the MCP server's end, and what `replaces` may overwrite.

Item 21 needs a real process: a real stdio pipe that breaks, a real EOF, real
signals. A request is made pending deterministically with the stop-only fault
point `mcp:call` (the server stops itself as it takes the call, the test acts on
the pipes, then lets it go on). Item 4 drives the real server object through the
SDK's own client in process, and the person's side through the real CLI.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any

import pytest

from tests.helpers import git, note_text, wait_stopped

QUESTION = {"question": "how do I deploy"}


@pytest.fixture
def served(repo_dir: Path) -> Path:
    notes = repo_dir / ".omh/notes"
    notes.mkdir(parents=True)
    (notes / "deploy.md").write_text(note_text("deploy", body="Deploy from the release branch.\n"))
    git(repo_dir, "add", "-A")
    git(repo_dir, "commit", "-qm", "a team note")
    return repo_dir


# --- item 21: a client that goes away, and signals ------------------------------------


class Served:
    """`omh mcp serve` in a subprocess, spoken to line by line as a client would."""

    def __init__(self, repo: Path, tmp: Path, fault: str | None = None) -> None:
        self.tmp = tmp / "tmp"  # where a crash log would go (tempfile honours TMPDIR)
        self.tmp.mkdir(exist_ok=True)
        env = {**os.environ, "TMPDIR": str(self.tmp), "OMH_SESSION": "s21"}
        if fault is not None:
            env["OMH_FAULT"] = fault
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "omh_git_memory", "mcp", "serve"], cwd=repo, env=env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.buffer = b""

    @property
    def stdin(self) -> IO[bytes]:
        assert self.proc.stdin is not None
        return self.proc.stdin

    @property
    def stdout(self) -> IO[bytes]:
        assert self.proc.stdout is not None
        return self.proc.stdout

    def send(self, message: dict[str, Any]) -> None:
        self.stdin.write((json.dumps(message) + "\n").encode())
        self.stdin.flush()

    def answer(self, timeout: float = 60.0) -> dict[str, Any]:
        """The next line the server writes, as JSON; fails the test after `timeout`."""
        fd = self.stdout.fileno()
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
            chunk = os.read(fd, 65536) if ready else b""
            assert chunk, ("no answer", self.buffer)
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        reply: dict[str, Any] = json.loads(line)
        return reply

    def initialize(self) -> None:
        self.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}})
        assert self.answer()["id"] == 1
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def call(self, request_id: int, tool: str, arguments: dict[str, Any]) -> None:
        self.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                   "params": {"name": tool, "arguments": arguments}})

    def close(self, *streams: IO[bytes]) -> None:
        for stream in streams:
            stream.close()

    def end(self, timeout: float = 30.0) -> tuple[int, str]:
        """Wait for the server's end: its exit status and what it said on stderr."""
        assert self.proc.stderr is not None
        try:
            code = self.proc.wait(timeout)  # stderr is small: the pipe never fills
            err = self.proc.stderr.read().decode("utf-8", "replace")
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"the server did not end within {timeout} s") from None
        finally:
            for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
                if stream is not None and not stream.closed:
                    with contextlib.suppress(BrokenPipeError):
                        stream.close()
        return code, err

    def crash_logs(self) -> list[str]:
        return sorted(p.name for p in self.tmp.iterdir() if p.name.startswith("omh-crash-"))


def _a_normal_end(server: Served, code: int, err: str, expected: int = 0) -> None:
    assert code == expected, err
    assert server.crash_logs() == [], err
    assert "Traceback" not in err and "internal error" not in err, err


def _pending(repo: Path, tmp: Path, tool: str = "recall",
             arguments: dict[str, Any] | None = None) -> Served:
    """A served client whose one call is taken and not yet answered (stopped there)."""
    server = Served(repo, tmp, fault="mcp:call:stop")
    server.initialize()
    server.call(10, tool, QUESTION if arguments is None else arguments)
    wait_stopped(server.proc)  # type: ignore[arg-type]
    return server


@pytest.mark.parametrize("gone", ["stdout", "both", "stdin"])
def test_crash_a_client_gone_before_its_answer_is_a_normal_end(
        served: Path, tmp_path: Path, gone: str) -> None:
    """Item 21: a harness that stops its agent mid-call (it closes its end of the
    server's stdout, or both pipes, or only stdin) got exit 3 and a crash log
    telling the user to report a bug, for what is the ordinary end of a session."""
    server = _pending(served, tmp_path)
    streams = {"stdout": [server.stdout], "both": [server.stdin, server.stdout],
               "stdin": [server.stdin]}[gone]
    server.close(*streams)
    os.kill(server.proc.pid, signal.SIGCONT)
    code, err = server.end()  # with stdin open, the broken pipe alone must end it
    _a_normal_end(server, code, err)


def test_crash_a_client_gone_mid_initialize_is_a_normal_end(served: Path,
                                                           tmp_path: Path) -> None:
    """Item 21's sibling: a client that sends `initialize` and dies before the
    answer (both pipes gone while the server is still starting)."""
    for streams in ("both", "stdin"):
        server = Served(served, tmp_path)
        server.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}})
        server.close(server.stdin, *([server.stdout] if streams == "both" else []))
        code, err = server.end()
        _a_normal_end(server, code, err)


@pytest.mark.parametrize(("sig", "expected"), [(signal.SIGTERM, 0), (signal.SIGINT, 130)])
@pytest.mark.parametrize("pending", [False, True])
def test_crash_sigterm_and_sigint_while_serving_end_it_cleanly(
        served: Path, tmp_path: Path, sig: signal.Signals, expected: int, pending: bool) -> None:
    """Item 21's siblings: a harness stops its server with SIGTERM (the MCP stdio
    shutdown's second step), a person with Ctrl-C. SIGTERM killed the process
    (status -15) and Ctrl-C with a call pending wrote a crash log (exit 3). Now:
    0 for SIGTERM, 130 for SIGINT, as docs/mcp.md says, and no crash log."""
    if pending:
        server = _pending(served, tmp_path)
        os.kill(server.proc.pid, sig)  # delivered once it goes on
        os.kill(server.proc.pid, signal.SIGCONT)
    else:
        server = Served(served, tmp_path)
        server.initialize()
        server.call(10, "recall", QUESTION)
        assert server.answer()["id"] == 10
        os.kill(server.proc.pid, sig)
    code, err = server.end()
    _a_normal_end(server, code, err, expected)


def test_dataloss_a_remember_taken_before_sigterm_is_written_whole(
        served: Path, tmp_path: Path) -> None:
    """Item 21's sibling: a SIGTERM that arrives while `remember` is under way ends
    the server only once the note is written: the agent's note is not lost, nor
    left half-written."""
    from tests.helpers import local_store

    args = {"expected": "port 8080 would be free", "observed": "CI already listens on 8080.",
            "evidence": "bind: address already in use", "answers": ["why do tests fail on CI?"]}
    server = _pending(served, tmp_path, "remember", args)
    os.kill(server.proc.pid, signal.SIGTERM)
    os.kill(server.proc.pid, signal.SIGCONT)
    code, err = server.end()
    _a_normal_end(server, code, err)
    note = local_store(served) / "surprise/ci-already-listens-on-8080.md"
    assert "## Observed\nCI already listens on 8080.\n" in note.read_text()


def test_crash_a_cancelled_call_leaves_the_server_serving(served: Path,
                                                          tmp_path: Path) -> None:
    """Item 21's sibling: a client that cancels a pending call and goes on asking
    gets its next answer, and its EOF afterwards is a normal end."""
    server = _pending(served, tmp_path)
    server.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                 "params": {"requestId": 10, "reason": "the user pressed Esc"}})
    os.kill(server.proc.pid, signal.SIGCONT)
    server.call(11, "recall", QUESTION)  # stops at the point again
    wait_stopped(server.proc)  # type: ignore[arg-type]
    os.kill(server.proc.pid, signal.SIGCONT)
    answered = [server.answer().get("id")]
    while answered[-1] != 11:  # the cancelled call may be answered or not
        answered.append(server.answer().get("id"))
    assert answered in ([11], [10, 11]), answered
    server.close(server.stdin)
    code, err = server.end()
    _a_normal_end(server, code, err)
