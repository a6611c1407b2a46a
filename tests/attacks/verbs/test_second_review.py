"""A hostile second look at the fixes of the first review (docs/records/review-issue-11.md):
the siblings the fixers missed.

Each test is one defect seen red on the merged fixes, named by its class
(`dataloss`, `escape`, `gitstate`, `wrong`, `hang`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.helpers import Run, git, make_repo, omh, replies_until
from tests.helpers.repo import init_committed


def _omh(cwd: Path, *args: str, timeout: float = 20,
         env: dict[str, str] | None = None) -> Run:
    """The real CLI, failing the test (not hanging it) when it blocks."""
    return omh(cwd, *args, env=env, timeout=timeout)



def _init(path: Path) -> Path:
    make_repo(path)
    init_committed(path)
    return path


def test_hang_fifo_as_clone_id(tmp_path: Path) -> None:
    """A FIFO at `<common>/omh/clone-id` must not block `omh memory` forever."""
    repo = _init(tmp_path / "repo")
    clone_id = repo / ".git" / "omh" / "clone-id"
    clone_id.parent.mkdir(exist_ok=True)
    if clone_id.exists():
        clone_id.unlink()
    os.mkfifo(clone_id)
    run = _omh(repo, "memory")
    assert "Traceback" not in run.err


WRAPPED_SECRETS = (
    "Authorization: Bearer\n  abcdefghijklmnopqrstuvwxyz0123456789\n",
    "aws_secret_access_key =\n  wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n",
    'password:\n  "correct horse battery staple"\n',
    "export DB_PASSWORD=\\\n  Sup3rS3cretValue\n",
)
UNWRAPPED_MISSES = (
    "SECRET_KEY=django-insecure-9f8e7d6c5b4a39281706f5e4d3c2b1a0",
    "secret_key_base: 9f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a",
    "JWT_SECRET_KEY=9f8e7d6c5b4a3928",
    "SIGNING_KEY = 'k9f8e7d6c5b4a3928'",
)


def test_wrong_secret_split_over_a_line_break_or_named_secret_key() -> None:
    """A secret whose value wraps onto the next line, or whose key is SECRET_KEY
    (Django, Rails' secret_key_base), passed the scan."""
    from omh_git_memory.model.secret_scan import find_secrets

    for text in (*WRAPPED_SECRETS, *UNWRAPPED_MISSES):
        hits = find_secrets(text)
        assert hits and hits[0].line == 1, text
    # A prose line that ends in a credential word and a plain next line stay clean.
    assert find_secrets("Rotate the password\nwhen the quarter ends.\n") == []


def test_wrong_wrapped_secret_refused_by_promote(tmp_path: Path) -> None:
    repo = _init(tmp_path / "repo")
    run = omh(repo, "memory", "remember", "--expected", "the token is optional",
              "--observed", "the call needs a token",
              "--evidence", "Authorization: Bearer\n  abcdefghijklmnopqrstuvwxyz0123456789",
              "--answers", "why does the call fail?")
    assert run.code == 0, run.err
    key = run.out.split()[1].removeprefix("local/")
    promoted = omh(repo, "memory", "promote", key)
    assert promoted.code != 0 and "looks like" in promoted.err, promoted


def test_hang_mcp_deeply_nested_request_kills_the_server(tmp_path: Path) -> None:
    """A request nested 100,000 arrays deep made Python's JSON parser raise
    RecursionError inside the line reader: the server died, and every later
    request of the client went unanswered."""
    import json

    repo = _init(tmp_path / "repo")
    deep = (b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":'
            + b"[" * 100_000 + b"]" * 100_000 + b"}\n")
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "t", "version": "1"}}}
    lines = [json.dumps(init).encode() + b"\n",
             b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n', deep,
             b'{"jsonrpc":"2.0","id":8,"method":"tools/list"}\n']
    server = subprocess.Popen([sys.executable, "-m", "omh_git_memory", "mcp", "serve"],
                              cwd=repo, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)
    assert server.stdin is not None and server.stdout is not None
    replies = []
    try:
        server.stdin.write(b"".join(lines))
        server.stdin.flush()
        replies = replies_until(server.stdout, 8, timeout=60)
    finally:
        server.kill()
        _, err = server.communicate()
    ids = [r.get("id") for r in replies]
    assert 8 in ids, (ids, err[-500:])
    assert any(r.get("error") for r in replies if r.get("id") in (7, None)), replies
    assert b"internal error" not in err


def test_moved_new_clone_at_the_old_path_does_not_take_the_store(tmp_path: Path) -> None:
    """`mv a b; git clone b a`: the fresh clone at the old path rewrote the store's
    record with its own clone id, so the moved clone could never find (or adopt)
    its notes: "no local store left behind by this clone was found"."""
    first = _init(tmp_path / "a")
    remembered = omh(first, "memory", "remember", "--expected", "e", "--observed",
                     "A private finding of the first clone.", "--evidence", "v",
                     "--answers", "q", "--json")
    assert remembered.code == 0, remembered.err
    key = remembered.json()["key"]
    moved = tmp_path / "b"
    first.rename(moved)
    subprocess.run(["git", "clone", "-q", str(moved), str(first)], check=True)
    # The new clone may not open the old path's store (item 3 of the second review): refused.
    refused = omh(first, "memory")
    assert refused.code == 1 and "another clone of this repository" in refused.err
    adopted = omh(moved, "adopt")
    assert adopted.code == 0, adopted.err
    notes = omh(moved, "memory", "--json").json()["notes"]
    assert ("local", key) in {(n["layer"], n["key"]) for n in notes}


def test_wrong_rerun_after_a_kill_between_local_removals(tmp_path: Path) -> None:
    """Killed at `promote:local` (the first local copy removed, the others not),
    the same command run again refused ("no local note has this key") instead of
    finishing the job, as the fault points promise."""
    import signal

    repo = _init(tmp_path / "repo")
    keys = []
    for i in range(2):
        run = omh(repo, "memory", "remember", "--expected", "e", "--observed",
                  f"Rerun note {i}.", "--evidence", "v", "--answers", "q", "--json")
        keys.append(run.json()["key"])
    killed = omh(repo, "memory", "promote", *keys, env={"OMH_FAULT": "promote:local"})
    assert killed.code == -signal.SIGKILL
    again = omh(repo, "memory", "promote", *keys)
    assert again.code == 0, again.err
    notes = {(n["layer"], n["key"]) for n in omh(repo, "memory", "--json").json()["notes"]}
    assert all(("team", k) in notes and ("local", k) not in notes for k in keys), notes
    assert git(repo, "status", "--porcelain") == ""
    # Naming only team notes is still refused, with the reason.
    only = omh(repo, "memory", "promote", *keys)
    assert only.code == 1 and "already in the team layer" in only.err


def test_wrong_rm_in_the_wrong_layer_suggests_the_same_key(tmp_path: Path) -> None:
    """`rm KEY --layer team` for a local-only note said "did you mean KEY?",
    naming the very key given instead of the layer that holds it."""
    repo = _init(tmp_path / "repo")
    run = omh(repo, "memory", "remember", "--expected", "e", "--observed",
              "A local only finding.", "--evidence", "v", "--answers", "q", "--json")
    key = run.json()["key"]
    wrong = omh(repo, "memory", "rm", key, "--layer", "team")
    assert wrong.code == 1
    assert f"did you mean {key}?" not in wrong.err and "local layer" in wrong.err, wrong.err
