"""The fallback of a harness that caches tool descriptions: a marked block in
AGENTS.md with the store's census and the two imperatives no tool can carry.

Only the text between the markers is ever written; everything else in the file
stays byte for byte.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from omh_git_memory.agent.census import Census
from omh_git_memory.errors import ConfigError

BEGIN: Final = "<!-- omh:begin (written by `omh memory agents-md`; edits inside are replaced) -->"
END: Final = "<!-- omh:end -->"


def block(census: Census) -> str:
    return (
        f"{BEGIN}\n"
        "## Repository memory (omh)\n\n"
        f"This repository has a memory of {census.sentence()}. Ask it before assuming how "
        "something here works: the `recall` tool, or `omh memory recall \"your question\"`.\n\n"
        "- **Record what surprised you.** When something went differently from what you "
        "expected, call `remember` (or `omh memory remember`) with what you expected, what "
        "happened, the evidence, and the questions it answers.\n"
        "- **Rename notes through the tool, never with `mv`.** A note's key is its identity "
        "and other notes link to it.\n"
        f"{END}\n"
    )


def refresh(path: Path, census: Census) -> bool:
    """Write or refresh the block in `path`; True when the file changed."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    new_block = block(census)
    begins, ends = text.count(BEGIN), text.count(END)
    if begins == 0 and ends == 0:
        sep = "" if not text else ("\n" if text.endswith("\n") else "\n\n")
        updated = text + sep + new_block
    elif begins == 1 and ends == 1 and text.index(BEGIN) < text.index(END):
        start, stop = text.index(BEGIN), text.index(END) + len(END)
        if text[stop : stop + 1] == "\n":
            stop += 1
        updated = text[:start] + new_block + text[stop:]
    else:
        raise ConfigError(
            f"{path} has {begins} omh:begin and {ends} omh:end markers; leave exactly one "
            "pair (or none) and run this again"
        )
    if updated == text:
        return False
    path.write_text(updated, encoding="utf-8")
    return True
