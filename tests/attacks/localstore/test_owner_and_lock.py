"""The local store, round two (items 3, 7, 17 and 18 of the second hostile review,
docs/records/review-issue-23.md): a store is opened only by the repository its
record names (`moved`), it is private to its owner whatever the umask (`secret`),
`mv` and the store's writers agree under one lock (`race`), and nobody waits
forever for a writer that stopped holding it (`hang`)."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from omh_git_memory import cli as omh_cli
from tests.helpers import (
    SEED_ARGS,
    Run,
    git,
    make_repo,
    omh,
    remember_linked,
    resume,
    start_at_fault,
    wait_stopped,
)

SEED_KEY = "surprise/mounting-a-credential-file-returns-ebusy"
FAST_LOCK = {"OMH_LOCK_TIMEOUT": "0.5"}


def cli(cwd: Path, *args: str, env: dict[str, str] | None = None) -> Run:
    """`omh ARGS` in this process, from `cwd`: its exit status, stdout and stderr."""
    out, err = io.StringIO(), io.StringIO()
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    os.environ.update(env or {})
    os.chdir(cwd)
    code = 0
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                omh_cli.main(list(args))
            except SystemExit as done:
                code = int(done.code or 0)
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    return Run(code, out.getvalue(), err.getvalue())


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def _stores(home: Path) -> list[Path]:
    memory = home / ".omh" / "memory"
    return sorted(memory.iterdir()) if memory.is_dir() else []


def _commits(repo: Path) -> int:
    return len(git(repo, "rev-list", "--all").split())


@pytest.fixture
def moved(tmp_path: Path) -> tuple[Path, Path]:
    """A clone with one local note, moved from `old` to `new`."""
    old = tmp_path / "api"
    make_repo(old)
    assert cli(old, "init").code == 0
    assert cli(old, *SEED_ARGS).code == 0
    new = tmp_path / "elsewhere" / "api"
    new.parent.mkdir()
    shutil.move(str(old), str(new))
    return old, new


def _every_verb_refuses(repo: Path, says: str) -> None:
    """Each verb that opens the store refuses in one line, showing no note."""
    for args in (("memory",), ("memory", "--json"), ("memory", "list"),
                 ("memory", "recall", "credential file"), ("memory", "show", SEED_KEY),
                 ("memory", "review"), ("memory", "lint"),
                 ("memory", "promote", SEED_KEY), ("memory", "rm", SEED_KEY),
                 ("memory", "mv", SEED_KEY, "surprise/x"),
                 ("memory", "update", SEED_KEY, "--observed", "Changed."),
                 ("memory", "remember", "--expected", "e", "--observed", "Y happened.",
                  "--evidence", "v", "--answers", "q"),
                 ("init",)):
        run = cli(repo, *args)
        assert run.code == 1, (args, run.out, run.err)
        assert says in run.err and run.err.count("\n") == 1, (args, run.err)
        assert "EBUSY" not in run.out and SEED_KEY not in run.out, (args, run.out)


def test_moved_an_unrelated_repository_at_the_old_path_cannot_open_the_store(
    moved: tuple[Path, Path], isolated_home: Path
) -> None:
    """Item 3: a new repository made where a moved clone was listed its private notes
    and `promote` committed them into its own unrelated history; the moved clone
    then had nothing left to adopt."""
    old, new = moved
    make_repo(old, {"other.txt": "an unrelated project\n"})
    [store] = _stores(isolated_home)
    before = {p: p.read_bytes() for p in store.rglob("*") if p.is_file()}
    _every_verb_refuses(old, "another repository")
    assert _commits(old) == 1  # nothing promoted into it
    assert {p: p.read_bytes() for p in store.rglob("*") if p.is_file()} == before
    adopted = cli(new, "adopt")  # the moved clone still finds its store
    assert adopted.code == 0, adopted.err
    assert SEED_KEY in cli(new, "memory").out
    # with the store gone, the new repository starts a store of its own
    assert cli(old, "init").code == 0
    assert SEED_KEY not in cli(old, "memory").out


def test_moved_an_empty_repository_at_the_old_path_cannot_open_the_store(
    moved: tuple[Path, Path], isolated_home: Path
) -> None:
    """Item 3: `git init` (no commit yet) at a moved clone's old path read its notes."""
    old, new = moved
    old.mkdir()
    git(old, "init", "-q")
    _every_verb_refuses(old, "another repository")
    assert cli(new, "adopt").code == 0


