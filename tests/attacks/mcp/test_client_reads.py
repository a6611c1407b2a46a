"""Item 21 of the second hostile review (docs/records/review-issue-23.md), a follow-up:
the MCP tests' client read replies the server had sent as silence."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.helpers import replies_until


def test_hang_two_replies_in_one_read_are_both_seen() -> None:
    """A server that writes two answers back to back (its own refusal of a line the
    SDK cannot read, then the next request's answer) can land both in one read of the
    pipe. The client of test_hang_mcp_deeply_nested_request_kills_the_server read
    with select() and a buffered readline(): the second answer sat unseen in
    Python's buffer, and a server that had answered looked hung for 60 s (item 21,
    seen as a flaky test under load)."""
    writer = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\n"
         "sys.stdout.buffer.write(b'{\"id\": null}\\n{\"id\": 8}\\n'); sys.stdout.flush()\n"
         "time.sleep(30)"],
        stdout=subprocess.PIPE)
    assert writer.stdout is not None
    try:
        replies = replies_until(writer.stdout, 8, timeout=5)
    finally:
        writer.kill()
        writer.communicate()
    assert [r["id"] for r in replies] == [None, 8]


def test_hang_a_reply_cut_across_reads_is_one_reply() -> None:
    """The other half of reading the pipe by hand: a line that arrives in two reads
    is joined, not taken as two broken replies (item 21)."""
    read_end, write_end = os.pipe()
    with os.fdopen(read_end, "rb") as stdout, os.fdopen(write_end, "wb", buffering=0) as w:
        w.write(b'{"id"')
        w.write(b': 8}\n')
        assert replies_until(stdout, 8, timeout=5) == [{"id": 8}]
