"""Where the local store lives: a location that could land in the repository is
refused (`escape`), and a clone that was moved finds the store it left behind
(`moved`) instead of silently starting a second, empty one (items 5 and 20 of the first
hostile review, docs/records/review-issue-11.md)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from omh_git_memory.git.repository import open_repo
from omh_git_memory.stores.location import local_store_root
from omh_git_memory.stores.store import CACHE_FILES
from tests.helpers import git, make_repo, note_text, omh
from tests.helpers.notes import moved_clone, remember_seed

SEED_KEY = "surprise/mounting-a-credential-file-returns-ebusy"
MARKER = ".omh-store"


def _stores(home: Path) -> list[Path]:
    memory = home / ".omh" / "memory"
    return sorted(memory.iterdir()) if memory.is_dir() else []


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


def _local_keys(repo: Path) -> list[str]:
    run = omh(repo, "memory", "--json")
    assert run.code == 0, run.err
    return sorted(n["key"] for n in run.json()["notes"] if n["layer"] == "local")


# --- escape ------------------------------------------------------------------

def _refused(repo: Path, env: dict[str, str], words: str) -> None:
    before = _tree(repo)
    for args in (("memory", "remember", "--expected", "e", "--observed", "X.", "--evidence",
                  "v", "--answers", "q"), ("init",), ("memory",)):
        run = omh(repo, *args, env=env)
        assert run.code == 1, (args, run.out, run.err)
        assert words in run.err and run.err.count("\n") == 1, run.err
    assert _tree(repo) == before  # nothing written into the checkout


def test_escape_a_relative_omh_local_store_is_refused(repo_dir: Path) -> None:
    _refused(repo_dir, {"OMH_LOCAL_STORE": "notes"}, "relative")
    _refused(repo_dir, {"OMH_LOCAL_STORE": "./.omh/notes"}, "relative")
    assert not (repo_dir / "notes").exists()


def test_escape_a_relative_omh_home_is_refused(repo_dir: Path) -> None:
    _refused(repo_dir, {"OMH_HOME": "omh-home"}, "relative")
    assert not (repo_dir / "omh-home").exists()


def test_escape_an_omh_local_store_inside_the_checkout_is_refused(repo_dir: Path) -> None:
    _refused(repo_dir, {"OMH_LOCAL_STORE": str(repo_dir / "local-notes")}, "inside the checkout")
    _refused(repo_dir, {"OMH_LOCAL_STORE": str(repo_dir / ".omh" / "notes")},
             "inside the checkout")
    _refused(repo_dir, {"OMH_LOCAL_STORE": str(repo_dir)}, "inside the checkout")


def test_escape_an_omh_home_inside_the_checkout_is_refused(repo_dir: Path) -> None:
    _refused(repo_dir, {"OMH_HOME": str(repo_dir / "h")}, "inside the checkout")


def test_escape_a_store_inside_a_linked_worktree_is_refused(
    repo_dir: Path, tmp_path: Path
) -> None:
    git(repo_dir, "worktree", "add", "-q", str(tmp_path / "wt"), "-b", "side")
    env = {"OMH_LOCAL_STORE": str(tmp_path / "wt" / "notes")}
    _refused(repo_dir, env, "inside the checkout")
    _refused(tmp_path / "wt", {"OMH_LOCAL_STORE": str(repo_dir / "notes")}, "inside the checkout")


def test_escape_a_store_through_a_symlink_into_the_checkout_is_refused(
    repo_dir: Path, tmp_path: Path
) -> None:
    (repo_dir / "docs").mkdir()
    link = tmp_path / "mnt"
    link.symlink_to(repo_dir / "docs", target_is_directory=True)
    _refused(repo_dir, {"OMH_LOCAL_STORE": str(link)}, "inside the checkout")
    _refused(repo_dir, {"OMH_LOCAL_STORE": str(link / "deeper")}, "inside the checkout")
    home = tmp_path / "home-link"
    home.symlink_to(repo_dir, target_is_directory=True)
    _refused(repo_dir, {"OMH_HOME": str(home)}, "inside the checkout")


def test_escape_a_store_inside_the_git_directory_is_refused(repo_dir: Path) -> None:
    _refused(repo_dir, {"OMH_LOCAL_STORE": str(repo_dir / ".git" / "omh-notes")},
             "inside the git directory")


def test_escape_a_store_that_holds_the_checkout_is_refused(
    repo_dir: Path, tmp_path: Path
) -> None:
    # A store above the checkout would read the repository's own Markdown as notes.
    _refused(repo_dir, {"OMH_LOCAL_STORE": str(tmp_path)}, "holds the checkout")


def test_escape_a_home_directory_of_no_user_is_refused_in_one_line(repo_dir: Path) -> None:
    _refused(repo_dir, {"OMH_LOCAL_STORE": "~no-such-user-omh/notes"}, "home directory")


def test_escape_a_store_that_holds_a_separate_git_directory_is_refused(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "checkout"
    (tmp_path / "gitdirs").mkdir()
    git(tmp_path, "init", "-q", "--separate-git-dir", str(tmp_path / "gitdirs" / "api"),
        str(repo))
    _refused(repo, {"OMH_LOCAL_STORE": str(tmp_path / "gitdirs")}, "holds the git directory")


def test_escape_init_in_a_separate_git_dir_checkout_writes_only_there(tmp_path: Path) -> None:
    # The checkout is where `.git` (a file) is, not the git directory's parent.
    repo = tmp_path / "checkout"
    (tmp_path / "gitdirs").mkdir()
    git(tmp_path, "init", "-q", "--separate-git-dir", str(tmp_path / "gitdirs" / "api"),
        str(repo))
    assert omh(repo, "init").code == 0
    assert (repo / ".omh" / "memory.toml").is_file()
    assert not (tmp_path / "gitdirs" / ".omh").exists()


def test_escape_an_absolute_store_outside_the_repository_still_works(
    repo_dir: Path, tmp_path: Path
) -> None:
    env = {"OMH_LOCAL_STORE": "~/mounted"}  # `~` is absolute once expanded
    remember_seed(repo_dir, env=env)
    assert (Path(os.environ["HOME"]) / "mounted" / f"{SEED_KEY}.md").is_file()


# --- moved -------------------------------------------------------------------

@pytest.fixture
def moved(tmp_path: Path) -> tuple[Path, Path]:
    """A clone with one local note, then moved: (old path, new path)."""
    return moved_clone(tmp_path)


def test_moved_clone_is_told_where_its_notes_are(
    moved: tuple[Path, Path], isolated_home: Path
) -> None:
    old, new = moved
    for args in (("memory",), ("memory", "--json"), ("memory", "recall", "credential file")):
        run = omh(new, *args)
        assert run.code == 0, run.err
        assert "omh adopt" in run.err and str(old) in run.err, (args, run.err)
    json.loads(omh(new, "memory", "--json").out)  # stdout stays valid JSON
    doctor = omh(new, "doctor", "--json")
    assert doctor.code == 1
    details = " ".join(c["detail"] for c in doctor.json())
    assert "omh adopt" in details and str(old) in details
    assert "run `omh init`" not in details
    assert len(_stores(isolated_home)) == 1  # nothing above made a second store


def test_moved_init_and_remember_refuse_to_start_a_second_store(
    moved: tuple[Path, Path], isolated_home: Path
) -> None:
    _old, new = moved
    before = _stores(isolated_home)
    init = omh(new, "init")
    assert init.code == 1 and "omh adopt" in init.err, init.out + init.err
    write = omh(new, "memory", "remember", "--expected", "e", "--observed", "Y.",
                "--evidence", "v", "--answers", "q")
    assert write.code == 1 and "omh adopt" in write.err, write.err
    assert _stores(isolated_home) == before


def test_moved_adopt_brings_the_notes_back(
    moved: tuple[Path, Path], isolated_home: Path
) -> None:
    _old, new = moved
    [left] = _stores(isolated_home)
    notes_before = _tree(left)
    run = omh(new, "adopt")
    assert run.code == 0, run.err
    assert str(left) in run.out
    assert _local_keys(new) == [SEED_KEY]
    [store] = _stores(isolated_home)
    assert store != left and not left.exists()
    kept = (MARKER, *CACHE_FILES)  # the record, rewritten; the caches, rebuilt by any read
    assert {k: v for k, v in _tree(store).items() if k not in kept} == {
        k: v for k, v in notes_before.items() if k not in kept}
    assert str(new) in (store / MARKER).read_text()
    quiet = omh(new, "memory")
    assert "adopt" not in quiet.err
    again = omh(new, "adopt")
    assert again.code == 1 and "no local store left behind" in again.err


def test_moved_another_clone_is_not_told_to_adopt(tmp_path: Path, isolated_home: Path) -> None:
    first = tmp_path / "a" / "api"
    make_repo(first)
    omh(first, "init")
    remember_seed(first)
    second = tmp_path / "b" / "api"
    git(tmp_path, "clone", "-q", str(first), str(second))
    run = omh(second, "memory")
    assert run.code == 0 and "adopt" not in run.err, run.err
    adopt = omh(second, "adopt")
    assert adopt.code == 1 and "no local store left behind" in adopt.err
    taken = omh(second, "adopt", str(first))
    assert taken.code == 1 and "still exists" in taken.err, taken.err
    assert omh(second, "init").code == 0
    assert _local_keys(first) == [SEED_KEY]  # the first clone keeps its notes
    assert _local_keys(second) == []


def test_moved_a_deleted_other_clone_is_only_a_maybe(tmp_path: Path, isolated_home: Path) -> None:
    # Same root commit, old path gone, but another clone's id: say so, never claim a move.
    first = tmp_path / "a" / "api"
    make_repo(first)
    omh(first, "init")
    remember_seed(first)
    second = tmp_path / "b" / "api"
    git(tmp_path, "clone", "-q", str(first), str(second))
    shutil.rmtree(first)
    run = omh(second, "memory")
    assert run.code == 0
    assert "if this clone was moved from there" in run.err and str(first) in run.err
    assert "this clone was moved from" not in run.err.replace("if this clone was moved", "")
    init = omh(second, "init")
    assert init.code == 0, init.err  # not this clone's store for sure: not a refusal
    assert "omh adopt" in init.err
    adopted = omh(second, "adopt", str(first))
    assert adopted.code == 0, adopted.err
    assert _local_keys(second) == [SEED_KEY]


def test_moved_a_repository_with_no_commits_is_recognised(
    tmp_path: Path, isolated_home: Path
) -> None:
    old = tmp_path / "fresh"
    old.mkdir()
    git(old, "init", "-q")
    assert omh(old, "init").code == 0
    remember_seed(old)
    new = tmp_path / "renamed"
    old.rename(new)
    run = omh(new, "memory")
    assert "omh adopt" in run.err and str(old) in run.err, run.err
    assert omh(new, "adopt").code == 0
    assert _local_keys(new) == [SEED_KEY]


def _new_store(repo: Path) -> Path:
    """This clone's store, made by hand as an older omh (or a person) would."""
    store = local_store_root(open_repo(repo))
    store.mkdir(parents=True)
    return store


