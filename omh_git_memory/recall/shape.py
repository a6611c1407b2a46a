"""What a cache was made by: the settings and the code its content depends on.

A snapshot names the shape it was built with (`shape`), and the local-note cache
the code that made it (`code_digest`): a cache of another shape is never loaded,
nor patched as a base, so a changed setting or a changed tool never reuses what
the old one built.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
from pathlib import Path
from typing import Final

from omh_git_memory.model.config import Config
from omh_git_memory.model.keys import DEFAULT_TEMPLATES
from omh_git_memory.recall.snapshot import VERSION
from omh_git_memory.recall.tokens import VERSION as TOKENS_VERSION


def shape(config: Config) -> str:
    """A digest of everything besides the commit that a snapshot's content depends
    on: the settings the build reads (the checkout's `.omh/memory.toml`, as
    :func:`~omh_git_memory.model.config.load_config` gives them — committed or not: the
    stub and topic key templates, `[stubs] exclude`), the cache format, and the code
    that parses, derives and tokenises. A snapshot of another
    shape is never loaded, nor patched as a base: it is built again."""
    templates = config.keys.templates
    settings = (templates.get("stub", DEFAULT_TEMPLATES["stub"]),
                templates.get("topic", DEFAULT_TEMPLATES["topic"]),
                tuple(config.stub_exclude))
    return hashlib.sha256(repr((VERSION, TOKENS_VERSION, settings, code_digest())).encode(
        "utf-8", "surrogateescape")).hexdigest()


# The modules whose code shapes a snapshot's documents and postings (or the rows of
# the local-note cache, which `code_digest` names too), and mistune's (its version
# is in the file read): a change to any of them is a new shape. A module split off
# one of these that shapes what a cache holds must be listed here as well.
_SHAPING: Final = ("omh_git_memory.model.note", "omh_git_memory.model.plain_markdown",
                   "omh_git_memory.model.keys",
                   "omh_git_memory.stores.team", "omh_git_memory.stores.store",
                   "omh_git_memory.recall.content_id", "omh_git_memory.recall.stubs",
                   "omh_git_memory.recall.tokens", "omh_git_memory.recall.document",
                   "omh_git_memory.recall.postings", "omh_git_memory.recall.snapshot",
                   "omh_git_memory.recall.sources", "omh_git_memory.recall.build",
                   "omh_git_memory.recall.local_notes", "omh_git_memory.recall.local_index",
                   "omh_git_memory.git.last_changed",
                   __name__)


@functools.cache
def code_digest() -> str:
    """A digest of the source of the modules that shape an index (`_SHAPING`) and
    of mistune's package file: the tool's own version, exact even between
    releases. A file that cannot be read counts by its name alone."""
    digest = hashlib.sha256()
    for file in (*map(_source_file, _SHAPING), _source_file("mistune")):
        digest.update(str(file).encode("utf-8", "surrogateescape") + b"\0")
        with contextlib.suppress(OSError, TypeError):
            digest.update(Path(str(file)).read_bytes())
    return digest.hexdigest()


def _source_file(name: str) -> str | None:
    """The file module `name` is loaded from, found without importing it: some of
    `_SHAPING` import this module, and whichever of them a process has imported
    so far, the digest is the same."""
    with contextlib.suppress(ImportError, ValueError):
        spec = importlib.util.find_spec(name)
        return spec.origin if spec else None
    return None
