"""The read path under hostile shapes (items 4, 9, 14, 16 and 19 of the first hostile
review, docs/records/review-issue-11.md): what omh reads from a commit's tree, the
local store and the checkout's `.omh/notes`.

Nothing that is not a regular file is ever opened, no symlink is followed, no walk
recurses, no blob is loaded before its size is known, and a blob a partial clone
lacks is refused by name. Test names start with their class (escape, wrong, hang).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import textwrap
import tracemalloc
from pathlib import Path

import pygit2
import pytest

from omh_git_memory.actions.workspace import open_workspace
from omh_git_memory.model.errors import GitFailure
from omh_git_memory.model.note import MAX_NOTE_BYTES
from omh_git_memory.stores.team import scan_team
from tests.helpers import IDENTITY, ROOT, Run, git, make_repo, note_text

TIMEOUT = 60  # seconds; every command here finishes in a few


def omh_t(cwd: Path, *args: str, env: dict[str, str] | None = None) -> Run:
    """The real CLI, killed if it blocks (a hang fails the test instead of the suite)."""
    try:
        done = subprocess.run(
            [sys.executable, "-m", "omh_git_memory", *args], cwd=cwd,
            env={**os.environ, **(env or {})}, capture_output=True, text=True, check=False,
            timeout=TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"omh {' '.join(args)} hung for {TIMEOUT}s")
    return Run(done.returncode, done.stdout, done.stderr)


def no_crash(run: Run) -> None:
    assert run.code in (0, 1), run.err
    assert "Traceback" not in run.err and "Exception ignored" not in run.err, run.err
    assert "internal error" not in run.err, run.err


def commit_all(path: Path, message: str = "notes") -> None:
    git(path, "add", "-A")
    git(path, "commit", "-qm", message)


def team_repo(path: Path, notes: dict[str, str] | None = None) -> Path:
    files = {"README.md": "# Test repo\n"}
    for key in notes or {"alpha": "alpha words"}:
        files[f".omh/notes/{key}.md"] = note_text(key, body=(notes or {}).get(key, "words\n"))
    make_repo(path, files)
    return path


# --- hang: a FIFO, socket, device or symlink to one is never opened -----------

def test_hang_fifo_in_the_local_store_is_refused_by_name(tmp_path: Path) -> None:
    repo = team_repo(tmp_path / "repo")
    store = tmp_path / "store"
    store.mkdir()
    (store / "good.md").write_text(note_text("good", body="good words\n"))
    os.mkfifo(store / "pipe.md")
    env = {"OMH_LOCAL_STORE": str(store)}
    listing = omh_t(repo, "memory", env=env)
    no_crash(listing)
    assert "pipe.md" in listing.out + listing.err and "FIFO" in listing.out + listing.err
    assert "good" in listing.out
    found = omh_t(repo, "memory", "recall", "good words", env=env)
    no_crash(found)
    assert "good" in found.out
    lint = omh_t(repo, "memory", "lint", env=env)
    assert lint.code == 1, lint.err
    assert "pipe.md" in lint.out and "FIFO" in lint.out


def test_hang_special_files_under_worktree_notes_are_findings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = team_repo(tmp_path / "repo")
    notes = repo / ".omh" / "notes"
    os.mkfifo(notes / "pipe.md")
    os.symlink(notes / "pipe.md", notes / "to-pipe.md")
    monkeypatch.chdir(notes)  # a socket's path is limited to about 100 bytes: bind it relative
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind("sock.md")
        lint = omh_t(repo, "memory", "lint", "--worktree")
    assert lint.code == 1, lint.err
    no_crash(lint)
    lines = lint.out.splitlines()
    assert any("pipe.md" in line and "FIFO" in line for line in lines), lint.out
    assert any("to-pipe.md" in line and "symlink" in line for line in lines), lint.out
    assert any("sock.md" in line and "socket" in line for line in lines), lint.out
    assert "1 note read" not in lint.out or "4 notes read" in lint.out


def test_hang_mcp_server_answers_with_a_fifo_in_the_local_store(tmp_path: Path) -> None:
    import asyncio

    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    repo = team_repo(tmp_path / "repo", {"alpha": "alpha words about deploys\n"})
    store = tmp_path / "store"
    store.mkdir()
    os.mkfifo(store / "pipe.md")
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "omh_git_memory", "mcp", "serve"], cwd=str(repo),
        env={**os.environ, "OMH_LOCAL_STORE": str(store), "OMH_SESSION": "s1"})

    async def ask() -> str:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            result = await session.call_tool("recall", {"question": "alpha deploys"})
            return "".join(getattr(c, "text", "") for c in result.content)

    async def bounded() -> str:
        return await asyncio.wait_for(ask(), TIMEOUT)

    try:
        text = asyncio.run(bounded())
    except TimeoutError:
        pytest.fail(f"the MCP server did not answer in {TIMEOUT}s")
    assert "alpha" in text


def test_hang_a_fifo_as_the_settings_file_is_refused(tmp_path: Path) -> None:
    repo = team_repo(tmp_path / "repo")
    os.mkfifo(repo / ".omh" / "memory.toml")
    run = omh_t(repo, "memory", "recall", "alpha words")
    assert run.code == 1, run.err
    assert "memory.toml is not a regular file" in run.err


@pytest.mark.skipif(os.geteuid() != 0, reason="making a device file needs root")
def test_hang_device_file_in_the_local_store_is_never_opened(tmp_path: Path) -> None:
    repo = team_repo(tmp_path / "repo")
    store = tmp_path / "store"
    store.mkdir()
    os.mknod(store / "zero.md", 0o600 | 0o020000, os.makedev(1, 5))  # like /dev/zero
    lint = omh_t(repo, "memory", "lint", env={"OMH_LOCAL_STORE": str(store)})
    assert lint.code == 1, lint.err
    assert "zero.md" in lint.out and "character device" in lint.out


def test_hang_a_fifo_swapped_in_after_the_check_does_not_block(tmp_path: Path) -> None:
    # The lstat says regular file; the open finds a FIFO: O_NONBLOCK returns at once.
    from omh_git_memory.stores import store as store_module
    from omh_git_memory.stores.store import LocalStore

    root = tmp_path / "store"
    root.mkdir()
    target = root / "swap.md"
    target.write_text(note_text("swap"))
    real_lstat = os.lstat

    def lstat_then_swap(path: object, *args: object, **kwargs: object) -> os.stat_result:
        result = real_lstat(path)  # type: ignore[arg-type]
        if Path(str(path)) == target:
            target.unlink()
            os.mkfifo(target)
        return result

    store_module.os.lstat = lstat_then_swap  # type: ignore[assignment]
    try:
        [entry] = LocalStore(root).scan()
    finally:
        store_module.os.lstat = real_lstat
    assert entry.note is None and entry.problem is not None


# --- hang: trees a thousand levels deep --------------------------------------

def _deep_tree(r: pygit2.Repository, depth: int, leaf: bytes) -> pygit2.Oid:
    builder = r.TreeBuilder()
    builder.insert("deep.md", r.create_blob(leaf), pygit2.enums.FileMode.BLOB)
    oid = builder.write()
    for _ in range(depth):
        builder = r.TreeBuilder()
        builder.insert("d", oid, pygit2.enums.FileMode.TREE)
        oid = builder.write()
    return oid


def _commit_with(r: pygit2.Repository, path: str, tree: pygit2.Oid) -> None:
    index = pygit2.Index()
    index.read_tree(r.head.peel(pygit2.Commit).tree)
    whole = index.write_tree(r)
    # graft `tree` at `path` (two levels: .omh/notes/<name>)
    top = r[whole].peel(pygit2.Tree)
    parts = path.split("/")
    builders = []
    current: pygit2.Tree | None = top
    for part in parts[:-1]:
        b = r.TreeBuilder(current) if current is not None else r.TreeBuilder()
        builders.append((b, part))
        try:
            current = r[current[part].id].peel(pygit2.Tree) if current is not None else None
        except KeyError:
            current = None
    b = r.TreeBuilder(current) if current is not None else r.TreeBuilder()
    b.insert(parts[-1], tree, pygit2.enums.FileMode.TREE)
    oid = b.write()
    for parent, name in reversed(builders):
        parent.insert(name, oid, pygit2.enums.FileMode.TREE)
        oid = parent.write()
    sig = pygit2.Signature(*IDENTITY)
    r.create_commit("HEAD", sig, sig, "deep", oid, [r.head.target])


def test_hang_a_notes_tree_a_thousand_deep_is_walked(tmp_path: Path) -> None:
    path = team_repo(tmp_path / "repo")
    r = pygit2.Repository(str(path))
    _commit_with(r, ".omh/notes/d", _deep_tree(r, 1200, note_text("deep").encode()))
    _commit_with(r, "src/d", _deep_tree(r, 1200, b"# a document\n"))
    for args in (("memory", "lint", "--ref", "HEAD"), ("memory",), ("memory", "stale"),
                 ("memory", "recall", "alpha words")):
        run = omh_t(path, *args)
        no_crash(run)
        assert "RecursionError" not in run.err


def test_hang_a_local_store_a_thousand_deep_is_walked(tmp_path: Path) -> None:
    repo = team_repo(tmp_path / "repo")
    store = tmp_path / "s"
    deep = store
    os.makedirs(store)
    # built relative to the cwd, a level at a time, so no path grows past PATH_MAX
    fd = os.open(store, os.O_RDONLY)
    try:
        for _ in range(1100):
            os.mkdir("d", dir_fd=fd)
            nxt = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = nxt
        note = os.open("n.md", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(note, note_text("n").encode())
        os.close(note)
    finally:
        os.close(fd)
    del deep
    try:
        run = omh_t(repo, "memory", "lint", env={"OMH_LOCAL_STORE": str(store)})
    finally:  # pytest's own clean-up of old temp folders recurses: leave nothing this deep
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(20000)
        try:
            shutil.rmtree(store)
        finally:
            sys.setrecursionlimit(limit)
    no_crash(run)
    assert "RecursionError" not in run.err


# --- hang: a huge blob is sized from its header, never loaded ----------------

def test_hang_an_oversized_team_blob_is_sized_not_read(tmp_path: Path) -> None:
    size = 24 * 1024 * 1024
    path = team_repo(tmp_path / "repo")
    r = pygit2.Repository(str(path))
    blob = r.create_blob(b"a" * size)
    index = r.index
    index.read()
    index.add(pygit2.IndexEntry(".omh/notes/huge.md", blob, pygit2.enums.FileMode.BLOB))
    index.write()
    sig = pygit2.Signature(*IDENTITY)
    r.create_commit("HEAD", sig, sig, "huge", index.write_tree(), [r.head.target])
    ws = open_workspace(path)
    tracemalloc.start()
    try:
        notes = scan_team(ws.repo)
        docs = ws.snapshot(rebuild=True).docs
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < size // 4, f"peak {peak} bytes: the blob was loaded"
    [huge] = [n for n in notes if n.relpath == "huge.md"]
    assert huge.problem == f"is {size} bytes; a note may hold at most {MAX_NOTE_BYTES}"
    assert any(d is not None and d.problem == huge.problem for d in docs)
    lint = omh_t(path, "memory", "lint", "--ref", "HEAD")
    assert lint.code == 1 and f"is {size} bytes" in lint.out


def test_hang_a_failed_index_open_prints_no_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "index"
    bad.write_bytes(b"DIRCgarbage")
    code = textwrap.dedent(f"""
        import gc, pygit2
        from omh_git_memory.git import commit as git
        try:  # pygit2.Index itself where omh has no safe one (the defect)
            getattr(git, "_Index", pygit2.Index)({str(bad)!r})
        except pygit2.GitError:
            pass
        gc.collect()
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=TIMEOUT, check=False,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""


