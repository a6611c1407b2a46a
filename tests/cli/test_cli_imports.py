"""What a cold `omh memory recall` loads: a new process per question pays for every
import, so recall from a built index imports no library it does not use."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import make_repo, note_text, omh

PROBE = """\
import sys
from omh_git_memory.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print([m for m in ('mistune', 'pydantic', 'mcp', 'rapidfuzz', 'numpy', 'tempfile')
       if m in sys.modules], file=sys.stderr)
"""


def _imported(cwd: Path, *args: str) -> tuple[str, list[str]]:
    done = subprocess.run([sys.executable, "-c", PROBE, *args], cwd=cwd, env=dict(os.environ),
                          capture_output=True, text=True, check=True)
    return done.stdout, eval(done.stderr.strip().splitlines()[-1])  # a list of names


def test_recall_from_a_built_index_imports_no_markdown_parser(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    make_repo(repo, {
        "README.md": "# Tiny\n\n## Install\n\nRun the installer.\n",
        ".omh/notes/sockets.md": note_text("sockets", body="## Why\n\nThe socket closes.\n"),
    })
    assert omh(repo, "memory", "reindex").code == 0  # what the git hooks keep warm
    out, imported = _imported(repo, "memory", "recall", "why does the socket close")
    assert "sockets" in out
    assert imported == []
    out, imported = _imported(repo, "memory", "recall", "--json", "how to install")
    assert "README.md" in out and imported == []


def test_a_bug_still_leaves_its_traceback_in_a_log(
        repo_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The crash log's modules are imported only after a bug, not at every start-up.
    from omh_git_memory import cli
    from omh_git_memory.cli import recall

    def broken(*_: object) -> None:
        raise RuntimeError("a bug in the core")

    monkeypatch.chdir(repo_dir)
    monkeypatch.setattr(recall, "here", broken)
    with pytest.raises(SystemExit) as done:
        cli.main(["memory", "recall", "anything"])
    assert done.value.code == cli.EXIT_BUG
    err = capsys.readouterr().err
    assert err.startswith("omh: internal error (a bug); the traceback is in ")
    log = Path(err.rstrip("\n").rsplit(" ", 1)[1])
    assert "RuntimeError: a bug in the core" in log.read_text()
    log.unlink()
