"""`update`: change a note where it is, keeping everything not asked for.

`omh memory update`, `omh memory edit` (edit.py) and the MCP `remember(replaces=…)`
all write through here.

An update names the sections it changes; every other byte of the note — the
frontmatter's order and unknown fields, the other sections, the link text — is
kept as it was. The key never changes here (renaming is `omh memory mv`), nor
does the title unless asked: when `Observed` changes, its first sentence and the
title may then differ, and the caller says so.

The result passes the refusals `remember` applies (the byte rules, the schema,
lint's note-level refusals; with `strict`, links that must name a note), plus,
for a team note, what promote applies before anything reaches a commit: no
secret, no new link a teammate could not follow.

Where it is written:
- a local note is replaced in place, atomically, and only if its file still
  holds the bytes that were read (:meth:`LocalStore.replace_if`);
- a team note changes in a commit of its own, built like `rm`'s: refused when the
  index or working-tree copy holds anything HEAD does not;
- a derived note (a document's stub, the repository topic) is computed from the
  documents and is never updated: its document is what to edit.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import functools
import hashlib
import json
import os
import secrets
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Final

from omh_git_memory.actions.lint import note_refusals
from omh_git_memory.actions.promote import finish_team_commit, working_copy_set_aside
from omh_git_memory.actions.remember import Observation, build_surprise, first_sentence, plain_lines
from omh_git_memory.actions.workspace import Workspace
from omh_git_memory.expiry.triggers import trigger_problem
from omh_git_memory.git import nofollow
from omh_git_memory.git.commit import Change, commit_change
from omh_git_memory.git.history import resolve_commit
from omh_git_memory.git.staging import in_index, index_change
from omh_git_memory.git.trees import blob_in_tree, tree_file
from omh_git_memory.model import faults
from omh_git_memory.model.errors import (
    AmbiguousKey,
    ChangedMeanwhile,
    InvalidKey,
    NoteNotFound,
    NoteParseError,
    NoteRefused,
    NotUpdatable,
    NotYourNote,
    StoreError,
    UncommittedTeamEdit,
    UnsafePath,
)
from omh_git_memory.model.keys import Key, KeyTemplates, shell_word
from omh_git_memory.model.layers import Layer
from omh_git_memory.model.note import (
    Note,
    char_problem,
    decode,
    encode,
    parse,
    render,
    with_field,
    without_field,
)
from omh_git_memory.model.secret_scan import find_secrets
from omh_git_memory.stores.fileops import TMP_PREFIX
from omh_git_memory.stores.graph import Graph
from omh_git_memory.stores.reading import read_regular
from omh_git_memory.stores.store import LocalStore
from omh_git_memory.stores.team import team_path

SURPRISE_ONLY = ("expected", "observed", "evidence")


@dataclass(frozen=True)
class Changes:
    """What an update sets; None leaves it as it is. A list replaces the whole
    section (give every item that should remain)."""

    expected: str | None = None
    observed: str | None = None
    evidence: str | None = None
    answers: Sequence[str] | None = None
    relates_to: Sequence[str] | None = None
    invalidated_by: str | None = None
    source: str | None = None
    recorded: dt.date | None = None
    title: str | None = None
    add_answers: Sequence[str] | None = None  # added to the list (to `answers`, if given)
    add_relates_to: Sequence[str] | None = None
    # The files a new Evidence names (expiry/citations.py), set by `update` with it;
    # "" takes the field away (the new Evidence names none).
    cites: str | None = None

    def empty(self) -> bool:
        return all(getattr(self, name) is None for name in self.__dataclass_fields__)

    def with_additions(self, note: Note) -> Changes:
        """These changes with each `add_…` list made whole: the note's list (or the
        one given to replace it) and then the items added that it does not hold."""
        answers, related = self.answers, self.relates_to
        if self.add_answers is not None:
            base = list(answers) if answers is not None else list(_items(note, "Answers"))
            answers = base + [a for a in self.add_answers if a.strip() and a not in base]
        if self.add_relates_to is not None:
            base = list(related) if related is not None else list(note.links)
            related = base + [k for k in self.add_relates_to if k.strip() and k not in base]
        return replace(self, answers=answers, relates_to=related, add_answers=None,
                       add_relates_to=None)

    def dropped(self, note: Note) -> dict[str, tuple[str, ...]]:
        """What each whole list given replaces and no longer holds: `answers` and
        `relates_to` → the items of the note's list left out."""
        out = {}
        if self.answers is not None:
            kept = {a.strip() for a in self.answers}
            out["answers"] = tuple(a for a in _items(note, "Answers") if a not in kept)
        if self.relates_to is not None:
            kept = {k.strip() for k in self.relates_to}
            out["relates_to"] = tuple(k for k in note.links if k not in kept)
        return {name: items for name, items in out.items() if items}