def test_moved_a_fresh_clone_at_the_old_path_refuses_then_may_take_the_store_over(
    moved: tuple[Path, Path], isolated_home: Path
) -> None:
    """Item 3: `git clone` of the same project at the moved clone's old path (same
    root commit, another clone id) took the moved clone's private notes. It is
    refused like another repository, and offered an explicit take-over for when
    the clone that made the store is gone."""
    old, new = moved
    git(old.parent, "clone", "-q", str(new), str(old))
    _every_verb_refuses(old, "another clone of this repository")
    [store] = _stores(isolated_home)
    run = cli(old, "memory")
    assert f"omh adopt {store}" in run.err
    taken = cli(old, "adopt", str(store))
    assert taken.code == 0, taken.err
    assert taken.out == f"took over {store} for this clone: 1 note\n"
    assert SEED_KEY in cli(old, "memory").out
    assert "adopt" not in cli(new, "memory").err  # the store is the fresh clone's now


def test_moved_an_unrelated_store_is_never_taken_over(
    moved: tuple[Path, Path], isolated_home: Path
) -> None:
    """Item 3: the take-over is for a clone of the same repository only."""
    old, _new = moved
    make_repo(old, {"other.txt": "x\n"})
    [store] = _stores(isolated_home)
    run = cli(old, "adopt", str(store))
    assert run.code == 1 and "another repository" in run.err, run.err


def test_moved_omh_local_store_of_another_repository_is_refused(
    tmp_path: Path, isolated_home: Path
) -> None:
    """Item 3 (OMH_LOCAL_STORE): one store exported for every shell gave repository B
    the notes of repository A, and promote committed them into B."""
    mounted = {"OMH_LOCAL_STORE": str(tmp_path / "mounted")}
    first, second = tmp_path / "a", tmp_path / "b"
    make_repo(first)
    make_repo(second, {"b.txt": "b\n"})
    assert cli(first, *SEED_ARGS, env=mounted).code == 0
    for args in (("memory",), ("memory", "show", SEED_KEY), ("memory", "promote", SEED_KEY)):
        run = cli(second, *args, env=mounted)
        assert run.code == 1 and "OMH_LOCAL_STORE" in run.err, (args, run.err)
        assert "another repository" in run.err and SEED_KEY not in run.out
    assert _commits(second) == 1
    # a sandbox's own clone of the same repository may mount it: same history
    sandbox = tmp_path / "sandbox"
    git(tmp_path, "clone", "-q", str(first), str(sandbox))
    assert SEED_KEY in cli(sandbox, "memory", env=mounted).out


# --- secret: the store is private ---------------------------------------------

def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def _wide(root: Path) -> list[str]:
    """Everything under (and with) `root` another account could read."""
    found = [] if _mode(root) == 0o700 else [f". {oct(_mode(root))}"]
    for path in root.rglob("*"):
        want = 0o700 if path.is_dir() else 0o600
        if not path.is_symlink() and _mode(path) != want:
            found.append(f"{path.relative_to(root)} {oct(_mode(path))}")
    return found


def test_secret_the_store_and_all_it_holds_are_private_under_umask_022(
    repo_dir: Path, isolated_home: Path, umask_022: None
) -> None:
    """Item 7: under the default umask the store was 0755 and its notes 0644, so any
    account on the machine read notes nobody had reviewed or scanned yet."""
    assert cli(repo_dir, "init").code == 0
    assert cli(repo_dir, *SEED_ARGS).code == 0
    [store] = _stores(isolated_home)
    assert _mode(isolated_home / ".omh") == 0o700
    assert _mode(isolated_home / ".omh" / "memory") == 0o700
    assert _wide(store) == []
    assert (store / ".omh-store").is_file()
    assert cli(repo_dir, "memory", "mv", SEED_KEY, "surprise/renamed/deeper").code == 0
    assert cli(repo_dir, "memory", "update", "surprise/renamed/deeper", "--observed",
               "Changed.").code == 0
    assert (store / ".omh-lock").is_file()
    assert _wide(store) == []