# --- escape: a symlink or gitlink on the team layer is reported, never read --

def _outside_notes(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "planted.md").write_text(note_text("planted", body="planted words\n"))
    (outside / "notes").mkdir()
    (outside / "notes" / "planted.md").write_text(note_text("planted"))
    return outside


@pytest.mark.parametrize("where", [".omh/notes", ".omh", ".omh/notes/sub"])
def test_escape_a_committed_symlink_on_the_team_path_is_refused(
    tmp_path: Path, where: str
) -> None:
    outside = _outside_notes(tmp_path)
    path = team_repo(tmp_path / "repo")
    link = path / where
    if where != ".omh/notes/sub":
        git(path, "rm", "-rq", ".omh/notes")
        shutil.rmtree(path / ".omh", ignore_errors=True)
        link.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(outside / "notes" if where == ".omh" else outside, link)
    commit_all(path)
    for args in (("memory", "lint", "--ref", "HEAD"), ("memory", "lint", "--worktree")):
        run = omh_t(path, *args)
        assert run.code == 1, (args, run.out, run.err)
        assert "symlink" in run.out, (args, run.out)
        assert "planted" not in run.out, (args, run.out)
    listing = omh_t(path, "memory")
    no_crash(listing)
    assert "symlink" in listing.out + listing.err
    assert "planted" not in listing.out


