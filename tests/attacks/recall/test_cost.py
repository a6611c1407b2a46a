"""Items 16 and 19 of the second hostile review (docs/records/review-issue-23.md): the
recall index keyed by everything that shapes it, and the cost of a large note bounded."""

from __future__ import annotations

import marshal
from pathlib import Path

import pytest

from omh_git_memory.actions.workspace import Workspace, open_workspace
from omh_git_memory.recall import shape as shape_module
from omh_git_memory.recall.bm25 import Searcher
from omh_git_memory.recall.build import snapshot_for
from omh_git_memory.recall.cache_files import index_dir, read_checked, write_checked
from omh_git_memory.recall.floor import recall
from omh_git_memory.recall.local_notes import NOTES_CACHE
from omh_git_memory.recall.shape import shape
from omh_git_memory.recall.snapshot import VERSION
from tests.helpers import commit_files, git

# --- item 16: the settings that shape the per-commit index ---------------------

DOCS = {
    "README.md": "# Test repo\n",
    "docs/guide.md": "# Deploying the widget\n\n## Rollback\nUse the lever.\n",
    "drafts/idea.md": "# A draft about the widget\n",
}


def _config(stub: str = "{{path}}", exclude: tuple[str, ...] = ()) -> str:
    globs = ", ".join(f'"{g}"' for g in exclude)
    return f'[keys]\nstub = "{stub}"\n\n[stubs]\nexclude = [{globs}]\n'


def _stub_keys(repo: Path) -> list[str]:
    """The stubs recall ranks now, as the searcher sees them (in process)."""
    docs = open_workspace(repo).searcher().docs
    return sorted(d.key for d in docs if d is not None and d.is_stub)


def _recalled(repo: Path, question: str) -> list[str]:
    return [h.doc.key for h in recall(open_workspace(repo).searcher(), question).results]


