"""Derived notes: a stub per Markdown document and one topic for the repository.

They are computed from a commit's tree when its index is built and never written
as files, so they cannot drift from the documents they point at and cost no
commits. They belong to the `team` layer: they derive from committed files, so
team notes may link to them.
"""

from __future__ import annotations

import datetime as dt
import fnmatch
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from omh_git_memory.model.errors import OmhError
from omh_git_memory.model.keys import KeyTemplates, path_slug, printable, slug
from omh_git_memory.model.note import Note, compose, outline
from omh_git_memory.model.plain_markdown import opening_heading
from omh_git_memory.model.plural import count

# Files whose presence says something about the repository: (glob, fact).
_MARKERS: Final[tuple[tuple[str, str], ...]] = (
    ("pyproject.toml", "a Python project"),
    ("setup.py", "a Python project"),
    ("package.json", "a JavaScript/TypeScript package"),
    ("Cargo.toml", "a Rust crate"),
    ("go.mod", "a Go module"),
    ("pom.xml", "a Java project built with Maven"),
    ("build.gradle", "a Java/Kotlin project built with Gradle"),
    ("CMakeLists.txt", "a C/C++ project built with CMake"),
    ("Makefile", "built with make"),
    ("Dockerfile", "has a container recipe"),
    ("Containerfile", "has a container recipe"),
    (".github/workflows/*", "runs GitHub Actions workflows"),
    (".gitlab-ci.yml", "runs GitLab CI"),
    ("LICENSE*", "carries a licence file"),
)

_LANGUAGES: Final[dict[str, str]] = {
    ".py": "Python", ".rs": "Rust", ".go": "Go", ".js": "JavaScript", ".ts": "TypeScript",
    ".tsx": "TypeScript", ".jsx": "JavaScript", ".c": "C", ".h": "C/C++ headers",
    ".cc": "C++", ".cpp": "C++", ".hpp": "C++", ".java": "Java", ".kt": "Kotlin",
    ".rb": "Ruby", ".php": "PHP", ".cs": "C#", ".swift": "Swift", ".sh": "shell",
}


TOPIC_SOURCE: Final = "derived from the repository"  # the topic's `source`


def whole_document(path: str) -> str:
    """A stub's one answer when its document has no `##` headings."""
    return f"the whole of `{printable(path)}`"  # a tree name is never raw in a note


def is_document(path: str, exclude: Sequence[str]) -> bool:
    """A Markdown file outside `.omh/` that no exclusion pattern matches."""
    if not path.lower().endswith(".md") or path.startswith(".omh/"):
        return False
    return not any(fnmatch.fnmatchcase(path, pattern) for pattern in exclude)


@dataclass(frozen=True)
class StubClash:
    """A document that gets no stub: its path slugs to the key of a document whose
    path sorts first (`docs/Deploy Notes.md` keeps the key `docs/deploy-notes`)."""

    key: str
    path: str  # the document left without a stub
    kept_by: str  # the document whose stub has the key


def stub_key(path: str, templates: KeyTemplates) -> str | None:
    """The key the stub of the document at `path` takes, or None when none derives."""
    try:
        return templates.expand("stub", path=path_slug(path)).value
    except OmhError:
        return None


def one_per_key(paths: Sequence[str], templates: KeyTemplates
                ) -> tuple[list[str], list[StubClash]]:
    """The documents that get a stub, in path order, and the clashes: of documents
    whose paths give one key, the path that sorts first (by code point, so by byte)
    keeps it — the same in every clone, and visible to lint as `DuplicateKey`."""
    kept: list[str] = []
    owner: dict[str, str] = {}
    clashes: list[StubClash] = []
    for path in sorted(paths):
        key = stub_key(path, templates)
        if key is not None and key in owner:
            clashes.append(StubClash(key, path, owner[key]))
            continue
        if key is not None:
            owner[key] = path
        kept.append(path)
    return kept, clashes