def _items(note: Note, name: str) -> tuple[str, ...]:
    found = note.section(name)
    return found.items if found is not None else ()


@dataclass(frozen=True)
class Target:
    """The note an update changes, as it was read."""

    key: Key  # the note's own key
    layer: Layer
    file_key: Key  # the key its file's path names: where it is written back
    location: str
    note: Note
    data: bytes  # the file's bytes as read


@dataclass(frozen=True)
class Updated:
    key: Key
    layer: Layer
    path: str  # the local file, or the team note's repository path
    changed: bool  # False: the text asked for is the text it had
    note: Note
    commit: str | None = None  # the team layer's commit
    title_differs: bool = False  # Observed's first sentence is no longer the title
    # A list given whole (`answers`, `relates_to`) → the items it no longer holds.
    dropped: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # Files the note cited before and cites again at another blob: the new Evidence
    # took away the mark their change had put on the note (say so: it may be wrong).
    recited: tuple[str, ...] = ()


def find_target(graph: Graph, derived: Mapping[str, str], key: str,
                layer: Layer | None) -> Target:
    """The written note `key` names (in `layer`, or the one layer holding it), or a
    refusal saying why there is none to update."""
    found = {lay: graph.claimants(lay, key) for lay in Layer if layer in (None, lay)}
    holding = [lay for lay, entries in found.items() if entries]
    if not holding:
        if key in derived and layer in (None, Layer.TEAM):
            raise NotUpdatable(
                f"{key} is derived from {derived[key]}, not written: it is computed from the "
                "documents each time the index is built, so an update would not last; edit "
                "the document and commit it"
            )
        others = [lay for lay in Layer if graph.claimants(lay, key)]
        if others:
            raise NoteNotFound(f"no note {key} in the {layer} layer; the {others[0]} layer "
                               f"holds it: use --layer {others[0]}, or leave --layer out")
        broken = [e for e in graph.entries if e.key == key and e.note is None]
        if broken:
            raise NoteRefused(f"{broken[0].location} {broken[0].problem}; it does not read "
                              "back as a note, so fix the file by hand")
        raise NoteNotFound(f"no note {key} in {'any' if layer is None else f'the {layer}'} "
                           f"layer{_nearest(graph, key)}")
    if len(holding) > 1:
        raise AmbiguousKey(f"{key} is in both layers; say which with --layer team or --layer "
                           "local")
    entries = found[holding[0]]
    if len(entries) > 1:
        where = ", ".join(e.location for e in entries)
        raise AmbiguousKey(f"{key} is claimed by {len(entries)} files ({where}); `omh memory "
                           "lint` reports it (DuplicateKey): fix that first")
    entry = entries[0]
    assert entry.note is not None
    try:
        file_key = Key.from_relpath(entry.relpath)
    except InvalidKey as err:
        raise NoteRefused(f"{entry.location}: its path is no key ({err})") from None
    return Target(entry.note.key, entry.layer, file_key, entry.location, entry.note,
                  render(entry.note).encode("utf-8"))


def _nearest(graph: Graph, key: str) -> str:
    """`; did you mean K?` for a written key close enough to be a typo of `key`."""
    from omh_git_memory.model.similar import closest

    guess = closest(key, {e.key for e in graph.entries} - {key})
    return f"; did you mean {guess}?" if guess else "; `omh memory` lists the keys"


# --- the text: set what was asked, keep every other byte ---------------------------


def _clean(name: str, value: str) -> str:
    value = plain_lines(value)
    problem = char_problem(value)
    if problem is not None:
        raise NoteRefused(f"`{name}` {problem[0]}; remove it and update the note again")
    return value


_EMPTY_HINT = {
    "expected": "say what you thought would happen",
    "observed": "say what happened instead",
    "evidence": "give the command, the error or the file that shows it",
}


