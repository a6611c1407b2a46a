"""agent/transport.py in a real process: what only a process's exit shows.

A client that closes its end of the server's stdout but keeps stdin open ends the
session with a broken pipe; the process must then exit, though stdin's reading
thread still waits for a line that will never come (the interpreter joins every
thread not marked daemon before it exits). In process (tests/agent/test_transport.py)
the session's end is seen, never the exit that follows it.

The case came from a mutation pass (tools/mutation.py): the reading thread
made a non-daemon one survived every other test.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.helpers import replies_until

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "raw", "version": "1"}}}


def test_a_client_that_closes_stdout_but_keeps_stdin_open_lets_the_server_exit(
        repo_dir: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "omh_git_memory", "mcp", "serve"],
                            cwd=repo_dir, env={**os.environ, "OMH_SESSION": "s24"},
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    try:
        proc.stdin.write((json.dumps(INITIALIZE) + "\n").encode())
        proc.stdin.flush()
        assert replies_until(proc.stdout, 1, 30.0)[-1]["id"] == 1
        proc.stdout.close()
        proc.stdin.write(b'{"jsonrpc": "2.0", "id": 2, "method": "ping"}\n')  # met by EPIPE
        proc.stdin.flush()
        code = proc.wait(10)  # stdin stays open all the while
    except subprocess.TimeoutExpired:
        raise AssertionError("the server did not exit with its client's stdin open") from None
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdin.close()
        err = proc.stderr.read().decode("utf-8", "replace")
        proc.stderr.close()
    assert code == 0, err
    assert "Traceback" not in err, err
