"""Items 8, 10, 11, 12 and 15 of the second hostile review (docs/records/review-issue-23.md):
omh behaves as git would.

Who a commit is by (the environment before configuration), whether it is signed
(commit.gpgSign), which repository and working tree the environment names
(GIT_DIR, GIT_WORK_TREE, GIT_CEILING_DIRECTORIES), how a working copy under
line-ending filters compares with its blob, and where a private copy may live.
Each is checked against git itself where git can say.
"""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pygit2
import pytest

from omh_git_memory import cli
from tests.helpers import IDENTITY, Run, git, make_repo, note_text
from tests.helpers.repo import head_of

ENV_NAMES = ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE", "GIT_COMMITTER_NAME",
             "GIT_COMMITTER_EMAIL", "GIT_COMMITTER_DATE", "EMAIL", "GIT_DIR", "GIT_WORK_TREE",
             "GIT_CEILING_DIRECTORIES", "GIT_COMMON_DIR", "GIT_INDEX_FILE")


@pytest.fixture(autouse=True)
def _plain_environment(monkeypatch: pytest.MonkeyPatch, isolated_home: Path
                       ) -> Iterator[None]:
    """No identity or discovery variable leaks in from the shell running the tests,
    and libgit2 in this process reads the test's home, not the one it first saw
    (it fixes its global search path on first use)."""
    for name in ENV_NAMES:
        monkeypatch.delenv(name, raising=False)
    level = pygit2.enums.ConfigLevel.GLOBAL
    before = pygit2.settings.search_path[level]
    pygit2.settings.search_path[level] = str(isolated_home)
    yield
    pygit2.settings.search_path[level] = before


def omh_in(cwd: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
           *args: str, env: dict[str, str] | None = None) -> Run:
    """The CLI run in this process, from `cwd`, with `env` added for this run only."""
    capsys.readouterr()
    with monkeypatch.context() as m:
        m.chdir(cwd)
        for name, value in (env or {}).items():
            m.setenv(name, value)
        try:
            cli.main(list(args))
            code = 0
        except SystemExit as done:
            code = int(done.code or 0)
    out, err = capsys.readouterr()
    return Run(code, out, err)


def real_git(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """git with exactly the environment given (no identity of the helpers' git())."""
    base = {k: v for k, v in os.environ.items() if k not in ENV_NAMES}
    done = subprocess.run(["git", *args], cwd=cwd, env={**base, **(env or {})},
                          capture_output=True, text=True, check=True)
    return done.stdout


def _ready(repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
           ) -> str:
    """omh initialised and committed in `repo`, and one local note; its key."""
    assert omh_in(repo, monkeypatch, capsys, "init").code == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "omh init")
    run = omh_in(repo, monkeypatch, capsys, "memory", "remember", "--expected", "e",
                 "--observed", "The socket closes after a minute.", "--evidence", "v",
                 "--answers", "why does the socket close?", "--json")
    assert run.code == 0, run.err
    return str(run.json()["key"])


# --- item 11: GIT_AUTHOR_* / GIT_COMMITTER_* ------------------------------------

IDENT_ENV = {
    "GIT_AUTHOR_NAME": "Ada Author", "GIT_AUTHOR_EMAIL": "ada@example.invalid",
    "GIT_AUTHOR_DATE": "1700000000 +0130",
    "GIT_COMMITTER_NAME": "Cy Committer", "GIT_COMMITTER_EMAIL": "cy@example.invalid",
    "GIT_COMMITTER_DATE": "2023-11-15T10:00:00-05:00",
}


