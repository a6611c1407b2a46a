"""agent/transport.py: `omh mcp serve` from its start to its end, in this process.

The server runs here, on pipes the test holds in place of fd 0 and sys.stdout (the
SDK writes to sys.stdout's buffer as it is when that is not fd 1); a client thread
speaks JSON-RPC lines to it and signals this process, whose event loop is the
server's. os._exit is replaced by one that raises SystemExit, so "a second signal
exits at once" is seen without ending the test run; while the server runs, a
signal it does not answer itself raises `Unanswered` here instead of killing
pytest. Where the end depends on what the MCP SDK raises, a stand-in for
sdk.run_stdio raises it; stdin's reader is driven with a stream that counts what
it hands out.

The cases came from a mutation pass (tools/mutation.py): each one fails
with a mutant of transport.py that no earlier test caught. The same ends in a real
process are tests/attacks/mcp/test_server_end.py's.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import io
import json
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from omh_git_memory.agent import sdk, transport
from omh_git_memory.model import faults
from tests.helpers import replies_until

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "raw", "version": "1"}}}
RECALL = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
          "params": {"name": "recall", "arguments": {"question": "how do I deploy"}}}
ENOUGH = 10.0  # seconds: far more than any of these ends takes (about 0.1 s)


class Unanswered(Exception):
    """A signal reached this process while the server was not answering it."""


class Wire:
    """The client's ends of the server's stdin and stdout, and what this process
    did at os._exit."""

    def __init__(self) -> None:
        self.stdin_read, self.stdin = os.pipe()
        self.stdout_read, stdout_write = os.pipe()
        self.stdout = io.TextIOWrapper(os.fdopen(stdout_write, "wb"), encoding="utf-8")
        self.replies = os.fdopen(self.stdout_read, "rb", buffering=0)
        self.exits: list[int] = []
        self.exited = threading.Event()
        self.call_taken = threading.Event()
        self.call_may_go_on = threading.Event()

    def send(self, message: dict[str, Any]) -> None:
        os.write(self.stdin, (json.dumps(message) + "\n").encode())

    def reply_to(self, request_id: int) -> dict[str, Any]:
        replies = replies_until(self.replies, request_id, ENOUGH)
        assert replies and replies[-1].get("id") == request_id, replies
        return replies[-1]

    def initialize(self) -> None:
        self.send(INITIALIZE)
        assert "result" in self.reply_to(1)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def close_stdin(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.stdin)

    def close_stdout(self) -> None:
        self.replies.close()

    def exit(self, status: int) -> None:
        """os._exit, as the test sees it: the status, and the process's end raised."""
        self.exits.append(status)
        self.exited.set()
        self.call_may_go_on.set()  # a real exit would not wait for the call either
        raise SystemExit(status)

    def hold_calls(self, name: str) -> None:
        """The fault point `mcp:call`, held: a call is under way until it may go on."""
        if name == "mcp:call":
            self.call_taken.set()
            assert self.call_may_go_on.wait(ENOUGH)


@pytest.fixture
def wire(monkeypatch: pytest.MonkeyPatch) -> Iterator[Wire]:
    """This process's fd 0 on a client's pipe (sys.stdout follows in `serve`), its
    signals and os._exit the test's; everything put back afterwards."""
    wire = Wire()
    saved_stdin = os.dup(0)
    os.dup2(wire.stdin_read, 0)
    os.close(wire.stdin_read)
    saved_handlers = {sig: signal.getsignal(sig) for sig in SIGNALS}

    def unanswered(sig: int, _frame: object) -> None:
        raise Unanswered(signal.Signals(sig).name)

    for sig in SIGNALS:
        signal.signal(sig, unanswered)
    monkeypatch.setattr(os, "_exit", wire.exit)
    monkeypatch.setattr(faults, "point", wire.hold_calls)
    try:
        yield wire
    finally:
        wire.call_may_go_on.set()
        for sig, handler in saved_handlers.items():
            signal.signal(sig, handler)
        os.dup2(saved_stdin, 0)
        os.close(saved_stdin)
        wire.close_stdin()  # the server's reading thread sees EOF and ends
        for stream in (wire.replies, wire.stdout):
            with contextlib.suppress(OSError):
                stream.close()


@pytest.fixture
def repo(repo_dir: Path) -> Path:
    return repo_dir


