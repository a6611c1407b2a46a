"""The note behind an indexed document, read again.

For `show`, the excerpts and the near-duplicate check: a local note from the
searcher's own, a team note or stub from git, a stub or the topic derived again
by the same functions the index used.
"""

from __future__ import annotations

from omh_git_memory.git.history import commit_date, resolve_commit
from omh_git_memory.git.repository import GitRepo
from omh_git_memory.git.trees import list_tree
from omh_git_memory.model.config import Config
from omh_git_memory.model.layers import Layer
from omh_git_memory.model.note import Note
from omh_git_memory.recall.build import snapshot_for
from omh_git_memory.recall.document import Doc
from omh_git_memory.recall.local_notes import LocalNotes
from omh_git_memory.recall.sources import derive_topic, written_or_stub


def note_of(repo: GitRepo, config: Config, doc: Doc, local: LocalNotes) -> Note | None:
    """The note `doc` indexes, read again: a local note from `local` (the searcher's,
    which parses it now if it was not yet), a team note or stub from git, the topic
    re-derived."""
    if doc.layer == Layer.LOCAL.value:
        return local.of(doc)
    if doc.derived:
        return derived_note(repo, config, doc)
    return written_or_stub(repo, config, doc)


def derived_note(repo: GitRepo, config: Config, doc: Doc, rev: str = "HEAD") -> Note | None:
    """Re-derive a stub or the topic (for `show`): the same function the index used,
    with the index's date (a stub's: the day its document last changed; the
    topic's: the commit's)."""
    if doc.is_stub:
        return written_or_stub(repo, config, doc)
    commit = resolve_commit(repo, rev)
    if commit is None or not doc.is_topic:
        return None
    snap = snapshot_for(repo, config, rev)
    stub_keys = [d.key for _, d in snap.live() if d.is_stub]
    return derive_topic(repo, config, list_tree(repo, commit), stub_keys, commit_date(commit))