def test_moved_adopt_merges_two_stores_without_overwriting(
    moved: tuple[Path, Path], isolated_home: Path
) -> None:
    _old, new = moved
    [left] = _stores(isolated_home)
    store = _new_store(new)
    (store / "surprise").mkdir()
    (store / "surprise" / "new-here.md").write_text(note_text("surprise/new-here"))
    (left / "surprise" / "same.md").write_text(note_text("surprise/same"))
    (store / "surprise" / "same.md").write_text(note_text("surprise/same"))
    (left / "notes.txt").write_text("not a note")
    run = omh(new, "adopt")
    assert run.code == 0, run.err
    assert _local_keys(new) == [SEED_KEY, "surprise/new-here", "surprise/same"]
    assert "notes.txt" in run.out  # what is not a note stays, and is named
    assert (left / "notes.txt").read_text() == "not a note"
    assert not (left / "surprise").exists()


def test_moved_adopt_refuses_a_conflict_and_changes_nothing(
    moved: tuple[Path, Path], isolated_home: Path
) -> None:
    _old, new = moved
    [left] = _stores(isolated_home)
    store = _new_store(new)
    (store / "surprise").mkdir()
    text = (left / f"{SEED_KEY}.md").read_text()
    (store / f"{SEED_KEY}.md").write_text(text.replace("EBUSY from", "EBUSY (edited) from"))
    (left / "only-old.md").write_text(note_text("only-old"))
    omh(new, "memory")  # the new store gets its record on first use
    before = (_tree(left), _tree(store))
    run = omh(new, "adopt", str(left))
    assert run.code == 1 and SEED_KEY in run.err and run.err.count("\n") == 1, run.err
    assert (_tree(left), _tree(store)) == before


