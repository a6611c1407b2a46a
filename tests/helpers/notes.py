"""Notes written as a user writes them, with `omh memory remember`."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.helpers import SEED_ARGS, Run, make_repo, omh

# The fields of a surprise about a port that is taken, as several tests write it.
PORT_NOTE = {"expected": "a free port", "evidence": "bind: address in use",
             "answers": "why is the port taken?"}


def remember(repo: Path, observed: str, *extra: str, expected: str = "e", evidence: str = "v",
             answers: str = "q", recorded: str | None = None, source: str | None = None,
             trigger: str | None = None, env: dict[str, str] | None = None) -> Run:
    """`omh memory remember` of a local surprise note observing `observed`, its other
    fields short unless given and `extra` options last; the run, unchecked."""
    args = ["memory", "remember", "--expected", expected, "--observed", observed,
            "--evidence", evidence, "--answers", answers]
    if recorded is not None:
        args += ["--recorded", recorded]
    if source is not None:
        args += ["--source", source]
    if trigger is not None:
        args += ["--invalidated-by", trigger]
    return omh(repo, *args, *extra, env=env)


def remembered(repo: Path, observed: str, *extra: str, expected: str = "e",
               evidence: str = "v", answers: str = "q", recorded: str | None = None,
               source: str | None = None, trigger: str | None = None,
               env: dict[str, str] | None = None) -> str:
    """`remember`, which must succeed; the note's key."""
    run = remember(repo, observed, *extra, "--json", expected=expected, evidence=evidence,
                   answers=answers, recorded=recorded, source=source, trigger=trigger, env=env)
    assert run.code == 0, run.err
    return str(run.json()["key"])


def remember_seed(repo: Path, observed: str = "Mounting a credential file returns EBUSY.",
                  env: dict[str, str] | None = None) -> None:
    """The example note (tests.helpers.SEED_ARGS) remembered, observing `observed`."""
    args = list(SEED_ARGS)
    args[args.index("--observed") + 1] = observed
    run = omh(repo, *args, env=env)
    assert run.code == 0, run.err



def moved_clone(tmp_path: Path) -> tuple[Path, Path]:
    """A clone set up with omh and one local note, then moved to another folder:
    (its old path, its new path)."""
    old = tmp_path / "src" / "api"
    make_repo(old)
    assert omh(old, "init").code == 0
    remember_seed(old)
    new = tmp_path / "elsewhere" / "api"
    new.parent.mkdir()
    shutil.move(str(old), str(new))
    return old, new
