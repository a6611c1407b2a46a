"""The answer as text: recall's tree, and the excerpts an agent reads.

Every line of the tree that names a note carries the note's layer and date
(invariant: every answer shows its layer and date), then its title and where to
read it in full.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Final

from omh_git_memory.model.config import DEFAULT_REPO_NAME
from omh_git_memory.model.keys import printable, shell_word
from omh_git_memory.model.layers import Layer
from omh_git_memory.model.note import Note
from omh_git_memory.model.plural import agree, count
from omh_git_memory.recall.answer import Answer
from omh_git_memory.recall.bm25 import question_words
from omh_git_memory.recall.document import Doc
from omh_git_memory.recall.sections import Section
from omh_git_memory.recall.tokens import is_function_word, without_links, words


def date_of(doc: Doc) -> str:
    return dt.date.fromordinal(doc.recorded).isoformat() if doc.recorded else "undated"


TITLE_WIDTH: Final = 60  # a title longer than this is cut, with `…`
KEY_COLUMN: Final = 48  # keys are padded to the longest, up to this width
EXCERPTS: Final = 3  # results the MCP answer quotes from
EXCERPT_BUDGET: Final = 1200  # bytes (UTF-8) of the whole excerpt block, EXCERPT_EACH a result
EXCERPT_EACH: Final = EXCERPT_BUDGET // EXCERPTS
_INDENT: Final = "  "


def read_at(doc: Doc) -> str:
    """Where the note can be read in full: the team file (a repo path), the local
    file (an absolute path), the document a stub points at; the repository topic is
    derived from the tree and has no file."""
    if doc.is_stub:
        return doc.location
    if doc.is_topic:
        return f"derived from the repository (omh memory show {shell_word(doc.key)})"
    if doc.layer == Layer.TEAM.value and ":" in doc.location:
        return doc.location.split(":", 1)[1]  # `<commit>:.omh/notes/<key>.md`
    return doc.location


def changed_by(change: tuple[str, str, int], shown: int) -> str:
    """`by Ada in 1a2b3c4d, 2026-11-02`: who last changed a team note or document, in
    which commit, and on which day when it is not the day the line shows already
    (`shown`, a date ordinal). The name is escaped with the line, as a path is."""
    commit, author, day = change
    when = "" if day == shown else f", {dt.date.fromordinal(day).isoformat()}"
    return f"by {author or 'an unnamed author'} in {commit[:8]}{when}"


def what_it_is(doc: Doc) -> str:
    """The note's title, cut to TITLE_WIDTH; for the topic, that it is the repository's."""
    title = " ".join(doc.title.split()) or doc.key
    if doc.is_topic:  # unnamed ([repo] name unset): no "topic of repo"
        title = ("the repository topic" if doc.key == DEFAULT_REPO_NAME
                 else f"the repository topic of {title}")
    return title if len(title) <= TITLE_WIDTH else title[: TITLE_WIDTH - 1].rstrip() + "…"


def section_label(section: Section) -> str:
    """`§ Heading, lines 12–30`, the heading (and the one it is under, when the
    document repeats it) cut to TITLE_WIDTH as a title is."""
    return replace(section, heading=_shortened(section.heading), within=_shortened(section.within)
                   ).describe()


def _shortened(text: str | None) -> str | None:
    if text is None or len(text) <= TITLE_WIDTH:
        return text
    return text[: TITLE_WIDTH - 1].rstrip() + "…"


def and_list(names: Sequence[str]) -> str:
    """`A`, `A and B`, `A, B and C`, each escaped (a question's words are untrusted)."""
    shown = [printable(n) for n in names]
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} and {shown[-1]}"