def apply_changes(note: Note, changes: Changes) -> str:
    """The note's text with `changes` made and nothing else touched, or
    :class:`NoteRefused` naming the value to fix."""
    if note.type != "surprise":
        given = [f"--{n.replace('_', '-')}" for n in SURPRISE_ONLY
                 if getattr(changes, n) is not None]
        if given:
            raise NoteRefused(f"{note.key} is a {note.type} note, which has no "
                              f"{', '.join(given)} section; "
                              f"`omh memory edit {shell_word(note.key)}` changes any part of it")
    text = render(note)
    wanted: list[tuple[str, str | tuple[str, ...]]] = []
    for name in SURPRISE_ONLY:
        value = getattr(changes, name)
        if value is None:
            continue
        value = _clean(name, value)
        if not value.strip():
            raise NoteRefused(f"`{name}` is empty; {_EMPTY_HINT[name]}")
        wanted.append((name.capitalize(), value.strip("\n")))
    if changes.answers is not None:
        answers = tuple(_one_line("answers", _clean("answers", a).strip())
                        for a in changes.answers if a.strip())
        if not answers:
            raise NoteRefused("`answers` is empty; a note nobody can find is a note nobody "
                              "wrote")
        wanted.append(("Answers", answers))
    if changes.relates_to is not None:
        related: list[str] = []
        for target in changes.relates_to:
            try:
                key = Key(_clean("relates_to", target).strip())
            except InvalidKey as err:
                raise NoteRefused(f"relates_to: {err}") from None
            if f"[[{key}]]" not in related:
                related.append(f"[[{key}]]")
        if not related:
            raise NoteRefused("`relates_to` is empty; give the keys of related notes")
        wanted.append(("Related", tuple(related)))
    for name, value in wanted:
        text = _set_section(text, name, value)
    if changes.title is not None:
        title = " ".join(_clean("title", changes.title).split())  # one line, as remember's
        if not title:
            raise NoteRefused("`title` is empty; say in one line what the note is about")
        text = _set_title(text, title)
    fields: list[tuple[str, str]] = []
    if changes.invalidated_by is not None:
        trigger = _clean("invalidated_by", changes.invalidated_by).strip()
        problem = trigger_problem(trigger)
        if problem is not None:
            raise NoteRefused(f"invalidated_by: {problem}")
        fields.append(("invalidated_by", trigger))
    if changes.source is not None:
        source = _clean("source", changes.source).strip()
        if not source or "\n" in source:
            raise NoteRefused("`source` must be one non-empty line saying who observed this")
        fields.append(("source", source))
    if changes.recorded is not None:
        fields.append(("recorded", changes.recorded.isoformat()))
    if changes.cites is not None:
        fields.append(("cites", changes.cites))
    try:
        result = parse(text)
        for name, field_value in fields:
            result = (with_field(result, name, field_value) if field_value
                      else without_field(result, name))
    except NoteParseError as err:
        raise NoteRefused(f"the note would not read back: {err}") from None
    _same_structure(note, result, wanted, changes.title)
    return render(result)


def _one_line(name: str, value: str) -> str:
    if "\n" in value:
        raise NoteRefused(f"each `{name}` must fit on one line")
    return value


def _content(value: str | tuple[str, ...]) -> str:
    return value if isinstance(value, str) else "\n".join(f"- {item}" for item in value)


def _line_starts(text: str) -> list[int]:
    starts = [0]
    starts += [i + 1 for i, c in enumerate(text) if c == "\n"]
    return starts


def _set_section(text: str, name: str, value: str | tuple[str, ...]) -> str:
    """`text` with section `name`'s content replaced by `value` — its heading and
    the blank lines around its content kept — or the section added at the end."""
    note = parse(text)
    section = note.section(name)
    content = _content(value)
    listed = not isinstance(value, str)
    if section is None:
        end = text if text.endswith("\n") else text + "\n"
        return f"{end}\n## {name}\n{chr(10) if listed else ''}{content}\n"
    starts = _line_starts(text)
    heading = starts[section.line - 1]
    after = [s.line for s in note.sections if s.line > section.line]
    stop = starts[after[0] - 1] if after else len(text)
    heading_end = text.find("\n", heading)
    if heading_end == -1:  # the heading is the file's last line, with no line end
        return f"{text}\n{chr(10) if listed else ''}{content}\n"
    heading_end += 1
    raw = text[heading_end:stop]
    if raw.strip("\n"):
        lead = raw[: len(raw) - len(raw.lstrip("\n"))]
        trail = raw[len(raw.rstrip("\n")):] or "\n"
    else:
        lead = "\n" if listed else ""
        trail = "\n\n" if after else "\n"
    return text[:heading_end] + lead + content + trail + text[stop:]


