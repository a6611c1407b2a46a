"""Promote and review say when a note to share repeats a team note (NearDuplicate's
advice at the moment a person decides): the real CLI (tests.helpers.omh)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from omh_git_memory.actions.near_duplicate import repeated, team_repeats
from omh_git_memory.actions.workspace import open_workspace
from omh_git_memory.model.note import Note
from omh_git_memory.recall.document import Doc
from omh_git_memory.recall.reread import note_of
from tests.helpers import git, local_store, note_text, omh
from tests.helpers.near_duplicate import (
    AGAIN,
    FIRST,
    NEW,
    OLD,
    as_the_shell_reads_it,
    do_what_it_says,
    near_duplicates,
    promote_repeats,
)

UNRELATED = ["--expected", "the cache is cleared on logout", "--observed",
             "Logging out keeps the thumbnail cache on disk until the next start.",
             "--evidence", "src/cache.c: clear_cache() runs from main() only",
             "--answers", "why is the disk still full after logout?"]


def _team_keys(repo: Path) -> list[str]:
    return sorted(n["key"] for n in omh(repo, "memory", "--json").json()["notes"]
                  if n["layer"] == "team" and n["key"].startswith("surprise/"))


def _one_in_team_one_local(repo: Path) -> None:
    assert omh(repo, "memory", "remember", *FIRST).code == 0
    assert omh(repo, "memory", "promote", OLD).code == 0
    assert omh(repo, "memory", "remember", *AGAIN).code == 0


def test_promoting_a_repeat_of_a_team_note_says_how_to_keep_one(repo_dir: Path) -> None:
    _one_in_team_one_local(repo_dir)
    run = omh(repo_dir, "memory", "promote", NEW)
    assert run.code == 0, run.err
    (warning,) = [line for line in run.out.splitlines() if line.startswith("warning:")]
    assert warning.startswith(f"warning: team/{NEW} now reads like team/{OLD} (")
    assert do_what_it_says(repo_dir, warning) == ["update", "rm"]
    assert near_duplicates(repo_dir) == []
    assert _team_keys(repo_dir) == [OLD]
    shown = omh(repo_dir, "memory", "show", OLD, "--layer", "team")
    assert "pytest --durations=3" in shown.out  # what the copy added was folded in


def test_promote_json_names_the_repeats(repo_dir: Path) -> None:
    _one_in_team_one_local(repo_dir)
    assert omh(repo_dir, "memory", "remember", *UNRELATED).code == 0
    unrelated = omh(repo_dir, "memory", "--json").json()["notes"]
    (other,) = [n["key"] for n in unrelated if n["layer"] == "local" and n["key"] != NEW]
    done = omh(repo_dir, "memory", "promote", "--json", NEW, other).json()
    (repeat,) = done["near_duplicates"][NEW]
    assert (repeat["key"], repeat["layer"]) == (OLD, "team")
    assert 50 <= repeat["similarity"] < 100
    assert repeat["path"] == f".omh/notes/{OLD}.md"
    assert other not in done["near_duplicates"]


def test_a_promote_that_repeats_nothing_says_nothing(repo_dir: Path) -> None:
    assert omh(repo_dir, "memory", "remember", *FIRST).code == 0
    assert omh(repo_dir, "memory", "remember", *UNRELATED).code == 0
    keys = [n["key"] for n in omh(repo_dir, "memory", "--json").json()["notes"]
            if n["layer"] == "local"]
    run = omh(repo_dir, "memory", "promote", OLD)
    assert run.code == 0 and "warning" not in run.out + run.err
    assert omh(repo_dir, "memory", "promote", "--json", *[k for k in keys if k != OLD]
               ).json()["near_duplicates"] == {}


def test_two_copies_promoted_together_are_named(repo_dir: Path) -> None:
    assert omh(repo_dir, "memory", "remember", *FIRST).code == 0
    assert omh(repo_dir, "memory", "remember", *AGAIN).code == 0
    run = omh(repo_dir, "memory", "promote", OLD, NEW)
    assert run.code == 0, run.err
    (warning,) = [line for line in run.out.splitlines() if line.startswith("warning:")]
    # lint's owner of a same-day pair: the key that sorts last (OLD > NEW)
    assert warning.startswith(f"warning: team/{OLD} now reads like team/{NEW} (")
    assert do_what_it_says(repo_dir, warning) == ["update", "rm"]
    assert near_duplicates(repo_dir) == []
    assert _team_keys(repo_dir) == [NEW]


def test_review_names_the_team_note_a_local_one_repeats(repo_dir: Path) -> None:
    _one_in_team_one_local(repo_dir)
    assert omh(repo_dir, "memory", "remember", *UNRELATED).code == 0
    listed = omh(repo_dir, "memory", "review")
    (line,) = [ln.strip() for ln in listed.out.splitlines() if "reads like" in ln]
    assert line.startswith(f"reads like team/{OLD} (")
    assert f"`omh memory update {OLD} --layer team`" in line
    notes = {n["key"]: n for n in omh(repo_dir, "memory", "review", "--json").json()["notes"]}
    assert [r["key"] for r in notes[NEW]["near_duplicates"]] == [OLD]
    assert [n["near_duplicates"] for k, n in notes.items() if k != NEW] == [[]]


def test_review_does_not_name_local_notes_or_the_note_itself(repo_dir: Path) -> None:
    # Two local near-copies: neither is a team note, so there is nothing to fold into
    # before promoting; lint names the pair.
    assert omh(repo_dir, "memory", "remember", *FIRST).code == 0
    assert omh(repo_dir, "memory", "remember", *AGAIN).code == 0
    assert "reads like" not in omh(repo_dir, "memory", "review").out
    assert all(n["near_duplicates"] == [] for n in
               omh(repo_dir, "memory", "review", "--json").json()["notes"])


def test_finishing_an_interrupted_promote_names_no_copy_of_itself(repo_dir: Path) -> None:
    # Killed after the commit, before the local copy went: the team note at that key is
    # the same note, not a repeat, and `rm --layer team` would drop the only copy.
    assert omh(repo_dir, "memory", "remember", *FIRST).code == 0
    killed = omh(repo_dir, "memory", "promote", OLD, env={"OMH_FAULT": "promote:remove"})
    assert killed.code != 0
    listed = omh(repo_dir, "memory", "review")
    assert "reads like" not in listed.out
    assert [n["near_duplicates"] for n in
            omh(repo_dir, "memory", "review", "--json").json()["notes"]] == [[]]
    run = omh(repo_dir, "memory", "promote", OLD)
    assert run.code == 0, run.err
    assert "finished an interrupted promote" in run.out
    assert "warning" not in run.out + run.err
    assert _team_keys(repo_dir) == [OLD]


def test_finishing_an_interrupted_promote_json_names_no_repeat(repo_dir: Path) -> None:
    assert omh(repo_dir, "memory", "remember", *FIRST).code == 0
    assert omh(repo_dir, "memory", "promote", OLD, env={"OMH_FAULT": "promote:remove"}).code
    done = omh(repo_dir, "memory", "promote", "--json", OLD).json()
    assert done["finished"] == [OLD] and done["near_duplicates"] == {}


def test_a_promote_of_many_reads_each_team_note_once(repo_dir: Path) -> None:
    # Forty notes to share, each near three team notes: read for each note, the team
    # notes were parsed forty times over (a review of 500 notes took 11 s of CPU).
    body = ("The upload fixture is 12 MB because the proxy refuses bodies over 16 MB; "
            "a larger one fails with 413 before the test starts. Case {}.\n")
    for i in range(3):
        path = repo_dir / f".omh/notes/team-{i}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(note_text(f"team-{i}", body=body.format(i)))
    git(repo_dir, "add", "-A")
    git(repo_dir, "commit", "-qm", "team notes")
    store = local_store(repo_dir)
    store.mkdir(parents=True, exist_ok=True)
    keys = [f"local-{i}" for i in range(40)]
    for key in keys:
        (store / f"{key}.md").write_text(note_text(key, body=body.format(key)))
    ws = open_workspace(repo_dir)
    searcher, config = ws.searcher(), ws.config()
    reads: Counter[str] = Counter()

    def read(doc: Doc) -> Note | None:
        reads[doc.content.path] += 1
        return note_of(ws.repo, config, doc, searcher.local_notes)

    found = team_repeats(searcher, keys, read)
    assert sorted(found) == sorted(keys)
    assert reads and max(reads.values()) == 1, reads
    for _doc, note in searcher.local_notes:  # the same answer as one note at a time
        assert found[note.key.value] == repeated(note, searcher, read, local=False)


def test_a_key_the_shell_would_expand_is_quoted_in_every_command(repo_dir: Path) -> None:
    # A team note's key may hold `$(...)`: pasted as it stands, the command runs it.
    key = "surprise/x$(pwd)"
    first = dict(zip(FIRST[::2], FIRST[1::2], strict=True))
    text = note_text(key, "surprise", recorded="2026-10-11").replace(f"# {key}\n", "") + (
        f"# {first['--observed']}\n\n## Expected\n{first['--expected']}\n\n"
        f"## Observed\n{first['--observed']}\n\n## Evidence\n{first['--evidence']}\n\n"
        f"## Answers\n\n- {first['--answers']}\n")
    path = repo_dir / f".omh/notes/{key}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    git(repo_dir, "add", "-A")
    git(repo_dir, "commit", "-qm", "a team note")
    written = omh(repo_dir, "memory", "remember", *AGAIN)
    assert written.code == 0, written.err
    (finding,) = near_duplicates(repo_dir)
    review = omh(repo_dir, "memory", "review").out
    promoted = omh(repo_dir, "memory", "promote", NEW)
    assert promoted.code == 0, promoted.err
    for text in (written.out, finding["message"], review, promoted.out):
        argvs = as_the_shell_reads_it(repo_dir, text)
        assert any(argv[:2] == ["omh", "memory"] and key in argv for argv in argvs), (text, argvs)
        assert all(str(repo_dir) not in " ".join(argv) for argv in argvs), (text, argvs)


def test_a_promote_names_three_repeats_of_a_note_and_counts_the_rest(repo_dir: Path) -> None:
    # lint's owner of a same-day pair is the key that sorts last: it repeats the four others
    _keys, last, said = promote_repeats(repo_dir, ("one", "two", "three", "four", "five"))
    assert [line.startswith(f"warning: team/{last} now reads like ") for line in said] == [
        True, True, True, False]
    assert said[3] == (f"warning: team/{last} also reads like 1 more team note, "
                       "less alike than these")
    # and sends nobody to lint for the rest: lint names a note's most alike repeat only
    lint = omh(repo_dir, "memory", "lint", "--json")
    named = {f["message"].split(" ", 3)[2] for f in lint.json()["findings"]
             if f["rule"] == "NearDuplicate" and f["key"] == last}
    assert len(named) == 1
