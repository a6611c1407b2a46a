"""Builders the tests share: real repositories, the real CLI (in this process, or in a
subprocess where a run needs one)."""

from __future__ import annotations

import functools
import io
import json
import locale
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pygit2

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"
IDENTITY = ("Test Person", "test@example.invalid")

# The note docs/note-format.md shows `omh memory remember` writing, byte for byte.
SEED_NOTE = """\
---
key: surprise/mounting-a-credential-file-returns-ebusy
type: surprise
source: cli
recorded: 2026-10-11
---

# Mounting a credential file returns EBUSY.

## Expected
A bind mount of the token file would persist the login.

## Observed
Mounting a credential file returns EBUSY.

## Evidence
EBUSY from the mount syscall

## Answers

- why does mounting the token file fail?

## Related

- [[credentials-are-a-named-volume]]
"""

SEED_ARGS = [
    "memory", "remember",
    "--expected", "A bind mount of the token file would persist the login.",
    "--observed", "Mounting a credential file returns EBUSY.",
    "--evidence", "EBUSY from the mount syscall",
    "--answers", "why does mounting the token file fail?",
    "--relates-to", "credentials-are-a-named-volume",
    "--recorded", "2026-10-11",
]


def make_repo(path: Path, files: dict[str, str] | None = None) -> pygit2.Repository:
    """A repository at `path` with one commit holding `files`."""
    path.mkdir(parents=True, exist_ok=True)
    repo = pygit2.init_repository(str(path), initial_head="main")
    repo.config["user.name"], repo.config["user.email"] = IDENTITY
    for name, text in (files or {"README.md": "# Test repo\n"}).items():
        target = path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    repo.index.add_all()
    repo.index.write()
    tree = repo.index.write_tree()
    sig = pygit2.Signature(*IDENTITY)
    repo.create_commit("HEAD", sig, sig, "first commit", tree, [])
    return repo


def git(cwd: Path, *args: str) -> str:
    """The git CLI, playing the user."""
    env = {**os.environ, "GIT_AUTHOR_NAME": IDENTITY[0], "GIT_AUTHOR_EMAIL": IDENTITY[1],
           "GIT_COMMITTER_NAME": IDENTITY[0], "GIT_COMMITTER_EMAIL": IDENTITY[1]}
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          check=True)
    return done.stdout


@dataclass
class Run:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


def omh(cwd: Path, *args: str, env: dict[str, str] | None = None,
        timeout: float | None = None, real: bool = False) -> Run:
    """The `omh` command run from `cwd` with `env` added to the environment: in this
    process (see `omh_in_process`), or in a real one (`omh_process`) when `real` is
    set or the run needs one — a `timeout` (a command that blocks must fail the test,
    not hang it), a fault point that kills or stops the process, an environment
    that shapes Python's own start, or the MCP server on stdin/stdout."""
    if real or needs_process(args, env, timeout):
        return omh_process(cwd, *args, env=env, timeout=timeout)
    return omh_in_process(cwd, *args, env=env)


