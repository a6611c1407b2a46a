"""An index built with the line scans (model/plain_markdown.py, and `compose` laying
out a stub without mistune) is the index mistune's parse builds: the same documents,
postings and answers, on a store of notes and documents meant to meet every way the
scan steps aside."""

from __future__ import annotations

from pathlib import Path

import pytest

from omh_git_memory.actions.workspace import open_workspace
from omh_git_memory.model import note, plain_markdown
from omh_git_memory.recall.bm25 import Searcher
from omh_git_memory.recall.floor import recall
from omh_git_memory.recall.snapshot import Snapshot
from tests.helpers import make_repo, note_text

_NOTES = {
    "plain": "Rolling deploys drain the queue first.\n\n## Related\n\n- [[fenced]]\n",
    "fenced": "The cache key is the blob id.\n\n```sh\ngit cat-file -p [[not-a-link]]\n```\n\n"
              "See [[plain]] and `[[in-a-span]]`.\n",
    "indented": "Evidence:\n\n    [[indented-code]] here\n\nand [[plain]].\n",
    "listed": "- a step\n\n  ```\n  [[in-a-list-fence]]\n  ```\n\nThen [[plain]].\n",
    "quoted": "> a quote\n## Heading under it\n\nQuokkas [[plain]].\n",
}


def _files() -> dict[str, str]:
    files = {f".omh/notes/{key}.md": note_text(key, body=body) for key, body in _NOTES.items()}
    files[".omh/notes/stub-typed.md"] = note_text(
        "stub-typed", kind="stub", body="## Answers\n\n- why a stub is written by hand\n")
    files[".omh/notes/derived.md"] = note_text(
        "derived", source="derived from the repository", body="## Facts\n\n- quokka facts\n")
    files[".omh/notes/broken.md"] = note_text("broken", recorded="someday")
    files[".omh/notes/untitled.md"] = "---\nkey: untitled\ntype: topic\nsource: t\n" \
                                     "recorded: 2026-11-01\n---\n\nNo title here.\n"
    files.update({
        "README.md": "# Quokka <b>service</b>\n\n<a id=\"top\"></a>\n\n## Deploying\n\n"
                     "<!-- hidden\n## Not a heading\n-->\n\n## Rolling back\n",
        "docs/guide.md": "# Guide\n\n- step one\n\n   ```\n## in a fence under a list\n   ```\n\n"
                         "## Real heading\n\n```\n## fenced\n```\n",
        "docs/Café Notes.md": "Intro line\n# Late title\n## 1. Numbered\n## `code` heading\n",
        "docs/crlf.md": "# Windows\r\n\r\n## Line endings\r\n",
        "pages/common/tar.md": "# tar\n\n> Archiving utility.\n> More: <https://x.y/tar>.\n\n"
                               "- Create an archive:\n\n`tar cf {{target.tar}} {{file}}`\n",
        "docs/empty.md": "",
        "docs/html.md": "<div>\n\n## Inside a div\n\n</div>\n\n<details>\n## Under details\n\n"
                        "<span>x</span>\n## After a span\n",
    })
    return files


def _content(snap: Snapshot) -> tuple[object, ...]:
    postings = {}
    for term in snap.postings.table:
        got = snap.postings.get(term)
        assert got is not None
        postings[term] = (list(got[0]), list(got[1]))
    return (snap.docs, postings, snap.topic_terms, snap.clashes, snap.changes)


def _answers(snap: Snapshot) -> list[object]:
    searcher = Searcher(snap, [])
    return [[(h.doc.key, h.score) for h in answer.results] + [answer.left_out]
            for answer in (recall(searcher, q) for q in (
                "quokka deploying", "rolling back", "line endings windows", "archive tar",
                "cache key blob", "numbered", "heading", "why a stub is written by hand"))]


def test_the_index_built_with_the_scans_is_the_one_the_parse_builds(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "repo"
    make_repo(repo, _files())
    ws = open_workspace(repo)
    scanned = ws.snapshot(rebuild=True)
    with monkeypatch.context() as parsed_only:
        for name in ("outline", "title_line", "fenced_code"):
            parsed_only.setattr(plain_markdown, name, lambda src: None)
        parsed_only.setattr(note, "_laid_out", lambda *args: None)
        parsed = ws.snapshot(rebuild=True)
    assert _content(scanned) == _content(parsed)
    assert _answers(scanned) == _answers(parsed)
    assert any(answer[:-1] for answer in _answers(scanned))  # the questions find notes
    keys = {d.key: d for d in scanned.docs if d is not None}
    assert keys["fenced"].links == ("plain",) and keys["broken"].problem