def test_gitstate_env_identity_is_recorded_as_git_records_it(
        repo_dir: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Item 11: GIT_AUTHOR_* / GIT_COMMITTER_* were ignored, so a promote made by a
    script or agent that sets them (as git's own hooks do) was recorded under the
    config identity, and its Signed-off-by named the wrong person. omh's commit
    must carry exactly the author and committer lines git's does."""
    key = _ready(repo_dir, monkeypatch, capsys)
    run = omh_in(repo_dir, monkeypatch, capsys, "memory", "promote", key, "--signoff",
                 env=IDENT_ENV)
    assert run.code == 0, run.err
    ours = real_git(repo_dir, "cat-file", "commit", "HEAD")
    real_git(repo_dir, "commit", "-q", "--allow-empty", "-s", "-m", "m", env=IDENT_ENV)
    theirs = real_git(repo_dir, "cat-file", "commit", "HEAD")

    def ident(text: str) -> list[str]:
        return [line for line in text.splitlines() if line.startswith(("author ", "committer "))]

    assert ident(ours) == ident(theirs)
    assert ident(ours)[0] == "author Ada Author <ada@example.invalid> 1700000000 +0130"
    assert ours.rstrip("\n").endswith("Signed-off-by: Cy Committer <cy@example.invalid>")


def test_gitstate_identity_falls_back_as_git_does(
        repo_dir: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Item 11: author.name / committer.email in config come before user.*, and
    $EMAIL stands in for a missing user.email (unless user.useConfigOnly) — a commit
    that git makes must not be refused or recorded otherwise by omh."""
    key = _ready(repo_dir, monkeypatch, capsys)
    r = pygit2.Repository(str(repo_dir))
    del r.config["user.email"]
    r.config["author.name"] = "Only Author"
    env = {"EMAIL": "from-env@example.invalid"}
    run = omh_in(repo_dir, monkeypatch, capsys, "memory", "promote", key, env=env)
    assert run.code == 0, run.err
    ours = real_git(repo_dir, "log", "-1", "--format=%an <%ae>|%cn <%ce>")
    real_git(repo_dir, "commit", "-q", "--allow-empty", "-m", "m", env=env)
    assert ours == real_git(repo_dir, "log", "-1", "--format=%an <%ae>|%cn <%ce>")
    assert ours.strip() == (f"Only Author <from-env@example.invalid>|{IDENTITY[0]} "
                            "<from-env@example.invalid>")


def test_badinput_unreadable_date_or_config_only_is_refused(
        repo_dir: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Item 11: a GIT_AUTHOR_DATE omh cannot read, or user.useConfigOnly with no
    user.email (git refuses too), is refused by name with nothing committed — never
    replaced by another date or a guessed address."""
    key = _ready(repo_dir, monkeypatch, capsys)
    head = head_of(repo_dir)
    run = omh_in(repo_dir, monkeypatch, capsys, "memory", "promote", key,
                 env={"GIT_AUTHOR_DATE": "next full moon"})
    assert run.code == 1 and "GIT_AUTHOR_DATE" in run.err, run.err
    r = pygit2.Repository(str(repo_dir))
    del r.config["user.email"]
    r.config["user.useConfigOnly"] = True
    run = omh_in(repo_dir, monkeypatch, capsys, "memory", "promote", key,
                 env={"EMAIL": "guess@example.invalid"})
    assert run.code == 1 and "user.email" in run.err, run.err
    assert head_of(repo_dir) == head
    assert git(repo_dir, "status", "--porcelain") == ""


# --- item 10: commit.gpgSign ----------------------------------------------------

def _gpg_home(tmp_path: Path) -> Path:
    home = tmp_path / "gnupg"
    home.mkdir(mode=0o700)
    subprocess.run(["gpg", "--homedir", str(home), "--batch", "--passphrase", "",
                    "--quick-gen-key", f"{IDENTITY[0]} <{IDENTITY[1]}>", "ed25519", "sign",
                    "never"], check=True, capture_output=True)
    return home


@pytest.mark.skipif(shutil.which("gpg") is None, reason="needs gpg")
def test_gitstate_gpgsign_commits_are_signed_as_git_signs_them(
        repo_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Item 10: with commit.gpgSign=true promote made an unsigned commit where
    `git commit` signs, so a branch protected by "require signed commits" rejected
    the push. omh's commit must be signed with the committer's key and verify."""
    key = _ready(repo_dir, monkeypatch, capsys)
    home = _gpg_home(tmp_path)
    monkeypatch.setenv("GNUPGHOME", str(home))
    try:
        pygit2.Repository(str(repo_dir)).config["commit.gpgSign"] = True
        run = omh_in(repo_dir, monkeypatch, capsys, "memory", "promote", key)
        assert run.code == 0, run.err
        assert "gpgsig " in real_git(repo_dir, "cat-file", "commit", "HEAD")
        status = real_git(repo_dir, "log", "-1", "--format=%G?")
        assert status.strip() == "G", status
    finally:
        subprocess.run(["gpgconf", "--homedir", str(home), "--kill", "gpg-agent"],
                       check=False, capture_output=True)


@pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="needs ssh-keygen")
def test_gitstate_gpgsign_ssh_format_signs_with_the_key_named(
        repo_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Item 10: gpg.format=ssh with user.signingKey a key file: the commit carries
    an SSH signature git verifies against the allowed signers."""
    key = _ready(repo_dir, monkeypatch, capsys)
    signing = tmp_path / "id_ed25519"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(signing)],
                   check=True)
    allowed = tmp_path / "allowed"
    allowed.write_text(f"{IDENTITY[1]} {(tmp_path / 'id_ed25519.pub').read_text()}")
    config = pygit2.Repository(str(repo_dir)).config
    config["commit.gpgSign"] = True
    config["gpg.format"] = "ssh"
    config["user.signingKey"] = str(signing)
    config["gpg.ssh.allowedSignersFile"] = str(allowed)
    run = omh_in(repo_dir, monkeypatch, capsys, "memory", "promote", key)
    assert run.code == 0, run.err
    assert real_git(repo_dir, "log", "-1", "--format=%G?").strip() == "G"


def test_gitstate_gpgsign_that_cannot_sign_is_refused_and_nothing_committed(
        repo_dir: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Item 10: where git would fail to sign (the signing program fails), omh must
    fail too — naming the cause and what to do — not commit unsigned; the note
    stays local, the branch, index and working tree are untouched."""
    key = _ready(repo_dir, monkeypatch, capsys)
    head = head_of(repo_dir)
    config = pygit2.Repository(str(repo_dir)).config
    config["commit.gpgSign"] = True
    config["gpg.program"] = shutil.which("false") or "false"
    run = omh_in(repo_dir, monkeypatch, capsys, "memory", "promote", key)
    assert run.code == 1, run.err
    assert "commit.gpgSign" in run.err and "nothing was committed" in run.err, run.err
    assert head_of(repo_dir) == head
    assert git(repo_dir, "status", "--porcelain") == ""
    assert not (repo_dir / ".git/index.lock").exists()
    listed = omh_in(repo_dir, monkeypatch, capsys, "memory", "--json")
    assert key in listed.out


def test_gitstate_git_dash_c_settings_reach_omh_as_they_reach_git(
        repo_dir: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Items 10 and 11, sibling: what `git -c` hands to the commands it runs
    (GIT_CONFIG_PARAMETERS; GIT_CONFIG_COUNT and its pairs) was ignored, so
    `git -c commit.gpgSign=false` (or an identity given so) did not reach omh,
    which read only the files. The settings git's environment carries come first."""
    key = _ready(repo_dir, monkeypatch, capsys)
    config = pygit2.Repository(str(repo_dir)).config
    config["commit.gpgSign"] = True
    config["gpg.program"] = shutil.which("false") or "false"
    said = real_git(repo_dir, "-c", "commit.gpgSign=false", "-c", "user.name=Via O'Dash C",
                    "-c", "alias.p=!printf %s \"$GIT_CONFIG_PARAMETERS\"", "p")
    head = head_of(repo_dir)
    run = omh_in(repo_dir, monkeypatch, capsys, "memory", "promote", key,
                 env={"GIT_CONFIG_PARAMETERS": said})
    assert run.code == 0, run.err
    assert real_git(repo_dir, "log", "-1", "--format=%an|%G?").strip() == "Via O'Dash C|N"
    git(repo_dir, "reset", "-q", "--hard", head)
    count = {"GIT_CONFIG_COUNT": "2", "GIT_CONFIG_KEY_0": "commit.gpgsign",
             "GIT_CONFIG_VALUE_0": "false", "GIT_CONFIG_KEY_1": "User.Email",
             "GIT_CONFIG_VALUE_1": "counted@example.invalid"}
    key = _ready_again(repo_dir, monkeypatch, capsys)
    run = omh_in(repo_dir, monkeypatch, capsys, "memory", "promote", key, env=count)
    assert run.code == 0, run.err
    ours = real_git(repo_dir, "log", "-1", "--format=%ae")
    real_git(repo_dir, "commit", "-q", "--allow-empty", "-m", "m", env=count)
    assert ours == real_git(repo_dir, "log", "-1", "--format=%ae") == "counted@example.invalid\n"


def _ready_again(repo: Path, monkeypatch: pytest.MonkeyPatch,
                 capsys: pytest.CaptureFixture[str]) -> str:
    run = omh_in(repo, monkeypatch, capsys, "memory", "remember", "--expected", "e",
                 "--observed", "The cache fills after an hour.", "--evidence", "v",
                 "--answers", "why does the cache fill?", "--json")
    assert run.code == 0, run.err
    return str(run.json()["key"])


# --- item 12: GIT_DIR / GIT_WORK_TREE / GIT_CEILING_DIRECTORIES -----------------

def _two_repos(tmp_path: Path) -> tuple[Path, Path]:
    a, b = tmp_path / "a", tmp_path / "b"
    make_repo(a, {"README.md": "# A\n", "src/x.txt": "x\n"})
    make_repo(b, {"README.md": "# B\n"})
    return a, b


@pytest.mark.parametrize("case", ["dir-and-tree", "dir-only", "tree-only", "relative-dir"])
def test_gitstate_discovery_follows_git_dir_and_work_tree(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str) -> None:
    """Item 12: inside repository A with GIT_DIR (and GIT_WORK_TREE) naming B, omh
    opened A — promote would commit into the repository git was not using. omh must
    pick the repository and working tree `git rev-parse` names."""
    from omh_git_memory.git.repository import open_repo

    a, b = _two_repos(tmp_path)
    cwd = a / "src"
    env = {
        "dir-and-tree": {"GIT_DIR": str(b / ".git"), "GIT_WORK_TREE": str(b)},
        "dir-only": {"GIT_DIR": str(b / ".git")},
        "tree-only": {"GIT_WORK_TREE": str(b)},
        "relative-dir": {"GIT_DIR": "../../b/.git", "GIT_WORK_TREE": "../../b"},
    }[case]
    top = real_git(cwd, "rev-parse", "--show-toplevel", env=env).strip()
    git_dir = real_git(cwd, "rev-parse", "--absolute-git-dir", env=env).strip()
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(cwd)
    repo = open_repo(cwd)
    assert repo.workdir == Path(top).resolve()
    assert repo.git_dir == Path(git_dir).resolve()


def test_gitstate_promote_commits_where_git_dir_points(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Item 12: the promote itself lands in B, as `git commit` would, and A's
    history, index and working tree are untouched."""
    a, b = _two_repos(tmp_path)
    key = _ready(b, monkeypatch, capsys)
    a_head = head_of(a)
    env = {"GIT_DIR": str(b / ".git"), "GIT_WORK_TREE": str(b)}
    run = omh_in(a / "src", monkeypatch, capsys, "memory", "promote", key, env=env)
    assert run.code == 0, run.err
    assert head_of(a) == a_head and git(a, "status", "--porcelain") == ""
    assert f".omh/notes/{key}.md" in git(b, "show", "--name-only", "--format=", "HEAD")
    assert git(b, "status", "--porcelain") == ""


def test_gitstate_ceiling_and_common_dir_are_not_ignored(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Item 12: GIT_CEILING_DIRECTORIES stops the search as git's does (git says
    "not a git repository" there, so must omh); GIT_COMMON_DIR, which omh does not
    follow, is refused rather than silently ignored."""
    from omh_git_memory.git.repository import open_repo
    from omh_git_memory.model.errors import NotARepository

    a, _b = _two_repos(tmp_path)
    env = {"GIT_CEILING_DIRECTORIES": str(a)}
    with pytest.raises(subprocess.CalledProcessError):
        real_git(a / "src", "rev-parse", "--show-toplevel", env=env)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(a))
    with pytest.raises(NotARepository, match="GIT_CEILING_DIRECTORIES"):
        open_repo(a / "src")
    monkeypatch.delenv("GIT_CEILING_DIRECTORIES")
    monkeypatch.setenv("GIT_COMMON_DIR", str(a / ".git"))
    with pytest.raises(NotARepository, match="GIT_COMMON_DIR"):
        open_repo(a)


def test_gitstate_an_index_file_git_would_use_instead_is_not_ignored(
        repo_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Item 12, sibling: GIT_INDEX_FILE naming another index was ignored, so omh
    staged into the repository's index where git would have used the other one.
    It is refused with nothing changed; naming this index (as git's hooks do) is
    fine."""
    key = _ready(repo_dir, monkeypatch, capsys)
    head = head_of(repo_dir)
    run = omh_in(repo_dir, monkeypatch, capsys, "memory", "promote", key,
                 env={"GIT_INDEX_FILE": str(tmp_path / "other-index")})
    assert run.code == 1 and "GIT_INDEX_FILE" in run.err, run.err
    assert head_of(repo_dir) == head and not (tmp_path / "other-index").exists()
    run = omh_in(repo_dir, monkeypatch, capsys, "memory", "promote", key,
                 env={"GIT_INDEX_FILE": ".git/index"})
    assert run.code == 0, run.err
    assert git(repo_dir, "status", "--porcelain") == ""


def test_escape_local_store_in_the_main_checkout_from_a_linked_worktree(
        repo_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Item 8, sibling (a guard: location.py checked every checkout already): an
    OMH_LOCAL_STORE inside the main checkout, named from a linked worktree, would
    put unreviewed notes where the main checkout's `git add -A` publishes them."""
    from omh_git_memory.actions.workspace import open_workspace
    from omh_git_memory.model.errors import StoreError

    linked = tmp_path / "linked"
    git(repo_dir, "worktree", "add", "-q", str(linked))
    with pytest.raises(StoreError, match="inside the checkout"):
        open_workspace(linked, environ={"OMH_LOCAL_STORE": str(repo_dir / "store")})


def test_gitstate_demo_never_commits_into_the_repository_git_dir_names(
        repo_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Item 12, sibling: once omh follows GIT_DIR, `omh demo` run with GIT_DIR set
    would have its steps (init, promote) commit into that repository — the user's
    — instead of the demo's own. The demo's steps must not inherit it. (Each step's
    environment is checked; running the whole demo takes most of a minute.)"""
    demo = importlib.import_module("omh_git_memory.cli.demo")
    seen: list[dict[str, str]] = []

    def step(argv: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        env = kwargs["env"]
        assert isinstance(env, dict)
        seen.append(env)
        Path(env["OMH_LOCAL_STORE"]).mkdir(exist_ok=True)  # as the real first step does
        return subprocess.CompletedProcess(argv, 0, "", "")

    monkeypatch.setenv("GIT_DIR", str(repo_dir / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(repo_dir))
    monkeypatch.setenv("GIT_INDEX_FILE", str(repo_dir / ".git/index"))
    monkeypatch.setattr(demo.subprocess, "run", step)
    monkeypatch.setattr("omh_git_memory.git.repository.commit_files", lambda *args: None)
    demo.run_demo()
    assert seen and all(not {"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"} & set(env)
                        for env in seen)


def test_gitstate_pre_commit_hook_in_a_linked_worktree_still_lints(
        repo_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Item 12: git runs a linked worktree's hooks with GIT_DIR set to the worktree's
    git dir and the working tree as cwd; following GIT_DIR must keep that the same
    checkout (a hook that lints another tree would pass a broken note)."""
    from omh_git_memory.git.repository import open_repo

    linked = tmp_path / "linked"
    git(repo_dir, "worktree", "add", "-q", str(linked))
    monkeypatch.setenv("GIT_DIR", str(repo_dir / ".git/worktrees/linked"))
    repo = open_repo(linked)
    assert repo.workdir == linked.resolve()
    assert repo.common_dir == (repo_dir / ".git").resolve()


# --- item 15: line-ending filters ---------------------------------------------

@pytest.fixture
def crlf_repo(tmp_path: Path) -> Path:
    """Team notes committed under `* text eol=crlf`, checked out afresh: the
    working copies hold CRLF, the blobs LF, and git calls the checkout clean."""
    origin = tmp_path / "origin"
    make_repo(origin, {
        ".gitattributes": "* text eol=crlf\n",
        ".omh/notes/deploy.md": note_text("deploy", body="How we ship.\n"),
        ".omh/notes/ci.md": note_text("ci", body="Runs after [[deploy]].\n"),
    })
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(origin), str(clone))
    pygit2.Repository(str(clone)).config["user.name"] = IDENTITY[0]
    pygit2.Repository(str(clone)).config["user.email"] = IDENTITY[1]
    assert b"\r\n" in (clone / ".omh/notes/deploy.md").read_bytes()
    assert git(clone, "status", "--porcelain") == ""
    return clone


def test_wrong_lint_worktree_reads_a_crlf_checkout_as_git_would_store_it(
        crlf_repo: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Item 15: the pre-commit hook (`lint --worktree`) refused every team note of a
    clean `eol=crlf` checkout for CR line endings, blocking every commit, while
    `lint --ref HEAD` passed. It must judge what `git add` would store."""
    ref = omh_in(crlf_repo, monkeypatch, capsys, "memory", "lint", "--ref", "HEAD", "--json")
    work = omh_in(crlf_repo, monkeypatch, capsys, "memory", "lint", "--worktree", "--json")
    assert ref.code == 0, ref.out
    assert work.code == 0, work.out
    assert work.json()["counts"] == ref.json()["counts"]


def test_wrong_team_mv_in_a_crlf_checkout_git_calls_clean(
        crlf_repo: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Item 15: team `mv` refused a clean CRLF checkout as "changes not committed"
    (a byte compare with the LF blob). It must rename, rewrite the link, and leave
    a checkout git calls clean, with the files as git would check them out."""
    run = omh_in(crlf_repo, monkeypatch, capsys, "memory", "mv", "deploy", "ops/deploy")
    assert run.code == 0, run.err
    assert git(crlf_repo, "status", "--porcelain") == ""
    assert not (crlf_repo / ".omh/notes/deploy.md").exists()
    linking = (crlf_repo / ".omh/notes/ci.md").read_bytes()
    assert b"[[ops/deploy]]" in linking and b"\r\n" in linking
    assert b"\r\n" in (crlf_repo / ".omh/notes/ops/deploy.md").read_bytes()
    blob = git(crlf_repo, "cat-file", "-p", "HEAD:.omh/notes/ci.md")
    assert "\r" not in blob


def test_wrong_team_update_and_rm_in_a_crlf_checkout(
        crlf_repo: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Item 15, siblings: update and rm of a team note compare the working copy
    with HEAD too; in a clean CRLF checkout both must go through and leave git
    status clean."""
    run = omh_in(crlf_repo, monkeypatch, capsys, "memory", "update", "deploy", "--layer",
                 "team", "--title", "How we ship now")
    assert run.code == 0, run.err
    assert git(crlf_repo, "status", "--porcelain") == ""
    run = omh_in(crlf_repo, monkeypatch, capsys, "memory", "rm", "ci", "--layer", "team")
    assert run.code == 0, run.err
    assert git(crlf_repo, "status", "--porcelain") == ""
    assert not (crlf_repo / ".omh/notes/ci.md").exists()


def test_wrong_crlf_checkout_edit_not_committed_is_still_refused(
        crlf_repo: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Item 15, the other side: filters make a clean copy clean, not an edit; a real
    uncommitted edit of a linking note is still refused by mv, and kept."""
    path = crlf_repo / ".omh/notes/ci.md"
    path.write_bytes(path.read_bytes().replace(b"Runs after", b"Runs well after"))
    edited = path.read_bytes()
    head = head_of(crlf_repo)
    run = omh_in(crlf_repo, monkeypatch, capsys, "memory", "mv", "deploy", "ops/deploy")
    assert run.code == 1 and "changes not committed" in run.err, run.err
    assert head_of(crlf_repo) == head and path.read_bytes() == edited


# --- item 8: a private copy in any checkout of the clone --------------------------

def test_escape_edit_copy_is_never_kept_in_another_checkout_of_the_clone(
        repo_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Item 8: from a linked worktree, a TMPDIR inside the main checkout let `edit`
    keep its private recovery copy there, untracked, where the main checkout's
    `git add -A` publishes an unreviewed note. It must be refused for every checkout
    of the clone, with nothing left behind."""
    key = _ready(repo_dir, monkeypatch, capsys)
    linked = tmp_path / "linked"
    git(repo_dir, "worktree", "add", "-q", str(linked))
    inside = repo_dir / "scratch"
    inside.mkdir()
    editor = tmp_path / "editor.sh"
    editor.write_text("#!/bin/sh\necho changed >> \"$1\"\nexit 1\n")
    editor.chmod(0o755)
    monkeypatch.setattr(tempfile, "tempdir", str(inside))
    run = omh_in(linked, monkeypatch, capsys, "memory", "edit", key,
                 env={"EDITOR": str(editor), "VISUAL": ""})
    assert run.code == 1, run.err
    assert "TMPDIR" in run.err and str(repo_dir.resolve()) in run.err, run.err
    assert list(inside.iterdir()) == []


GIT_DATES = ["@1700000000", "1700000000", "1700000000 +0100", "1700000000 -0230",
             "2023-11-14", "2023-11-14T22:13:20", "2023-11-14 22:13:20",
             "2023-11-14T22:13:20+01:00", "Tue, 14 Nov 2023 22:13:20 +0100",
             "2023-07-14T22:13:20"]


@pytest.mark.parametrize("date", GIT_DATES)
def test_gitstate_author_date_is_read_as_git_reads_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, date: str) -> None:
    """Item 11, found by the second look: `GIT_AUTHOR_DATE=@1700000000` (the form git's
    own hooks pass on) without a zone was recorded at +0000 where git records the
    local offset, and a date without a time was taken as midnight where git refuses
    it. omh must record what `git commit-tree` records under the same TZ, or refuse
    what it refuses."""
    import time

    from omh_git_memory.git import identity
    from omh_git_memory.model.errors import GitFailure

    monkeypatch.setenv("TZ", "Europe/Berlin")
    time.tzset()
    try:
        subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
        tree = real_git(tmp_path, "write-tree").strip()
        env = {"TZ": "Europe/Berlin", "GIT_AUTHOR_DATE": date}
        made = subprocess.run(["git", "commit-tree", tree, "-m", "m"], cwd=tmp_path,
                              capture_output=True, text=True,
                              env={**os.environ, **IDENT_ENV, **env})
        if made.returncode != 0:
            with pytest.raises(GitFailure):
                identity.parse_date(date, "GIT_AUTHOR_DATE")
            return
        author = next(line for line in real_git(tmp_path, "cat-file", "commit",
                                                made.stdout.strip()).splitlines()
                      if line.startswith("author "))
        seconds, zone = author.split()[-2:]
        offset = (int(zone[1:3]) * 60 + int(zone[3:])) * (-1 if zone[0] == "-" else 1)
        assert identity.parse_date(date, "GIT_AUTHOR_DATE") == (int(seconds), offset)
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