def test_escape_a_gitlink_under_team_notes_is_refused(tmp_path: Path) -> None:
    path = team_repo(tmp_path / "repo")
    head = git(path, "rev-parse", "HEAD").strip()
    git(path, "update-index", "--add", "--cacheinfo", f"160000,{head},.omh/notes/sub")
    git(path, "commit", "-qm", "a gitlink among the notes")
    run = omh_t(path, "memory", "lint", "--ref", "HEAD")
    assert run.code == 1, run.out
    assert any("sub" in line and "submodule" in line for line in run.out.splitlines()), run.out


# --- wrong: a blob a partial clone lacks is refused by name -----------------

def _filterable_source(tmp_path: Path) -> Path:
    src = team_repo(tmp_path / "src")
    git(src, "config", "uploadpack.allowFilter", "true")
    git(src, "switch", "-qc", "feature")
    (src / ".omh" / "notes" / "beta.md").write_text(note_text("beta", body="beta words\n"))
    commit_all(src, "beta")
    git(src, "switch", "-q", "main")
    return src


def test_wrong_a_blobless_clone_names_the_missing_blob_and_the_fix(tmp_path: Path) -> None:
    src = _filterable_source(tmp_path)
    git(tmp_path, "clone", "-q", "--filter=blob:none", f"file://{src}", "part")
    part = tmp_path / "part"
    run = omh_t(part, "memory", "lint", "--ref", "origin/feature")
    assert run.code == 1, run.err
    no_crash(run)
    assert "partial clone" in run.err and "git archive" in run.err, run.err
    assert ".omh/notes/beta.md" in run.err
    # what the message says to do works, and then the answer is complete
    command = run.err.split("`")[1]
    subprocess.run(command, shell=True, cwd=part, check=True, capture_output=True)
    again = omh_t(part, "memory", "lint", "--ref", "origin/feature")
    assert again.code == 0, again.out + again.err
    assert "2 notes read" in again.out
    # HEAD's blobs came with the checkout: recall works
    found = omh_t(part, "memory", "recall", "alpha words")
    assert found.code == 0 and "alpha" in found.out