def test_secret_the_journal_is_private_while_it_exists(
    repo_dir: Path, isolated_home: Path, umask_022: None
) -> None:
    """Item 7: a rename's journal holds the notes' new text; it was 0755/0644."""
    remember_linked(repo_dir, "Alpha fails.")
    [store] = _stores(isolated_home)
    killed = omh(repo_dir, "memory", "mv", "surprise/alpha-fails", "surprise/x",
                 env={"OMH_FAULT": "journal:decided"})
    assert killed.code == -9
    assert (store / ".omh-journal").is_dir()
    assert _wide(store) == []


def test_secret_a_store_made_with_wide_modes_is_tightened(
    repo_dir: Path, isolated_home: Path, umask_022: None
) -> None:
    """Item 7: a store an older omh made 0755/0644 stays readable unless omh closes it."""
    remember_linked(repo_dir, "Alpha fails.")
    [store] = _stores(isolated_home)
    for path in [store, *store.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    (store / "odd").mkdir(mode=0o777)
    (store / "odd").chmod(0o777)
    assert cli(repo_dir, "memory").code == 0
    assert _wide(store) == []


# --- hang: a stopped writer ----------------------------------------------------

def test_hang_a_writer_stopped_holding_the_lock_blocks_nobody_forever(
    repo_dir: Path,
) -> None:
    """Item 18: `mv` stopped (Ctrl-Z, a debugger) while holding `.omh-lock` made
    every `omh memory`, recall, show and remember wait for ever."""
    remember_linked(repo_dir, "Alpha fails.")
    remember_linked(repo_dir, "Beta fails.", "surprise/alpha-fails")
    proc = start_at_fault(repo_dir, "journal:prepared:stop", "memory", "mv",
                          "surprise/alpha-fails", "surprise/x")
    try:
        wait_stopped(proc)
        for args in (("memory",), ("memory", "recall", "alpha"),
                     ("memory", "show", "surprise/beta-fails"),
                     ("memory", "remember", "--expected", "e", "--observed", "Gamma fails.",
                      "--evidence", "v", "--answers", "q"),
                     ("memory", "update", "surprise/beta-fails", "--observed", "Changed.")):
            run = omh(repo_dir, *args, env=FAST_LOCK, timeout=20)
            assert run.code == 1, (args, run.out, run.err)
            assert f"pid {proc.pid}" in run.err and "stopped" in run.err, run.err
            assert f"kill -CONT {proc.pid}" in run.err and run.err.count("\n") == 1, run.err
    finally:
        done = resume(proc)
    assert done.code == 0, done.err
    listed = cli(repo_dir, "memory", "--json").json()
    assert {n["key"] for n in listed["notes"] if n["layer"] == "local"} == {
        "surprise/x", "surprise/beta-fails"}


def test_hang_a_stopped_reader_delays_a_rename_only_for_the_timeout(
    repo_dir: Path,
) -> None:
    """Item 18: a reader stopped while holding the lock shared made `mv` wait forever."""
    remember_linked(repo_dir, "Alpha fails.")
    store = Path(cli(repo_dir, "memory", "--json").json()["local_store"])
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import fcntl,os,signal,sys;fd=os.open(sys.argv[1],os.O_RDONLY|os.O_CREAT,0o600);"
         "fcntl.flock(fd,fcntl.LOCK_SH);os.kill(os.getpid(),signal.SIGSTOP)",
         str(store / ".omh-lock")], text=True)
    try:
        wait_stopped(holder)
        run = omh(repo_dir, "memory", "mv", "surprise/alpha-fails", "surprise/x",
                  env=FAST_LOCK, timeout=20)
        assert run.code == 1 and f"pid {holder.pid}" in run.err, run.err
        assert (store / "surprise/alpha-fails.md").exists()
    finally:
        holder.kill()
        holder.wait()
    assert cli(repo_dir, "memory", "mv", "surprise/alpha-fails", "surprise/x").code == 0