def serve(repo: Path, wire: Wire, client: Callable[[], None]) -> BaseException | None:
    """transport.serve(repo) while `client` runs in a thread: what serve raised, or
    None when it returned. A server still running after ENOUGH seconds is stopped
    with SIGTERM, and the test fails."""
    failed: list[BaseException] = []
    ended = threading.Event()

    def run_client() -> None:
        try:
            client()
        except BaseException as err:  # re-raised in the test's thread
            failed.append(err)

    def watchdog() -> None:
        if not ended.wait(ENOUGH):
            failed.append(AssertionError(f"the server did not end within {ENOUGH} s"))
            wire.call_may_go_on.set()
            os.kill(os.getpid(), signal.SIGTERM)

    talking = threading.Thread(target=run_client, daemon=True)
    talking.start()
    threading.Thread(target=watchdog, daemon=True).start()
    raised: BaseException | None = None
    stdout = sys.stdout  # pytest's capture, put in place for each test's call
    sys.stdout = wire.stdout
    try:
        transport.serve(repo)
    except BaseException as err:
        raised = err
    finally:
        sys.stdout = stdout
        ended.set()
    talking.join(ENOUGH)
    if failed:
        raise failed[0]
    return raised


def signal_now(sig: signal.Signals) -> None:
    """Signal this process, as a harness would; refused when nothing of the server's
    would answer it (its default action would end the test run, not the server)."""
    handler = signal.getsignal(sig)
    assert callable(handler) and handler is not signal.default_int_handler, (
        f"{sig.name} would not end the server at once: its handler is {handler!r}")
    os.kill(os.getpid(), sig)


# --- the ends of a session -------------------------------------------------------------


def test_eof_on_stdin_ends_serve_normally(repo: Path, wire: Wire) -> None:
    """The client closes the server's stdin: serve returns (exit 0), it does not
    raise KeyboardInterrupt (exit 130, what only Ctrl-C means)."""
    def client() -> None:
        wire.initialize()
        wire.close_stdin()

    assert serve(repo, wire, client) is None


def test_a_client_that_closes_stdout_ends_serve_normally(repo: Path, wire: Wire) -> None:
    """The client's end of stdout closed (stdin still open): the next answer meets a
    broken pipe, which is the client gone, not an error."""
    def client() -> None:
        wire.initialize()
        wire.close_stdout()
        wire.send({"jsonrpc": "2.0", "id": 2, "method": "ping"})

    assert serve(repo, wire, client) is None


def test_a_stdout_that_fails_otherwise_is_an_error(repo: Path, wire: Wire) -> None:
    """A write that fails for any other reason (a full disk behind stdout) is not a
    client gone: serve raises it, so the command reports it (exit 3, a crash log)."""
    full = io.TextIOWrapper(open("/dev/full", "wb"), encoding="utf-8")  # noqa: SIM115
    wire.stdout, pipe = full, wire.stdout
    try:
        raised = serve(repo, wire, lambda: wire.send(INITIALIZE))
    finally:
        wire.stdout = pipe
        with contextlib.suppress(OSError):  # what it still holds cannot be written either
            full.close()
    assert isinstance(raised, BaseExceptionGroup), raised
    found = raised.subgroup(lambda e: isinstance(e, OSError) and e.errno == errno.ENOSPC)
    assert found is not None, raised


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_and_sighup_end_serve_normally(repo: Path, wire: Wire,
                                               sig: signal.Signals) -> None:
    """A harness's SIGTERM, a terminal's SIGHUP: serve returns (exit 0), with the
    client's stdin still open."""
    def client() -> None:
        wire.initialize()
        os.kill(os.getpid(), sig)

    assert serve(repo, wire, client) is None


def test_sigint_ends_serve_with_keyboard_interrupt(repo: Path, wire: Wire) -> None:
    """Ctrl-C: serve raises KeyboardInterrupt, which every omh command answers with
    exit 130."""
    def client() -> None:
        wire.initialize()
        os.kill(os.getpid(), signal.SIGINT)

    assert isinstance(serve(repo, wire, client), KeyboardInterrupt)


# --- a second signal -------------------------------------------------------------------

# (the first signal, the second, the status the server exits with): the first's.
TWICE = [(signal.SIGTERM, signal.SIGINT, 0), (signal.SIGHUP, signal.SIGTERM, 0),
         (signal.SIGINT, signal.SIGHUP, 130)]


