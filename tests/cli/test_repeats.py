"""What the command line says of the notes a note repeats (omh_git_memory/cli/repeats.py):
remember's warnings and JSON, promote's and review's advice. The real CLI in process
(tests.helpers.omh)."""

from __future__ import annotations

from pathlib import Path

import omh_git_memory.cli.repeats  # noqa: F401  (see below)
from tests.helpers import omh
from tests.helpers.near_duplicate import AGAIN, FIRST, NEW, OLD, promote_repeats

# FIRST again under another first sentence (so another key): 82% like FIRST.
THIRD = [a.replace("The upload test retries three times before it fails.",
                   "Three retries before the upload test fails.") for a in FIRST]

# cli/repeats.py is imported above, not first by some command a test runs, so
# tools/mutation.py counts its definitions as run by every test it maps.


def test_a_note_kept_names_each_note_it_repeats(repo_dir: Path) -> None:
    for observation in (FIRST, AGAIN, THIRD):
        assert omh(repo_dir, "memory", "remember", *observation).code == 0
    run = omh(repo_dir, "memory", "remember", *FIRST, "--if-exists", "skip")
    assert run.code == 0, run.err
    warnings = [line for line in run.out.splitlines() if line.startswith("warning:")]
    # nothing was written, so each repeat asks to update that note, none to remove this one
    assert len(warnings) == 2, run.out
    assert all("update that note instead?" in w and "omh memory rm" not in w for w in warnings)
    assert {w.split()[5] for w in warnings} == {
        NEW, "surprise/three-retries-before-the-upload-test-fails"}


def test_remember_json_gives_the_similarity_to_one_decimal(repo_dir: Path) -> None:
    assert omh(repo_dir, "memory", "remember", *FIRST).code == 0
    run = omh(repo_dir, "memory", "remember", *AGAIN, "--json")
    assert run.code == 0, run.err
    (repeat,) = run.json()["near_duplicates"]
    assert repeat["key"] == OLD
    # the text says "57% alike"; 200 x shared / (pairs of one + the other) is 56.66...
    assert repeat["similarity"] == 56.7


def test_a_promote_naming_exactly_three_repeats_counts_no_more(repo_dir: Path) -> None:
    # lint's owner of a same-day pair is the key that sorts last: it repeats the three others
    keys, last, said = promote_repeats(repo_dir, ("one", "two", "three", "four"))
    assert len(said) == 3 and not [line for line in said if "also reads like" in line]
    # both notes are team notes now: the fold names the layer, as the rm does
    for other in set(keys) - {last}:
        assert sum(f"(`omh memory update {other} --layer team` changes the sections you give)"
                   in line for line in said) == 1, (other, said)
    assert all(line.endswith(f"then `omh memory rm {last} --layer team`") for line in said)


def test_review_with_settings_it_cannot_read_lists_the_notes_without_advice(
        repo_dir: Path) -> None:
    # Advice only: an index that cannot be opened (here, over a broken memory.toml)
    # leaves review listing the notes, silent about repeats.
    assert omh(repo_dir, "memory", "remember", *FIRST).code == 0
    assert omh(repo_dir, "memory", "promote", OLD).code == 0
    assert omh(repo_dir, "memory", "remember", *AGAIN).code == 0
    assert "reads like" in omh(repo_dir, "memory", "review").out
    (repo_dir / ".omh" / "memory.toml").write_text("[recall\n")
    run = omh(repo_dir, "memory", "review")
    assert run.code == 0, run.err
    assert NEW in run.out and "reads like" not in run.out
    listed = omh(repo_dir, "memory", "review", "--json")
    assert listed.code == 0, listed.err
    assert [(n["key"], n["near_duplicates"]) for n in listed.json()["notes"]] == [(NEW, [])]
