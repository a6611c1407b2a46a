"""`omh mcp serve`: the server on stdin/stdout, from its start to its end.

Nothing but protocol goes to stdout; logs go to stderr. In front of the SDK's line
reader sits one of ours, which answers the lines the SDK would drop without a
reply; the end is always a normal one (docs/mcp.md, "How the server ends").
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import signal
import sys
from pathlib import Path
from typing import Any, Final

from omh_git_memory.actions.workspace import open_workspace
from omh_git_memory.agent import sdk

log = logging.getLogger("omh.mcp")


def serve(start: Path) -> None:
    """Serve until the client goes away or a signal stops it. Every such end is a
    normal one (docs/mcp.md, "How the server ends"): EOF on stdin, a broken pipe on
    stdout, SIGTERM or SIGHUP return; SIGINT raises KeyboardInterrupt (exit 130)."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING,
                        format="omh mcp: %(levelname)s %(message)s")
    server = sdk.build_server(open_workspace(start))
    if asyncio.run(_serve_stdio(server)) == signal.SIGINT:
        raise KeyboardInterrupt


# The signals that end the server normally; SIGINT is Ctrl-C, which every omh
# command answers with exit 130.
STOPPING: Final = (signal.SIGTERM, signal.SIGHUP)
EXIT_AT_ONCE: Final = {signal.SIGINT: 130, signal.SIGTERM: 0, signal.SIGHUP: 0}


def _client_gone(err: BaseException, stopping: bool) -> bool:
    """Whether `err` — every error inside it, for an exception group — says only
    that the connection ended: the client closed its end of a pipe (EPIPE, a reset),
    or one of the SDK's streams was closed under a task during the teardown that
    follows; when a signal is `stopping` the server, a cancellation as well."""
    import anyio

    if isinstance(err, BaseExceptionGroup):
        return all(_client_gone(e, stopping) for e in err.exceptions)
    if isinstance(err, anyio.BrokenResourceError | anyio.ClosedResourceError | anyio.EndOfStream):
        return True
    if stopping and isinstance(err, asyncio.CancelledError):
        return True
    return isinstance(err, OSError) and err.errno in (errno.EPIPE, errno.ECONNRESET)


# JSON-RPC 2.0 error codes (https://www.jsonrpc.org/specification#error_object).
PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600


def unanswered(line: str) -> tuple[Any, int, str] | None:
    """The error reply a line needs that the SDK would never send, as (id, code,
    message), or None when the SDK reads the line and answers it itself.

    The SDK's transport drops a line its JSON parser refuses — a lone surrogate
    (`"\\ud800"`) in any string, a key included — and takes a request whose id
    is not a string or an integer (an object, a float, true, null) for a
    notification, which gets no reply: either way the client waits forever.
    """
    import json

    read = sdk.sdk_reads(line)
    try:
        raw = json.loads(line)  # Python's parser accepts what the SDK's refuses
    except (ValueError, RecursionError) as err:  # RecursionError: nested too deeply
        if read:
            return None
        return (None, PARSE_ERROR, f"parse error: the line is not JSON omh can read ({err})"[:300])
    if not isinstance(raw, dict):
        return (None, INVALID_REQUEST, "invalid request: send one JSON-RPC object per line")
    request_id = raw.get("id")
    usable_id = isinstance(request_id, str) or (
        isinstance(request_id, int) and not isinstance(request_id, bool))
    if read:
        if "id" in raw and "method" in raw and not usable_id:
            return (None, INVALID_REQUEST,
                    "invalid request: its id must be a string or an integer")
        return None
    if "method" not in raw or "id" not in raw:
        return None  # a notification or a response: JSON-RPC sends nothing back
    answer_to = request_id if usable_id else None
    try:
        surrogate = _has_lone_surrogate(raw)
    except RecursionError:
        surrogate = False
    if surrogate:
        return (answer_to, INVALID_REQUEST, "invalid request: it holds a lone surrogate "
                "(an escape between \\ud800 and \\udfff not in a pair), which is not text")
    return (answer_to, INVALID_REQUEST, "invalid request: not a JSON-RPC 2.0 message")


def _has_lone_surrogate(value: object) -> bool:
    if isinstance(value, str):
        return any("\ud800" <= c <= "\udfff" for c in value)
    if isinstance(value, dict):
        return any(_has_lone_surrogate(k) or _has_lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_lone_surrogate(v) for v in value)
    return False


# How long, once stdin has ended, the requests read before it may take to be
# answered before the server ends anyway (a tool call building a large index).
DRAIN_SECONDS: Final = 120.0


