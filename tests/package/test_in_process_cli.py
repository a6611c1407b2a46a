"""tests.helpers.omh runs the CLI in this process: what a run returns is what the
real process returns, and the run leaves this process as it found it."""

from __future__ import annotations

import logging
import os
import signal
import sys
import tempfile
from pathlib import Path
from typing import Any

import pygit2
import pytest
from pygit2.enums import ConfigLevel

from tests.helpers import (
    SEED_ARGS,
    make_repo,
    needs_process,
    omh,
    omh_in_process,
    omh_process,
    promote_ready,
)

READ_ONLY = [
    ["--help"],
    ["--version"],
    ["memory", "remember", "--help"],
    ["memory", "--json"],
    ["memory", "recall", "why does mounting the token file fail?"],
    ["memory", "show", "surprise/mounting-a-credential-file-returns-ebusy"],
    ["memory", "show", "no-such-note"],  # an expected failure: exit 1
    ["memory", "no-such-command"],  # a usage error: exit 2
    ["memory", "lint", "--json"],
    ["memory", "review"],  # off a terminal: the list, then what to do
    ["memory", "recall", "caf\u00e9 \u201cquoted\u201d \udcff"],  # not UTF-8: refused
]


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A repository with omh initialised and one local note; the environment (its own
    home) every run here gets."""
    base = tmp_path_factory.mktemp("seeded")
    env = {"HOME": str(base / "home"), "OMH_HOME": str(base / "home/.omh"),
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": str(base / "gitconfig")}
    repo = base / "repo"
    make_repo(repo)
    assert omh_process(repo, "init", env=env).code == 0
    assert omh_process(repo, *SEED_ARGS, env=env).code == 0
    return repo, env


@pytest.mark.parametrize("args", READ_ONLY, ids=" ".join)
def test_a_run_in_process_returns_what_the_process_returns(
    seeded: tuple[Path, dict[str, str]], args: list[str]
) -> None:
    repo, env = seeded
    assert omh_in_process(repo, *args, env=env) == omh_process(repo, *args, env=env)


def _state() -> dict[str, Any]:
    root = logging.getLogger()
    return {
        "environ": dict(os.environ), "cwd": os.getcwd(), "argv": list(sys.argv),
        "streams": (sys.stdin, sys.stdout, sys.stderr,
                    sys.__stdin__, sys.__stdout__, sys.__stderr__),
        "signals": {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM,
                                                     signal.SIGQUIT, signal.SIGPIPE)},
        "umask": os.umask(os.umask(0o022)), "tempdir": tempfile.tempdir,
        "logging": (list(root.handlers), root.level, logging.root.manager.disable),
        "search_path": [pygit2.settings.search_path[level]
                        for level in (ConfigLevel.GLOBAL, ConfigLevel.XDG)],
    }


@pytest.mark.parametrize("args", [
    ["memory", "--json"],  # success
    ["memory", "show", "no-such-note"],  # an expected failure
    ["memory", "no-such-command"],  # a usage error
    ["memory", "edit", "surprise/mounting-a-credential-file-returns-ebusy"],  # an editor
], ids=" ".join)
def test_a_run_in_process_leaves_the_process_as_it_was(
    seeded: tuple[Path, dict[str, str]], tmp_path: Path, args: list[str]
) -> None:
    repo, env = seeded
    tempfile.gettempdir()
    before = _state()
    run = omh_in_process(repo, *args, env={**env, "TMPDIR": str(tmp_path), "VISUAL": "true",
                                           "OMH_TEST_ONLY": "1"})
    assert run.code in (0, 1, 2), run.err
    assert _state() == before


def test_the_environment_given_is_the_runs_own(
    seeded: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    repo, env = seeded
    store = tmp_path / "elsewhere"
    run = omh(repo, "memory", "--json", env={**env, "OMH_LOCAL_STORE": str(store)})
    assert run.json()["local_store"] == str(store)
    assert os.environ.get("OMH_LOCAL_STORE") != str(store)


def test_git_configuration_is_found_from_the_runs_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """libgit2 finds ~/.gitconfig from HOME once, when it starts; a run in this
    process must read the run's home, as a process started with it would."""
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[user]\n\tname = Home Person\n"
                                     "\temail = home@example.invalid\n")
    monkeypatch.setenv("HOME", str(home))
    repo = tmp_path / "repo"
    make_repo(repo)
    config = pygit2.Repository(str(repo)).config
    del config["user.name"]
    del config["user.email"]
    [key] = promote_ready(repo, "A note to promote.")
    run = omh(repo, "memory", "promote", key)
    assert run.code == 0, run.err
    head = pygit2.Repository(str(repo)).head.peel(pygit2.Commit)
    assert (head.author.name, head.committer.name) == ("Home Person", "Home Person")


@pytest.mark.parametrize(("args", "env", "timeout"), [
    (["memory"], {"OMH_FAULT": "commit:ref"}, None),  # the fault point kills it
    (["memory"], {"OMH_FAULT": "commit:ref:stop"}, None),  # it stops itself
    (["memory"], {"OMH_FAULT": "commit:ref:stop", "OMH_FAULT_ERRNO": "EIO"}, None),
    (["memory"], {}, 20.0),  # a hang must fail the test, not the run
    (["memory"], {"PYTHONIOENCODING": "latin-1"}, None),  # read when Python starts
    (["memory"], {"LC_ALL": "C"}, None),
    (["mcp", "serve"], {}, None),  # the server on stdin/stdout
])
def test_what_needs_a_real_process_gets_one(
    args: list[str], env: dict[str, str], timeout: float | None
) -> None:
    assert needs_process(args, env, timeout)


def test_an_errno_fault_only_raises_so_it_runs_in_process() -> None:
    assert not needs_process(["memory"], {"OMH_FAULT": "commit:ref",
                                          "OMH_FAULT_ERRNO": "ENOSPC"}, None)
    assert not needs_process(["memory", "recall", "x"], {"OMH_SESSION": "s1"}, None)