def _set_title(text: str, title: str) -> str:
    note = parse(text)
    starts = _line_starts(text)
    body_start = starts[len(note.fields) + 2]  # after `---`, the fields, `---`
    for index in range(len(note.fields) + 2, len(starts)):
        line_end = text.find("\n", starts[index])
        line = text[starts[index]: line_end if line_end != -1 else len(text)]
        if line.strip():
            # The first line that is not blank is the `# Title` heading (parse says so).
            return text[: starts[index]] + f"# {title}" + text[starts[index] + len(line):]
    return text[:body_start] + f"# {title}\n" + text[body_start:]  # pragma: no cover


def _same_structure(before: Note, after: Note, wanted: Sequence[tuple[str, str | tuple[str, ...]]],
                    title: str | None) -> None:
    """Refuse a value that changed more than its own section: a line starting with
    `#` (a new heading) or an unclosed code fence swallowing what follows."""
    names = [s.name for s in before.sections]
    names += [name for name, _ in wanted if name not in names]
    broke = [s.name for s in after.sections] != names
    for name, value in wanted:
        section = after.section(name)
        got = None if section is None else (
            section.text if isinstance(value, str) else section.items)
        broke = broke or got != (value.strip("\n") if isinstance(value, str) else value)
    if title is not None:
        broke = broke or after.title != " ".join(title.split())
    if broke:
        raise NoteRefused(
            "the note would not read back: a value changed the note's structure when written "
            "(a line starting with `#`, or an unclosed code fence?); indent such lines or put "
            "them in a closed fence"
        )


# --- the checks every written text passes -----------------------------------------


def check_text(text: str, target: Target, graph: Graph, strict: bool) -> Note:
    """The note `text` reads as, or :class:`NoteRefused` with the first reason it
    may not replace `target`."""
    try:
        note = parse(decode(encode(text)))
    except NoteParseError as err:
        at = f" (line {err.line})" if err.line else ""
        raise NoteRefused(f"the note does not read back{at}: {err}") from None
    if note.key != target.key:
        raise NoteRefused(
            f"the key cannot change here ({target.key} became {note.key}); rename a note with "
            f"`omh memory mv {shell_word(target.key)} {shell_word(note.key)}`"
        )
    refusals = note_refusals(note)
    if refusals:
        rule, line, message = refusals[0]
        at = f" (line {line})" if line else ""
        raise NoteRefused(f"{rule}{at}: {message}")
    new_links = [t for t in note.links if t not in target.note.links]
    if target.layer is Layer.TEAM:
        for hit in find_secrets(text):
            raise NoteRefused(f"line {hit.line} looks like {hit.kind}; a team note is "
                              "committed, so remove it first")
        for link in new_links:
            if graph.reaches(link, Layer.TEAM):
                continue
            if graph.claimants(Layer.LOCAL, link):
                raise NoteRefused(f"[[{link}]] is a local note, which a teammate does not "
                                  f"have; promote it first (omh memory promote {shell_word(link)})")
            raise NoteRefused(f"[[{link}]] names no note; fix or remove the link")
    elif strict:
        for link in new_links:
            if not graph.reaches(link, Layer.LOCAL):
                raise NoteRefused(f"relates_to: {link} names no note in the store; link only "
                                  "to keys that exist (recall finds them), or leave it out")
    return note


# --- writing it back ----------------------------------------------------------------


def write_back(ws: Workspace, target: Target, text: str, verb: str = "update") -> Updated:
    """Put `text` in the place of `target`: in place for a local note, in a commit of
    its own for a team note. Nothing is written when `text` is what it holds."""
    note = parse(text)
    data = text.encode("utf-8")
    if data == target.data:
        path = target.location if target.layer is Layer.LOCAL else target.location.split(":", 1)[-1]
        return Updated(target.key, target.layer, path, False, note)
    faults.point("update:write")
    if target.layer is Layer.LOCAL:
        written = ws.local.replace_if(target.file_key, target.data, text)
        if written is None:
            raise ChangedMeanwhile(
                f"local/{target.key} changed while {verb} ran, so nothing was written; look at "
                f"it (omh memory show {shell_word(target.key)} --layer local) and run {verb} again"
            )
        return Updated(target.key, target.layer, str(written), True, note)
    path = team_path(target.file_key)
    commit = _commit_team(ws, target, path, data, verb)
    return Updated(target.key, target.layer, path, True, note, commit)


