"""Races placed on purpose: a file swapped right after the system call that checked
it (a wrapper on that one `os` function, for that one path), and a bound on a call
that, were a guard missing, would wait forever for a FIFO's writer."""

from __future__ import annotations

import io
import os
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest


def _names(path: object, target: object) -> bool:
    """Whether `path` (a path, a name, or a descriptor open on it) is `target` (or,
    `target` a function, whether it says so of the path)."""
    if callable(target):
        return isinstance(path, (str, os.PathLike)) and bool(target(Path(path)))
    if isinstance(path, int):
        try:
            return os.readlink(f"/proc/self/fd/{path}") == os.fspath(target)  # type: ignore[arg-type]
        except OSError:
            return False
    return (isinstance(path, (str, os.PathLike))
            and os.fspath(path) == os.fspath(target))  # type: ignore[arg-type]


def swap_after(monkeypatch: pytest.MonkeyPatch, name: str, target: object,
               swap: Callable[[], None], *, after: int = 0) -> None:
    """After the first real `os.<name>` call on `target` (a path, or a name with a
    `dir_fd`) past the first `after` (a check before the one meant), run `swap`;
    the wrapper then steps aside."""
    real = getattr(os, name)
    seen = [0]

    def wrapper(path: Any, *args: Any, **kwargs: Any) -> Any:
        result = real(path, *args, **kwargs)
        if _names(path, target):
            seen[0] += 1
            if seen[0] <= after:
                return result
            monkeypatch.setattr(os, name, real)
            swap()
        return result

    monkeypatch.setattr(os, name, wrapper)


def fail_on(monkeypatch: pytest.MonkeyPatch, name: str, target: object,
            error: OSError | None = None, *, after: int = 0) -> None:
    """`os.<name>` on `target` (a path, a name, or a descriptor open on it) fails
    with `error` (PermissionError, EACCES, by default): what an account that is not
    root meets; every other call, and the first `after` calls on `target` (a check
    before the call meant), are real."""
    real = getattr(os, name)
    failure = error or PermissionError(13, "Permission denied")
    seen = [0]

    def wrapper(path: Any, *args: Any, **kwargs: Any) -> Any:
        if _names(path, target):
            seen[0] += 1
            if seen[0] > after:
                raise failure
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, name, wrapper)


class _FailingRead(io.BufferedReader):
    def read(self, size: int | None = -1) -> bytes:
        raise OSError(5, "Input/output error")


def read_fails(monkeypatch: pytest.MonkeyPatch, target: object) -> None:
    """A file object `os.fdopen` makes of a descriptor open on `target` fails to
    read (EIO: a disk fault); every other is real."""
    real = os.fdopen

    def fdopen(fd: int, *args: Any, **kwargs: Any) -> Any:
        if _names(fd, target):
            return _FailingRead(io.FileIO(fd, "rb"))
        return real(fd, *args, **kwargs)

    monkeypatch.setattr(os, "fdopen", fdopen)


class Blocked(Exception):
    """A call that should have returned at once waited (for a FIFO's writer)."""


@contextmanager
def never_blocks(seconds: int = 20) -> Iterator[None]:
    """Fail with :class:`Blocked` (no OSError, which the code under test may catch)
    rather than hang when the body waits: a bound, not a timing assertion."""
    def interrupt(_signum: int, _frame: object) -> None:
        raise Blocked("waited on a FIFO")

    old = signal.signal(signal.SIGALRM, interrupt)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
