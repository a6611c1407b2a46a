"""Lint: the store-quality meter. Problems found in notes are data, not exceptions.

Each rule is one registry entry: a name, a severity and a check. Six rules
describe one note's shape and refuse it, one refuses a team note shaped like a
secret; four describe the store and warn.
Only a refusal makes lint fail, because `Orphan` fires on every note nothing
links to and failing on warnings would fail on the store's shape; reading the
team notes alone (CI, a pre-commit hook), a team link to no team note fails too
(:attr:`Linted.failed`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Final, Protocol

from omh_git_memory.expiry.triggers import trigger_problem
from omh_git_memory.model.errors import BadArguments
from omh_git_memory.model.keys import printable
from omh_git_memory.model.layers import Layer
from omh_git_memory.model.note import Note, link_line, render
from omh_git_memory.stores.graph import Graph
from omh_git_memory.stores.reading import StoredNote

if TYPE_CHECKING:
    from omh_git_memory.actions.workspace import Workspace


class Severity(StrEnum):
    REFUSED = "refused"
    WARNING = "warning"



@dataclass(frozen=True)
class Finding:
    rule: str
    severity: Severity
    layer: Layer
    key: str
    path: str
    line: int | None
    message: str

    def as_dict(self) -> dict[str, object]:
        return {
            "rule": self.rule,
            "severity": self.severity.value,
            "layer": self.layer.value,
            "key": self.key,
            "path": self.path,
            "line": self.line,
            "message": self.message,
        }


class Subject(Protocol):
    """What a finding is about: a file of a layer, or a document a stub derives from."""

    @property
    def layer(self) -> Layer: ...
    @property
    def key(self) -> str: ...
    @property
    def location(self) -> str: ...


@dataclass(frozen=True)
class DerivedSubject:
    """A document of the team layer's tree that a finding is about."""

    layer: Layer
    key: str
    location: str


# What a per-note check yields: (line or None, message).
Problem = tuple[int | None, str]
NoteCheck = Callable[[Note], Iterator[Problem]]
StoreCheck = Callable[[Graph], Iterator[tuple[Subject, int | None, str]]]


@dataclass(frozen=True)
class Rule:
    name: str
    severity: Severity
    summary: str
    note_check: NoteCheck | None = None  # shape of one note; also run at write time
    store_check: StoreCheck | None = None  # needs the whole store


def _unclosed_fence(note: Note) -> Iterator[Problem]:
    for fence in note.fences:
        if not fence.closed:
            yield fence.line, "this code fence never closes, so everything after it is code"


def _missing_section(note: Note) -> Iterator[Problem]:
    present = {s.name for s in note.sections}
    for name in note.spec.required:
        if name not in present:
            yield None, f"a {note.type} needs a `## {name}` section"


def _prose_in_list_section(note: Note) -> Iterator[Problem]:
    for section in note.sections:
        if section.name not in note.spec.list_only:
            continue
        for block in section.blocks:
            if block.kind != "list":
                yield block.line, f"`## {section.name}` holds a list and nothing else"
                break


def _unevaluatable_trigger(note: Note) -> Iterator[Problem]:
    value = note.invalidated_by
    if value is not None:
        problem = trigger_problem(value)
        if problem is not None:
            yield _line_of(note, "invalidated_by:"), f"invalidated_by: {problem}"


def _unreadable(graph: Graph) -> Iterator[tuple[StoredNote, int | None, str]]:
    for entry in graph.entries:
        if entry.note is None:
            yield entry, entry.problem_line, f"does not read back as a note: {entry.problem}"


def _key_disagrees_with_path(graph: Graph) -> Iterator[tuple[StoredNote, int | None, str]]:
    for entry, note in graph.readable:
        path_key = entry.path_key
        if path_key is None or path_key != note.key:
            expected = entry.relpath.removesuffix(".md")
            yield entry, _line_of(note, "key:"), (
                f"key is {note.key} but the file says {expected}; rename one so they agree"
            )