def _commit_team(ws: Workspace, target: Target, path: str, data: bytes, verb: str) -> str:
    head = resolve_commit(ws.repo, "HEAD")
    committed = tree_file(head, path)
    if committed is None or blob_in_tree(head, path) != target.data:
        raise ChangedMeanwhile(f"team/{target.key} changed at HEAD while {verb} ran, so "
                               f"nothing was committed; run {verb} again")
    staged = index_change(ws.repo, path, committed)
    if staged is None and not in_index(ws.repo, path):
        staged = "is staged for removal in the index"
    if staged is not None:
        raise UncommittedTeamEdit(_keep_or_drop(path, staged, verb))
    message = (f"omh: {verb} {target.key}\n\n"
               f"Changed in the team layer by `omh memory {verb}`.\n")
    with working_copy_set_aside(ws, path, committed[0], verb, UncommittedTeamEdit,
                                functools.partial(_keep_or_drop, verb=verb)):
        return commit_change(ws.repo, Change(add={path: data}, delete=(), message=message))


def _keep_or_drop(path: str, what: str, verb: str) -> str:
    return (f"{path} {what}; committing the {verb} over it would lose that. To keep it, "
            f"commit it (git commit {path}) and run {verb} again; to drop it, run "
            f"git restore --source=HEAD --staged --worktree {path} first")


# --- the three ways in ----------------------------------------------------------------


def derived_sources(ws: Workspace) -> dict[str, str]:
    from omh_git_memory.actions.remember import TeamKeys

    return dict(TeamKeys.of(ws.snapshot().docs).derived)


def update(ws: Workspace, key: str, changes: Changes, layer: Layer | None = None,
           strict: bool = False) -> Updated:
    """`omh memory update`: set the sections and fields `changes` gives. A new
    `invalidated_by` is pinned against HEAD first, as remember pins it."""
    if changes.invalidated_by is not None:
        from omh_git_memory.expiry.stale import pin_trigger

        changes = replace(changes, invalidated_by=pin_trigger(changes.invalidated_by,
                                                              ws.facts()))
    if changes.evidence is not None:  # the files it names now, as remember records them
        from omh_git_memory.expiry.citations import as_written, cites_field

        changes = replace(changes, cites=cites_field(changes.evidence,
                                                     as_written(ws.repo, ws.facts())) or "")
    if changes.empty():
        raise NoteRefused(f"nothing to update: give a section to change (--expected, "
                          f"--observed, --evidence, --answers, --add-answers, --relates-to, "
                          f"…), or run "
                          f"`omh memory edit {shell_word(key)}`")
    finish_team_commit(ws)
    graph = ws.graph()
    target = find_target(graph, derived_sources(ws), key, layer)
    changes = changes.with_additions(target.note)
    dropped = changes.dropped(target.note)  # what a list given whole no longer holds
    text = apply_changes(target.note, changes)
    note = check_text(text, target, graph, strict)
    done = write_back(ws, target, text)
    observed = note.section("Observed")
    differs = (changes.observed is not None and changes.title is None and observed is not None
               and first_sentence(observed.text) != note.title)
    return replace(done, title_differs=differs, dropped=dropped if done.changed else {},
                   recited=recited(target.note.field("cites"), changes.cites)
                   if done.changed else ())


def recited(before: str | None, after: str | None) -> tuple[str, ...]:
    """The paths `before` and `after` (two `cites` values) both cite, at different blobs."""
    if after is None:
        return ()
    from omh_git_memory.expiry.citations import parse_cites

    old = {c.path: c.blob for c in parse_cites(before)}
    return tuple(c.path for c in parse_cites(after) if c.path in old and old[c.path] != c.blob)


def replace_own(ws: Workspace, key: str, obs: Observation, templates: KeyTemplates,
                today: dt.date, graph: Graph | None = None) -> Updated:
    """An agent's correction of its own local note: the note `key` becomes the note
    `obs` describes (as `remember` builds it) and keeps its key.

    Own is :func:`agent_owned`: the note's `source` is exactly `obs.source` and its
    file is still the one an agent wrote, byte for byte. A team note, a derived
    note, a local note another writer recorded, or one a person changed since is
    refused with :class:`NotYourNote`. The caller records what it wrote
    (:func:`record_agent_write`)."""
    graph = graph or ws.graph()
    derived = derived_sources(ws)
    local = graph.claimants(Layer.LOCAL, key)
    if not local:
        if graph.claimants(Layer.TEAM, key):
            raise NotYourNote(key, "team", graph.claimants(Layer.TEAM, key)[0].location)
        if key in derived:
            raise NotYourNote(key, "derived", derived[key])
        raise NotYourNote(key, "missing")
    target = find_target(graph, derived, key, Layer.LOCAL)
    refused = agent_owned(ws.local, target.file_key, target.note, obs.source)
    if refused is not None:
        raise NotYourNote(key, refused, target.note.source)
    note = build_surprise(obs, templates, today)
    try:
        text = render(with_field(note, "key", target.key.value))
    except NoteParseError as err:
        raise NoteRefused(f"the note would not read back: {err}") from None
    # A link to a note not written yet is kept, as remember keeps it (the MCP answer
    # names it; lint warns DanglingLink until the note exists).
    check_text(text, target, graph, strict=False)
    return write_back(ws, target, text, verb="replace")