@pytest.fixture
def documented(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    commit_files(repo, {**DOCS, ".omh/memory.toml": _config()}, "docs")
    assert _stub_keys(repo) == ["docs/guide", "drafts/idea", "readme"]  # index built
    return repo


def test_wrong_committed_stub_template_is_seen_without_reindex(documented: Path) -> None:
    """Item 16: a committed change of `[keys] stub` re-keyed no stub: the next
    commit's index was patched from the old one, which kept every unchanged
    document's stub under its old key, so recall named keys that no longer derive
    (and `show` of the new key found nothing) until `reindex --full`."""
    commit_files(documented, {".omh/memory.toml": _config(stub="doc/{{path}}")}, "re-key")
    assert _stub_keys(documented) == ["doc/docs/guide", "doc/drafts/idea", "doc/readme"]
    assert _recalled(documented, "rollback widget")[0] == "doc/docs/guide"


def test_wrong_uncommitted_stub_template_then_reverted(documented: Path) -> None:
    """Item 16: the settings are read from the checkout, committed or not; the cache
    of HEAD was used whatever they said, so an edited `[keys] stub` changed nothing
    — and after the edit was reverted, the index built under it would have stayed."""
    config = documented / ".omh/memory.toml"
    config.write_text(_config(stub="doc/{{path}}"))
    assert _stub_keys(documented) == ["doc/docs/guide", "doc/drafts/idea", "doc/readme"]
    config.write_text(_config())
    assert _stub_keys(documented) == ["docs/guide", "drafts/idea", "readme"]
    assert _recalled(documented, "rollback widget")[0] == "docs/guide"


def test_wrong_stub_exclude_committed_uncommitted_reverted(documented: Path) -> None:
    """Item 16: `[stubs] exclude` committed, then changed in the checkout, then
    reverted: each time recall must rank exactly the documents the settings in
    force leave in (before, an excluded draft was still recalled)."""
    commit_files(documented, {".omh/memory.toml": _config(exclude=("drafts/*",))}, "ex")
    assert _stub_keys(documented) == ["docs/guide", "readme"]
    assert "drafts/idea" not in _recalled(documented, "draft widget")
    config = documented / ".omh/memory.toml"
    config.write_text(_config(exclude=("docs/*",)))
    assert _stub_keys(documented) == ["drafts/idea", "readme"]
    config.write_text(_config(exclude=("drafts/*",)))
    assert _stub_keys(documented) == ["docs/guide", "readme"]
    git(documented, "checkout", "-q", "HEAD~1", "--", ".omh/memory.toml")  # no exclusion
    assert _stub_keys(documented) == ["docs/guide", "drafts/idea", "readme"]


def test_wrong_topic_template_shapes_the_index(documented: Path) -> None:
    """Item 16: the topic's key derives from `[keys] topic`; an index built under
    another template kept the topic under the old key."""
    config = documented / ".omh/memory.toml"
    config.write_text(_config() + '\n[repo]\nname = "demo"\n')
    git(documented, "add", "-A")
    git(documented, "commit", "-qm", "name the repo")
    docs = open_workspace(documented).searcher().docs
    assert any(d is not None and d.is_topic and d.key == "demo" for d in docs)
    config.write_text(config.read_text().replace("[keys]\n", '[keys]\ntopic = "t/{{slug}}"\n'))
    docs = open_workspace(documented).searcher().docs
    assert [d.key for d in docs if d is not None and d.is_topic] == ["t/demo"]


def test_wrong_tokeniser_or_code_change_rebuilds(documented: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Item 16: the postings are the tokeniser's and the parser's output; an index
    built by other rules (an upgrade of omh, or of mistune) must not be reused,
    nor patched as a base. Each of them is part of the index's shape."""
    ws = open_workspace(documented)
    before = shape(ws.config())
    assert snapshot_for(ws.repo, ws.config()).analysed == 0  # cached
    monkeypatch.setattr(shape_module, "TOKENS_VERSION", shape_module.TOKENS_VERSION + 1)
    assert shape(ws.config()) != before
    assert snapshot_for(ws.repo, ws.config()).analysed == 4  # all built again, no base
    monkeypatch.undo()
    monkeypatch.setattr(shape_module, "code_digest", lambda: "another release")
    assert shape(ws.config()) != before
    assert snapshot_for(ws.repo, ws.config()).analysed == 4


def _idx(repo: Path) -> Path:
    ws = open_workspace(repo)
    return index_dir(ws.repo) / f"{snapshot_for(ws.repo, ws.config()).commit}.idx"


@pytest.mark.parametrize("foreign", ["other-commit", "old-version", "not-a-tuple", "garbage"])
def test_wrong_foreign_cache_file_is_rebuilt(documented: Path, foreign: str) -> None:
    """Item 16: a cache file that passes its checksum but is not this commit's,
    this version's or this shape's (copied in, left by an older omh, or made to
    look valid) is rebuilt, never trusted."""
    idx = _idx(documented)
    payload = read_checked(idx)
    assert payload is not None
    row = marshal.loads(payload)
    if foreign == "other-commit":
        forged = marshal.dumps((row[0], "0" * 40, *row[2:]))
    elif foreign == "old-version":  # the format of VERSION 5, without a shape
        forged = marshal.dumps((VERSION - 1, row[1], *row[3:]))
    elif foreign == "not-a-tuple":
        forged = marshal.dumps({"version": VERSION})
    else:
        forged = b"\x00not marshal at all"
    write_checked(idx, forged)
    assert _stub_keys(documented) == ["docs/guide", "drafts/idea", "readme"]
    assert read_checked(idx) == payload  # rebuilt to the same bytes


# --- item 19: the cost of a large note -----------------------------------------

BIG_HEAD = "---\nkey: pasted-{i}\ntype: topic\nsource: test\nrecorded: 2026-11-01\n---\n\n"


def _big_note(i: int, sections: int = 300) -> str:
    """A legal note shaped like a pasted log: many sections, lists and fences."""
    blocks = "".join(f"## Step {n} of part {i}\n\nthe lever moved {n} times here.\n\n"
                     f"- item {n}\n- other {n}\n\n```\ncode {n}\n```\n\n"
                     for n in range(sections))
    return BIG_HEAD.format(i=i) + f"# Pasted log {i}\n\n" + blocks


@pytest.fixture
def big_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    commit_files(repo, {"README.md": "# Bench\n"}, "first")
    store = tmp_path / "store"
    store.mkdir(mode=0o700)
    for i in range(3):
        (store / f"pasted-{i}.md").write_text(_big_note(i))
    monkeypatch.setenv("OMH_LOCAL_STORE", str(store))
    monkeypatch.chdir(repo)
    return repo, store


def _count_parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every note text `parse` is given while reading a store, from now on."""
    import omh_git_memory.stores.reading as reading_module

    seen: list[str] = []
    real = reading_module.parse

    def counting(text: str):  # type: ignore[no-untyped-def]
        seen.append(text)
        return real(text)

    monkeypatch.setattr(reading_module, "parse", counting)
    return seen


def _cli(*args: str) -> int:
    """The real CLI in this process; its exit status."""
    from omh_git_memory.cli import main

    try:
        main(list(args))
    except SystemExit as done:
        return int(done.code or 0)
    return 0


REMEMBER = ("memory", "remember", "--expected", "the lever moves", "--observed",
            "the rollback lever sticks after a deploy", "--evidence", "seen twice",
            "--answers", "why does the lever stick?")


def test_hang_large_local_notes_are_parsed_once(big_store: tuple[Path, Path],
                                               monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """Item 19: every `omh memory`, recall and remember parsed every local note
    again (mistune: seconds for a note of a megabyte), so ten such notes made each
    command take most of a minute. A note's bytes are parsed once; the commands
    after that read what was parsed, and only a changed note is parsed again."""
    _, store = big_store
    parsed = _count_parses(monkeypatch)
    assert _cli("memory") == 0
    assert len(parsed) == 3
    assert _cli("memory", "recall", "lever moved") == 0
    assert _cli(*REMEMBER) == 0
    assert _cli("memory", "recall", "lever moved") == 0
    assert "pasted-0" in capsys.readouterr().out
    assert len(parsed) == 3 + 1  # the note remember wrote, once
    (store / "pasted-1.md").write_text(_big_note(1, sections=301))
    assert _cli("memory", "recall", "lever moved") == 0
    assert len(parsed) == 5  # only the changed note


def test_hang_indexed_words_of_a_note_are_capped(big_store: tuple[Path, Path]) -> None:
    """Item 19: recall tokenised the whole text of every local note on every call
    (a megabyte is some 200,000 words). What is indexed of one note is bounded
    (its first 64 KiB of characters, docs/recall.md), however large the note."""
    repo, store = big_store
    (store / "huge.md").write_text(BIG_HEAD.format(i="huge").replace("pasted-huge", "huge")
                                   + "# Huge\n\n" + "lever word " * 95_000 + "\n")
    docs = [d for d in open_workspace(repo).searcher().docs if d is not None]
    huge = next(d for d in docs if d.key == "huge")
    assert huge.length <= (1 << 16) // 2  # words of at most 64 KiB of text
    assert _recalled(repo, "lever word")[0] == "huge"


def test_hang_many_sections_parse_in_linear_work() -> None:
    """Item 19: parsing a note looked up each section's tokens with `list.index`
    and counted its line from the start of the note (`str.count`): work that grows
    with the square of the sections (hours for a legal megabyte of `## ` lines).
    Each is now found in one pass: no such scan per section."""
    import sys

    from omh_git_memory.model.note import parse

    text = _big_note(0, sections=400)
    scans = 0

    def profile(frame, event, arg):  # type: ignore[no-untyped-def]
        nonlocal scans
        if event == "c_call" and frame.f_code.co_filename.endswith("note.py") and getattr(
                arg, "__name__", "") in ("index", "count"):
            scans += 1

    sys.setprofile(profile)
    try:
        note = parse(text)
    finally:
        sys.setprofile(None)
    assert len(note.sections) == 400
    assert note.sections[-1].line == text.count("\n", 0, text.index("## Step 399")) + 1
    assert scans < 10


def test_hang_near_duplicates_fold_only_what_they_compare(monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    """Item 19: remember's near-duplicate check folded (NFKC) a note's whole text to
    keep its first 2,000 words; for a note of a megabyte it folds a few pages."""
    from omh_git_memory.actions import near_duplicate
    from omh_git_memory.model.note import parse

    folded_chars = 0
    real = near_duplicate.folded

    def counting(text: str) -> str:
        nonlocal folded_chars
        folded_chars += len(text)
        return real(text)

    monkeypatch.setattr(near_duplicate, "folded", counting)
    note = parse(_big_note(0, sections=3000))
    said = near_duplicate.said(note)
    assert said is not None and said.count(" ") + 1 == near_duplicate.MAX_WORDS
    assert folded_chars < len(note.body) // 4


def test_secret_note_cache_is_private_and_never_trusted(big_store: tuple[Path, Path]) -> None:
    """Item 19: the cache of parsed local notes holds what they say, so it is 0600
    whatever the umask; a cache file that fails its check, or that was made by other
    code, is rebuilt rather than believed. (The commands that read every note use it,
    as `omh memory` does; recall reads the local index, tests/recall/test_local_index.py.)"""
    import os

    repo, _ = big_store
    before = [d for d in _listed(open_workspace(repo)).docs if d is not None]
    path = open_workspace(repo).local.root / NOTES_CACHE
    assert path.is_file() and (path.stat().st_mode & 0o777) == 0o600
    path.write_bytes(path.read_bytes()[:-10])  # torn
    assert [d for d in _listed(open_workspace(repo)).docs if d is not None] == before
    payload = read_checked(path)
    assert payload is not None
    write_checked(path, marshal.dumps((1, "other code", marshal.loads(payload)[2])))
    ws = open_workspace(repo)
    assert ws.notes is not None
    assert [d for d in _listed(ws).docs if d is not None] == before
    assert ws.notes.parsed == 3
    os.chmod(path, 0o664)  # another account could have written it: not believed
    ws = open_workspace(repo)
    assert ws.notes is not None
    assert [d for d in _listed(ws).docs if d is not None] == before
    assert ws.notes.parsed == 3
    assert (path.stat().st_mode & 0o777) == 0o600  # and replaced by a private one


def test_hang_note_cache_holds_only_the_store_as_it_is(big_store: tuple[Path, Path]) -> None:
    """Item 19: the cache of parsed notes keeps the notes the last read found and no
    more: a long-running MCP server reads the store again after every change, and a
    cache that kept every version it ever read would grow without end."""
    repo, store = big_store
    ws = open_workspace(repo)
    assert ws.notes is not None
    for size in (4, 5, 6):
        (store / "pasted-0.md").write_text(_big_note(0, sections=size))
        _listed(ws)  # one workspace reading the store again and again
    (store / "pasted-2.md").unlink()
    _listed(ws)
    payload = read_checked(ws.local.root / NOTES_CACHE)
    assert payload is not None
    assert len(marshal.loads(payload)[2]) == 2



def _listed(ws: Workspace) -> Searcher:
    """The searcher over every note read, as `omh memory` and remember read them
    (through the cache of parsed notes)."""
    return ws.searcher(local=ws.local_entries())
