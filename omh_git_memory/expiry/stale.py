"""`omh memory stale`: a join of every note's trigger against facts git holds.

One walk of HEAD's tree per run, whatever the number of notes: file triggers
look up blob ids in it, image triggers hash the recipe files' blob ids, and all
symbol triggers share one pass over the source files of the languages omh can
read definitions in.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final

from omh_git_memory.expiry.triggers import PinError, State, Verdict, evaluate, pin
from omh_git_memory.git.history import resolve_commit
from omh_git_memory.git.repository import GitRepo
from omh_git_memory.git.trees import list_tree, read_blob
from omh_git_memory.model.config import Config
from omh_git_memory.model.errors import GitFailure, NoteRefused
from omh_git_memory.recall.document import Doc

# Definition patterns per language: each group captures a name being defined.
# Every pattern must stay linear in the file's size, whatever the file holds (a
# hostile header once took 41 s): no span may cross a line (`[^;\n]`, not `[^;]`),
# and no two neighbouring parts may match the same characters (`(?:word[ \t]+)+`,
# not `[\w ]+[ \t]+`), so a failed match gives up in one step. What needs more than
# a line (C's `typedef … NAME;`) is a scan of its own, below.
_DEFINITIONS: Final[dict[str, tuple[tuple[str, ...], str]]] = {
    "Python": ((".py", ".pyi"),
               r"^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+(?P<n>{name})\b"
               r"|^(?P<a>{name})[ \t]*(?::[^=\n]*)?=(?!=)"),
    "Rust": ((".rs",),
             r"\b(?:fn|struct|enum|trait|type|const|static|mod|union)[ \t]+(?P<n>{name})\b"
             r"|\bmacro_rules![ \t]*(?P<a>{name})\b"),
    "Go": ((".go",),
           r"\bfunc[ \t]+(?:\([^()\n]*\)[ \t]*)?(?P<n>{name})\b"
           r"|\b(?:type|var|const)[ \t]+(?P<a>{name})\b"),
    "JavaScript/TypeScript": ((".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts"),
                              r"\b(?:function\*?|class|interface|type|enum|const|let|var)"
                              r"[ \t]+(?P<n>{name})\b"
                              r"|^[ \t]*(?:(?:public|private|protected|static|async|readonly)"
                              r"[ \t]+)*(?P<a>{name})[ \t]*\([^)\n]*\)[ \t]*(?::[^{{\n]*)?\{{"),
    "C/C++": ((".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".hxx"),
              r"^[ \t]*#[ \t]*define[ \t]+(?P<n>{name})\b"
              r"|\b(?:struct|class|enum|union|namespace)[ \t]+(?P<a>{name})\b"
              r"|^[A-Za-z_][\w \t\*&:<>,]*?\b(?P<f>{name})[ \t]*\([^;\n]*$"),
    "Java": ((".java",),
             r"\b(?:class|interface|enum|record)[ \t]+(?P<n>{name})\b"
             r"|^[ \t]*(?:[\w<>\[\],.]+[ \t]+)+(?P<a>{name})[ \t]*\([^;\n]*$"),
}


_NAME: Final = r"[A-Za-z_$][\w$]*"
_TYPEDEF: Final = re.compile(r"\btypedef\b")
_BRACE: Final = re.compile(r"[{}]")


def _typedef_names(text: str) -> set[str]:
    """C's `typedef … NAME;`, which may span lines: the name right before the `;`
    that ends each statement holding `typedef` outside braces (a `;` inside them
    ends a member), or a statement inside a body. One split, one pass: linear."""
    names: set[str] = set()
    depth = begin = end = 0
    for piece in text.split(";")[:-1]:  # the last piece has no `;` after it
        end += len(piece) + 1
        depth = max(depth + piece.count("{") - piece.count("}"), 0)
        if depth:  # a `;` inside braces ends a member or a body's statement
            statement = outside = _BRACE.split(piece)[-1]
        else:  # `typedef struct { int x; } Point`: the statement spans the braces
            statement, begin = text[begin:end - 1], end
            outside = statement.split("{", 1)[0] + " " + _BRACE.split(statement)[-1]
        if "typedef" not in outside or not _TYPEDEF.search(outside):
            continue
        name = _trailing_name(statement.rstrip(" \t"))
        if name:
            names.add(name)
    return names


def _word(c: str) -> bool:
    return c.isalnum() or c == "_"


def _trailing_name(text: str) -> str | None:
    """The identifier `text` ends with: its rightmost start at a word boundary
    whose first character may begin a name, or None."""
    start = len(text)
    while start > 0 and (_word(text[start - 1]) or text[start - 1] == "$"):
        start -= 1
    for i in range(len(text) - 1, start - 1, -1):
        c = text[i]
        before = _word(text[i - 1]) if i > 0 else False
        if ((c.isascii() and c.isalpha()) or c in "_$") and before != _word(c):
            return text[i:]
    return None


# Scans for what a line pattern cannot see, per language.
_EXTRA: Final[dict[str, Callable[[str], set[str]]]] = {"C/C++": _typedef_names}


@dataclass
class TreeFacts:
    """The facts triggers are evaluated against, from one walk of a commit's tree."""

    repo: GitRepo
    config: Config
    rev: str = "HEAD"
    _blobs: dict[str, str] | None = None
    _symbols: dict[str, bool] = field(default_factory=dict)
    _languages: set[str] | None = None
    _digest: tuple[str | None] | None = None

    def blobs(self) -> dict[str, str]:
        if self._blobs is None:
            commit = resolve_commit(self.repo, self.rev)
            entries = list_tree(self.repo, commit) if commit is not None else []
            self._blobs = {e.path: e.blob_id for e in entries if e.kind == "file"}
        return self._blobs

    def blob_at(self, path: str) -> str | None:
        return self.blobs().get(path)

    def recipe_files(self) -> tuple[str, ...]:
        return self.config.image_recipe

    def recipe_digest(self) -> str | None:
        if self._digest is None:
            self._digest = (self._recipe_digest(),)
        return self._digest[0]

    def _recipe_digest(self) -> str | None:
        chosen = sorted(
            (path, blob) for path, blob in self.blobs().items()
            if any(path == r or (r.endswith("/") and path.startswith(r))
                   for r in self.config.image_recipe)
        )
        if not chosen:
            return None
        return hashlib.sha256(repr(chosen).encode()).hexdigest()

    def base_month(self) -> str | None:
        return self.config.base

    def defines(self, symbol: str) -> bool | None:
        if symbol not in self._symbols:
            self.scan_symbols([symbol])
        if not self._languages:
            return None
        return self._symbols[symbol]

    def scan_symbols(self, symbols: Iterable[str]) -> None:
        """Look for definitions of every `symbol` in one pass over the source files."""
        # The name looked for is the last segment of a qualified one; several
        # symbols may share it (`parse`, `A.parse`, `B::parse`): each gets the answer.
        wanted: dict[str, list[str]] = {}
        for s in symbols:
            if s not in self._symbols:
                self._symbols[s] = False
                wanted.setdefault(s.replace("::", ".").rsplit(".", 1)[-1], []).append(s)
        if not wanted:
            return
        self._languages = set()
        patterns = {lang: (exts, re.compile(pattern.format(name=_NAME), re.M))
                    for lang, (exts, pattern) in _DEFINITIONS.items()}
        remaining = set(wanted)
        for path, blob in self.blobs().items():
            lang = next((lg for lg, (exts, _) in patterns.items() if path.endswith(exts)), None)
            if lang is None:
                continue
            self._languages.add(lang)
            if not remaining:
                continue
            text = read_blob(self.repo, blob, path).decode("utf-8", errors="replace")
            defined = {g for match in patterns[lang][1].finditer(text)
                       for g in match.groups() if g}
            if lang in _EXTRA:
                defined |= _EXTRA[lang](text)
            for name in remaining & defined:
                for original in wanted[name]:
                    self._symbols[original] = True
            remaining -= defined


    def defined_in(self, symbols: Iterable[str]) -> dict[str, tuple[str, ...]]:
        """The files that define each of `symbols` (as `defines` finds definitions),
        from one pass over the source files. Past MAX_CITE_SCAN bytes of them the
        answer is empty (no symbol is then known to be defined in one file only): a
        citation is a soft signal, and a write must not read a monorepo for one. So
        it is when a source file's blob is not in this clone (a partial one): no
        write is refused for a citation."""
        wanted: dict[str, list[str]] = {}
        for s in symbols:
            wanted.setdefault(s.replace("::", ".").rsplit(".", 1)[-1], []).append(s)
        found: dict[str, list[str]] = {s: [] for names in wanted.values() for s in names}
        if not wanted:
            return {}
        patterns = {lang: (exts, re.compile(pattern.format(name=_NAME), re.M))
                    for lang, (exts, pattern) in _DEFINITIONS.items()}
        budget = MAX_CITE_SCAN
        for path, blob in sorted(self.blobs().items()):
            lang = next((lg for lg, (exts, _) in patterns.items() if path.endswith(exts)), None)
            if lang is None:
                continue
            try:
                data = read_blob(self.repo, blob, path)
            except GitFailure:
                return {}
            budget -= len(data)
            if budget < 0:
                return {}
            text = data.decode("utf-8", errors="replace")
            defined = {g for match in patterns[lang][1].finditer(text)
                       for g in match.groups() if g}
            if lang in _EXTRA:
                defined |= _EXTRA[lang](text)
            for name in wanted.keys() & defined:
                for original in wanted[name]:
                    found[original].append(path)
        return {s: tuple(paths) for s, paths in found.items()}


