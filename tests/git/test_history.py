"""`git.history.commit_at`: the commit a `--ref REV` names, or one clear refusal
(NoSuchCommit) — never a tree, a blob, a guess at a truncated name, or a crash."""

from __future__ import annotations

import os
from pathlib import Path

import pygit2
import pytest

from omh_git_memory.git.history import commit_at
from omh_git_memory.git.repository import open_repo
from omh_git_memory.model.errors import NoSuchCommit
from tests.helpers import commit_files, git, make_repo


@pytest.fixture()
def two_commits(repo_dir: Path) -> tuple[Path, str, str]:
    first = git(repo_dir, "rev-parse", "HEAD").strip()
    second = commit_files(repo_dir, {"docs/a.md": "# A\n"}, "second")
    git(repo_dir, "tag", "light", first)
    git(repo_dir, "tag", "-a", "annotated", "-m", "a tag", first)
    return repo_dir, first, second


@pytest.mark.parametrize("rev", ["HEAD~1", "light", "annotated", "main~1", "@~1"])
def test_a_revision_naming_a_commit_is_that_commit(
        two_commits: tuple[Path, str, str], rev: str) -> None:
    repo, first, _ = two_commits
    assert str(commit_at(open_repo(repo), rev).id) == first


def test_a_short_id_and_head_name_their_commits(two_commits: tuple[Path, str, str]) -> None:
    repo, first, second = two_commits
    assert str(commit_at(open_repo(repo), first[:9]).id) == first
    assert str(commit_at(open_repo(repo), "HEAD").id) == second


@pytest.mark.parametrize(("rev", "said"), [
    ("nope", "revision 'nope' names no commit in"),
    ("HEAD~9", "revision 'HEAD~9' names no commit in"),
    ("--help", "revision '--help' names no commit in"),  # looks like an option: a name still
    ("-1", "revision '-1' names no commit in"),
    ("HEAD^{tree}", "revision 'HEAD^{tree}' names a tree, not a commit"),
    ("HEAD:", "revision 'HEAD:' names a tree, not a commit"),
    ("HEAD:docs/a.md", "revision 'HEAD:docs/a.md' names a blob, not a commit"),
    ("", "the revision is empty"),
    ("  ", "the revision is empty"),
    ("main..HEAD", "revision 'main..HEAD' names no commit in"),
    ("a\x1b[31mb", "revision 'a\\x1b[31mb' names no commit in"),  # escaped, one line
])
def test_a_revision_naming_no_commit_is_refused_by_name(
        two_commits: tuple[Path, str, str], rev: str, said: str) -> None:
    repo, _, _ = two_commits
    with pytest.raises(NoSuchCommit) as refused:
        commit_at(open_repo(repo), rev)
    assert str(refused.value).startswith(said)
    assert "\n" not in str(refused.value) and "\x1b" not in str(refused.value)


def test_a_nul_byte_is_refused_not_cut_short(two_commits: tuple[Path, str, str]) -> None:
    # libgit2 reads a name up to its NUL: `HEAD\0junk` would be HEAD.
    repo, _, _ = two_commits
    with pytest.raises(NoSuchCommit, match="holds a NUL byte"):
        commit_at(open_repo(repo), "HEAD\x00junk")


def test_a_branch_whose_name_is_not_utf8_is_found(two_commits: tuple[Path, str, str]) -> None:
    # Such a name reaches omh as surrogates (argv is decoded with os.fsdecode).
    repo, _, second = two_commits
    name = os.fsdecode(b"caf\xe9")
    git(repo, "branch", name)
    assert str(commit_at(open_repo(repo), name).id) == second


def test_an_unborn_head_is_refused_in_words(tmp_path: Path) -> None:
    path = tmp_path / "empty"
    pygit2.init_repository(str(path), initial_head="main")
    for rev in ("HEAD", "@"):
        with pytest.raises(NoSuchCommit, match="HEAD names no commit yet"):
            commit_at(open_repo(path), rev)
    with pytest.raises(NoSuchCommit, match="'main' names no commit"):
        commit_at(open_repo(path), "main")


def test_past_a_shallow_clones_history_the_refusal_says_to_fetch(tmp_path: Path) -> None:
    src = tmp_path / "src"
    make_repo(src)
    for n in range(3):
        commit_files(src, {f"f{n}.md": f"# {n}\n"}, f"c{n}")
    git(tmp_path, "clone", "-q", "--depth", "2", f"file://{src}", "shallow")
    shallow = open_repo(tmp_path / "shallow")
    assert commit_at(shallow, "HEAD~1")  # the boundary itself is there
    with pytest.raises(NoSuchCommit, match=r"this clone is shallow.*git fetch --deepen"):
        commit_at(shallow, "HEAD~2")
    with pytest.raises(NoSuchCommit) as full:
        commit_at(open_repo(src), "HEAD~9")
    assert "fetch" not in str(full.value)


def test_a_tag_of_a_tree_or_a_blob_is_refused_naming_what_it_tags(
        two_commits: tuple[Path, str, str]) -> None:
    repo, _, _ = two_commits
    git(repo, "tag", "-a", "of-a-tree", "-m", "a tree", "HEAD^{tree}")
    git(repo, "tag", "-a", "of-a-blob", "-m", "a blob", "HEAD:docs/a.md")
    git(repo, "tag", "-a", "of-a-tag", "-m", "a tag", "of-a-tree")
    for rev, what in (("of-a-tree", "tree"), ("of-a-blob", "blob"), ("of-a-tag", "tree")):
        with pytest.raises(NoSuchCommit, match=rf"^revision '{rev}' names a tag of a {what}, "
                                                "not a commit"):
            commit_at(open_repo(repo), rev)
