"""What the recall index promises, stated where the mutation pass found it unchecked
(pass 3).

The index is what recall answers from: a document is found by the words it says
(a stub by its title, path, headings and text; the topic by its facts; never by
the sentences omh writes into every derived note), the postings answer the same
however many times they were patched, the eight most recent commits' indexes are
kept, and a cache file is read only when it is a regular file that passes its
check. Most tests here run in process: they are run once per mutant.

Found by mutation testing (docs/records/mutation-passes.md); was tests/test_mutants_index.py."""

from __future__ import annotations

import errno
import os
import stat
import time
from array import array
from pathlib import Path

import pytest

from omh_git_memory.actions.remember import TeamKeys
from omh_git_memory.actions.workspace import open_workspace
from omh_git_memory.model.errors import OmhError
from omh_git_memory.recall.build import snapshot_for
from omh_git_memory.recall.cache_files import cache_files, index_dir, read_checked, write_checked
from omh_git_memory.recall.floor import recall
from omh_git_memory.recall.postings import Postings
from omh_git_memory.recall.reread import note_of
from omh_git_memory.recall.snapshot import Snapshot
from omh_git_memory.stores.team import scan_team
from tests.helpers import commit_files, git, make_repo, note_text


def _repo(tmp_path: Path, files: dict[str, str]) -> Path:
    path = tmp_path / "repo"
    make_repo(path, files)
    return path


def _found(repo: Path, question: str) -> list[str]:
    """The keys recall returns for `question`, best first."""
    return [h.doc.key for h in recall(open_workspace(repo).searcher(), question).results]


def _commit(repo: Path, files: dict[str, str | None], message: str = "change") -> str:
    return commit_files(repo, files, message)


# --- what a document is found by ------------------------------------------------


def test_a_stub_is_found_by_its_path_its_headings_and_its_text(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {
        "README.md": "# Tiny\n",
        "docs/zanzibar.md": "# Guide\n\n## Quokka feeding\n\nLemurs sleep here.\n",
    })
    for question in ("zanzibar", "quokka", "lemurs", "guide"):
        assert _found(repo, question) == ["docs/zanzibar"], question


def test_a_stub_is_not_found_by_the_sentence_omh_writes_for_a_document_without_headings(
        tmp_path: Path) -> None:
    # A document with no `##` heading gets one Answer, "the whole of `<path>`":
    # omh's words, not the document's.
    repo = _repo(tmp_path, {"README.md": "# Tiny\n", "docs/zebra.md": "# Zebra\n\nStripes.\n"})
    assert _found(repo, "stripes") == ["docs/zebra"]
    assert _found(repo, "whole") == []


def test_a_heading_counts_above_the_same_word_in_a_paragraph(tmp_path: Path) -> None:
    # A stub's headings are its Answers: a document with the word as a heading
    # ranks above one that only mentions it (both otherwise alike).
    repo = _repo(tmp_path, {
        "README.md": "# Tiny\n",
        "docs/aaa.md": "# Notes\n\n## Other\n\nThe okapi grazes, then runs home.\n",
        "docs/bbb.md": "# Notes\n\n## Okapi\n\nThe animal grazes, then runs home.\n",
    })
    assert _found(repo, "okapi") == ["docs/bbb", "docs/aaa"]


def test_the_topic_is_found_by_its_facts_not_by_omhs_sentence(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {"README.md": "# Tiny\n", "Makefile": "all:\n\ttrue\n"})
    assert "repo" in _found(repo, "built with make")
    # "What omh derived from this repository's files, each with the file it came from."
    assert _found(repo, "derived came") == []


def test_a_team_note_is_found_by_its_text_and_its_key_not_its_links(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {
        "README.md": "# Tiny\n",
        ".omh/notes/walrus/tusks.md": note_text(
            "walrus/tusks", body="## Why\n\nIvory grows.\n\n## Related\n\n- [[narwhal]]\n"),
    })
    for question in ("ivory", "walrus", "tusks"):
        assert _found(repo, question) == ["walrus/tusks"], question
    assert _found(repo, "narwhal") == []


def test_only_a_written_team_note_counts_as_a_team_file(tmp_path: Path) -> None:
    # What `remember` checks a new key against: a written note by its key and its
    # path, a stub and the topic as derived (each saying where it comes from).
    repo = _repo(tmp_path, {
        "README.md": "# Tiny\n",
        "docs/guide.md": "# Guide\n",
        ".omh/notes/a/b.md": note_text("a/b"),
    })
    ws = open_workspace(repo)
    held = TeamKeys.of(ws.snapshot().docs)
    assert held.written == {"a/b": ".omh/notes/a/b.md"}
    assert held.derived.keys() == {"docs/guide", "readme", "repo"}
    assert held.derived["docs/guide"] == "docs/guide.md"


