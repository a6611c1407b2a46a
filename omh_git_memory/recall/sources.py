"""What a team document is made from, read again from git.

A written note or a stub is read by its content id (blob id and path); the
repository topic is derived from a commit's tree, named as the commit's own
`.omh/memory.toml` names the repository. The index builds from these, and
`show` and the semantic index read them again the same way.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Final

from omh_git_memory.git.repository import GitRepo
from omh_git_memory.git.trees import TreeEntry, blob_size, read_blob
from omh_git_memory.model.config import (
    CONFIG_NAME,
    DEFAULT_REPO_NAME,
    OMH_DIR,
    Config,
    repo_name_in,
)
from omh_git_memory.model.layers import Layer
from omh_git_memory.model.note import Note
from omh_git_memory.recall import content_id
from omh_git_memory.recall.document import Doc
from omh_git_memory.recall.stubs import repo_facts, stub_note, topic_note
from omh_git_memory.stores.reading import read_note_bytes


def written_or_stub(repo: GitRepo, config: Config, doc: Doc) -> Note | None:
    """A team note or stub, re-read from git by its content id (not the topic); a
    stub dated as the index dated it (the day its document last changed)."""
    if doc.problem or content_id.kind_of(doc.source) not in (content_id.Kind.NOTE,
                                                             content_id.Kind.STUB):
        return None
    blob_id, path = doc.content.blob_id, doc.content.path
    data = read_blob(repo, blob_id, path)
    if doc.is_stub:
        return stub_note(path, data.decode("utf-8", "replace"), config.keys,
                         dt.date.fromordinal(doc.recorded))
    return read_note_bytes(Layer.TEAM, path, path, data).note


def derive_topic(repo: GitRepo, config: Config, entries: Sequence[TreeEntry],
           stub_keys: Sequence[str], day: dt.date) -> Note | None:
    readme = next((e for e in entries if e.path.lower() == "readme.md"), None)
    found = None
    if readme is not None:
        found = (readme.path,
                 read_blob(repo, readme.blob_id, readme.path).decode("utf-8", "replace"))
    facts = repo_facts(committed_repo_name(repo, entries), [e.path for e in entries], found)
    return topic_note(facts, stub_keys, config.keys, day)


CONFIG_PATH: Final = f"{OMH_DIR}/{CONFIG_NAME}"


def committed_repo_name(repo: GitRepo, entries: Sequence[TreeEntry]) -> str:
    """The repository's name as the commit's own `.omh/memory.toml` gives it, else
    `repo`: never the checkout's folder, so every clone of a commit derives the same
    topic (and a cached index holds what a rebuild would)."""
    entry = next((e for e in entries if e.path == CONFIG_PATH and e.kind == "file"), None)
    if entry is None or blob_size(repo, entry.blob_id, entry.path) > _CONFIG_LIMIT:
        return DEFAULT_REPO_NAME
    return repo_name_in(read_blob(repo, entry.blob_id, entry.path)) or DEFAULT_REPO_NAME


_CONFIG_LIMIT: Final = 1 << 20  # a settings file this large is a mistake, not settings