def render_tree(answer: Answer, stale: Mapping[tuple[str, str], str] | None = None,
                also: str = "--also",
                sections: Mapping[tuple[str, str], Section] | None = None,
                changed: Mapping[tuple[str, str], tuple[str, str, int]] | None = None,
                cited: Mapping[tuple[str, str], str] | None = None) -> str:
    """Recall's answer as a tree. Every line that names a note carries its layer and date, and
    `· stale` when the note's trigger has fired (`stale`: (layer, key) → why), then
    what the note is (its title) and where to read it in full — for a stub result,
    the section of its document that matched (`sections`: (layer, key) → section),
    and for a team note or document the commit that last changed it (`changed`:
    (layer, key) → (commit, author, day)); for a result whose cited files changed
    since it was written, which (`cited`: (layer, key) → `cites src/x.py, changed
    since (3 commits)`).
    `also` is how the asker adds a phrasing (`--also` on the command line,
    `also_phrased_as` over MCP)."""
    fired = stale or {}
    matched = sections or {}
    commits = changed or {}
    results = {id(h.doc) for h in answer.results}

    def where(doc: Doc) -> str:
        # A path or heading comes from a tree: escaped, so it can forge no line.
        found = matched.get((doc.layer, doc.key)) if id(doc) in results else None
        change = commits.get((doc.layer, doc.key))
        citation = (cited or {}).get((doc.layer, doc.key)) if id(doc) in results else None
        return printable(read_at(doc) + (f" {section_label(found)}" if found is not None
                                          else "") + (
            f" · {changed_by(change, doc.recorded)}" if change else "") + (
            f" · {citation}" if citation else ""))

    blocks: list[list[tuple[str, Doc | None]]] = []
    for hit in answer.results:
        block: list[tuple[str, Doc | None]] = [(hit.doc.key, hit.doc)]
        for index, doc in enumerate(hit.neighbours):
            last = index == len(hit.neighbours) - 1 and not hit.more_neighbours
            block.append((("└─ " if last else "├─ ") + doc.key, doc))
        if hit.more_neighbours:
            block.append((f"└─ … and {count(hit.more_neighbours, 'more linked note')} "
                          f"(omh memory show {shell_word(hit.doc.key)})", None))
        blocks.append(block)
    named = [(label, doc) for block in blocks for label, doc in block if doc]
    # Keys are aligned, but a key longer than KEY_COLUMN (a long first sentence)
    # runs past the column on its own line rather than pushing every line right.
    width = min(max((len(label) for label, _ in named), default=0), KEY_COLUMN)
    metas = {id(doc): f"{doc.layer} · {date_of(doc)}"
             + (" · stale" if (doc.layer, doc.key) in fired else "") for _, doc in named}
    meta_width = max((len(m) for m in metas.values()), default=0)
    lines = [
        f"{label.ljust(width)}  {metas[id(doc)].ljust(meta_width)}  "
        f"{printable(what_it_is(doc))} — {where(doc)}" if doc else label
        for block in blocks
        for label, doc in block
    ]
    if any((d.layer, d.key) in fired for _, d in named):
        lines.append("stale: a note's invalidated_by has fired; `omh memory stale` says why")
    if any((h.doc.layer, h.doc.key) in (cited or {}) for h in answer.results):
        lines.append("cites: a file the note's Evidence names changed since it was written; "
                     "read it again before relying on the note")
    if answer.unknown:
        lines.append(f"nothing here mentions {and_list(answer.unknown)}, so no document is "
                     "returned; if the repository calls it by another name, ask with that")
    if not answer.results:
        lines.append(f"no note matched well enough; try other words, or add {also} "
                     "with another phrasing")
    elif answer.left_out:
        lines.append(f"{count(answer.left_out, 'more note')} matched well enough but "
                     f"{agree(answer.left_out, 'was', 'were')} left out; ask more precisely "
                     f"to see {agree(answer.left_out, 'it', 'them')}")
    return "\n".join(lines) + "\n"