# --- race: mv and the writers agree under the lock ---------------------------

def test_race_a_note_remembered_while_mv_plans_is_relinked(repo_dir: Path) -> None:
    """Item 17: a note remembered while `mv` was planning kept `[[OLD]]`, a dangling
    link the rename had promised to rewrite."""
    remember_linked(repo_dir, "Alpha fails.")
    proc = start_at_fault(repo_dir, "mv:planned:stop", "memory", "mv",
                          "surprise/alpha-fails", "surprise/x")
    try:
        wait_stopped(proc)
        key = remember_linked(repo_dir, "Gamma fails.", "surprise/alpha-fails")
    finally:
        done = resume(proc)
    assert done.code == 0, done.err
    store = Path(cli(repo_dir, "memory", "--json").json()["local_store"])
    text = (store / f"{key}.md").read_text()
    assert "[[surprise/x]]" in text and "[[surprise/alpha-fails]]" not in text
    assert cli(repo_dir, "memory", "lint", "--json").json()["counts"]["DanglingLink"] == 0


def test_race_a_note_remembered_while_mv_switches_waits_or_is_refused(
    repo_dir: Path,
) -> None:
    """Item 17: while `mv` holds the lock, a remember neither slips a `[[OLD]]` link
    past it nor waits for ever: it is refused, naming the rename that holds the lock."""
    remember_linked(repo_dir, "Alpha fails.")
    proc = start_at_fault(repo_dir, "journal:decided:stop", "memory", "mv",
                          "surprise/alpha-fails", "surprise/x")
    try:
        wait_stopped(proc)
        run = omh(repo_dir, "memory", "remember", "--expected", "e", "--observed",
                  "Gamma fails.", "--evidence", "v", "--answers", "q", "--relates-to",
                  "surprise/alpha-fails", env=FAST_LOCK, timeout=20)
        assert run.code == 1 and f"pid {proc.pid}" in run.err, run.err
    finally:
        done = resume(proc)
    assert done.code == 0, done.err
    assert cli(repo_dir, "memory", "lint", "--json").json()["counts"]["DanglingLink"] == 0


def test_race_remember_agrees_with_a_finished_rename(repo_dir: Path) -> None:
    """Item 17: a strict remember (as an agent's) that read the keys before a rename
    and wrote after it linked the old key; it is refused under the lock instead."""
    from omh_git_memory.actions.remember import Observation, TeamKeys, remember
    from omh_git_memory.actions.workspace import open_workspace
    from omh_git_memory.model.errors import NoteRefused

    remember_linked(repo_dir, "Alpha fails.")
    ws = open_workspace(repo_dir)
    known = {"surprise/alpha-fails"}  # read before the rename
    assert cli(repo_dir, "memory", "mv", "surprise/alpha-fails", "surprise/x").code == 0
    obs = Observation(expected="e", observed="Gamma fails.", evidence="v", answers=["q"],
                      relates_to=["surprise/alpha-fails"])
    with pytest.raises(NoteRefused, match="surprise/alpha-fails"):
        remember(ws.local, obs, ws.config().keys, known_keys=known,
                 team=TeamKeys({}, {}))


# --- moved, round two: stores recorded before the first commit, shallow clones,
# several roots (review F5 and F9 of item 3) ------------------------------------


def _record(store: Path) -> dict[str, object]:
    import json

    data: dict[str, object] = json.loads((store / ".omh-store").read_text(encoding="utf-8"))
    return data


def _snapshot(store: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in store.rglob("*") if p.is_file() and p.name != ".omh-lock"}


