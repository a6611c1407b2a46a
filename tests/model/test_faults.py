"""Fault points (omh_git_memory/model/faults.py): nothing unless OMH_FAULT names the
point; then a kill, a stop, or the OSError OMH_FAULT_ERRNO names.

A kill and a stop need a process of their own: a child runs the point."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys

import pytest

from omh_git_memory.model import faults

CHILD = "from omh_git_memory.model.faults import point; point('commit:ref'); print('went on')"


def _child(fault: str) -> subprocess.Popen[str]:
    env = {**os.environ, "OMH_FAULT": fault, "PYTHONPATH": os.pathsep.join(sys.path)}
    env.pop("OMH_FAULT_ERRNO", None)
    return subprocess.Popen([sys.executable, "-c", CHILD], env=env, stdout=subprocess.PIPE,
                            text=True)


@pytest.fixture
def no_signal(monkeypatch: pytest.MonkeyPatch) -> None:
    """A point run in the test's own process fails the test instead of signalling it:
    a kill there would end the whole test run, not just this test."""
    def refuse(pid: int, sig: int) -> None:
        raise AssertionError(f"the point sent signal {sig} to the test process")

    monkeypatch.setattr(os, "kill", refuse)


@pytest.mark.usefixtures("no_signal")
def test_point_does_nothing_unless_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OMH_FAULT", raising=False)
    monkeypatch.setenv("OMH_FAULT_ERRNO", "ENOSPC")
    faults.point("commit:ref")
    monkeypatch.setenv("OMH_FAULT", "commit:tree")
    faults.point("commit:ref")
    monkeypatch.setenv("OMH_FAULT", "commit:ref:stop:")
    faults.point("commit:ref")


@pytest.mark.usefixtures("no_signal")
def test_point_raises_the_errno_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OMH_FAULT", "commit:ref")
    monkeypatch.setenv("OMH_FAULT_ERRNO", "ENOSPC")
    with pytest.raises(OSError) as raised:
        faults.point("commit:ref")
    assert raised.value.errno == errno.ENOSPC
    assert raised.value.strerror == os.strerror(errno.ENOSPC)


@pytest.mark.usefixtures("no_signal")
def test_point_raises_eio_for_an_errno_name_it_does_not_know(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OMH_FAULT", "commit:ref")
    monkeypatch.setenv("OMH_FAULT_ERRNO", "ENOTANERRNO")
    with pytest.raises(OSError) as raised:
        faults.point("commit:ref")
    assert raised.value.errno == errno.EIO


def test_point_kills_the_process_when_named() -> None:
    child = _child("commit:ref")
    out, _ = child.communicate(timeout=30)
    assert (child.returncode, out) == (-signal.SIGKILL, "")


def test_point_stops_the_process_until_it_is_continued() -> None:
    child = _child("commit:ref:stop")
    try:
        _, status = os.waitpid(child.pid, os.WUNTRACED)
        assert os.WIFSTOPPED(status) and os.WSTOPSIG(status) == signal.SIGSTOP
        os.kill(child.pid, signal.SIGCONT)
        out, _ = child.communicate(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert (child.returncode, out) == (0, "went on\n")