def test_wrong_recall_in_a_blobless_clone_without_checkout_is_refused(tmp_path: Path) -> None:
    src = _filterable_source(tmp_path)
    git(tmp_path, "clone", "-q", "--no-checkout", "--filter=blob:none", f"file://{src}", "part")
    part = tmp_path / "part"
    for args in (("memory", "recall", "alpha words"), ("memory", "lint", "--ref", "HEAD")):
        run = omh_t(part, *args)
        assert run.code == 1, (args, run.out, run.err)
        no_crash(run)
        assert "partial clone" in run.err, run.err
        assert "no note matched" not in run.out
    # one command fetches every blob recall needs, and then it answers
    recall = omh_t(part, "memory", "recall", "alpha words")
    command = recall.err.split("`")[1]
    assert command.startswith("git archive"), recall.err
    subprocess.run(command, shell=True, cwd=part, check=True, capture_output=True)
    found = omh_t(part, "memory", "recall", "alpha words")
    assert found.code == 0 and "alpha" in found.out, found.err


def test_wrong_a_treeless_clone_is_refused_by_name(tmp_path: Path) -> None:
    src = _filterable_source(tmp_path)
    git(tmp_path, "clone", "-q", "--filter=tree:0", f"file://{src}", "part")
    part = tmp_path / "part"
    run = omh_t(part, "memory", "lint", "--ref", "origin/feature")
    assert run.code == 1, run.err
    no_crash(run)
    assert "partial clone" in run.err, run.err


def test_wrong_a_missing_blob_is_a_git_failure_in_process(tmp_path: Path) -> None:
    src = _filterable_source(tmp_path)
    git(tmp_path, "clone", "-q", "--filter=blob:none", f"file://{src}", "part")
    ws = open_workspace(tmp_path / "part")
    with pytest.raises(GitFailure, match="partial clone"):
        scan_team(ws.repo, "origin/feature")
