"""Issue 23, items 16 and 19: the recall index keyed by everything that shapes it,
and the cost of a large note bounded."""

from __future__ import annotations

import marshal
from pathlib import Path

import pytest

from omh_git_memory.recall import index as index_module
from omh_git_memory.recall.index import (
    VERSION,
    index_dir,
    read_checked,
    shape,
    snapshot_for,
    write_checked,
)
from omh_git_memory.recall.rank import recall
from omh_git_memory.workspace import open_workspace
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
    monkeypatch.setattr(index_module, "TOKENS_VERSION", index_module.TOKENS_VERSION + 1)
    assert shape(ws.config()) != before
    assert snapshot_for(ws.repo, ws.config()).analysed == 4  # all built again, no base
    monkeypatch.undo()
    monkeypatch.setattr(index_module, "code_digest", lambda: "another release")
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
