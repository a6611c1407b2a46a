"""The first hostile review (docs/records/review-issue-11.md), data loss: no command
unlinks bytes it did not commit or read, and a key the team layer holds is never
written again locally.

Races are made deterministic with `OMH_FAULT=<point>:stop`: the command stops
itself at the step, the test acts, then lets it go on (see `faults.py`).
"""

from __future__ import annotations

import asyncio
import os
import sys
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import Implementation

from tests.helpers import Run, git, local_store, omh, resume, start_at_fault, wait_stopped
from tests.helpers.notes import PORT_NOTE, remember
from tests.helpers.repo import head_of, init_committed

_remember = partial(remember, recorded="2026-11-01", **PORT_NOTE)

A = "surprise/ports-are-taken"
B = "surprise/ci-uses-port-8080"
A_PATH = f".omh/notes/{A}.md"


@pytest.fixture
def ready(repo_dir: Path) -> Path:
    """omh set up and committed; one local note A."""
    init_committed(repo_dir)
    assert _remember(repo_dir, "Ports are taken.").code == 0
    return repo_dir


@pytest.fixture
def promoted(ready: Path) -> Path:
    """A is a team note, committed and in the working tree."""
    run = omh(ready, "memory", "promote", A)
    assert run.code == 0, run.err
    return ready


def _layers(repo: Path) -> set[tuple[str, str]]:
    notes = omh(repo, "memory", "--json").json()["notes"]
    return {(n["layer"], n["key"]) for n in notes if n["type"] not in ("stub", "topic")}


# --- 1. rm of a team note never drops an uncommitted edit ----------------------

EDIT = "- an edit nobody committed\n"


def _refused_and_kept(repo: Path, run: Run, head: str) -> None:
    assert run.code == 1, (run.out, run.err)
    assert head_of(repo) == head
    assert "Traceback" not in run.err


@pytest.mark.parametrize("stage", [False, True], ids=["unstaged", "staged"])
def test_dataloss_rm_team_refuses_an_uncommitted_edit(promoted: Path, stage: bool) -> None:
    path = promoted / A_PATH
    path.write_text(path.read_text() + EDIT)
    if stage:
        git(promoted, "add", A_PATH)
    status = git(promoted, "status", "--porcelain")
    head = head_of(promoted)
    run = omh(promoted, "memory", "rm", A, "--layer", "team")
    _refused_and_kept(promoted, run, head)
    assert path.read_text().endswith(EDIT)
    assert git(promoted, "status", "--porcelain") == status
    assert "staged" in run.err if stage else "not committed" in run.err
    assert "git commit" in run.err and "git restore" in run.err  # keep it, or drop it


def test_dataloss_rm_team_refuses_a_staged_change_the_file_no_longer_shows(
    promoted: Path,
) -> None:
    path = promoted / A_PATH
    original = path.read_text()
    path.write_text(original + EDIT)
    git(promoted, "add", A_PATH)
    path.write_text(original)  # the working tree is back at HEAD; the index is not
    status = git(promoted, "status", "--porcelain")
    head = head_of(promoted)
    run = omh(promoted, "memory", "rm", A)
    _refused_and_kept(promoted, run, head)
    assert git(promoted, "status", "--porcelain") == status
    assert EDIT in git(promoted, "show", f":{A_PATH}")


@pytest.mark.parametrize("shape", ["directory", "symlink", "symlinked-parent"])
def test_dataloss_rm_team_refuses_what_is_not_the_committed_file(
    promoted: Path, tmp_path: Path, shape: str
) -> None:
    path = promoted / A_PATH
    committed = path.read_text()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "kept.md").write_text("mine\n")
    path.unlink()
    if shape == "directory":
        path.mkdir()
        (path / "inside.md").write_text("mine\n")
    elif shape == "symlink":
        path.symlink_to(outside / "kept.md")
    else:  # .omh/notes/surprise -> a directory outside, holding the same bytes
        path.parent.rmdir()
        (outside / path.name).write_text(committed)
        path.parent.symlink_to(outside)
    head = head_of(promoted)
    run = omh(promoted, "memory", "rm", A)
    _refused_and_kept(promoted, run, head)
    assert (outside / "kept.md").read_text() == "mine\n"
    if shape == "directory":
        assert (path / "inside.md").read_text() == "mine\n"
    elif shape == "symlink":
        assert path.is_symlink()
    else:
        assert (outside / path.name).read_text() == committed


def test_dataloss_rm_team_of_a_file_already_deleted_commits_the_removal(
    promoted: Path,
) -> None:
    (promoted / A_PATH).unlink()
    run = omh(promoted, "memory", "rm", A)
    assert run.code == 0, run.err
    assert git(promoted, "log", "-1", "--format=%s").strip() == f"omh: remove {A}"
    assert git(promoted, "status", "--porcelain") == ""