def stub_note(path: str, text: str, templates: KeyTemplates, recorded: dt.date) -> Note | None:
    """The stub for the document at `path`, or None when no usable key derives from it."""
    title, headings = outline(text)
    if title is None:  # a document that opens with a `## ` heading (a book's chapter) is
        opening = opening_heading(text)  # titled by it, not by its path
        title = opening[1] if opening is not None else None
    shown = printable(path)  # a tree name may hold a newline or an escape: never raw in a note
    answers = [" ".join(h.split()) for h in headings if h.strip()] or [whole_document(path)]
    try:
        key = templates.expand("stub", path=path_slug(path))
        return compose(
            [("key", key.value), ("type", "stub"), ("source", shown),
             ("recorded", recorded.isoformat())],
            " ".join((title or shown).split()),
            [("Answers", answers)],
            intro=f"Repo document. Read `{shown}`; this note points at it and does not restate it.",
        )
    except OmhError:  # a path no template can key, or a heading that breaks the layout
        return None


@dataclass(frozen=True)
class RepoFacts:
    name: str
    facts: tuple[tuple[str, str], ...]  # (fact, the file it came from)


def repo_facts(name: str, paths: Sequence[str], readme: tuple[str, str] | None) -> RepoFacts:
    """What the repository's files say about it, each fact with its file."""
    facts: list[tuple[str, str]] = []
    if readme is not None:
        readme_path, readme_text = readme
        title, _ = outline(readme_text)
        if title:
            facts.append((f"describes itself as “{' '.join(title.split())}”", readme_path))
    facts.extend(tree_facts(paths))
    return RepoFacts(name, tuple(facts))


def tree_facts(paths: Sequence[str]) -> list[tuple[str, str]]:
    """The facts the tree's paths give, each with its file: the marker files (a
    licence may sit in a folder, `LICENSES/MIT.txt`), then how many files of each
    of the five commonest languages the tree holds anywhere. The index's topic
    identity holds them, so a reused topic is always one these paths derive."""
    facts: list[tuple[str, str]] = []
    seen: set[str] = set()
    present = set(paths)
    for pattern, fact in _MARKERS:
        if fact in seen:
            continue
        prefix = re.split(r"[*?\[]", pattern, maxsplit=1)[0]
        if prefix == pattern:  # a plain name matches only itself
            match = pattern if pattern in present else None
        else:  # a glob: only paths that start like it can match (cheap at 100k paths)
            match = next((p for p in paths if p.startswith(prefix)
                          and fnmatch.fnmatchcase(p, pattern)), None)
        if match is not None:
            seen.add(fact)
            facts.append((fact, match))
    return facts + _language_facts(paths)


def _language_facts(paths: Sequence[str]) -> list[tuple[str, str]]:
    """How many files of each of the five commonest languages the tree holds, each
    with its first file."""
    counts: dict[str, list[str]] = {}
    languages = _LANGUAGES
    for path in paths:
        # No extension holds `/`, and none is one character: a dot in a folder's
        # name, or no dot at all, finds nothing.
        language = languages.get(path[path.rfind("."):].lower())
        if language is not None:
            counts.setdefault(language, []).append(path)
    return [(f"holds {count(len(files), language + ' file')}, among them this one", files[0])
            for language, files in sorted(counts.items(),
                                          key=lambda kv: (-len(kv[1]), kv[0]))[:5]]


def topic_note(
    facts: RepoFacts, stub_keys: Sequence[str], templates: KeyTemplates, recorded: dt.date
) -> Note | None:
    """The repository's topic: its facts, and a link to every stub."""
    key_slug = slug(facts.name) or "repo"
    lines = [f"- {fact} (from `{printable(source)}`)" for fact, source in facts.facts]
    intro = "What omh derived from this repository's files, each with the file it came from."
    sections: list[tuple[str, str | Sequence[str]]] = []
    if lines:
        sections.append(("Facts", "\n".join(lines)))
    if stub_keys:
        sections.append(("Related", [f"[[{k}]]" for k in stub_keys]))
    try:
        key = templates.expand("topic", slug=key_slug)
        return compose(
            [("key", key.value), ("type", "topic"), ("source", TOPIC_SOURCE),
             ("recorded", recorded.isoformat())],
            facts.name, sections, intro=intro,
        )
    except OmhError:  # a repository name no template can key
        return None