@pytest.mark.parametrize(("first", "second", "status"), TWICE)
def test_a_second_signal_while_a_call_is_finished_exits_at_once(
        repo: Path, wire: Wire, first: signal.Signals, second: signal.Signals,
        status: int) -> None:
    """A signal while a call is under way waits for the call (a note being written is
    written whole); a second one exits at once, with the status the first means."""
    def client() -> None:
        wire.initialize()
        wire.send(RECALL)
        assert wire.call_taken.wait(ENOUGH)
        os.kill(os.getpid(), first)
        # Python runs the handlers of signals pending together in the order of their
        # numbers, not of their sending: let the first be handled before the second
        # comes (a person's two signals are never microseconds apart).
        time.sleep(0.2)
        os.kill(os.getpid(), second)
        wire.exited.wait(2.0)
        wire.call_may_go_on.set()

    raised = serve(repo, wire, client)
    assert isinstance(raised, SystemExit) and raised.code == status, raised
    assert wire.exits == [status]


@pytest.mark.parametrize(("first", "second", "status"), TWICE)
def test_a_second_signal_while_the_end_still_waits_exits_at_once(
        repo: Path, wire: Wire, first: signal.Signals, second: signal.Signals,
        status: int) -> None:
    """Once the session is over the process may still wait (an answer stuck in a full
    pipe, a thread the interpreter joins): a second signal then exits at once, with
    the status the first means, as it does while the session ends."""
    def client() -> None:
        wire.initialize()
        os.kill(os.getpid(), first)

    raised = serve(repo, wire, client)
    assert isinstance(raised, KeyboardInterrupt) if first == signal.SIGINT else raised is None
    with pytest.raises(SystemExit) as done:
        signal_now(second)
        time.sleep(ENOUGH)  # what the process waits for, here
    assert done.value.code == status
    assert wire.exits == [status]


# --- what the SDK may raise --------------------------------------------------------------


def _anyio(name: str) -> Exception:
    import anyio

    error: Exception = getattr(anyio, name)()
    return error


# (what sdk.run_stdio raises, the signal stopping the server meanwhile or None,
#  whether the server ends normally)
RAISED: list[tuple[Callable[[], BaseException], signal.Signals | None, bool]] = [
    (lambda: BrokenPipeError(errno.EPIPE, "Broken pipe"), None, True),
    (lambda: ConnectionResetError(errno.ECONNRESET, "reset"), None, True),
    (lambda: ExceptionGroup("torn down", [BrokenPipeError(errno.EPIPE, "Broken pipe"),
                                          _anyio("ClosedResourceError")]), None, True),
    (lambda: ExceptionGroup("torn down", [_anyio("BrokenResourceError"),
                                          _anyio("EndOfStream")]), None, True),
    (lambda: _anyio("ClosedResourceError"), None, True),
    (lambda: BaseExceptionGroup("stopped", [asyncio.CancelledError()]), signal.SIGTERM, True),
    (lambda: OSError(errno.ENOSPC, "No space left on device"), None, False),
    (lambda: ValueError("not a connection's end"), None, False),
    (lambda: ValueError("not a connection's end"), signal.SIGTERM, False),
    (lambda: ExceptionGroup("mixed", [BrokenPipeError(errno.EPIPE, "Broken pipe"),
                                      ValueError("a real error")]), None, False),
    (lambda: BaseExceptionGroup("cancelled", [asyncio.CancelledError()]), None, False),
]


@pytest.mark.parametrize(("make", "stop", "normal"), RAISED)
def test_only_errors_that_say_the_client_went_away_end_it_normally(
        repo: Path, wire: Wire, monkeypatch: pytest.MonkeyPatch,
        make: Callable[[], BaseException], stop: signal.Signals | None, normal: bool) -> None:
    """What the SDK's session raises as it ends: a broken pipe or a reset, one of its
    streams closed under a task as it tears down, a cancellation while a signal
    stops the server — each alone or every one of a group — is the client gone or
    the server stopped, a normal end. Any other error, or a group holding one, or a
    cancellation no signal asked for, is raised."""
    error = make()

    async def run_stdio(server: sdk.Server, requests: transport.Requests) -> None:
        if stop is not None:
            os.kill(os.getpid(), stop)
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.sleep(ENOUGH)  # until the signal cancels the session
        raise error

    monkeypatch.setattr(sdk, "run_stdio", run_stdio)
    raised = serve(repo, wire, lambda: None)
    if normal:
        assert raised is None, raised
    else:
        assert raised is error, raised


