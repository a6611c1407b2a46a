"""NearDuplicate attacked: stores that blow the candidate blocking up, and remember's
warning where a second note is written beside its twin (real repositories, the real
CLI through tests.helpers.omh).

Found by a hostile review of NearDuplicate; was tests/test_hostile_near_duplicate.py."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from omh_git_memory.actions import near_duplicate
from omh_git_memory.actions.workspace import open_workspace
from omh_git_memory.model.layers import Layer
from omh_git_memory.stores.store import CACHE_FILES
from tests.helpers import note_text, omh
from tests.helpers.mcp import remember_over_mcp
from tests.helpers.near_duplicate import RETRIES, RETRIES_AGAIN, team_notes, topic_note

SAME = ("The upload test retries three times on a busy runner before it fails the build; "
        "the first timeout is normal there.\n")


def _store(repo: Path) -> Path:
    root = open_workspace(repo).local.root
    root.mkdir(parents=True, exist_ok=True)
    return root


def _snapshot(root: Path) -> dict[str, bytes]:
    """The store's files, byte for byte, less its caches (rewritten by any read)."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name not in CACHE_FILES}


def test_copies_of_one_note_are_one_finding_each_not_every_pair(repo_dir: Path) -> None:
    root = _store(repo_dir)
    for i in range(300):  # one note recorded 300 times: 44,850 pairs
        (root / f"copy-{i:03}.md").write_text(note_text(f"copy-{i:03}", body=SAME))
    run = omh(repo_dir, "memory", "lint", "--json")
    assert run.code == 0, run.err
    report = run.json()
    near = [f for f in report["findings"] if f["rule"] == "NearDuplicate"]
    assert report["counts"]["NearDuplicate"] == len(near) == 299
    # every copy but the first is named once; the first is what they read like
    assert sorted(f["key"] for f in near) == [f"copy-{i:03}" for i in range(1, 300)]
    assert all("reads like local/copy-" in f["message"] for f in near)


