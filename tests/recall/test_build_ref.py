"""Indexes of past commits (`--ref REV`) beside HEAD's: built and cached per commit
like HEAD's, they never rewrite HEAD's index, never evict it, and never take its
place as the newest index, the base the next build of HEAD patches."""

from __future__ import annotations

import os
from pathlib import Path

from omh_git_memory.actions.workspace import open_workspace
from omh_git_memory.git.history import worktree_heads
from omh_git_memory.recall.build import cached_snapshot
from omh_git_memory.recall.cache_files import KEEP_SNAPSHOTS, index_dir
from omh_git_memory.recall.shape import shape
from omh_git_memory.recall.snapshot import newest
from tests.helpers import commit_files, git
from tests.helpers.repo import head_of, init_committed


def _files(folder: Path, commit: str) -> dict[str, tuple[bytes, int]]:
    """The bytes and modification time (ns) of a commit's two index files."""
    return {suffix: ((folder / f"{commit}{suffix}").read_bytes(),
                     (folder / f"{commit}{suffix}").stat().st_mtime_ns)
            for suffix in (".idx", ".post")}


def test_indexes_of_past_commits_leave_heads_alone(repo_dir: Path) -> None:
    init_committed(repo_dir)
    past = [commit_files(repo_dir, {f"docs/d{i}.md": f"# Doc {i}\n\nword{i}\n"}, f"doc {i}")
            for i in range(KEEP_SNAPSHOTS + 3)]
    head = commit_files(repo_dir, {"docs/last.md": "# Last\n"}, "last")
    ws = open_workspace(repo_dir)
    folder = index_dir(ws.repo)
    ws.searcher()  # HEAD's index, as recall builds it
    before = _files(folder, head)
    for commit in past:  # more past commits than the folder keeps
        snap = ws.at(commit).snapshot()
        assert snap.commit == commit and any(d.key == "docs/d0" for _, d in snap.live())
    assert _files(folder, head) == before  # neither rewritten nor evicted
    assert len(list(folder.glob("*.idx"))) == KEEP_SNAPSHOTS
    base = newest(folder, shape(ws.config()))
    assert base is not None and base.commit == head  # still the base of the next build
    loaded = cached_snapshot(ws.repo, ws.config())
    assert loaded is not None and loaded.commit == head
    warm = ws.at(past[-1]).snapshot()  # the last one asked is kept: a second ask loads it
    assert (warm.analysed, warm.reused) == (0, 0)


def test_head_asked_by_name_reads_heads_index_as_it_is(repo_dir: Path) -> None:
    # Even while the checkout's settings differ from the committed ones: `--ref HEAD`
    # is recall at HEAD less the local notes, from HEAD's own index.
    init_committed(repo_dir)
    commit_files(repo_dir, {"docs/deploy.md": "# Deploy\n\nThe canary waits.\n"})
    path = repo_dir / ".omh/memory.toml"
    path.write_text(path.read_text().replace("exclude = []", 'exclude = ["docs/*"]'))
    ws = open_workspace(repo_dir)
    head = head_of(repo_dir)
    ws.searcher()
    before = _files(index_dir(ws.repo), head)
    for rev in ("HEAD", head, head[:10], "main"):
        snap = ws.at(rev).snapshot()
        assert (snap.analysed, snap.reused) == (0, 0)  # loaded, not built
        assert not any(d.key == "docs/deploy" for _, d in snap.live())
    assert _files(index_dir(ws.repo), head) == before


def test_after_a_commit_a_past_commits_index_is_not_the_base_of_heads(
        repo_dir: Path) -> None:
    # HEAD moved past its index (a commit, a pull) and a past commit is asked before
    # recall at HEAD: HEAD's next build still patches the index of the commit before,
    # not the past one (which would cost a build of nearly everything).
    init_committed(repo_dir)
    old = head_of(repo_dir)
    for i in range(4):
        commit_files(repo_dir, {f"docs/d{i}.md": f"# Doc {i}\n\nword{i}\n"}, f"doc {i}")
    ws = open_workspace(repo_dir)
    before = ws.searcher().snapshot.commit
    commit_files(repo_dir, {"docs/d0.md": "# Doc 0\n\nword0, again\n"}, "one changed")
    ws.at(old).snapshot()
    base = newest(index_dir(ws.repo), shape(ws.config()))
    assert base is not None and base.commit == before
    snap = ws.snapshot()
    assert (snap.analysed, snap.reused) == (1, 5)  # the changed document alone is analysed


def test_past_commits_asked_in_one_worktree_leave_anothers_head_index(
        repo_dir: Path, tmp_path: Path) -> None:
    # Every worktree of a clone shares the cache: the HEAD an agent recalls at in a
    # linked worktree is a HEAD too, and its index stays.
    init_committed(repo_dir)
    past = [commit_files(repo_dir, {f"docs/d{i}.md": f"# Doc {i}\n\nword{i}\n"}, f"doc {i}")
            for i in range(KEEP_SNAPSHOTS + 3)]
    git(repo_dir, "worktree", "add", "-q", "-b", "other", str(tmp_path / "wt"), past[0])
    linked = open_workspace(tmp_path / "wt")
    linked.searcher()
    ws = open_workspace(repo_dir)
    ws.searcher()  # the main worktree's, newer
    folder = index_dir(ws.repo)
    before = _files(folder, past[0])
    for commit in past[1:]:
        ws.at(commit).snapshot()
    assert _files(folder, past[0]) == before
    loaded = cached_snapshot(linked.repo, linked.config())
    assert loaded is not None and loaded.commit == past[0]


def test_a_worktrees_head_that_is_no_regular_file_is_passed_over(
        repo_dir: Path, tmp_path: Path) -> None:
    init_committed(repo_dir)
    git(repo_dir, "worktree", "add", "-q", "-b", "other", str(tmp_path / "wt"))
    head = repo_dir / ".git" / "worktrees" / "wt" / "HEAD"
    head.unlink()
    os.mkfifo(head)  # opened plainly, it would block the build for ever
    ws = open_workspace(repo_dir)
    assert worktree_heads(ws.repo) == {head_of(repo_dir)}
    assert ws.at("HEAD~1").snapshot().commit is not None