# --- the postings -------------------------------------------------------------------


def _pair(slots: list[int], counts: list[int]) -> tuple[bytes, bytes]:
    return array("I", slots).tobytes(), array("I", counts).tobytes()


def test_postings_built_or_patched_give_back_each_words_documents() -> None:
    built = Postings.build({"a": _pair([0, 2], [1, 5]), "b": _pair([1], [3]),
                            "c": _pair([0, 1, 2], [7, 8, 9])})
    got = {t: tuple(map(list, built.get(t) or ())) for t in ("a", "b", "c")}
    assert got == {"a": ([0, 2], [1, 5]), "b": ([1], [3]), "c": ([0, 1, 2], [7, 8, 9])}
    assert built.get("d") is None and "a" in built and "d" not in built
    patched = built.patched({"a": None, "b": _pair([1, 4], [3, 2]), "d": _pair([3], [1])})
    assert "a" not in patched and patched.get("a") is None
    assert tuple(map(list, patched.get("b") or ())) == ([1, 4], [3, 2])
    assert tuple(map(list, patched.get("c") or ())) == ([0, 1, 2], [7, 8, 9])
    assert tuple(map(list, patched.get("d") or ())) == ([3], [1])


def _live(postings: Postings) -> int:
    """The size of the same postings built afresh: live data, no dead space."""
    return len(Postings.build(postings.pairs()).blob)


def test_patched_postings_never_hold_more_dead_space_than_live_data() -> None:
    for many in (1, 10):
        postings = Postings.build({"keep": _pair(list(range(many)), [1] * many)})
        for i in range(30):  # one word replaced over and over
            postings = postings.patched({"word": _pair([50], [i])})
            assert len(postings.blob) <= 2 * _live(postings), (many, i)
            assert tuple(map(list, postings.get("word") or ())) == ([50], [i])
            assert tuple(map(list, postings.get("keep") or ())) == (
                list(range(many)), [1] * many)
    # One patch that leaves most of the blob dead: rewritten at once.
    big = Postings.build({"big": _pair(list(range(100)), [1] * 100)})
    small = big.patched({"big": _pair([7], [2])})
    assert len(small.blob) <= 2 * _live(small)
    assert tuple(map(list, small.get("big") or ())) == ([7], [2])
    # Every word removed: nothing left, nothing kept.
    empty = big.patched({"big": None})
    assert "big" not in empty and empty.pairs() == {} and empty.blob == b""


def _holding(snap: Snapshot, word: str) -> list[tuple[str, int]]:
    """The documents a snapshot's postings say hold `word`, by key, with counts."""
    docs = dict(snap.live())
    found = snap.postings.get(word)
    return sorted((docs[s].key, c) for s, c in zip(*found, strict=True)) if found else []


def test_an_index_patched_many_times_answers_as_a_rebuild_does(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {"README.md": "# Tiny\n",
                            ".omh/notes/fixed.md": note_text("fixed", body="alpha beta\n")})
    ws = open_workspace(repo)
    ws.snapshot()
    built = []
    for i in range(8):  # each commit replaces one note: each index is patched from the last
        sha = _commit(repo, {".omh/notes/moving.md": note_text(
            "moving", body=f"alpha gamma{i} delta{i % 3}\n")})
        built.append((i, sha, ws.snapshot()))
    for i, sha, patched in built:
        rebuilt = ws.snapshot(sha, rebuild=True)
        for word in ("alpha", "beta", f"gamma{i}", f"gamma{i - 1}", "delta0", "delta1", "tiny"):
            assert _holding(patched, word) == _holding(rebuilt, word), (i, word)


# --- the cache on disk --------------------------------------------------------------


def test_the_eight_most_recent_commits_indexes_are_kept(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {"README.md": "# Tiny\n"})
    ws = open_workspace(repo)
    folder = index_dir(ws.repo)
    commits = []
    for i in range(11):
        commits.append(_commit(repo, {f"f{i}.txt": "x\n"}, f"commit {i}"))
        snapshot_for(ws.repo, ws.config(), commits[-1])
        when = 1_700_000_000 + i * 60  # apart, whatever the file system's clock grain
        for suffix in (".idx", ".post"):
            os.utime(folder / f"{commits[-1]}{suffix}", (when, when))
    assert sorted(p.stem for p in folder.glob("*.idx")) == sorted(commits[-8:])
    assert sorted(p.stem for p in folder.glob("*.post")) == sorted(commits[-8:])