@pytest.mark.parametrize("kind", ["identical", "one-rare-vocabulary"])
def test_a_crowded_store_scores_a_bounded_number_of_pairs(
        kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """2,000 notes that all share the same rare words (or are all one text) are scored
    against a few candidates each, not against each other (two million pairs)."""
    import random

    rnd = random.Random(15)
    vocabulary = [f"{rnd.choice('bcdfg')}{rnd.randrange(10**6)}z" for _ in range(5000)]
    items = []
    for i in range(2000):
        text = (SAME.lower().replace(";", "").replace(".", "").replace(",", "")
                if kind == "identical"
                else "plugh xyzzy frobnicate " + " ".join(rnd.sample(vocabulary, 40)))
        items.append(near_duplicate.Compared(Layer.LOCAL, f"n{i}", dt.date(2026, 11, 1),
                                             f"n{i}.md", text.strip()))
    calls = 0
    real = near_duplicate.similarity

    def counted(a: near_duplicate.Compared, b: near_duplicate.Compared,
                cutoff: float = 0.0) -> float:
        nonlocal calls
        calls += 1
        return real(a, b, cutoff)

    monkeypatch.setattr(near_duplicate, "similarity", counted)
    found = near_duplicate.one_per_note(near_duplicate.pairs(items))
    assert calls <= 8 * len(items)
    assert len(found) == (len(items) - 1 if kind == "identical" else 0)


# --- remember writes a second note beside its twin ------------------------------------

FIRST = ["--expected", "the upload test fails on the first timeout", "--observed",
         "The upload test retries three times before it fails. A timeout on the first "
         "attempt is normal on a busy runner.", "--evidence", "tests/test_upload.py: retries=3",
         "--answers", "why does the upload test pass after a timeout?"]
KEY = "surprise/the-upload-test-retries-three-times-before-it-fails"


def test_remember_suffix_names_the_note_it_copies_and_strict_refuses(repo_dir: Path) -> None:
    assert omh(repo_dir, "memory", "remember", *FIRST).code == 0
    again = omh(repo_dir, "memory", "remember", *FIRST, "--if-exists", "suffix", "--json")
    assert again.code == 0, again.err
    got = again.json()
    assert got["key"] == f"{KEY}-2"
    assert [n["key"] for n in got["near_duplicates"]] == [KEY, ]  # never silent
    root = _store(repo_dir)
    before = _snapshot(root)
    strict = omh(repo_dir, "memory", "remember", *FIRST, "--if-exists", "suffix", "--strict")
    assert strict.code == 1 and "nothing was written (--strict)" in strict.err
    assert _snapshot(root) == before  # byte for byte


def test_remember_override_does_not_warn_about_the_note_it_replaces(repo_dir: Path) -> None:
    assert omh(repo_dir, "memory", "remember", *FIRST).code == 0
    run = omh(repo_dir, "memory", "remember", *FIRST, "--if-exists", "override", "--strict",
              "--json")
    assert run.code == 0, run.err
    assert run.json()["near_duplicates"] == []


# --- remember's answer when a note repeats many, and advice that can be followed ------

AGAIN = {"expected": "the upload test fails on the first timeout",
         "observed": "The upload test retries three times before it fails. A timeout on the "
                     "first attempt is normal on a busy runner.",
         "evidence": "CI log: attempt 2 of 3",
         "answers": ["why does the upload test pass after a timeout?"]}


def _copies(repo: Path, n: int) -> None:
    """`n` notes of another writer, each the observation of FIRST."""
    root = _store(repo)
    for i in range(n):
        body = ("\n## Expected\nthe upload test fails on the first timeout\n\n## Observed\n"
                "The upload test retries three times before it fails. A timeout on the "
                "first attempt is normal on a busy runner.\n\n## Evidence\nrun "
                f"{i}\n\n## Answers\n\n- why does the upload test pass after a timeout?\n")
        text = note_text(f"surprise/copy-{i}", kind="surprise", body=body)
        (root / "surprise").mkdir(exist_ok=True)
        (root / "surprise" / f"copy-{i}.md").write_text(text.replace(
            "# surprise/copy-", "# The upload test retries three times before it fails "))


def test_remember_names_a_few_of_many_repeats_and_counts_the_rest(repo_dir: Path) -> None:
    _copies(repo_dir, 6)
    run = omh(repo_dir, "memory", "remember", *FIRST)
    assert run.code == 0, run.err
    assert run.out.count("warning: the note looks like") == 3
    assert "and 3 more notes look like it" in run.out
    rerun = omh(repo_dir, "memory", "remember", *FIRST, "--if-exists", "suffix", "--json")
    assert len(rerun.json()["near_duplicates"]) == 7  # the data is whole


def test_mcp_answer_names_a_few_of_many_repeats(repo_dir: Path) -> None:
    _copies(repo_dir, 6)
    (answer,) = remember_over_mcp(repo_dir, "s1", AGAIN)
    assert answer.count("Warning: this note looks like") == 3
    assert answer.endswith(" Warning: and 3 more notes look like it.")


def test_mcp_advice_on_its_own_repeat_names_the_copy_just_written(repo_dir: Path) -> None:
    """Folding into the old note with replaces= leaves the note just written beside it:
    the answer must say so, or following it leaves the near-copy in the store."""
    first = dict(AGAIN, evidence="tests/test_upload.py: retries=3",
                 observed="The upload test retries 3 times before failing. A timeout on "
                          "the first attempt is normal on a busy runner.")
    _done, again = remember_over_mcp(repo_dir, "s1", first, AGAIN)
    new = "surprise/the-upload-test-retries-three-times-before-it-fails"
    assert f"remembered local/{new} " in again
    assert "replaces=surprise/the-upload-test-retries-3-times-before-failing" in again
    assert f"`omh memory rm {new}`" in again


def test_cli_advice_names_the_copy_just_written(repo_dir: Path) -> None:
    _copies(repo_dir, 1)
    run = omh(repo_dir, "memory", "remember", *FIRST)
    assert f"then `omh memory rm {KEY}`" in run.out


# --- odd bytes ------------------------------------------------------------------------

ACCENTED = ("Le café du coin ferme à midi: la requête vers l'API de réservation échoue "
            "après la fermeture, et le test de bout en bout rejoue la même requête.\n")


@pytest.mark.parametrize("spell", ["NFD", "zero-width", "full-width"])
def test_a_copy_spelled_otherwise_is_still_a_copy(repo_dir: Path, spell: str) -> None:
    """The same words in decomposed accents, with invisible zero-width spaces in them,
    or in full-width forms are the same words (as keys are: keys.slug)."""
    import unicodedata

    team_notes(repo_dir,
               {".omh/notes/cafe.md": topic_note("cafe", "Booking fails at noon", ACCENTED)})
    if spell == "NFD":
        copy = unicodedata.normalize("NFD", ACCENTED)
    elif spell == "zero-width":
        copy = ACCENTED.replace("qu", "q\u200bu").replace("é", "é\u200d")
    else:
        copy = "".join(chr(ord(c) + 0xFEE0) if "a" <= c <= "z" else c for c in ACCENTED)
    (_store(repo_dir) / "cafe-again.md").write_text(
        topic_note("cafe-again", "Booking fails at noon", copy))
    near = [f for f in omh(repo_dir, "memory", "lint", "--json").json()["findings"]
            if f["rule"] == "NearDuplicate"]
    assert [(f["layer"], f["key"]) for f in near] == [("local", "cafe-again")]
    assert "reads like team/cafe (2026-11-01), 100% alike" in near[0]["message"]


# --- what held: layers, replaces, concurrency -----------------------------------------

def test_a_local_copy_never_reaches_the_team_view(repo_dir: Path) -> None:
    """`lint --ref` and `--worktree` (the CI check) read team notes only: a local
    near-copy of a team note, or two local copies, are not in their counts."""
    team_notes(repo_dir, {".omh/notes/upload.md": topic_note("upload", "Uploads retry", SAME)})
    root = _store(repo_dir)
    for key in ("upload-again", "upload-thrice"):
        (root / f"{key}.md").write_text(topic_note(key, "Uploads retry", SAME))
    mine = omh(repo_dir, "memory", "lint", "--json").json()
    assert mine["counts"]["NearDuplicate"] == 2
    for view in (["--ref", "HEAD"], ["--worktree"]):
        team = omh(repo_dir, "memory", "lint", *view, "--json").json()
        assert team["counts"]["NearDuplicate"] == 0, view
        assert all(f["layer"] == "team" for f in team["findings"])


def test_mcp_replaces_never_warns_about_the_note_it_replaces(repo_dir: Path) -> None:
    key = "surprise/the-upload-test-retries-three-times-before-it-fails"
    first, replaced = remember_over_mcp(repo_dir, "s1", AGAIN, dict(AGAIN, replaces=key))
    assert "Warning" not in first
    assert replaced.startswith(f"local/{key} already says exactly that") or \
        replaced.startswith(f"replaced local/{key}")
    assert "Warning" not in replaced


def test_two_remembers_at_once_both_land_and_lint_names_the_pair(repo_dir: Path) -> None:
    import subprocess
    import sys

    procs = [subprocess.Popen([sys.executable, "-m", "omh_git_memory", "memory", "remember",
                               *FIRST, "--if-exists", "suffix", "--json"], cwd=repo_dir,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    near = [f for f in omh(repo_dir, "memory", "lint", "--json").json()["findings"]
            if f["rule"] == "NearDuplicate"]
    assert len(near) == 1  # whichever wrote second may not have seen the first; lint does


def test_the_advice_for_a_topic_names_a_command_that_changes_a_topic(repo_dir: Path) -> None:
    """`update` changes a surprise's sections; a topic's sections only `edit` changes."""
    topic = ["memory", "remember", "--type", "topic", "--title",
             "The upload test retries three times before it fails"]
    assert omh(repo_dir, *topic, "--section", f"Why={RETRIES}").code == 0
    key = "the-upload-test-retries-three-times-before-it-fails"
    again = ["memory", "remember", "--type", "topic", "--title",
             "Upload test retries 3 times before failing", "--section", f"Why={RETRIES_AGAIN}"]
    run = omh(repo_dir, *again)
    assert run.code == 0, run.err
    assert f"`omh memory edit {key}` opens it in your editor" in run.out
    assert f"omh memory update {key}" not in run.out
    strict = omh(repo_dir, *again, "--strict", "--if-exists", "suffix")
    assert strict.code == 1 and "`omh memory edit upload-test-retries-3-times-before-failing` " \
        "opens it in your editor" in strict.err  # the twin just written, 100% alike


def test_the_count_of_further_repeats_does_not_send_the_user_to_lint(repo_dir: Path) -> None:
    # lint names each note's most alike repeat only, never the rest of a note's repeats
    _copies(repo_dir, 6)
    run = omh(repo_dir, "memory", "remember", *FIRST, "--json")
    assert run.code == 0, run.err
    key = run.json()["key"]
    lint = omh(repo_dir, "memory", "lint", "--json").json()
    assert len([f for f in lint["findings"]
                if f["rule"] == "NearDuplicate" and f["key"] == key]) == 1
    again = omh(repo_dir, "memory", "remember", *FIRST, "--if-exists", "skip")
    (more,) = [line for line in again.out.splitlines() if "more notes look like it" in line]
    assert more == "warning: and 3 more notes look like it", more
