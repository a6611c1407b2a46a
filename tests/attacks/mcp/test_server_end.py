"""Items 4 and 21 of the second hostile review (docs/records/review-issue-23.md): the MCP
server's end, and what `replaces` may overwrite.

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

from tests.helpers import git, wait_stopped
from tests.helpers.mcp import with_deploy_note

QUESTION = {"question": "how do I deploy"}


@pytest.fixture
def served(repo_dir: Path) -> Path:
    return with_deploy_note(repo_dir)


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


@pytest.mark.parametrize(("sig", "expected", "pending"), [
    (signal.SIGTERM, 0, False), (signal.SIGTERM, 0, True), (signal.SIGHUP, 0, True),
    (signal.SIGINT, 130, False), (signal.SIGINT, 130, True)])
def test_crash_sigterm_sighup_and_sigint_while_serving_end_it_cleanly(
        served: Path, tmp_path: Path, sig: signal.Signals, expected: int, pending: bool) -> None:
    """Item 21's siblings: a harness stops its server with SIGTERM (the MCP stdio
    shutdown's second step) or its terminal goes (SIGHUP), a person presses Ctrl-C.
    SIGTERM killed the process (status -15); Ctrl-C while idle never ended it, and
    with a call pending it hung too. Now: 0 for SIGTERM and SIGHUP, 130 for SIGINT,
    as docs/mcp.md says, and no crash log."""
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


def test_hang_a_second_signal_ends_a_server_stuck_writing_to_a_client_that_reads_nothing(
        served: Path, tmp_path: Path) -> None:
    """Item 21's sibling: a client that stops reading (its end of stdout full) but
    keeps the pipe holds the answer being written, so the first SIGTERM waits for
    it; a second one ends the server at once, still with the documented status."""
    import fcntl
    import termios

    server = Served(served, tmp_path)
    server.initialize()
    for n in range(400):  # far more answers than a pipe holds
        server.call(100 + n, "recall", QUESTION)
    fd = server.stdout.fileno()
    size = fcntl.fcntl(fd, 1032)  # F_GETPIPE_SZ
    deadline = time.monotonic() + 60
    seen, steady_since = -1, time.monotonic()
    while True:  # until the pipe is full and stays so: the server's write has blocked
        waiting = int.from_bytes(fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"), "little")
        now = time.monotonic()
        if waiting != seen:
            seen, steady_since = waiting, now
        # nearly full is not enough: between two answers the server is not writing,
        # and a SIGTERM then ends it at once (as it should)
        if (waiting > size - 4096 and now - steady_since > 1.5) or now > deadline:
            break
        time.sleep(0.05)
    assert waiting > size - 4096, (waiting, size)
    os.kill(server.proc.pid, signal.SIGTERM)
    with pytest.raises(subprocess.TimeoutExpired):
        server.proc.wait(0.5)  # still writing what nobody reads
    os.kill(server.proc.pid, signal.SIGTERM)
    code, err = server.end(timeout=10)
    _a_normal_end(server, code, err)


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


# --- item 4: `replaces` corrects only what the agent wrote, as it wrote it -----------

KEY = "surprise/ci-already-listens-on-8080"
GOOD = {"expected": "port 8080 would be free", "observed": "CI already listens on 8080.",
        "evidence": "bind: address already in use", "answers": ["why do tests fail on CI?"]}
FIXED = {**GOOD, "evidence": "ss -ltnp shows 8080 LISTEN", "replaces": KEY}
SOURCE = "session s04, claude-code 2.1"  # what the server writes for OMH_SESSION=s04
PERSON = "Ask the release team first: 8080 is theirs."


@pytest.fixture
def session(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OMH_SESSION", "s04")


def _calls(repo: Path, *calls: dict[str, Any]) -> list[tuple[bool, str]]:
    """Each `remember` call's (is_error, text), through the SDK's own client talking
    to the real server object in process (the handshake names the client)."""
    import asyncio

    from mcp import Client
    from mcp.types import Implementation

    from omh_git_memory.actions.workspace import open_workspace
    from omh_git_memory.agent.sdk import build_server

    async def run() -> list[tuple[bool, str]]:
        server = build_server(open_workspace(repo))
        info = Implementation(name="claude-code", version="2.1")
        async with Client(server, client_info=info) as client:
            done = []
            for args in calls:
                result = await client.call_tool("remember", args)
                done.append((bool(result.is_error),
                             "".join(getattr(c, "text", "") for c in result.content)))
            return done

    return asyncio.run(run())


def _note(repo: Path, key: str = KEY) -> Path:
    from omh_git_memory.actions.workspace import open_workspace

    return open_workspace(repo).local.root / f"{key}.md"


def _cli(repo: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> None:
    """The real `omh` command line, in process, as a person runs it in `repo`."""
    from omh_git_memory.cli import main

    monkeypatch.chdir(repo)
    with pytest.raises(SystemExit) as done:
        main(list(args))
    assert done.value.code in (0, None), args


def _by_update(repo: Path, monkeypatch: pytest.MonkeyPatch, tmp: Path) -> None:
    _cli(repo, monkeypatch, "memory", "update", KEY, "--evidence", PERSON)


def _by_edit(repo: Path, monkeypatch: pytest.MonkeyPatch, tmp: Path) -> None:
    # `omh memory edit`; review's `e` runs the same edit().
    editor = tmp / "editor.py"
    edited = f"t.replace('## Evidence\\n', '## Evidence\\n{PERSON} ')"
    editor.write_text(f"import sys\np = sys.argv[1]\nt = open(p).read()\n"
                      f"open(p, 'w').write({edited})\n")
    monkeypatch.setenv("VISUAL", f"{sys.executable} {editor}")
    _cli(repo, monkeypatch, "memory", "edit", KEY)


def _by_editor_in_place(repo: Path, monkeypatch: pytest.MonkeyPatch, tmp: Path) -> None:
    # A text editor that writes the file in place: the same file, other bytes.
    with open(_note(repo), "r+", encoding="utf-8") as handle:
        text = handle.read().replace("## Evidence\n", f"## Evidence\n{PERSON} ")
        handle.seek(0)
        handle.write(text)


def _by_editor_new_file(repo: Path, monkeypatch: pytest.MonkeyPatch, tmp: Path) -> None:
    # A text editor that saves by writing a new file and renaming it over the note.
    path = _note(repo)
    fresh = path.with_name("fresh.tmp")
    edited = path.read_bytes().replace(b"## Evidence\n", f"## Evidence\n{PERSON} ".encode())
    fresh.write_bytes(edited)
    os.replace(fresh, path)


@pytest.mark.usefixtures("session")
@pytest.mark.parametrize("person", [_by_update, _by_edit, _by_editor_in_place,
                                    _by_editor_new_file])
def test_dataloss_replaces_refuses_a_note_a_person_changed(
        served: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, person: Any) -> None:
    """Item 4: the agent's `remember(replaces=KEY)` wrote over a person's edit of
    its note (made with `omh memory update`, `edit` — review's edit is the same —
    or any text editor), because "own" meant only that the source line matched.
    The person's text is kept and the agent is told why and what to do instead."""
    ((error, _),) = _calls(served, GOOD)
    assert not error
    person(served, monkeypatch, tmp_path)
    edited = _note(served).read_bytes()
    assert PERSON.encode() in edited and f"source: {SOURCE}\n".encode() in edited
    ((error, text),) = _calls(served, FIXED)
    assert error, text
    assert f"local/{KEY} was changed after this session wrote it" in text, text
    assert "call remember without `replaces`" in text and f"omh memory update {KEY}" in text
    assert _note(served).read_bytes() == edited