def _notes(n: int) -> dict[str, str]:
    return {f".omh/notes/n{i}.md": note_text(f"n{i}", body=f"word{i} shared\n") for i in range(n)}


def test_a_full_rebuild_reads_every_document_again(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {"README.md": "# Tiny\n", **_notes(3)})
    ws = open_workspace(repo)
    first = ws.snapshot()
    assert first.analysed == 5  # three notes, the README's stub, the topic
    again = snapshot_for(ws.repo, ws.config())  # read back: nothing analysed or patched
    assert again.docs == first.docs and (again.analysed, again.reused) == (0, 0)
    full = ws.snapshot(rebuild=True)
    assert (full.analysed, full.reused) == (5, 0) and full.docs == first.docs


def test_an_index_left_mostly_empty_is_built_afresh_and_one_with_a_few_holes_patched(
        tmp_path: Path) -> None:
    repo = _repo(tmp_path, {"README.md": "# Tiny\n", **_notes(10)})
    ws = open_workspace(repo)
    assert len(ws.snapshot().docs) == 12  # ten notes, the README's stub, the topic
    # Five of twelve documents removed: the holes are kept, nothing is read again.
    _commit(repo, {f".omh/notes/n{i}.md": None for i in range(5)})
    patched = ws.snapshot()
    assert (patched.analysed, patched.reused) == (0, 7)
    assert sum(d is None for d in patched.docs) == 5
    # Five more: most of the index is holes, so it is built afresh, without them.
    _commit(repo, {f".omh/notes/n{i}.md": None for i in range(5, 9)})
    fresh = ws.snapshot()
    assert None not in fresh.docs and len(fresh.docs) == 3 and fresh.analysed == 3
    assert [h.doc.key for h in recall(ws.searcher(), "word9").results] == ["n9"]


def test_the_first_build_reports_its_progress_and_a_patch_only_what_it_reads(
        tmp_path: Path) -> None:
    repo = _repo(tmp_path, {"README.md": "# Tiny\n", **_notes(3)})
    ws = open_workspace(repo)
    seen: list[tuple[int, int]] = []
    ws.snapshot(progress=lambda done, total: seen.append((done, total)))
    assert seen == [(1, 4), (2, 4), (3, 4), (4, 4)]  # three notes and the README
    _commit(repo, {".omh/notes/n1.md": note_text("n1", body="changed\n")})
    seen.clear()
    ws.snapshot(progress=lambda done, total: seen.append((done, total)))
    assert seen == [(1, 1)]


def _drop_blob(repo: Path, path: str) -> None:
    """Make the clone lack one file's contents (as a damaged or partial clone does)."""
    blob = git(repo, "rev-parse", f"HEAD:{path}").strip()
    (repo / ".git" / "objects" / blob[:2] / blob[2:]).unlink()


def test_missing_contents_are_refused_all_at_once_and_only_when_they_are_needed(
        tmp_path: Path) -> None:
    files = {"README.md": "# Tiny\n", "docs/guide.md": "# Guide\n", **_notes(2)}
    repo = _repo(tmp_path, files)
    other = _repo(tmp_path / "second", files)
    _drop_blob(other, ".omh/notes/n0.md")
    _drop_blob(other, "docs/guide.md")
    with pytest.raises(OmhError, match=r"2 files \(\.omh/notes/n0\.md, …\)"):
        open_workspace(other).snapshot()
    # An index built while everything was there: a new commit reuses the note's
    # analysis, so its contents are not needed again.
    ws = open_workspace(repo)
    ws.snapshot()
    _commit(repo, {"assets/data.txt": "data\n"})
    _drop_blob(repo, ".omh/notes/n0.md")
    built = ws.snapshot()
    assert built.analysed == 0 and "n0" in {d.key for _, d in built.live()}


def test_the_topic_follows_a_changed_readme_and_a_changed_repository_name(
        tmp_path: Path) -> None:
    repo = _repo(tmp_path, {"README.md": "# Zebra tool\n", "src/a.py": "x = 1\n"})
    ws = open_workspace(repo)
    assert "repo" in _found(repo, "zebra")
    _commit(repo, {"README.md": "# Quokka tool\n"})
    assert "repo" in _found(repo, "quokka") and "repo" not in _found(repo, "zebra")
    _commit(repo, {".omh/memory.toml": '[repo]\nname = "okapi"\n'})
    topics = [d for _, d in ws.snapshot().live() if d.is_topic]
    assert [d.key for d in topics] == ["okapi"]
    assert [d.key for _, d in ws.snapshot(rebuild=True).live() if d.is_topic] == ["okapi"]