# The source bytes `defined_in` reads at most for one write's citations.
MAX_CITE_SCAN: Final = 32 * 1024 * 1024


@dataclass(frozen=True)
class Finding:
    doc: Doc
    trigger: str
    verdict: Verdict


@dataclass(frozen=True)
class StaleReport:
    checked: int
    stale: tuple[Finding, ...]
    unknown: tuple[Finding, ...]


def check(docs: Sequence[Doc | None], facts: TreeFacts) -> StaleReport:
    """Every note with a trigger, evaluated against `facts`."""
    with_trigger = [d for d in docs if d is not None and d.trigger and not d.problem]
    facts.scan_symbols(d.trigger[len("symbol:"):] for d in with_trigger
                       if d.trigger and d.trigger.startswith("symbol:"))
    findings = [Finding(d, d.trigger or "", evaluate(d.trigger or "", facts))
                for d in with_trigger]
    order = sorted(findings, key=lambda f: (f.doc.layer, f.doc.key))
    return StaleReport(
        len(findings),
        tuple(f for f in order if f.verdict.state is State.STALE),
        tuple(f for f in order if f.verdict.state is State.UNKNOWN),
    )


def pin_trigger(value: str | None, facts: TreeFacts) -> str | None:
    """Resolve a writer's `file:<path>` or `image:current` against HEAD."""
    if value is None or not value.strip():
        return None
    try:
        return pin(value, facts)
    except PinError as err:
        raise NoteRefused(f"invalidated_by: {err}") from None


def stale_marks(docs: Iterable[Doc], facts: TreeFacts) -> dict[tuple[str, str], str]:
    """For the notes among `docs` whose trigger has fired: (layer, key) → why."""
    chosen = [d for d in docs if d.trigger and not d.problem]
    if not chosen:
        return {}
    report = check(chosen, facts)
    return {(f.doc.layer, f.doc.key): f.verdict.reason for f in report.stale}