def test_dataloss_rm_team_of_an_unchanged_file_removes_it(promoted: Path) -> None:
    # Line endings a checkout filter would give are not an edit, as git sees it.
    (promoted / ".gitattributes").write_text("*.md text eol=crlf\n")
    git(promoted, "add", ".gitattributes")
    git(promoted, "commit", "-qm", "crlf")
    path = promoted / A_PATH
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    assert git(promoted, "diff") == ""  # the same blob, as git sees it
    run = omh(promoted, "memory", "rm", A)
    assert run.code == 0, run.err
    assert not path.exists()
    assert git(promoted, "status", "--porcelain") == ""
    assert not list((promoted / ".omh/notes").rglob("*"))  # nothing set aside is left


def test_dataloss_rm_team_that_fails_to_commit_puts_the_file_back(promoted: Path) -> None:
    lock = promoted / ".git/index.lock"
    lock.write_text("")  # a running git command holds the index
    path = promoted / A_PATH
    committed = path.read_bytes()
    head = head_of(promoted)
    run = omh(promoted, "memory", "rm", A)
    lock.unlink()
    _refused_and_kept(promoted, run, head)
    assert path.read_bytes() == committed
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]
    assert git(promoted, "status", "--porcelain") == ""


# --- 2. a local note rewritten meanwhile is never removed ----------------------

NEW_TEXT = "the port was free after all"


def _rewrite_a(repo: Path) -> None:
    run = _remember(repo, "Ports are taken.", "--if-exists", "override", expected=NEW_TEXT)
    assert run.code == 0, run.err


def _edit_a(repo: Path) -> None:
    local = local_store(repo) / f"{A}.md"
    local.write_text(local.read_text().replace("a free port", NEW_TEXT))


@pytest.mark.parametrize(("point", "rewrite", "as_json"), [
    ("promote:planned", _rewrite_a, False),  # the race: before the commit
    ("promote:planned", _rewrite_a, True),
    ("promote:remove", _edit_a, True),  # an editor saving after the commit
], ids=["override-text", "override-json", "editor-json"])
def test_dataloss_promote_keeps_a_local_note_rewritten_while_it_ran(
    ready: Path, point: str, rewrite: Any, as_json: bool
) -> None:
    proc = start_at_fault(ready, f"{point}:stop", "memory", "promote", A,
                  *(["--json"] if as_json else []))
    wait_stopped(proc)
    rewrite(ready)
    run = resume(proc)
    assert run.code == 0, run.err
    local = local_store(ready) / f"{A}.md"
    assert NEW_TEXT in local.read_text()  # the new text survived
    assert NEW_TEXT not in (ready / A_PATH).read_text()  # the text read is what was committed
    assert _layers(ready) == {("team", A), ("local", A)}
    if as_json:
        out = run.json()
        assert out["changed_in_local"] == [A] and out["left_in_local"] == []
    else:
        assert f"local/{A} was rewritten while promote ran" in run.out


def test_dataloss_promote_removes_a_local_note_replaced_by_the_same_bytes(ready: Path) -> None:
    proc = start_at_fault(ready, "promote:remove:stop", "memory", "promote", A, "--json")
    wait_stopped(proc)
    local = local_store(ready) / f"{A}.md"
    local.write_bytes(local.read_bytes())  # touched, not changed
    run = resume(proc)
    assert run.code == 0, run.err
    assert run.json()["changed_in_local"] == []
    assert _layers(ready) == {("team", A)}


def test_dataloss_rm_local_keeps_a_note_rewritten_meanwhile(ready: Path) -> None:
    proc = start_at_fault(ready, "rm:local:stop", "memory", "rm", A)
    wait_stopped(proc)
    _rewrite_a(ready)
    run = resume(proc)
    assert run.code == 1 and "changed" in run.err, (run.out, run.err)
    assert NEW_TEXT in (local_store(ready) / f"{A}.md").read_text()


def test_dataloss_rm_local_of_an_unchanged_note_removes_it(ready: Path) -> None:
    proc = start_at_fault(ready, "rm:local:stop", "memory", "rm", A)
    wait_stopped(proc)
    run = resume(proc)
    assert run.code == 0, run.err
    assert _layers(ready) == set()
    left = [p for p in local_store(ready).rglob("*")
            if p.name not in (".omh-store", ".omh-lock")]  # the store's record and lock
    assert left == []  # nothing set aside is left


# --- 3. a key the team layer holds is not written again locally ----------------

def test_dataloss_remember_refuses_a_key_the_team_holds(promoted: Path) -> None:
    store = local_store(promoted)
    run = _remember(promoted, "Ports are taken.", expected="something else")
    assert run.code == 1
    assert "team layer" in run.err and A_PATH in run.err and "--if-exists suffix" in run.err
    assert not (store / f"{A}.md").exists()
    assert omh(promoted, "memory", "rm", A).code == 0  # no --layer needed: one note


