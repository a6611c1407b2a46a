"""Notes that repeat each other, for NearDuplicate's warnings, and a user who does
what a warning says."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path
from typing import Any

from tests.helpers import git, note_text, omh

# A topic's text, and the same text recorded again: a typo, another evidence line.
RETRIES = ("A timeout on the first attempt is normal on a busy runner, so the test waits "
           "two seconds and tries again; only the third timeout fails the build.\n")
RETRIES_AGAIN = ("A timeout on the first attempt is normal on a busy runner, so the test "
                 "waits two seconds and tries agian; only the third timeout fails the build. "
                 "Seen in CI run 4821.\n")

# A surprise as `omh memory remember` takes it (FIRST is remembered at OLD), and the
# same surprise again as an agent records it (at NEW): a reworded title, a typo,
# another evidence line.
FIRST = ["--expected", "pytest -q passes offline", "--observed",
         "The upload test retries three times before it fails. It waits 10 seconds "
         "between tries.", "--evidence", "tests/test_upload.py: RETRIES = 3, time.sleep(10)",
         "--answers", "why is the test suite slow offline?"]
AGAIN = ["--expected", "pytest -q passes offline", "--observed",
         "The upload test retries 3 times before failing. It waits 10 secnods between "
         "tries.", "--evidence", "pytest --durations=3: test_upload 30.2s",
         "--answers", "why is the test suite slow offline?"]
OLD = "surprise/the-upload-test-retries-three-times-before-it-fails"
NEW = "surprise/the-upload-test-retries-3-times-before-failing"

# A note about something else, as the MCP tool takes it, and its key.
UNRELATED = {"expected": "the deploy reads DEPLOY_TOKEN from the environment",
             "observed": "The deploy job reads its token from the vault, not the environment.",
             "evidence": "deploy/job.yml: token: vault://deploy/token",
             "answers": ["where does the deploy token come from?"]}
UNRELATED_KEY = "surprise/the-deploy-job-reads-its-token-from-the-vault-not-the-environment"


def promote_repeats(repo: Path, machines: tuple[str, ...]) -> tuple[list[str], str, list[str]]:
    """FIRST remembered once per machine (each a repeat of the others), all promoted
    at once: their keys, the key lint owns the same-day repeats by (the one that
    sorts last), and the promote's warnings about it."""
    keys = []
    for machine in machines:
        observed = (f"The upload test retries three times before it fails on machine "
                    f"{machine}. It waits 10 seconds between tries.")
        run = omh(repo, "memory", "remember", "--json", *FIRST[:2], "--observed", observed,
                  *FIRST[4:])
        assert run.code == 0, run.err
        keys.append(run.json()["key"])
    run = omh(repo, "memory", "promote", *keys)
    assert run.code == 0, run.err
    last = max(keys)
    said = [line for line in run.out.splitlines() if line.startswith(f"warning: team/{last} ")]
    return keys, last, said


def team_notes(repo: Path, files: dict[str, str]) -> None:
    """Write `files` (path -> text) in `repo` and commit them."""
    for name, text in files.items():
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "notes")


def topic_note(key: str, title: str, body: str, recorded: str = "2026-11-01") -> str:
    """A hand-written topic note titled `title`."""
    return note_text(key, body=body, recorded=recorded).replace(f"# {key}\n", f"# {title}\n")


def commands(text: str) -> list[list[str]]:
    """Every `omh …` command a message quotes, as argv, each once."""
    return [shlex.split(c)[1:] for c in dict.fromkeys(re.findall(r"`(omh [^`]+)`", text))]


def do_what_it_says(repo: Path, text: str) -> list[str]:
    """Run the commands the message quotes: an `update` with what the new note adds
    (its evidence), an `rm` as it stands. Returns the commands' names."""
    done = []
    for argv in commands(text):
        if argv[:2] == ["memory", "update"]:
            argv = [*argv, "--evidence", "pytest --durations=3: test_upload 30.2s"]
        elif argv[:2] != ["memory", "rm"]:
            continue
        run = omh(repo, *argv)
        assert run.code == 0, (argv, run.err)
        done.append(argv[1])
    return done


def near_duplicates(repo: Path) -> list[dict[str, Any]]:
    """Lint's NearDuplicate findings."""
    found = omh(repo, "memory", "lint", "--json").json()["findings"]
    return [f for f in found if f["rule"] == "NearDuplicate"]


def as_the_shell_reads_it(repo: Path, text: str) -> list[list[str]]:
    """Each `omh …` command `text` quotes, as bash would pass it on when pasted."""
    found = []
    for command in dict.fromkeys(re.findall(r"`(omh [^`]+)`", text)):
        run = subprocess.run(["bash", "-c", f"printf '%s\\n' {command}"], cwd=repo,
                             capture_output=True, text=True, check=True)
        found.append(run.stdout.splitlines())
    return found
