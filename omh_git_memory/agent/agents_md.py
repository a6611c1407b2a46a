"""The fallback of a harness that caches tool descriptions: a marked block in
AGENTS.md with the store's census and the two imperatives no tool can carry.

Only the text between the markers is ever written; everything else in the file
stays byte for byte.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from omh_git_memory.agent.census import Census
from omh_git_memory.git import nofollow
from omh_git_memory.model.errors import ConfigError

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
        "happened, the evidence, and the questions it answers. Keep the evidence's "
        "uncertainty; say when it happened, not when you learned it; add a dated status "
        "line for state that changes rather than rewriting the note.\n"
        "- **When notes disagree**, a team note outranks a local one whatever their dates; "
        "within a layer, the newer note and your task decide; ask the person only when two "
        "team notes disagree or the conflict blocks the task.\n"
        "- **Rename notes through the tool, never with `mv`.** A note's key is its identity "
        "and other notes link to it.\n"
        f"{END}\n"
    )


NAME: Final = "AGENTS.md"
_LIMIT: Final = 16 * 1024 * 1024


def refresh(checkout: Path, census: Census) -> tuple[bool, bool]:
    """Write or refresh the block in the checkout's AGENTS.md, through the one
    no-follow write path (a committed link there is refused, never followed);
    whether the file was there before, and whether it changed."""
    path = checkout / NAME
    found = nofollow.read(checkout, NAME, _LIMIT)
    try:
        text = "" if found is None else found.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{path} is not UTF-8 text; fix it, then run this again") from None
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
        return found is not None, False
    nofollow.write(checkout, NAME, updated.encode("utf-8"))
    return found is not None, True