def omh_process(cwd: Path, *args: str, env: dict[str, str] | None = None,
                timeout: float | None = None) -> Run:
    """The real `omh` command in a subprocess. With `timeout`, a command that blocks
    fails the test instead of hanging the run."""
    try:
        done = subprocess.run(
            [sys.executable, "-m", "omh_git_memory", *args], cwd=cwd,
            env={**os.environ, **(env or {})}, capture_output=True, text=True, check=False,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        raise AssertionError(f"omh {' '.join(args)} hung for {timeout}s") from None
    return Run(done.returncode, done.stdout, done.stderr)


# Variables read when Python itself starts (the streams' encoding, the locale, the
# import path): a run that sets one needs a new interpreter to see it.
_STARTUP_VARIABLES = ("LANG", "LC_ALL", "LC_CTYPE", "PYTHON")


def needs_process(args: tuple[str, ...] | list[str], env: dict[str, str] | None,
                  timeout: float | None) -> bool:
    """Whether `omh ARGS` with `env` can only be run as a real process."""
    if timeout is not None or list(args[:2]) == ["mcp", "serve"]:
        return True
    given = env or {}
    if any(name.startswith(_STARTUP_VARIABLES) for name in given):
        return True
    fault = {**os.environ, **given}.get("OMH_FAULT")
    if fault:  # a fault point kills or stops the process; with an errno it only raises
        errno_only = bool({**os.environ, **given}.get("OMH_FAULT_ERRNO"))
        return not errno_only or fault.endswith(":stop")
    return False


class _Pipe(io.BytesIO):
    """What a command writes to a stream: like the read end of a pipe, it keeps
    what was written even when the command closes its end."""

    written = b""

    def close(self) -> None:
        if not self.closed:
            self.written = self.getvalue()
        super().close()

    def value(self) -> bytes:
        return self.written if self.closed else self.getvalue()


def _stream(pipe: _Pipe, like: Any, errors: str, line_buffering: bool) -> io.TextIOWrapper:
    """A text stream over `pipe` as Python opens one over a pipe: the encoding and
    error handler it gave its own streams at start (`like`), not a terminal."""
    encoding = getattr(like, "encoding", None) or locale.getpreferredencoding(False)
    return io.TextIOWrapper(pipe, encoding=encoding,
                            errors=getattr(like, "errors", None) or errors,
                            line_buffering=line_buffering)


def _as_text(data: bytes) -> str:
    """The bytes a command wrote, read as `subprocess.run(text=True)` reads them
    (the locale's encoding, universal newlines)."""
    return io.TextIOWrapper(io.BytesIO(data), encoding=locale.getpreferredencoding(False),
                            newline=None).read()


def _exit_code(done: SystemExit) -> tuple[int, str]:
    """The exit status a process ending with `done` has, and what Python prints."""
    code = done.code
    if code is None:
        return 0, ""
    if isinstance(code, int):
        return code % 256, ""
    return 1, f"{code}\n"


_SIGNALS = tuple(s for s in (signal.SIGINT, signal.SIGTERM, signal.SIGQUIT, signal.SIGHUP,
                             signal.SIGPIPE, signal.SIGCHLD, signal.SIGALRM))


_STREAMS = ("stdin", "stdout", "stderr", "__stdin__", "__stdout__", "__stderr__")


def omh_in_process(cwd: Path, *args: str, env: dict[str, str] | None = None) -> Run:
    """`omh ARGS` run by `cli.main` in this process, as a subprocess would run it:
    from `cwd`, with `env` over the environment, stdout and stderr captured as from
    pipes (text streams over bytes: `.buffer`, the encoding, not a terminal), an
    empty stdin, Python's default warning filters, no logging handler of pytest's,
    libgit2's configuration files found from this environment's HOME, and the exit
    status from SystemExit. Everything is put back afterwards, exactly."""
    import logging
    import warnings

    import pygit2
    from pygit2.enums import ConfigLevel

    from omh_git_memory import cli

    saved_env = dict(os.environ)
    saved_cwd = os.getcwd()
    saved_streams = tuple(getattr(sys, name) for name in _STREAMS)
    saved_argv = sys.argv
    saved_tempdir = tempfile.tempdir
    saved_umask = os.umask(0o022)
    os.umask(saved_umask)
    saved_signals = {s: signal.getsignal(s) for s in _SIGNALS}
    root = logging.getLogger()
    saved_logging = (root.handlers[:], root.level, logging.root.manager.disable)
    levels = (ConfigLevel.GLOBAL, ConfigLevel.XDG)
    saved_search = {level: pygit2.settings.search_path[level] for level in levels}
    out, err = _Pipe(), _Pipe()
    stdout = _stream(out, saved_streams[4], "strict", line_buffering=False)
    stderr = _stream(err, saved_streams[5], "backslashreplace", line_buffering=True)
    stdin = _stream(_Pipe(), saved_streams[3], "strict", line_buffering=False)
    printed = ""
    try:
        os.environ.update(env or {})
        os.chdir(cwd)
        home = os.environ.get("HOME", "")
        xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
        # libgit2 finds ~/.gitconfig from HOME once, when it starts: a process
        # started with this environment would look there.
        pygit2.settings.search_path[ConfigLevel.GLOBAL] = home
        pygit2.settings.search_path[ConfigLevel.XDG] = os.path.join(xdg, "git")
        tempfile.tempdir = None  # found again from TMPDIR, as a new process does
        root.handlers[:] = []  # a warning logged goes to stderr, as with no handler
        root.setLevel(logging.WARNING)
        logging.disable(logging.NOTSET)
        sys.argv = [str(Path(cli.__file__).parent.parent / "__main__.py"), *args]
        for name, stream in zip(_STREAMS, (stdin, stdout, stderr) * 2, strict=True):
            setattr(sys, name, stream)  # the __std*__ too: what shutil asks for a width
        with warnings.catch_warnings():
            warnings.resetwarnings()
            for category in (DeprecationWarning, PendingDeprecationWarning, ImportWarning,
                             ResourceWarning):
                warnings.simplefilter("ignore", category)
            try:
                cli.main(list(args))
                code = 0
            except SystemExit as done:
                code, printed = _exit_code(done)
        if printed:
            stderr.write(printed)
        for stream in (stdout, stderr):
            if not stream.closed:
                stream.flush()
    finally:
        for name, saved in zip(_STREAMS, saved_streams, strict=True):
            setattr(sys, name, saved)
        sys.argv = saved_argv
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        tempfile.tempdir = saved_tempdir
        os.umask(saved_umask)
        for number, handler in saved_signals.items():
            if handler is not None:
                signal.signal(number, handler)
        root.handlers[:] = saved_logging[0]
        root.setLevel(saved_logging[1])
        logging.disable(saved_logging[2])
        for level, path in saved_search.items():
            pygit2.settings.search_path[level] = path
    return Run(code, _as_text(out.value()), _as_text(err.value()))


@functools.cache
def demo_run() -> Run:
    """What `omh demo` prints, run once for every test that reads it: the demo starts
    a process for each of its steps, in a repository of its own, so its output is
    the same whichever test asks first."""
    return omh(Path(tempfile.mkdtemp(prefix="omh-demo-test-")), "demo")


def local_store(repo: Path) -> Path:
    """The local store of the clone at `repo`, as `omh memory --json` names it."""
    return Path(omh(repo, "memory", "--json").json()["local_store"])


def remember_linked(repo: Path, observed: str, *links: str) -> str:
    """A local surprise note observing `observed`, linking to `links`; its key."""
    args = ["memory", "remember", "--expected", "e", "--observed", observed,
            "--evidence", "v", "--answers", "q?", "--json"]
    for link in links:
        args += ["--relates-to", link]
    run = omh(repo, *args)
    assert run.code == 0, run.err
    return str(run.json()["key"])


def commit_files(repo: Path, files: dict[str, str | None], message: str = "change") -> str:
    """Write `files` (None: delete it) in `repo`, commit them all; the new commit's id."""
    for name, text in files.items():
        path = repo / name
        if text is None:
            path.unlink()
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message)
    return git(repo, "rev-parse", "HEAD").strip()