def excerpt(doc: Doc, note: Note, answer: Answer, limit: int = EXCERPT_EACH,
            quote: tuple[Section, Sequence[str]] | None = None) -> list[str]:
    """A few lines of what `note` says, so that an agent rarely needs to open it:
    a surprise's Observed and the first line of its Evidence; for a stub, the section
    of its document that matched and its lines as written (`quote`), else its
    headings that match the question; otherwise the first lines of its text.
    At most `limit` bytes (UTF-8) once each line is indented and ends in a newline."""
    if note.type == "stub" and quote is not None:
        section, quoted = quote
        head = printable(f"Read {note.source} {section_label(section)}") + (
            ":" if quoted else "")
        return _fill([head, *map(_shown, quoted)], limit)
    asked = {t for q in answer.question for t in question_words(q) if not is_function_word(t)}
    lines: list[str] = []
    if note.type == "surprise":
        observed, evidence = note.section("Observed"), note.section("Evidence")
        if observed is not None:
            lines.append("Observed: " + " ".join(observed.text.split()))
        if evidence is not None and evidence.text.strip():
            first = next(ln for ln in evidence.text.splitlines() if ln.strip())
            lines.append("Evidence: " + first.strip())
    elif note.type == "stub":
        answers = note.section("Answers")
        headings = answers.items if answers else ()
        matched = [h for h in headings if asked & set(words(h))]
        lines.append(f"Read {note.source}")
        if matched:
            lines.append("Headings that match: " + "; ".join(matched))
        elif headings:
            lines.append("Matched in its text; headings: " + "; ".join(headings))
    elif doc.is_topic:
        facts = note.section("Facts")
        lines += [ln.lstrip("- ").strip() for ln in (facts.text if facts else "").splitlines()
                  if ln.strip()]
    else:  # a topic: its first sections by name (the title is on the result's line)
        named = [f"{sec.name}: {' '.join(without_links(sec.text).split())}"
                 for sec in note.sections
                 if sec.name not in ("Related", "Answers") and without_links(sec.text).strip()]
        body = note.body.lstrip()
        text = without_links(body.partition("\n")[2] if body.startswith("#") else body)
        lines += named[:2] or [" ".join(p.split()) for p in text.split("\n\n") if p.strip()][:2]
    return _cut(lines, limit)


def _shown(line: str) -> str:
    """A document's line as quoted to an agent: tabs kept (a command stays one),
    every other control or invisible character written as a visible escape."""
    return "\t".join(printable(part) for part in line.split("\t"))


def _cut(lines: Sequence[str], limit: int) -> list[str]:
    """`lines`, shortened so their UTF-8 total, indented and newline-ended, fits
    `limit`: short lines keep all they need, long ones share the rest equally."""
    overhead = len(_INDENT) + 1
    need = [len(line.encode("utf-8")) + overhead for line in lines]
    caps = [0] * len(lines)
    room, left = limit, len(lines)
    for i in sorted(range(len(lines)), key=lambda i: need[i]):
        caps[i] = min(need[i], room // left)
        room -= caps[i]
        left -= 1
    out = []
    for line, cap, wanted in zip(lines, caps, need, strict=True):
        if cap >= wanted:
            out.append(line)
        elif cap - overhead > 8:  # room for a few words and the `…`
            cut = line.encode("utf-8")[: cap - overhead - len("…".encode())]
            out.append(cut.decode("utf-8", "ignore").rstrip() + "…")
    return out


def _fill(lines: Sequence[str], limit: int) -> list[str]:
    """The first of `lines` that fit `limit` bytes, indented and newline-ended, in
    order and whole (a quoted command stays a command); the first that does not fit
    is cut with `…` when a few words fit, and nothing after it is kept."""
    overhead = len(_INDENT) + 1
    out: list[str] = []
    room = limit
    for line in lines:
        need = len(line.encode("utf-8")) + overhead
        if need <= room:
            out.append(line)
            room -= need
            continue
        if room - overhead > 8:
            cut = line.encode("utf-8")[: room - overhead - len("…".encode())]
            out.append(cut.decode("utf-8", "ignore").rstrip() + "…")
        break
    return out


def render_excerpts(answer: Answer, notes: Mapping[tuple[str, str], Note],
                    quotes: Mapping[tuple[str, str], tuple[Section, Sequence[str]]]
                    | None = None) -> str:
    """What the best EXCERPTS results say (`notes`: (layer, key) → the note; `quotes`:
    (layer, key) → a stub's matching section and its lines), each under a line naming
    it with its layer and date. Each result's part, that line included, is at most
    EXCERPT_EACH bytes (UTF-8), so the whole is at most EXCERPT_BUDGET."""
    out = ""
    for hit in answer.results[:EXCERPTS]:
        note = notes.get((hit.doc.layer, hit.doc.key))
        if note is None:
            continue
        head = f"{hit.doc.key}  {hit.doc.layer} · {date_of(hit.doc)}\n"
        quoted = excerpt(hit.doc, note, answer, EXCERPT_EACH - len(head.encode("utf-8")),
                         (quotes or {}).get((hit.doc.layer, hit.doc.key)))
        if quoted:
            out += head + "".join(f"{_INDENT}{line}\n" for line in quoted)
    return out
