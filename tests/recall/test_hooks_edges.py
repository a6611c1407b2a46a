"""`omh hooks install` edges (recall/hooks.py): a hook skipped first does not stop
the ones after it, and a new hook's mode does not follow a permissive umask."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from omh_git_memory.git.repository import open_repo
from omh_git_memory.recall.hooks import HOOK_NAMES, MARKER, install


def test_a_skipped_first_hook_does_not_stop_the_others(repo_dir: Path) -> None:
    # post-merge is the first hook installed: skipping it goes on to the next two.
    mine = repo_dir / ".git/hooks" / HOOK_NAMES[0]
    mine.parent.mkdir(parents=True, exist_ok=True)
    mine.write_text("#!/bin/sh\necho mine\n")
    results = install(open_repo(repo_dir))
    assert [(r.name, r.action) for r in results] == [
        ("post-merge", "skipped"), ("post-checkout", "installed"),
        ("post-rewrite", "installed")]
    assert mine.read_text() == "#!/bin/sh\necho mine\n"
    for name in HOOK_NAMES[1:]:
        assert MARKER in (repo_dir / ".git/hooks" / name).read_text()


def test_a_new_hook_is_not_writable_by_others_even_under_umask_zero(repo_dir: Path) -> None:
    # A hook is code git runs: under umask 0 it is still rwxr-xr-x, never
    # group- or world-writable.
    old = os.umask(0)
    try:
        results = install(open_repo(repo_dir))
    finally:
        os.umask(old)
    assert [r.action for r in results] == ["installed"] * 3
    for name in HOOK_NAMES:
        mode = stat.S_IMODE((repo_dir / ".git/hooks" / name).stat().st_mode)
        assert mode == 0o755, oct(mode)