# --- stdin's reader ------------------------------------------------------------------------


class Stdin(io.RawIOBase):
    """A client's stdin that hands out one line a read, then `end` (EOF when None)."""

    def __init__(self, lines: list[bytes], end: BaseException | None = None) -> None:
        self.lines = lines
        self.given = 0
        self.end = end

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self.given == len(self.lines):
            if self.end is not None:
                raise self.end
            return 0
        line = self.lines[self.given]
        self.given += 1
        buffer[:len(line)] = line
        return len(line)


def test_stdin_is_read_at_most_one_line_ahead() -> None:
    """While the server works on a line, its reader takes one more line from the
    client's stdin and holds it, and reads no further: a client that floods the
    server is held back by the pipe, not buffered in the server's memory."""
    stdin = Stdin([b"%d\n" % n for n in range(10)])

    async def run() -> tuple[int, int]:
        lines = transport._stdin_lines(io.BufferedReader(stdin))
        assert await lines.__anext__() == "0\n"  # being served; "1\n" waits behind it
        deadline = time.monotonic() + ENOUGH
        while stdin.given < 3 and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.2)  # time enough to read on, were it allowed to
        ahead = stdin.given
        rest = [line async for line in lines]
        return ahead, len(rest)

    assert asyncio.run(run()) == (3, 9)


@pytest.mark.parametrize("end", [OSError(errno.EIO, "Input/output error"),
                                 ValueError("I/O operation on closed file")])
def test_a_read_error_on_stdin_is_its_end(end: BaseException) -> None:
    """A stdin that fails (EIO from a terminal gone, a closed file) ends the input
    as EOF does, after the lines read before it: the server ends, it does not wait
    forever for a line that cannot come."""
    async def run() -> list[str]:
        lines = transport._stdin_lines(io.BufferedReader(Stdin([b"first\n"], end)))
        return await asyncio.wait_for(_all(lines), ENOUGH)

    assert asyncio.run(run()) == ["first\n"]


async def _all(lines: Any) -> list[str]:
    return [line async for line in lines]


async def _lines(*given: dict[str, Any]) -> Any:
    for message in given:
        yield json.dumps(message) + "\n"


def _reply(request_id: object) -> Any:
    from mcp.shared.message import SessionMessage
    from mcp.types import JSONRPCResponse

    return SessionMessage(message=JSONRPCResponse(jsonrpc="2.0", id=request_id, result={}))


CALL = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "recall"}}


def test_the_end_of_stdin_waits_for_the_requests_the_sdk_has_not_answered() -> None:
    """The SDK ends its session, failing a call still running with "Connection
    closed", as soon as its input ends: so the input ends only once every request
    read has its reply (a notification needs none)."""
    async def run() -> tuple[bool, bool]:
        requests = transport.Requests(_lines(
            CALL, {"jsonrpc": "2.0", "method": "notifications/initialized"}))
        read = requests.__aiter__()
        await read.__anext__()
        await read.__anext__()
        ending = asyncio.ensure_future(read.__anext__())
        await asyncio.sleep(0.2)
        waited = not ending.done()
        requests.answered(_reply(8))  # another id settles nothing
        await asyncio.sleep(0.1)
        still = not ending.done()
        requests.answered(_reply(7))
        with pytest.raises(StopAsyncIteration):
            await asyncio.wait_for(ending, ENOUGH)
        return waited, still

    assert asyncio.run(run()) == (True, True)


def test_a_request_the_client_cancelled_is_not_waited_for() -> None:
    """MCP sends no reply to a cancelled request, so the end of stdin does not wait
    for one (it would hold the server for DRAIN_SECONDS)."""
    async def run() -> None:
        requests = transport.Requests(_lines(CALL, {
            "jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 7, "reason": "Esc"}}))
        assert len(await asyncio.wait_for(_all(requests), ENOUGH)) == 2

    asyncio.run(run())


def test_the_wait_for_replies_has_a_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    """A reply that never comes does not hold the server past the cap."""
    monkeypatch.setattr(transport, "DRAIN_SECONDS", 0.2)

    async def run() -> None:
        requests = transport.Requests(_lines(CALL))
        assert len(await asyncio.wait_for(_all(requests), ENOUGH)) == 1

    asyncio.run(run())