def test_moved_a_store_from_before_markers_is_recorded_then_found(
    tmp_path: Path, isolated_home: Path
) -> None:
    old = tmp_path / "api"
    make_repo(old)
    remember_seed(old)
    [store] = _stores(isolated_home)
    (store / MARKER).unlink(missing_ok=True)  # as an older omh left it
    assert omh(old, "memory").code == 0  # any use records whose store it is
    assert (store / MARKER).is_file()
    new = tmp_path / "moved-api"
    old.rename(new)
    assert "omh adopt" in omh(new, "memory").err


def test_moved_a_store_from_before_markers_is_adopted_by_the_old_path(
    tmp_path: Path, isolated_home: Path
) -> None:
    old = tmp_path / "api"
    make_repo(old)
    remember_seed(old)
    [store] = _stores(isolated_home)
    (store / MARKER).unlink(missing_ok=True)
    new = tmp_path / "elsewhere" / "api"
    new.parent.mkdir()
    old.rename(new)  # moved before any newer omh ran: nothing recorded the clone
    run = omh(new, "memory")
    assert "omh adopt" in run.err, run.err
    assert omh(new, "init").code == 0  # cannot be sure: a hint, not a refusal
    adopted = omh(new, "adopt", str(old))
    assert adopted.code == 0, adopted.err
    assert "now in" in adopted.out  # the empty store init made was replaced, in one rename
    assert _local_keys(new) == [SEED_KEY]
    assert not store.exists()


