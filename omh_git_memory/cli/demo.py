"""`omh demo`: a walk-through on a throw-away repository.

Builds a git repository from the bundled fixtures, points the local store at a
temporary directory, and runs the real `omh` commands one after another,
printing each with its output. Nothing outside the temporary directory is
touched.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from importlib import resources
from pathlib import Path
from typing import Final

import typer

from omh_git_memory.model.errors import BrokenInstall


def fixtures_dir() -> Path:
    """The demo fixtures: inside the installed package, or in a source checkout."""
    packaged = Path(str(resources.files("omh_git_memory"))) / "_fixtures" / "demo"
    if packaged.is_dir():
        return packaged
    source = Path(__file__).resolve().parents[2] / "fixtures" / "demo"
    if source.is_dir():
        return source
    raise BrokenInstall("the demo fixtures are missing from this installation; reinstall omh")


# (caption, arguments, plant the hand-edited fixture note in the store first)
STEPS: list[tuple[str, list[str], bool]] = [
    ("Set up omh in the repository (safe to run twice).", ["init"], False),
    (
        "An agent records what surprised it. The key is derived from what was observed.",
        [
            "memory", "remember",
            "--expected", "A bind mount of the token file would persist the login.",
            "--observed", "Mounting a credential file returns EBUSY.",
            "--evidence", "EBUSY from the mount syscall",
            "--answers", "why does mounting the token file fail?",
            "--relates-to", "credentials-are-a-named-volume",
            "--recorded", "2026-10-11",
        ],
        False,
    ),
    (
        "The note, byte for byte as stored, after a line naming its layer, date and file.",
        ["memory", "show", "surprise/mounting-a-credential-file-returns-ebusy"],
        False,
    ),
    (
        "Writing the same observation again is a conflict, not a silent second copy.",
        [
            "memory", "remember",
            "--expected", "The login would persist.",
            "--observed", "mounting a CREDENTIAL file   returns ebusy!",
            "--evidence", "the same error, spelled differently",
            "--answers", "why does the mount fail?",
        ],
        False,
    ),
    (
        "A second note that the first one links to.",
        [
            "memory", "remember",
            "--expected", "Credentials could be files mounted one by one.",
            "--observed", "Credentials are a named volume.",
            "--evidence", "docker volume ls shows omh-credentials",
            "--answers", "where do credentials live?",
            "--relates-to", "surprise/mounting-a-credential-file-returns-ebusy",
            "--recorded", "2026-10-12",
        ],
        False,
    ),
    (
        "Sharing a note whose link would dangle for a teammate is refused.",
        ["memory", "promote", "surprise/credentials-are-a-named-volume"],
        False,
    ),
    (
        "A note that stands alone.",
        [
            "memory", "remember",
            "--expected", "Port 8080 would be free on CI.",
            "--observed", "CI already listens on port 8080.",
            "--evidence", "bind: address already in use",
            "--answers", "why do the tests fail to bind on CI?",
            "--recorded", "2026-10-13",
        ],
        False,
    ),
    (
        "Promote it: one commit adding .omh/notes/<key>.md, then the local copy goes.",
        ["memory", "promote", "surprise/ci-already-listens-on-port-8080"],
        False,
    ),
    ("The notes by layer, with how many notes link to each.", ["memory"], False),
    (
        "Recall: the best notes for a question, each with its neighbours, every line "
        "with its layer and date. Stubs for the repository's documents come for free.",
        ["memory", "recall", "why do the tests fail on CI?", "--also",
         "rolling back a tinyhttp deploy"],
        False,
    ),
    (
        "Give a coding agent the two tools (remember, recall): the project-scoped "
        "configuration for Claude Code; --write merges it into .mcp.json.",
        ["mcp", "config", "claude"],
        False,
    ),
    ("What CI runs on a pushed commit: lint the team notes committed at HEAD.",
     ["memory", "lint", "--ref", "HEAD"], False),
    ("A hand-edited note with problems has arrived in the store; lint names each rule.",
     ["memory", "lint"], True),
    ("Remove it. rm removes one note and says what linked to it.",
     ["memory", "rm", "half-finished"], False),
    (
        "Lint again: no refusals, so it passes. The DanglingLink is real: the first note "
        "links credentials-are-a-named-volume, but the template keyed the second "
        "surprise/credentials-are-a-named-volume.",
        ["memory", "lint"],
        False,
    ),
    (
        "A person gathers what the notes are about in a topic: a title (its key), free "
        "sections, and Related links.",
        [
            "memory", "remember", "--type", "topic",
            "--title", "Credentials in the sandbox",
            "--section", "Summary=Tokens live in a named volume; mounting one file "
            "returns EBUSY.",
            "--relates-to", "surprise/mounting-a-credential-file-returns-ebusy",
            "--relates-to", "surprise/credentials-are-a-named-volume",
            "--recorded", "2026-10-14",
        ],
        False,
    ),
    (
        "What waits for review: the local notes not yet promoted, newest first. On a "
        "terminal, review then asks about each: promote, edit, remove, keep or quit.",
        ["memory", "review"],
        False,
    ),
    (
        "Correct a note in place: update changes only the sections it is given, and the "
        "key stays (a local note is rewritten atomically; a team note gets a commit).",
        ["memory", "update", "surprise/credentials-are-a-named-volume",
         "--evidence", "docker volume inspect omh-credentials"],
        False,
    ),
    ("The corrected note.", ["memory", "show", "surprise/credentials-are-a-named-volume"],
     False),
    (
        "edit opens the note in $VISUAL or $EDITOR (here a script that adds a question, "
        "standing in for yours); what is saved is checked as remember checks it.",
        ["memory", "edit", "surprise/credentials-are-a-named-volume"],
        False,
    ),
    (
        "Rename the second note to the key the first one links to. mv moves the file, "
        "changes its key and rewrites every link to it in its layer (the topic's too), all at "
        "once.",
        ["memory", "mv", "surprise/credentials-are-a-named-volume",
         "credentials-are-a-named-volume"],
        False,
    ),
    ("Lint once more: the link resolves now.", ["memory", "lint"], False),
]


INIT_FILES = [".omh/memory.toml", ".omh/.gitignore"]

# What the demo's "editor" does to the note it is given: one more question answered.
EDITOR_SCRIPT: Final = """\
import sys
path = sys.argv[1]
text = open(path, encoding="utf-8").read()
text = text.replace("## Answers\\n\\n", "## Answers\\n\\n- which volume holds the tokens?\\n", 1)
open(path, "w", encoding="utf-8").write(text)
"""


def run_demo(keep: bool = False) -> None:
    from omh_git_memory.git.repository import LOCATION_VARIABLES, commit_files, create_repository

    fixtures = fixtures_dir()
    top = Path(tempfile.mkdtemp(prefix="omh-demo-"))
    repo_dir = top / "tinyhttp"
    store = top / "local-store"
    shutil.copytree(fixtures / "repo", repo_dir)
    repo = create_repository(repo_dir, "Tinyhttp: first commit", "omh demo", "demo@omh.invalid")
    repo.repo.config["user.name"] = "omh demo"  # promote commits as this identity
    repo.repo.config["user.email"] = "demo@omh.invalid"
    editor = top / "editor.py"  # stands in for the person's editor in the edit step
    editor.write_text(EDITOR_SCRIPT)
    # the steps run in the demo's repository, whatever GIT_DIR and the like name
    inherited = {k: v for k, v in os.environ.items() if k not in LOCATION_VARIABLES}
    env = {**inherited, "OMH_LOCAL_STORE": str(store), "NO_COLOR": "1",
           "VISUAL": shlex.join([sys.executable, str(editor)])}
    typer.echo(f"omh demo: a repository at {repo_dir}, its local store at {store}\n")
    try:
        for index, (caption, args, plant) in enumerate(STEPS, 1):
            if plant:
                target = store / "half-finished.md"
                shutil.copyfile(fixtures / "store" / "half-finished.md", target)
            typer.echo(f"── {index}. {caption}")
            typer.echo(f"$ omh {shlex.join(args)}")
            done = subprocess.run(
                [sys.executable, "-m", "omh_git_memory", *args],
                cwd=repo_dir, env=env, capture_output=True, text=True, check=False,
            )
            typer.echo(done.stdout + done.stderr, nl=False)
            if done.returncode:
                typer.echo(f"(exit status {done.returncode})")
            if args == ["init"]:  # as init asks: so the topic is named as in every clone
                commit_files(repo_dir, INIT_FILES, "omh init", "omh demo", "demo@omh.invalid")
                typer.echo(f"(the demo commits them, as you would: git add {' '.join(INIT_FILES)}"
                           " && git commit -m 'omh init')")
            typer.echo("")
    finally:
        if keep:
            typer.echo(f"kept {top}")
        else:
            shutil.rmtree(top, ignore_errors=True)
    typer.echo("That is what exists so far: see the README for what each command does.")
