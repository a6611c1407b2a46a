"""`omh memory rm` (cli/notes.py): the text names every note whose link now dangles,
one a line, as `--json` does."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import omh
from tests.helpers.notes import remember, remembered


def test_rm_names_each_note_that_still_links_to_the_removed_one(repo_dir: Path) -> None:
    target = remembered(repo_dir, "Target.")
    linkers = [remembered(repo_dir, observed, "--relates-to", target)
               for observed in ("First linker.", "Second linker.")]
    run = remember(repo_dir, "Unrelated.")
    assert run.code == 0, run.err
    done = omh(repo_dir, "memory", "rm", target)
    assert done.code == 0, done.err
    lines = done.out.splitlines()
    assert lines[0].startswith(f"removed local/{target} (")
    assert lines[1:] == ["2 notes still link to it; those links now dangle:",
                         *sorted(f"  local/{k}" for k in linkers)]
