"""How a real `omh` process ends: at once, once its output is out and what asked to
run at exit has run, without Python freeing every object the command made; and the
usual way whenever leaving at once could lose something."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import make_repo, note_text, omh

# `omh ARGS` as its entry point runs it (main() with no arguments), with three
# witnesses: an object that says when it is freed (only Python's tear-down frees
# it), an atexit handler, and, when asked, a thread that runs until the main thread
# has ended.
PROGRAM = """\
import atexit, sys, threading, time

class Witness:
    def __del__(self):
        sys.stderr.write("torn down\\n")

witness = Witness()
atexit.register(lambda: sys.stderr.write("atexit ran\\n"))
def until_main_ends():
    while threading.main_thread().is_alive():
        time.sleep(0.01)
    sys.stderr.write("thread finished\\n")

if sys.argv[1] == "thread":
    threading.Thread(target=until_main_ends).start()
sys.argv = ["omh", *sys.argv[2:]]
from omh_git_memory.cli import main
main()
"""


def _run(cwd: Path, thread: bool, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", PROGRAM, "thread" if thread else "-", *args],
                          cwd=cwd, env=dict(os.environ), capture_output=True, text=True,
                          timeout=60)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    make_repo(tmp_path / "repo", {
        ".omh/notes/sockets.md": note_text("sockets", body="## Why\n\nThe socket closes.\n"),
    })
    return tmp_path / "repo"


def test_a_recall_ends_at_once_with_its_output_whole_and_its_exit_handlers_run(
        repo: Path) -> None:
    done = _run(repo, False, "memory", "recall", "--json", "why does the socket close")
    assert done.returncode == 0, done.stderr
    assert '"key": "sockets"' in done.stdout and done.stdout.endswith("}\n")
    assert "atexit ran" in done.stderr
    assert "torn down" not in done.stderr  # Python's tear-down never ran
    # A failure keeps its status and its message.
    failed = _run(repo, False, "memory", "show", "no-such-note")
    assert failed.returncode == 1 and failed.stderr.startswith("omh: ")
    assert "atexit ran" in failed.stderr and "torn down" not in failed.stderr
    usage = _run(repo, False, "memory", "recall")
    assert usage.returncode == 2 and "torn down" not in usage.stderr


def test_a_thread_still_running_is_waited_for(repo: Path) -> None:
    done = _run(repo, True, "memory", "recall", "why does the socket close")
    assert done.returncode == 0 and "sockets" in done.stdout
    assert "thread finished" in done.stderr  # not killed mid-way
    assert "torn down" in done.stderr  # the usual shutdown, which waits for it


def test_called_with_arguments_main_raises_as_before(repo: Path) -> None:
    # In process (as the tests and any embedding caller run it) nothing is cut short.
    assert omh(repo, "memory", "recall", "why does the socket close").code == 0
    from omh_git_memory import cli

    os.chdir(repo)
    with pytest.raises(SystemExit) as done:
        cli.main(["memory", "show", "sockets"])
    assert done.value.code == 0


@pytest.mark.parametrize("closed", [1, 2])
def test_a_stream_closed_from_the_start_keeps_the_exit_status(repo: Path, closed: int) -> None:
    """`omh … >&-` or `2>&-`: Python has that stream as None, which has nothing to
    flush; the command's own status stands (0 here, 2 for a usage error)."""
    def run(*args: str) -> int:
        return subprocess.run([sys.executable, "-m", "omh_git_memory", *args], cwd=repo,
                              env=dict(os.environ), stdin=subprocess.DEVNULL,
                              pass_fds=(), close_fds=True, timeout=60,
                              preexec_fn=lambda: os.close(closed)).returncode

    assert run("memory", "list") == 0
    assert run("memory", "recall") == 2


def test_a_profiler_gets_its_results_written(repo: Path, tmp_path: Path) -> None:
    out = tmp_path / "omh.prof"
    done = subprocess.run([sys.executable, "-m", "cProfile", "-o", str(out), "-m",
                           "omh_git_memory", "memory", "list"], cwd=repo, env=dict(os.environ),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert out.stat().st_size > 0


def test_an_interrupt_python_wrapped_during_an_import_is_an_interrupt_not_a_bug(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Ctrl-C while a lazily imported module makes a class reaches omh as
    # "RuntimeError: Error calling __set_name__ …" caused by the KeyboardInterrupt
    # (seen with pygit2's ConfigEntry): exit 130 and no crash log, as for a bare one.
    from omh_git_memory.actions import ask

    def interrupted(*_args: object, **_kwargs: object) -> None:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as err:
            raise RuntimeError("Error calling __set_name__ on 'cached_property'") from err

    monkeypatch.setattr(ask, "ask", interrupted)
    done = omh(repo, "memory", "recall", "socket")
    assert done.code == 130, done.err
    assert "internal error" not in done.err
    assert not list(Path(os.environ["TMPDIR"]).glob("omh-crash-*"))


def test_a_runtime_error_without_an_interrupt_is_still_a_bug(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from omh_git_memory.actions import ask

    def broken(*_args: object, **_kwargs: object) -> None:
        try:
            raise ValueError("inner")
        except ValueError as err:
            raise RuntimeError("outer") from err

    monkeypatch.setattr(ask, "ask", broken)
    done = omh(repo, "memory", "recall", "socket")
    assert done.code == 3 and "internal error" in done.err


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs Linux's /dev/full")
@pytest.mark.parametrize("args", [("memory", "list"), ("memory", "recall", "--json", "socket")])
def test_output_to_a_full_device_is_one_line_and_exit_1(repo: Path, args: tuple[str, ...]) -> None:
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "omh_git_memory", *args], cwd=repo,
                              stdout=full, stderr=subprocess.PIPE, text=True, timeout=60)
    assert done.returncode == 1, done.stderr
    assert done.stderr == ("omh: could not write the output: No space left on device; free "
                           "some space, or send it elsewhere, and run it again\n")


def test_a_full_disk_elsewhere_than_the_output_is_not_blamed_on_it(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import errno

    from omh_git_memory.actions import ask

    def full(*_args: object, **_kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(ask, "ask", full)
    done = omh(repo, "memory", "recall", "socket")
    assert done.code == 3 and "could not write the output" not in done.err