def test_a_repository_without_a_readme_still_has_a_topic(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {"Makefile": "all:\n\ttrue\n"})
    assert _found(repo, "make") == ["repo"]


def test_an_unreadable_team_note_is_indexed_with_its_problem_and_never_found(
        tmp_path: Path) -> None:
    repo = _repo(tmp_path, {"README.md": "# Tiny\n",
                            ".omh/notes/broken.md": "no frontmatter, okapi\n",
                            ".omh/notes/good.md": note_text("good", body="okapi\n")})
    ws = open_workspace(repo)
    (broken,) = [d for _, d in ws.snapshot().live() if d.problem]
    stored = {s.location.split(":", 1)[1]: s for s in scan_team(ws.repo)}
    assert broken.problem == stored[".omh/notes/broken.md"].problem
    assert broken.problem and broken.problem != "unreadable"
    assert _found(repo, "okapi") == ["good"]


def test_recall_answers_when_the_index_cannot_be_cached(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {"README.md": "# Tiny\n", ".omh/notes/n.md": note_text(
        "n", body="okapi\n")})
    folder = index_dir(open_workspace(repo).repo)
    folder.parent.mkdir(parents=True)
    folder.write_text("a file where the cache folder goes\n")
    assert _found(repo, "okapi") == ["n"]
    assert _found(repo, "okapi") == ["n"]  # built again: nothing was cached
    assert folder.read_text() == "a file where the cache folder goes\n"


def test_a_cache_file_is_read_only_when_it_is_a_regular_file_that_passes_its_check(
        tmp_path: Path) -> None:
    good = tmp_path / "good.idx"
    write_checked(good, b"payload")
    assert read_checked(good) == b"payload"
    assert read_checked(tmp_path / "missing.idx") is None
    # A symlink to a good file: not followed, removed, its target left alone.
    link = tmp_path / "link.idx"
    link.symlink_to(good)
    assert read_checked(link) is None
    assert not link.is_symlink() and read_checked(good) == b"payload"
    # A FIFO: never opened for a blocking read (nobody writes to it), removed.
    fifo = tmp_path / "fifo.idx"
    os.mkfifo(fifo)
    assert read_checked(fifo) is None and not fifo.exists()
    # An empty directory is removed; one holding something is left alone.
    (tmp_path / "empty.idx").mkdir()
    assert read_checked(tmp_path / "empty.idx") is None
    assert not (tmp_path / "empty.idx").exists()
    (tmp_path / "full.idx").mkdir()
    (tmp_path / "full.idx" / "x").write_text("x")
    assert read_checked(tmp_path / "full.idx") is None
    assert (tmp_path / "full.idx" / "x").read_text() == "x"


@pytest.mark.parametrize("damage", ["short", "magic", "digest", "payload", "empty"])
def test_a_cache_file_that_fails_its_check_is_discarded(tmp_path: Path, damage: str) -> None:
    path = tmp_path / "c.idx"
    write_checked(path, b"some payload")
    data = bytearray(path.read_bytes())
    if damage == "short":
        data = data[:40]  # inside the digest
    elif damage == "magic":
        data[0] ^= 1
    elif damage == "digest":
        data[20] ^= 1
    elif damage == "payload":
        data[-1] ^= 1
    else:
        data = bytearray()
    path.write_bytes(bytes(data))
    assert read_checked(path) is None and not path.exists()


def test_a_cache_file_is_written_whole_never_through_a_symlink(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_bytes(b"not yours")
    path = tmp_path / "c.idx"
    path.symlink_to(elsewhere)
    write_checked(path, b"new")
    assert elsewhere.read_bytes() == b"not yours"
    assert not path.is_symlink() and read_checked(path) == b"new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.idx", "elsewhere"]  # no temp


def test_cache_files_are_regular_files_newest_first(tmp_path: Path) -> None:
    for i, name in enumerate(["b.idx", "a.idx", "c.idx"]):
        (tmp_path / name).write_bytes(b"x")
        os.utime(tmp_path / name, (1_700_000_000 + i, 1_700_000_000 + i))
    (tmp_path / "d.idx").mkdir()
    (tmp_path / "e.idx").symlink_to(tmp_path / "b.idx")
    (tmp_path / "f.post").write_bytes(b"x")
    assert [p.name for p in cache_files(tmp_path, "*.idx")] == ["c.idx", "a.idx", "b.idx"]
    assert cache_files(tmp_path / "missing", "*.idx") == []