def _secret_in_team_note(graph: Graph) -> Iterator[tuple[StoredNote, int | None, str]]:
    """A team note is committed and pushed, so it may hold nothing shaped like a
    secret: promote refuses one, and this is the same check for a note committed
    by hand (the pre-commit hook and CI run `lint --worktree` / `--ref`). A local
    note never leaves the machine, so it is not scanned."""
    from omh_git_memory.model.secret_scan import find_secret_in_key, find_secrets

    for entry, note in graph.readable:
        if entry.layer is Layer.TEAM:
            for hit in find_secrets(render(note)):
                yield entry, hit.line, f"this line looks like {hit.kind}; remove it"
            kind = find_secret_in_key(entry.relpath.removesuffix(".md"))
            if kind is not None:
                yield entry, _line_of(note, "key:"), (
                    f"the note's path (its key) holds {kind}; rename it (omh memory mv "
                    f"{note.key} NEW-KEY) and consider the token leaked: revoke it")


def _duplicate_key(graph: Graph) -> Iterator[tuple[Subject, int | None, str]]:
    for entry, note in graph.readable:
        claimants = graph.claimants(entry.layer, note.key.value)
        if len(claimants) > 1 and claimants[0] is not entry:
            yield entry, _line_of(note, "key:"), (
                f"key {note.key} is also claimed by {claimants[0].location}"
            )
    # Two documents whose paths slug alike: the one whose path sorts first keeps
    # the stub (stubs.one_per_key); the other is named here, never silently lost.
    for key, path, kept_by in graph.clashes:
        yield DerivedSubject(Layer.TEAM, key, path), None, (
            f"the stub key {key} is also derived from {kept_by}, which keeps it, so this "
            "document has no stub; rename one of the two, or exclude one in [stubs] exclude"
        )
    # A derived note whose key a written note (or, for the topic, a stub) holds: two
    # notes of one key, each listed and found.
    for key, what, holder in graph.shadows:
        fix = ("change [repo] name in .omh/memory.toml and commit it" if "[repo] name" in what
               else "rename the document or the note, or exclude the document in "
               "[stubs] exclude")
        yield DerivedSubject(Layer.TEAM, key, what), None, (
            f"the key {key} of {what} is also held by {holder}; {fix}")


def _dangling_link(graph: Graph) -> Iterator[tuple[StoredNote, int | None, str]]:
    for entry, note in graph.readable:
        for target in note.links:
            if graph.reaches(target, entry.layer):
                continue
            if entry.layer is Layer.TEAM and graph.claimants(Layer.LOCAL, target):
                why = "is only in your local layer, which teammates do not have; promote it too"
            else:
                why = "names no note in the store"
            yield entry, link_line(note, target), f"[[{target}]] {why}"


def _near_duplicate(graph: Graph) -> Iterator[tuple[StoredNote, int | None, str]]:
    from omh_git_memory.actions.near_duplicate import compared, fold_command, one_per_note, pairs
    from omh_git_memory.model.keys import shell_word

    by_location: dict[str, StoredNote] = {}
    items = []
    for entry, note in graph.readable:
        item = compared(entry.layer, entry.location, note)
        if item is not None:
            by_location[entry.location] = entry
            items.append(item)
    for pair in one_per_note(pairs(items)):
        other = pair.original
        yield by_location[pair.note.location], None, (
            f"reads like {other.name} ({other.recorded.isoformat()}), {pair.similarity:.0f}% "
            f"alike; if both record the same thing, keep that one: fold in what this one adds "
            f"({fold_command(other, with_layer=True)}), then "
            f"`omh memory rm {shell_word(pair.note.key)} --layer {pair.note.layer.value}`")


def _orphan(graph: Graph) -> Iterator[tuple[StoredNote, int | None, str]]:
    inbound = graph.inbound()
    for entry, note in graph.readable:
        if not inbound.get((entry.layer, note.key.value)):
            yield entry, None, "no note links here"


