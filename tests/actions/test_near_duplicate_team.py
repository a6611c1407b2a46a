"""The team notes a note to share is read against (near_duplicate.TeamNotes,
team_repeats): team files only, at most TEAM_CANDIDATES of them, a team note that
cannot be read passed over, and the repeats of notes promoted together most alike
first. A real repository with notes committed under .omh/notes, its searcher built
in process (actions.workspace), team_repeats asked directly with a reader that counts
what it reads."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path

from omh_git_memory.actions.near_duplicate import TEAM_CANDIDATES, Pair, team_repeats
from omh_git_memory.actions.workspace import open_workspace
from omh_git_memory.model.errors import OmhError
from omh_git_memory.model.note import Note
from omh_git_memory.recall.bm25 import Searcher
from omh_git_memory.recall.document import Doc
from omh_git_memory.recall.reread import note_of
from tests.helpers import commit_files, local_store, note_text

SAID = ("The upload fixture is twelve megabytes because the proxy refuses bodies over "
        "sixteen megabytes, and a larger one fails with status 413 before the test starts.")
# SAID with four words changed.
REWORDED = (SAID.replace("twelve", "eleven").replace("sixteen", "fifteen")
            .replace("status", "code").replace("proxy", "gateway"))

Reader = Callable[[Doc], Note | None]


def _team(repo: Path, notes: dict[str, str], files: dict[str, str] | None = None) -> None:
    """Commit team notes (key -> body) and other `files` (path -> text)."""
    commit_files(repo, {**{f".omh/notes/{key}.md": note_text(key, body=body + "\n")
                           for key, body in notes.items()}, **(files or {})})


def _local(repo: Path, notes: dict[str, str], recorded: str = "2026-11-01") -> None:
    store = local_store(repo)
    store.mkdir(parents=True, exist_ok=True)
    for key, body in notes.items():
        (store / f"{key}.md").write_text(note_text(key, body=body + "\n", recorded=recorded))


def _reader(repo: Path) -> tuple[Searcher, Reader, Counter[str]]:
    """The searcher of `repo`'s workspace, a reader of its notes (as cli/repeats gives
    team_repeats), and the count of reads by document key."""
    ws = open_workspace(repo)
    searcher, config = ws.searcher(), ws.config()
    reads: Counter[str] = Counter()

    def read(doc: Doc) -> Note | None:
        reads[doc.key] += 1
        return note_of(ws.repo, config, doc, searcher.local_notes)

    return searcher, read, reads


def _named(found: list[Pair]) -> list[str]:
    return [p.original.name for p in found]


def test_only_team_files_are_read_never_a_stub_or_a_note_that_does_not_parse(
        repo_dir: Path) -> None:
    # A document saying the same words is a stub in the team layer, and a note with
    # broken frontmatter is a team document with a problem: neither is a note to fold
    # into, so neither is read (a stub would be derived again for nothing).
    _team(repo_dir, {f"team-{i}": f"{SAID} Case {i}." for i in range(3)},
          {"docs/upload.md": f"# Upload\n\n{SAID}\n",
           ".omh/notes/broken.md": f"---\nkey: broken\n---\n\n{SAID}\n"})
    _local(repo_dir, {"mine": f"{SAID} Seen again."})
    searcher, read, reads = _reader(repo_dir)
    kinds = {d.key: d for d in searcher.docs if d is not None}
    assert kinds["docs/upload"].is_stub and kinds["broken"].problem  # what the store holds
    found = team_repeats(searcher, ["mine"], read)
    assert sorted(_named(found["mine"])) == ["team/team-0", "team/team-1", "team/team-2"]
    assert sorted(reads) == ["team-0", "team-1", "team-2"]


def test_a_note_is_read_against_the_32_team_notes_sharing_most_of_its_rarest_words(
        repo_dir: Path) -> None:
    # Forty team notes repeat it: 32 are read and named (a store of 2,000 copies must
    # not be read whole before each promote).
    _team(repo_dir, {f"team-{i:02}": f"{SAID} Case {i}." for i in range(40)})
    _local(repo_dir, {"mine": f"{SAID} Seen again."})
    searcher, read, reads = _reader(repo_dir)
    found = team_repeats(searcher, ["mine"], read)
    assert TEAM_CANDIDATES == 32
    assert len(found["mine"]) == 32
    assert len(reads) == 32 and set(reads.values()) == {1}


def test_a_team_note_that_cannot_be_read_is_passed_over(repo_dir: Path) -> None:
    # Advice only: a team note whose blob cannot be read (OmhError), or that reads as
    # no note, is left out, and the others are still named.
    _team(repo_dir, {"team-a": f"{SAID} Case a.", "team-b": f"{SAID} Case b.",
                     "team-c": f"{SAID} Case c."})
    _local(repo_dir, {"mine": f"{SAID} Seen again."})
    searcher, read, _reads = _reader(repo_dir)

    def failing(doc: Doc) -> Note | None:
        if doc.key == "team-a":
            raise OmhError("cannot read the blob")
        return None if doc.key == "team-b" else read(doc)

    assert _named(team_repeats(searcher, ["mine"], failing)["mine"]) == ["team/team-c"]


def test_notes_promoted_together_list_their_repeats_most_alike_first(repo_dir: Path) -> None:
    # `later` repeats a team note (SAID reworded: 59%) and, more closely, `earlier`
    # promoted with it (SAID: 88%): the list a promote names from is most alike first,
    # whichever kind each is.
    _team(repo_dir, {"team-note": REWORDED})
    _local(repo_dir, {"earlier": SAID})
    _local(repo_dir, {"later": f"{SAID} Seen again on the runner."}, recorded="2026-11-02")
    searcher, read, _reads = _reader(repo_dir)
    found = team_repeats(searcher, ["later", "earlier"], read, together=True)
    assert _named(found["later"]) == ["team/earlier", "team/team-note"]
    assert [round(p.similarity) for p in found["later"]] == [88, 59]
    # not together: the team note only
    assert _named(team_repeats(searcher, ["later", "earlier"], read)["later"]) == [
        "team/team-note"]