def test_dataloss_a_store_recorded_before_the_first_commit_is_never_taken_over(
    tmp_path: Path, isolated_home: Path
) -> None:
    """Item 3 (review F5): a store made before a clone's first commit records no root.
    An unrelated repository made at that clone's old path was told it was "another
    clone of this repository", `omh adopt STORE` took the store over, and promote
    committed the first clone's private note into the unrelated history."""
    old = tmp_path / "r"
    old.mkdir()
    git(old, "init", "-q")
    assert cli(old, "init").code == 0
    assert cli(old, *SEED_ARGS).code == 0
    [store] = _stores(isolated_home)
    assert _record(store)["root"] is None
    new = tmp_path / "A-moved"
    shutil.move(str(old), str(new))
    old.mkdir()
    (old / "x").write_text("x\n")
    git(old, "init", "-q")
    git(old, "add", "x")
    git(old, "commit", "-qm", "unrelated B")
    before = _snapshot(store)
    run = cli(old, "memory")
    assert run.code == 1 and "another clone of this repository" not in run.err, run.err
    assert "before its first commit" in run.err and run.err.count("\n") == 1, run.err
    taken = cli(old, "adopt", str(store))
    assert taken.code == 1 and "cannot be taken over" in taken.err, taken.err
    assert cli(old, "memory", "promote", SEED_KEY).code == 1
    assert _commits(old) == 1 and _snapshot(store) == before
    # the clone that made the store still adopts it, and its first commit fills the root in
    assert cli(new, "adopt").code == 0
    git(new, "commit", "-q", "--allow-empty", "-m", "first")
    assert SEED_KEY in cli(new, "memory").out
    [mine] = [s for s in _stores(isolated_home) if (s / ".omh-store").exists()]
    assert _record(mine)["root"] == git(new, "rev-list", "--max-parents=0", "HEAD").strip()


def test_dataloss_a_store_recorded_before_the_first_commit_gets_its_root(
    tmp_path: Path, isolated_home: Path
) -> None:
    """Item 3 (review F5): the record of a store made before the first commit stayed
    without a root for ever, so nothing could tell another repository from its own."""
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    assert cli(repo, *SEED_ARGS).code == 0
    git(repo, "commit", "-q", "--allow-empty", "-m", "first")
    assert cli(repo, "memory").code == 0
    [store] = _stores(isolated_home)
    assert _record(store)["root"] == git(repo, "rev-parse", "HEAD").strip()


def _history(path: Path, commits: int) -> None:
    make_repo(path)
    for n in range(commits):
        (path / f"f{n}").write_text(f"{n}\n")
        git(path, "add", f"f{n}")
        git(path, "commit", "-qm", f"change {n}")


def test_wrong_a_shallow_clone_may_mount_its_repositorys_store(
    tmp_path: Path, isolated_home: Path
) -> None:
    """Item 3 (review F9): a shallow clone (CI, a sandbox) was refused its own
    repository's mounted store as "another repository": its shallow boundary was
    taken for the first commit. A store first recorded by a shallow clone was then
    refused to every full clone."""
    full = tmp_path / "full"
    _history(full, 3)
    url = f"file://{full}"
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", url, str(shallow))
    assert (shallow / ".git" / "shallow").is_file()
    mounted = {"OMH_LOCAL_STORE": str(tmp_path / "mounted")}
    assert cli(full, *SEED_ARGS, env=mounted).code == 0
    run = cli(shallow, "memory", env=mounted)
    assert run.code == 0 and SEED_KEY in run.out, run.err
    # the other way round: a store the shallow clone records first
    first = {"OMH_LOCAL_STORE": str(tmp_path / "first")}
    assert cli(shallow, *SEED_ARGS, env=first).code == 0
    assert _record(tmp_path / "first")["root"] is None  # never the boundary
    run = cli(full, "memory", env=first)
    assert run.code == 0 and SEED_KEY in run.out, run.err
    # an unrelated repository is still refused a store its shallow clone recorded
    other = tmp_path / "other"
    make_repo(other, {"o.txt": "o\n"})
    assert cli(other, "memory", env=first).code == 0  # nothing known: not provably foreign
    assert cli(other, "memory", env=mounted).code == 1