def promote_ready(repo: Path, *observed: str) -> list[str]:
    """omh initialised and committed in `repo`, and one local surprise note observing
    each of `observed`, ready to promote; their keys."""
    assert omh(repo, "init").code == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "omh init")
    return [remember_linked(repo, text) for text in observed]


def start_at_fault(repo: Path, fault: str, *args: str) -> subprocess.Popen[str]:
    """`omh ARGS` started with the fault point `fault` set (it stops itself there)."""
    return subprocess.Popen([sys.executable, "-m", "omh_git_memory", *args], cwd=repo,
                            env={**os.environ, "OMH_FAULT": fault}, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def wait_stopped(proc: subprocess.Popen[str], timeout: float = 60.0) -> None:
    """Wait until `proc` has stopped itself (SIGSTOP) at its fault point."""
    deadline = time.monotonic() + timeout
    status = Path(f"/proc/{proc.pid}/stat")
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        if status.read_text().rsplit(")", 1)[1].split()[0] == "T":
            return
        time.sleep(0.02)
    proc.kill()
    raise AssertionError("the command never reached its fault point")


def resume(proc: subprocess.Popen[str]) -> Run:
    """Let a process stopped at its fault point go on, and wait for its end."""
    os.kill(proc.pid, signal.SIGCONT)
    out, err = proc.communicate(timeout=120)
    return Run(proc.returncode, out, err)


def note_text(key: str, kind: str = "topic", body: str = "", **fields: str) -> str:
    """A small hand-written note."""
    head = {"key": key, "type": kind, "source": "test", "recorded": "2026-11-01", **fields}
    lines = "".join(f"{k}: {v}\n" for k, v in head.items())
    return f"---\n{lines}---\n\n# {key}\n" + (f"\n{body}" if body else "")


def replies_until(stdout: Any, request_id: object, timeout: float) -> list[dict[str, Any]]:
    """The JSON lines a server writes to `stdout` (a subprocess pipe), up to the reply
    to `request_id`, or every one it wrote within `timeout` seconds.

    It reads the file descriptor itself: select() on a buffered pipe followed by
    readline() loses a line whenever two arrive in one read (the second waits in
    Python's buffer, where select() cannot see it), so a server that answered looked
    hung."""
    import select

    fd = stdout.fileno()
    deadline = time.monotonic() + timeout
    pending = b""
    replies: list[dict[str, Any]] = []
    while not any(r.get("id") == request_id for r in replies):
        if b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            replies.append(json.loads(line))
            continue
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        chunk = os.read(fd, 65536) if ready else b""
        if not chunk:  # timed out, or the server closed its stdout
            break
        pending += chunk
    return replies


def with_linked_team_notes(repo_dir: Path) -> Path:
    """`repo_dir` with three team notes committed, `ci` linking `deploy` (and
    `other`, linked by none): what the rename and change tests start from."""
    notes = repo_dir / ".omh/notes"
    notes.mkdir(parents=True)
    (notes / "deploy.md").write_text(note_text("deploy", body="How we ship.\n"))
    (notes / "ci.md").write_text(note_text("ci", body="Runs after [[deploy]].\n"))
    (notes / "other.md").write_text(note_text("other", body="Unrelated.\n"))
    git(repo_dir, "add", "-A")
    git(repo_dir, "commit", "-qm", "team notes")
    return repo_dir


def commit_as(path: Path, name: str, files: dict[str, str], day: int) -> str:
    """Commit `files` on HEAD's branch as `name`, `day` days after 2026-01-01 (a time
    each commit differs by, so the dates tell the commits apart); the commit id."""
    repo = pygit2.Repository(str(path))
    for rel, text in files.items():
        (path / rel).parent.mkdir(parents=True, exist_ok=True)
        (path / rel).write_text(text, encoding="utf-8")
        repo.index.add(rel)
    repo.index.write()
    when = 1767225600 + day * 86400
    sig = pygit2.Signature(name, "someone@example.invalid", when, 0)
    return str(repo.create_commit("HEAD", sig, sig, f"by {name}", repo.index.write_tree(),
                                  [repo.head.target]))