RULES: Final[tuple[Rule, ...]] = (
    Rule("Unreadable", Severity.REFUSED, "a file in the store that does not read back as a note",
         store_check=_unreadable),
    Rule("UnclosedFence", Severity.REFUSED, "a code fence that never closes",
         note_check=_unclosed_fence),
    Rule("MissingSection", Severity.REFUSED, "a section the note's type must have",
         note_check=_missing_section),
    Rule("ProseInListSection", Severity.REFUSED,
         "a paragraph in a section that holds a list and nothing else",
         note_check=_prose_in_list_section),
    Rule("KeyDisagreesWithPath", Severity.REFUSED, "key says one thing and the filename another",
         store_check=_key_disagrees_with_path),
    Rule("UnevaluatableTrigger", Severity.REFUSED, "an invalidated_by omh has no way to check",
         note_check=_unevaluatable_trigger),
    Rule("LooksLikeSecret", Severity.REFUSED, "a team note line or key shaped like a secret",
         store_check=_secret_in_team_note),
    Rule("DuplicateKey", Severity.WARNING, "one key claimed by two files",
         store_check=_duplicate_key),
    Rule("DanglingLink", Severity.WARNING, "a [[link]] to a key that is not in the store",
         store_check=_dangling_link),
    Rule("Orphan", Severity.WARNING, "a note nothing links to", store_check=_orphan),
    Rule("NearDuplicate", Severity.WARNING, "a note that says what another note says",
         store_check=_near_duplicate),
)
RULES_BY_NAME: Final = {rule.name: rule for rule in RULES}


@dataclass(frozen=True)
class Report:
    findings: tuple[Finding, ...]
    notes: int  # files examined

    @property
    def counts(self) -> dict[str, int]:
        tally = Counter(f.rule for f in self.findings)
        return {rule.name: tally.get(rule.name, 0) for rule in RULES}

    @property
    def refused(self) -> bool:
        return any(f.severity is Severity.REFUSED for f in self.findings)


def lint(graph: Graph) -> Report:
    findings: list[Finding] = []
    for rule in RULES:
        if rule.store_check is not None:
            for entry, line, message in rule.store_check(graph):
                findings.append(_finding(rule, entry, line, message))
        if rule.note_check is not None:
            for entry, note in graph.readable:
                for line, message in rule.note_check(note):
                    findings.append(_finding(rule, entry, line, message))
    findings.sort(key=lambda f: (f.layer.value, f.key, f.path, f.line or 0, f.rule))
    return Report(tuple(findings), len(graph.entries))


@dataclass(frozen=True)
class Linted:
    """A lint run over one set of notes: the report, what was read (in words), and
    whether it fails."""

    report: Report
    read: str
    team_only: bool  # the team notes alone: committed at a revision, or in the worktree

    @property
    def failed(self) -> bool:
        """A refusal fails lint. So, when the team notes are read alone (CI, a
        pre-commit hook), does a team link no team note answers: teammates have only
        the team layer, where that link dangles."""
        return self.report.refused or (
            self.team_only and any(f.rule == "DanglingLink" for f in self.report.findings))


def lint_workspace(ws: Workspace, ref: str | None = None, worktree: bool = False) -> Linted:
    """Lint the team notes as the working tree has them (`worktree`), those committed
    at `ref`, or else the whole store: the team notes at HEAD and the local layer."""
    if ref is not None and worktree:
        raise BadArguments("--ref and --worktree name two different sets of notes; give one")
    if worktree:
        graph, read = ws.worktree_team_graph(), "the team notes in the working tree"
    elif ref is not None:
        graph, read = ws.graph(ref, local=False), f"the team notes at {ref}"
    else:
        from omh_git_memory.actions.lint_summary import fingerprint, remember_report

        mark = fingerprint(ws)  # before reading, so a change meanwhile is linted again
        graph, read = ws.graph(), f"team notes at HEAD and {ws.local.root}"
        linted = Linted(lint(graph), read, team_only=False)
        remember_report(ws, linted.report, mark)  # the counts recall's description shows
        return linted
    return Linted(lint(graph), read, team_only=True)


def note_refusals(note: Note) -> list[tuple[str, int | None, str]]:
    """The refusals one note earns on its own: what the write path checks."""
    return [
        (rule.name, line, message)
        for rule in RULES
        if rule.note_check is not None and rule.severity is Severity.REFUSED
        for line, message in rule.note_check(note)
    ]


def _finding(rule: Rule, entry: Subject, line: int | None, message: str) -> Finding:
    # A message is prose for a terminal or a CI log: a path or a key quoted in it
    # (read from a tree, so it may hold a newline or an escape) is escaped, and the
    # finding stays one line. `key` and `path` keep the exact names, for scripts.
    return Finding(rule.name, rule.severity, entry.layer, entry.key, entry.location, line,
                   printable(message))


def _line_of(note: Note, needle: str) -> int | None:
    text = render(note)
    index = text.find(needle)
    return None if index < 0 else text.count("\n", 0, index) + 1