def test_wrong_a_store_recorded_by_an_old_shallow_clone_is_opened(
    tmp_path: Path, isolated_home: Path
) -> None:
    """Item 3 (review F9): a record an older omh wrote in a shallow clone names the
    shallow boundary as the root; every full clone of that repository was refused."""
    full = tmp_path / "full"
    _history(full, 2)
    mounted = tmp_path / "mounted"
    assert cli(full, *SEED_ARGS, env={"OMH_LOCAL_STORE": str(mounted)}).code == 0
    record = _record(mounted)
    record["root"] = git(full, "rev-parse", "HEAD~1").strip()  # a boundary, not a root
    record["clone"] = "0" * 32
    import json

    (mounted / ".omh-store").write_text(json.dumps(record))
    run = cli(full, "memory", env={"OMH_LOCAL_STORE": str(mounted)})
    assert run.code == 0 and SEED_KEY in run.out, run.err


def test_wrong_a_merge_of_unrelated_histories_keeps_the_repositorys_store(
    tmp_path: Path, isolated_home: Path
) -> None:
    """Item 3 (review F9, several roots): after another history was merged in and the
    branch fast-forwarded to a merge whose first parent is that history, "the" root
    changed, and every clone was refused the store as another repository's."""
    repo = tmp_path / "repo"
    make_repo(repo)
    mounted = {"OMH_LOCAL_STORE": str(tmp_path / "mounted")}
    assert cli(repo, *SEED_ARGS, env=mounted).code == 0
    git(repo, "checkout", "-q", "--orphan", "other")
    git(repo, "rm", "-rqf", ".")
    (repo / "o.txt").write_text("o\n")
    git(repo, "add", "o.txt")
    git(repo, "commit", "-qm", "other history")
    git(repo, "merge", "-q", "--allow-unrelated-histories", "-m", "join", "main")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--ff-only", "other")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    for where in (repo, clone):
        run = cli(where, "memory", env=mounted)
        assert run.code == 0 and SEED_KEY in run.out, (where, run.err)


def test_dataloss_a_store_recorded_before_the_first_commit_is_not_adopted_elsewhere(
    tmp_path: Path, isolated_home: Path
) -> None:
    """Item 3 (review F5, sibling): `omh adopt OLD_PATH` run in an unrelated repository,
    naming the old path of a clone moved before its first commit, moved that clone's
    private notes into the unrelated repository's store (and out of their own)."""
    old = tmp_path / "a"
    old.mkdir()
    git(old, "init", "-q")
    assert cli(old, *SEED_ARGS).code == 0
    [store] = _stores(isolated_home)
    new = tmp_path / "a-moved"
    shutil.move(str(old), str(new))
    other = tmp_path / "b"
    make_repo(other, {"b.txt": "b\n"})
    before = _snapshot(store)
    run = cli(other, "adopt", str(old))
    assert run.code == 1 and "before its first commit" in run.err, (run.out, run.err)
    assert _snapshot(store) == before and SEED_KEY not in cli(other, "memory").out
    assert cli(new, "adopt").code == 0  # its own clone still can
    assert SEED_KEY in cli(new, "memory").out


def test_wrong_a_shallow_clone_is_not_offered_another_clones_store(
    tmp_path: Path, isolated_home: Path
) -> None:
    """Item 3 (review F9): a shallow clone made at a moved clone's old path was told the
    store held "another repository's" notes (its boundary taken for the root), with
    the wrong advice; it cannot tell, says so, and cannot take the store over."""
    full = tmp_path / "full"
    _history(full, 2)
    assert cli(full, *SEED_ARGS).code == 0
    moved_to = tmp_path / "elsewhere"
    shutil.move(str(full), str(moved_to))
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{moved_to}", str(full))
    run = cli(full, "memory")
    # (the test folder's own name holds "shallow": the words of the refusal are checked)
    assert run.code == 1 and "this clone is shallow and lacks the commit" in run.err, run.err
    assert run.err.count("\n") == 1, run.err
    assert "another repository" not in run.err
    [store] = _stores(isolated_home)
    taken = cli(full, "adopt", str(store))
    assert taken.code == 1 and "--unshallow" in taken.err, taken.err
    git(full, "fetch", "-q", "--unshallow")
    assert "another clone of this repository" in cli(full, "memory").err