# --- what an agent wrote: the record `replaces` is checked against -----------------
#
# A note's `source` line says who wrote it, but anybody can write that line, and a
# person's `update`, `edit`, review's edit or a text editor keeps it as it was. So
# the server records, for each local note it writes, the digest of the exact bytes
# and the file they went into (its inode and change time: an inode number is
# reused as soon as it is freed, a change time is not): one small file per key in
# `.omh-agent/` at the store's root, outside the note format and out of every
# listing (a dot name). The note is the agent's to replace only while its file is
# that file holding those bytes; any other write — through omh or not — changes
# the bytes or the file, and a note brought back (after promote, say) is a new file.

AGENT_RECORDS: Final = ".omh-agent"
MAX_RECORD: Final = 4096


def _record_path(store: LocalStore, key: Key) -> Path:
    name = hashlib.sha256(key.value.encode("utf-8")).hexdigest()
    return store.root / AGENT_RECORDS / name


def record_agent_write(store: LocalStore, key: Key, data: bytes) -> None:
    """Record that an agent wrote `data` as the local note `key` (the file now at
    its path). Atomic; :class:`StoreError` when it cannot be recorded, in which
    case the note is simply not replaceable (nothing is lost)."""
    folder = store.root / AGENT_RECORDS
    try:
        written = os.lstat(store.path_for(key))
        with contextlib.suppress(FileExistsError):
            os.mkdir(folder, 0o700)
        if not stat.S_ISDIR(os.lstat(folder).st_mode):  # never through a symlink
            raise StoreError(f"{folder} is not a folder; move it away so omh can record "
                             "which notes an agent wrote")
        record = json.dumps({"key": key.value, "sha256": hashlib.sha256(data).hexdigest(),
                             "file": _identity(written)}).encode("utf-8")
        try:  # the folder reached from the store's root without following a link
            fd = nofollow.open_folder(store.root, AGENT_RECORDS)
        except UnsafePath as err:
            raise StoreError(str(err)) from None
        if fd is None:
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", str(folder))
        try:
            nofollow.put(fd, _record_path(store, key).name, record, new_mode=0o600,
                         tmp=f"{TMP_PREFIX}{secrets.token_hex(8)}", sync=False)
        finally:
            os.close(fd)
    except OSError as err:
        raise StoreError(f"cannot record that an agent wrote local/{key} in {folder}: "
                         f"{err.strerror}") from None


def agent_owned(store: LocalStore, key: Key, note: Note, source: str) -> str | None:
    """None when the local note `note`, in the file of `key`, is one an agent of
    `source` wrote and nobody has changed since; else why not: `other` (its
    `source` is another writer's), `unrecorded` (no agent's write of this key is
    recorded) or `changed` (the file is not the one, with the bytes, recorded)."""
    if note.source != source:
        return "other"
    raw = read_regular(_record_path(store, key), MAX_RECORD)
    try:
        record = json.loads(raw) if raw is not None else None
    except ValueError:  # a torn or hand-made record proves nothing
        record = None
    if not isinstance(record, dict) or record.get("key") != key.value:
        return "unrecorded"
    try:
        now = os.lstat(store.path_for(key))
    except (OSError, StoreError):
        return "changed"
    written = hashlib.sha256(render(note).encode("utf-8")).hexdigest()
    if record.get("sha256") != written or record.get("file") != _identity(now):
        return "changed"
    return None


def _identity(st: os.stat_result) -> list[int]:
    """Which file this is: its inode and the last change of its inode (a write, a
    rename, a chmod), so a new file that gets a freed inode number is another file."""
    return [st.st_ino, st.st_ctime_ns]