def test_a_crashed_writers_old_temporary_file_is_removed_and_a_fresh_one_kept(
        tmp_path: Path) -> None:
    repo = _repo(tmp_path, {"README.md": "# Tiny\n"})
    ws = open_workspace(repo)
    folder = index_dir(ws.repo)
    folder.mkdir(parents=True)
    old, fresh = folder / ".tmp-1-aaaa-x.idx", folder / ".tmp-2-bbbb-y.idx"
    old.write_bytes(b"half")
    fresh.write_bytes(b"half")
    an_hour_ago = time.time() - 3600
    os.utime(old, (an_hour_ago, an_hour_ago))
    ws.snapshot()  # a save prunes
    assert not old.exists() and fresh.exists()


def test_a_cache_file_has_an_ordinary_files_mode(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        write_checked(tmp_path / "c.idx", b"x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "c.idx").stat().st_mode) == 0o644


def test_a_cache_write_that_fails_leaves_no_temporary_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def failing(src: object, dst: object, **_: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "replace", failing)
    with pytest.raises(OSError) as failed:
        write_checked(tmp_path / "c.idx", b"x")
    assert failed.value.errno == errno.ENOSPC  # the disk's failure, no other
    assert list(tmp_path.iterdir()) == []


def test_a_local_note_is_found_at_once_and_an_unreadable_one_skipped(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {"README.md": "# Tiny\n"})
    ws = open_workspace(repo)
    ws.local.root.mkdir(parents=True, exist_ok=True)
    (ws.local.root / "mine.md").write_text(note_text("mine", body="okapi\n"))
    (ws.local.root / "broken.md").write_text("okapi, but no frontmatter\n")
    answer = recall(ws.searcher(), "okapi")
    assert [(h.doc.layer, h.doc.key) for h in answer.results] == [("local", "mine")]


def test_an_index_file_is_served_only_for_its_own_commit_with_its_own_postings(
        tmp_path: Path) -> None:
    repo = _repo(tmp_path, {"README.md": "# Tiny\n", ".omh/notes/a.md": note_text(
        "a", body="okapi\n")})
    ws = open_workspace(repo)
    first = ws.snapshot()
    folder = index_dir(ws.repo)
    second = _commit(repo, {".omh/notes/b.md": note_text("b", body="zebra quokka lemur\n")})
    want = ws.snapshot()
    # The first commit's files under the second's name: not the second's index.
    for suffix in (".idx", ".post"):
        theirs = folder / f"{first.commit}{suffix}"
        (folder / f"{second}{suffix}").write_bytes(theirs.read_bytes())
    assert ws.snapshot().docs == want.docs
    # The second's own index, beside postings another commit's write left.
    (folder / f"{second}.post").write_bytes((folder / f"{first.commit}.post").read_bytes())
    again = ws.snapshot()
    assert again.docs == want.docs
    assert _holding(again, "zebra") == [("b", 1)] and _holding(again, "okapi") == [("a", 1)]


def test_each_kind_of_document_reads_back_as_its_note(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {"README.md": "# Tiny\n\n## Install\n",
                            ".omh/notes/a.md": note_text("a", body="okapi\n")})
    ws = open_workspace(repo)
    ws.local.root.mkdir(parents=True, exist_ok=True)
    (ws.local.root / "mine.md").write_text(note_text("mine", body="zebra\n"))
    searcher = ws.searcher()
    read = {(d.layer, d.key): note_of(ws.repo, ws.config(), d, searcher.local_notes)
            for d in searcher.docs if d is not None}
    assert {k: (n.key.value, n.type) if n else None for k, n in read.items()} == {
        ("team", "a"): ("a", "topic"), ("team", "readme"): ("readme", "stub"),
        ("team", "repo"): ("repo", "topic"), ("local", "mine"): ("mine", "topic")}
    assert read[("team", "readme")].section("Answers").items == ("Install",)  # type: ignore[union-attr]


def test_a_committed_settings_file_over_a_mebibyte_is_not_read_for_the_name(
        tmp_path: Path) -> None:
    head = '[repo]\nname = "okapi"\n'
    fits = head + "#" * ((1 << 20) - len(head) - 1) + "\n"  # exactly 1 MiB
    repo = _repo(tmp_path, {"README.md": "# Tiny\n", ".omh/memory.toml": fits})
    ws = open_workspace(repo)
    assert [d.key for _, d in ws.snapshot().live() if d.is_topic] == ["okapi"]
    _commit(repo, {".omh/memory.toml": fits + "#\n"})  # two bytes over
    assert [d.key for _, d in ws.snapshot().live() if d.is_topic] == ["repo"]