def test_dataloss_remember_override_may_not_shadow_a_team_note(promoted: Path) -> None:
    run = _remember(promoted, "Ports are taken.", "--if-exists", "override")
    assert run.code == 1 and "team" in run.err and "override" in run.err
    assert _layers(promoted) == {("team", A)}


def test_dataloss_remember_skip_keeps_the_team_note(promoted: Path) -> None:
    run = _remember(promoted, "Ports are taken.", "--if-exists", "skip", "--json")
    assert run.code == 0, run.err
    assert run.json()["written"] is False and run.json()["layer"] == "team"
    assert _layers(promoted) == {("team", A)}
    text = _remember(promoted, "Ports are taken.", "--if-exists", "skip")
    assert f"kept the existing team/{A}" in text.out


def test_dataloss_remember_suffix_finds_a_key_free_in_both_layers(promoted: Path) -> None:
    assert _remember(promoted, "Ports are taken.", "--if-exists", "suffix").code == 0
    assert omh(promoted, "memory", "promote", f"{A}-2").code == 0
    run = _remember(promoted, "Ports are taken.", "--if-exists", "suffix", "--json")
    assert run.code == 0, run.err
    assert run.json()["key"] == f"{A}-3"
    assert omh(promoted, "memory", "promote", f"{A}-3").code == 0


def test_dataloss_remember_refuses_a_derived_key(ready: Path) -> None:
    doc = ready / "surprise/ci-uses-port-8080.md"  # its stub's key is B
    doc.parent.mkdir()
    doc.write_text("# CI ports\n\n## Which port\n")
    git(ready, "add", "-A")
    git(ready, "commit", "-qm", "a document")
    run = _remember(ready, "CI uses port 8080.")
    assert run.code == 1 and "derived" in run.err and "surprise/ci-uses-port-8080.md" in run.err
    assert ("local", B) not in _layers(ready)


def test_dataloss_mcp_remember_refuses_a_key_the_team_holds(promoted: Path) -> None:
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "omh_git_memory", "mcp", "serve"],
                                   cwd=str(promoted), env=dict(os.environ))
    call = {"expected": "something else", "observed": "Ports are taken.",
            "evidence": "bind: address in use", "answers": ["why is the port taken?"]}

    async def run() -> Any:
        async with stdio_client(params) as (read, write), ClientSession(
            read, write, client_info=Implementation(name="agent", version="1")
        ) as session:
            await session.initialize()
            return await session.call_tool("remember", call)

    result = asyncio.run(run())
    text = "".join(getattr(c, "text", "") for c in result.content)
    assert result.is_error, text
    assert "team layer" in text and A_PATH in text
    assert "--if-exists" not in text  # not an option over MCP
    assert _layers(promoted) == {("team", A)}


def test_dataloss_promote_refuses_a_key_the_team_holds_as_a_derived_note(ready: Path) -> None:
    # A local note written before the document came in (a pull, a teammate's commit).
    assert _remember(ready, "CI uses port 8080.").code == 0
    doc = ready / "surprise/ci-uses-port-8080.md"  # its stub's key is B
    doc.parent.mkdir()
    doc.write_text("# CI ports\n\n## Which port\n")
    git(ready, "add", "-A")
    git(ready, "commit", "-qm", "a document")
    head = head_of(ready)
    run = omh(ready, "memory", "promote", B)
    assert run.code == 1 and "derived" in run.err, (run.out, run.err)
    assert head_of(ready) == head and ("local", B) in _layers(ready)


def test_dataloss_promote_refuses_a_key_another_team_file_claims(ready: Path) -> None:
    other = ready / ".omh/notes/elsewhere.md"  # a team note at another path, claiming A
    other.parent.mkdir(parents=True, exist_ok=True)
    stored = omh(ready, "memory", "show", A, "--json").json()["notes"][0]["text"]
    other.write_text(stored.replace("a free port", "theirs"))
    git(ready, "add", "-A")
    git(ready, "commit", "-qm", "a teammate's note")
    head = head_of(ready)
    run = omh(ready, "memory", "promote", A)
    assert run.code == 1 and ".omh/notes/elsewhere.md" in run.err, (run.out, run.err)
    assert head_of(ready) == head


def test_wrong_a_note_that_cannot_be_encoded_leaves_no_temporary_file(tmp_path: Path) -> None:
    from omh_git_memory.model.errors import NoteParseError
    from omh_git_memory.model.keys import Key
    from omh_git_memory.stores.store import LocalStore

    store = LocalStore(tmp_path)
    with pytest.raises(NoteParseError, match="lone surrogate"):
        store.write(Key("x"), lambda _k: "a lone surrogate \ud800\n")
    assert [p for p in tmp_path.rglob("*") if p.is_file() and p.name != ".omh-lock"] == []