def test_moved_adopt_refuses_under_omh_local_store(
    moved: tuple[Path, Path], tmp_path: Path
) -> None:
    _old, new = moved
    run = omh(new, "adopt", env={"OMH_LOCAL_STORE": str(tmp_path / "mounted")})
    assert run.code == 1 and "OMH_LOCAL_STORE" in run.err


def test_moved_adopt_refuses_what_is_not_a_store(
    moved: tuple[Path, Path], tmp_path: Path, isolated_home: Path
) -> None:
    _old, new = moved
    stray = tmp_path / "stray"
    stray.mkdir()
    (stray / "keep.md").write_text("mine")
    run = omh(new, "adopt", str(stray))
    assert run.code == 1 and "not a local store" in run.err, run.err
    assert (stray / "keep.md").read_text() == "mine"


def test_moved_mcp_names_the_store_and_remember_refuses(moved: tuple[Path, Path]) -> None:
    old, new = moved
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "omh_git_memory", "mcp", "serve"],
                                   cwd=str(new), env=dict(os.environ))

    async def run() -> tuple[str, bool, str]:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            tools = {t.name: t for t in (await session.list_tools()).tools}
            done = await session.call_tool("remember", {
                "expected": "e", "observed": "Y happened.", "evidence": "v", "answers": ["q"]})
            text = "".join(getattr(c, "text", "") for c in done.content)
            return tools["recall"].description or "", done.is_error, text

    description, failed, text = asyncio.run(run())
    assert "omh adopt" in description and str(old) in description
    assert failed and "omh adopt" in text


def test_moved_a_bare_clone_with_worktrees_is_not_taken_for_gone(
    tmp_path: Path, isolated_home: Path
) -> None:
    origin = tmp_path / "origin"
    make_repo(origin)
    bare = tmp_path / "api.git"
    git(tmp_path, "clone", "-q", "--bare", str(origin), str(bare))
    git(bare, "worktree", "add", "-q", str(tmp_path / "wt"))
    remember_seed(tmp_path / "wt")  # a store named after the bare repository
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(origin), str(other))
    run = omh(other, "memory")
    assert run.code == 0 and "adopt" not in run.err, run.err