@pytest.mark.usefixtures("session")
def test_dataloss_a_note_brought_back_after_promote_is_the_person_s(
        served: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Item 4's sibling: a person promotes the agent's note, then takes it back to
    the local layer byte for byte (git show … > the store, git rm). The text is the
    agent's, but the note went through a person's hands: `replaces` refuses it."""
    _calls(served, GOOD)
    written = _note(served).read_bytes()
    _cli(served, monkeypatch, "memory", "promote", KEY)
    assert not _note(served).exists()
    _note(served).parent.mkdir(parents=True, exist_ok=True)
    _note(served).write_bytes(git(served, "show", f"HEAD:.omh/notes/{KEY}.md").encode())
    git(served, "rm", "-q", f".omh/notes/{KEY}.md")
    git(served, "commit", "-qm", "back to local")
    assert _note(served).read_bytes() == written
    ((error, text),) = _calls(served, FIXED)
    assert error and f"local/{KEY} was changed after this session wrote it" in text, text
    assert _note(served).read_bytes() == written


@pytest.mark.usefixtures("session")
def test_wrong_a_source_line_anybody_can_write_is_not_the_agent_s_note(
        served: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Item 4's sibling: a person's own note (`omh memory remember --source …`) that
    happens to carry the server's source line was the agent's to overwrite."""
    _cli(served, monkeypatch, "memory", "remember", "--expected", "x", "--observed",
         GOOD["observed"], "--evidence", PERSON, "--answers", "who owns 8080?",
         "--source", SOURCE)
    mine = _note(served).read_bytes()
    taken, replaced = _calls(served, GOOD, FIXED)
    assert taken[0] and "replaces=" not in taken[1], taken
    assert "a person changed it since" in taken[1] or "not as this session wrote it" in taken[1]
    assert replaced[0] and "has no record of writing it as it stands" in replaced[1], replaced
    assert _note(served).read_bytes() == mine


@pytest.mark.usefixtures("session")
def test_wrong_a_note_a_person_renamed_is_the_person_s(
        served: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Item 4's sibling: `omh memory mv` of the agent's note is a person's change
    too (they chose the key); the renamed note is refused, not rewritten."""
    _calls(served, GOOD)
    _cli(served, monkeypatch, "memory", "mv", KEY, "surprise/port-8080-is-taken-on-ci")
    moved = _note(served, "surprise/port-8080-is-taken-on-ci")
    before = moved.read_bytes()
    ((error, text),) = _calls(served, {**FIXED, "replaces": "surprise/port-8080-is-taken-on-ci"})
    assert error and "has no record of writing it as it stands" in text, text
    assert moved.read_bytes() == before


@pytest.mark.usefixtures("session")
def test_wrong_replaces_is_offered_only_for_a_note_nobody_changed(
        served: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Item 4's sibling: the two answers that offer `replaces` (a taken key, and a
    repeat of one's own note) offered it for a note a person had changed, and the
    call they suggested then overwrote the person's edit."""
    _calls(served, GOOD)
    _by_update(served, monkeypatch, tmp_path)
    again = {**GOOD, "observed": "CI already listens on 8080, as before."}
    taken, repeat = _calls(served, GOOD, again)
    assert taken[0] and "replaces=" not in taken[1], taken
    assert "not as this session wrote it" in taken[1], taken
    assert not repeat[0] and f"looks like {KEY}" in repeat[1], repeat
    assert "replaces=" not in repeat[1], repeat


@pytest.mark.usefixtures("session")
def test_wrong_the_agent_still_corrects_its_own_note_again_and_after_a_restart(
        served: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Item 4, what must still hold: an unchanged note of this session is corrected,
    then corrected again (each write is recorded), by a new server of the same
    session too; another session's note stays refused."""
    _first, fixed = _calls(served, GOOD, FIXED)
    assert not fixed[0] and fixed[1].startswith(f"replaced local/{KEY}"), fixed
    ((error, text),) = _calls(served, {**FIXED, "evidence": "lsof -i :8080"})
    assert not error and text.startswith(f"replaced local/{KEY}"), text
    monkeypatch.setenv("OMH_SESSION", "s05")
    ((error, text),) = _calls(served, {**FIXED, "evidence": "netstat"})
    assert error and "not by this session" in text, text


@pytest.mark.usefixtures("session")
def test_secret_the_record_of_what_the_agent_wrote_is_private_and_no_note(
        served: Path) -> None:
    """Item 4: the record the check reads is the server's alone (0700/0600, like the
    store), never a note: no listing, recall or lint sees it."""
    import stat as st

    from omh_git_memory.actions.workspace import open_workspace

    _calls(served, GOOD)
    store = open_workspace(served).local
    folder = store.root / ".omh-agent"
    (record,) = list(folder.iterdir())
    assert st.S_IMODE(folder.stat().st_mode) == 0o700
    assert st.S_IMODE(record.stat().st_mode) == 0o600
    assert [s.relpath for s in store.scan()] == [f"{KEY}.md"]


def test_dataloss_a_call_pending_when_stdin_ends_is_still_answered(served: Path,
                                                                  tmp_path: Path) -> None:
    """A client that writes its requests and closes its end (`… | omh mcp serve`)
    got `Connection closed` for a call still running: the SDK ends its session at
    the end of its input. The reply now comes, then the server ends."""
    server = Served(served, tmp_path)
    server.initialize()
    server.call(10, "recall", QUESTION)
    server.close(server.stdin)
    reply = server.answer()
    assert reply["id"] == 10 and "result" in reply, reply
    assert "deploy" in json.dumps(reply["result"])
    _a_normal_end(server, *server.end())

