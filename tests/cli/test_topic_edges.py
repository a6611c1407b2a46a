"""`omh memory remember --type topic --section-file` (cli/topic.py): a file or stdin
one byte over a note's cap is refused naming its size as read (one byte past the
cap, never all of it), a file cut short is never taken, and a refusal names the
file, the reason and, when there is one, the line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from omh_git_memory.model.note import MAX_NOTE_BYTES
from tests.helpers import omh

TOPIC = ("memory", "remember", "--type", "topic", "--title", "Big")
TOO_BIG = f"is {MAX_NOTE_BYTES + 1} bytes; a note may hold at most {MAX_NOTE_BYTES}"


def test_a_section_file_past_the_cap_is_read_one_byte_past_it_and_refused(
        repo_dir: Path, tmp_path: Path) -> None:
    for extra in (1, 2):  # one byte over, and more: the size named is what was read
        big = tmp_path / f"big{extra}.md"
        big.write_bytes(b"a" * (MAX_NOTE_BYTES + extra))
        run = omh(repo_dir, *TOPIC, "--section-file", f"A={big}")
        assert (run.code, run.err) == (1, f"omh: --section-file A: {big} {TOO_BIG}\n"), run.err
    assert omh(repo_dir, "memory", "--json").json()["counts"]["local"]["notes"] == 0


def test_stdin_past_the_cap_is_refused_the_same_way(repo_dir: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "omh_git_memory", *TOPIC,
                           "--section-file", "A=-"], cwd=repo_dir, env=dict(os.environ),
                          input=b"a" * (MAX_NOTE_BYTES + 2), capture_output=True, check=False)
    assert done.returncode == 1
    assert done.stderr.decode() == f"omh: --section-file A: - {TOO_BIG}\n"


def test_stdin_under_the_cap_is_the_section_text(repo_dir: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "omh_git_memory", *TOPIC,
                           "--section-file", "Steps=-", "--json"], cwd=repo_dir,
                          env=dict(os.environ), input=b"Step one.\nStep two.\n",
                          capture_output=True, check=False)
    assert done.returncode == 0, done.stderr
    show = omh(repo_dir, "memory", "show", "big")
    assert show.out.endswith("## Steps\nStep one.\nStep two.\n"), show.out


def test_a_section_file_that_is_no_text_is_refused_naming_its_line(
        repo_dir: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.md"
    bad.write_bytes(b"fine\n\xff\n")
    run = omh(repo_dir, *TOPIC, "--section-file", f"A={bad}")
    assert (run.code, run.err) == (
        1, f"omh: --section-file A: {bad} is not valid UTF-8 (byte 5) (line 2)\n")


def test_a_missing_section_file_is_refused_with_the_reason_alone(
        repo_dir: Path, tmp_path: Path) -> None:
    missing = tmp_path / "nope.md"
    run = omh(repo_dir, *TOPIC, "--section-file", f"A={missing}")
    assert (run.code, run.err) == (
        1, f"omh: --section-file A: cannot read {missing}: No such file or directory\n")