class Requests:
    """stdin as the SDK's transport reads it, one line at a time, except that a line
    :func:`unanswered` says the SDK would drop is answered here with an error, so
    every request gets a reply.

    At the end of stdin the stream stays open until every request handed to the
    SDK has been answered (:meth:`answered` sees the replies go out), so a client
    that writes its requests and closes its end (`… | omh mcp serve`) gets every
    reply: the SDK ends its session, and fails what is still running, as soon as
    its input ends. A request the client cancels needs no reply."""

    def __init__(self, lines: Any) -> None:
        import anyio

        self.lines = lines
        self.replies: Any = None  # the transport's write stream, once it exists
        self.ready = anyio.Event()
        self.pending: set[object] = set()  # ids of requests the SDK has not answered

    def answered(self, message: Any) -> None:
        """`message` (a SessionMessage the SDK sends) went out: a reply settles its
        request."""
        sent = getattr(message, "message", None)
        sent = getattr(sent, "root", sent)  # older SDKs wrap it in a RootModel
        if sent is not None and not hasattr(sent, "method"):
            self._settle(getattr(sent, "id", None))

    def _settle(self, request_id: object) -> None:
        self.pending.discard(request_id)

    def _note(self, line: str) -> None:
        """Keep the id of a request the SDK will answer; a cancellation settles it."""
        import json

        try:
            raw = json.loads(line)
        except (ValueError, RecursionError):
            return
        if not isinstance(raw, dict) or not isinstance(raw.get("method"), str):
            return
        if "id" in raw:
            self.pending.add(raw["id"])
        elif raw["method"] == "notifications/cancelled":
            params = raw.get("params")
            if isinstance(params, dict):
                self._settle(params.get("requestId"))

    def connected(self, replies: Any) -> None:
        """The transport's write stream exists: errors can be answered from now on."""
        self.replies = replies
        self.ready.set()

    def __aiter__(self) -> Any:
        return self._read()

    async def _read(self) -> Any:
        import anyio

        async for line in self.lines:
            refusal = unanswered(line) if line.strip() else None
            if refusal is None:
                self._note(line)
                yield line
                continue
            request_id, code, message = refusal
            log.warning("answered a request the SDK cannot read: %s", message)
            await self.ready.wait()
            await self.replies.send(sdk.error_reply(request_id, code, message))
        with anyio.move_on_after(DRAIN_SECONDS):
            while self.pending:
                await anyio.sleep(0.02)


async def _stdin_lines(binary: Any) -> Any:
    """The lines of the client's stdin, as text. A daemon thread reads them (a
    blocking read works for every kind of stdin: pipe, socket, terminal, file), so
    the server can end while the read still waits: a thread of the SDK's would be
    waited for, and with the client's stdout gone but its stdin open, forever."""
    import io
    import threading

    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[str | None] = asyncio.Queue()
    room = threading.Semaphore(1)  # one line read ahead at most, as the SDK's reader
    text = io.TextIOWrapper(binary, encoding="utf-8", errors="replace")

    def pump() -> None:
        with contextlib.suppress(RuntimeError):  # the loop closed: the server ended
            try:
                for line in text:
                    room.acquire()
                    loop.call_soon_threadsafe(queue.put_nowait, line)
            except (OSError, ValueError):  # a read error is an end of input
                pass
            loop.call_soon_threadsafe(queue.put_nowait, None)

    threading.Thread(target=pump, name="omh mcp stdin", daemon=True).start()
    while (line := await queue.get()) is not None:
        room.release()
        yield line


async def _serve_stdio(server: sdk.Server) -> int | None:
    """The SDK's stdio session of `server` (sdk.run_stdio), with :class:`Requests`
    in front of the SDK's line reader, until the client goes away or a signal stops
    it; the signal that did, if one did. stdin is read from a private copy of fd 0
    and fd 0 itself points at the null device, as the SDK does, so nothing else can
    take the client's bytes.

    A client that goes away — EOF on stdin, its end of stdout closed, with or
    without calls pending — ends the server normally, as SIGTERM and SIGHUP do
    (a call under way is finished first: a note being written is written whole).
    A second signal while it ends exits at once."""
    import anyio

    private = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    # closefd=False: the reading thread may still wait on it as the server ends.
    requests = Requests(_stdin_lines(os.fdopen(private, "rb", closefd=False)))
    loop = asyncio.get_running_loop()
    stopped_by: list[int] = []
    with anyio.CancelScope() as scope:

        def stop(sig: int) -> None:
            if stopped_by:  # asked twice: the person means it
                os._exit(EXIT_AT_ONCE[signal.Signals(stopped_by[0])])
            stopped_by.append(sig)
            scope.cancel()

        for sig in (signal.SIGINT, *STOPPING):
            loop.add_signal_handler(sig, stop, sig)
        try:
            await sdk.run_stdio(server, requests)
        except (Exception, BaseExceptionGroup) as err:
            if not _client_gone(err, stopping=bool(stopped_by)):
                raise
        finally:
            for sig in (signal.SIGINT, *STOPPING):
                loop.remove_signal_handler(sig)
            if stopped_by:  # the end may still wait (an answer stuck in a full pipe)
                for sig in (signal.SIGINT, *STOPPING):
                    signal.signal(sig, lambda *_: os._exit(EXIT_AT_ONCE[
                        signal.Signals(stopped_by[0])]))
    return stopped_by[0] if stopped_by else None
