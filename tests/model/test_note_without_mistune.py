"""A note read or laid out without mistune is the note mistune's parse gives:
`compose` of plain lines (`_laid_out`), and `parse_head` (a note without its
sections, what the recall index reads), on generated notes of every awkward line."""

from __future__ import annotations

import contextlib
import random

import pytest

from omh_git_memory.model import note
from omh_git_memory.model.errors import NoteParseError
from omh_git_memory.model.note import Note, NoteHead, compose, parse, parse_head
from tests.helpers.markdown import LINES

# Titles, intros, section names and items: plain ones, and every kind that is not.
_TEXTS = (
    "Intro", "Getting started", "1. One", "1 thing", "12abc", "`code` here", "```", "`x",
    "## x", "# y", "- a", "* b", "+ c", "> q", "<div>", "[a]: /u", "[[link]]",
    "see [[k]] and [[j]]", "a `[[not]]` b", "x #", "#", "C#", "a ##", "===", "---", "***",
    "a\tb", "ünïcode", "日本語", "[link](x)", "foo \\", "<!--", "2) two", "100% done",
    "`a` `b`", "`` x ``", "a`b", "(paren)", "'q'", '"dq"', "_under_", "*em*", "a  b",
    " lead", "trail ", "|t|", "~~~", "~x", "Ω", "ǅ", "\u00a0x", "Repo document. Read `x`.",
)
_FIELDS = [("key", "docs/a"), ("type", "stub"), ("source", "docs/a.md"),
           ("recorded", "2026-01-02")]


def _composed(monkeypatch: pytest.MonkeyPatch, fast: bool, *args: object,
              **kwargs: object) -> Note | str:
    with monkeypatch.context() as patched:
        if not fast:
            patched.setattr(note, "_laid_out", lambda *a: None)
        try:
            return compose(*args, **kwargs)  # type: ignore[arg-type]
        except NoteParseError as err:
            return f"{err} (line {err.line})"


@pytest.mark.parametrize("seed", range(3))
def test_a_note_laid_out_without_mistune_is_the_one_parsed(
        monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    rng = random.Random(seed)
    real = note._laid_out
    laid_out = 0

    def counted(*args: object) -> Note | None:
        nonlocal laid_out
        made = real(*args)  # type: ignore[arg-type]
        laid_out += made is not None
        return made

    for _ in range(3000):
        sections: list[tuple[str, str | list[str]]] = []
        for _ in range(rng.randint(0, 3)):
            items = [rng.choice(_TEXTS) for _ in range(rng.randint(0, 4))]
            name = rng.choice(("Answers", "Related", "Facts", "X #", "a b", "1. x"))
            if rng.random() < 0.4:  # the same as text: `- ` lines, or lines that are not
                sections.append((name, "\n".join(rng.choice(("- ", "-  ", "* ", "")) + item
                                                 for item in items)))
            else:
                sections.append((name, items))
        title = rng.choice(_TEXTS)
        intro = rng.choice((None, "", rng.choice(_TEXTS)))
        monkeypatch.setattr(note, "_laid_out", counted)
        fast = _composed(monkeypatch, True, _FIELDS, title, sections, intro=intro)
        monkeypatch.setattr(note, "_laid_out", real)
        assert fast == _composed(monkeypatch, False, _FIELDS, title, sections, intro=intro), (
            title, intro, sections)
    assert laid_out > 150  # plain notes are laid out, the others parsed


def test_a_stub_and_a_topic_are_laid_out_without_mistune(monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    def refused(src: str) -> None:
        raise AssertionError("mistune was asked")

    monkeypatch.setattr(note, "_block_tokens", refused)
    stub = compose(_FIELDS, "Deploying", [("Answers", ["Rolling back", "Blue `green`"])],
                   intro="Repo document. Read `docs/a.md`; this note points at it.")
    assert stub.section("Answers").items == ("Rolling back", "Blue `green`")  # type: ignore[union-attr]
    topic = compose([("key", "repo"), ("type", "topic"), ("source", "derived"),
                     ("recorded", "2026-01-02")], "repo",
                    [("Facts", "- a Python project (from `pyproject.toml`)"),
                     ("Related", ["[[docs/a]]", "[[docs/b]]"])], intro="What omh derived.")
    assert topic.links == ("docs/a", "docs/b")


def _generated_note(rng: random.Random) -> str:
    fields = ["key: n/a", "type: " + rng.choice(("topic", "surprise", "stub", "nope")),
              "source: " + rng.choice(("x", "derived from the repository", "")),
              "recorded: " + rng.choice(("2026-01-02", "2026-13-40", "soon"))]
    if rng.random() < 0.3:
        fields.append("invalidated_by: " + rng.choice(("file:a.md", "", "  ")))
    if rng.random() < 0.3:
        fields.append("cites: a.md")
    rng.shuffle(fields)
    head = rng.choice(("", "\n", "\n\n", "  \n")) + rng.choice(
        ("# Title", "# Title #", "#  Two ", "   # Three", "## Not", "Title\n===", "", "#x"))
    body = "\n".join(rng.choice((*LINES, "see [[a]]", "[[b]] and `[[c]]`", "- [[d]]"))
                     for _ in range(rng.randint(0, 10)))
    return "---\n" + "\n".join(fields) + "\n---\n" + head + "\n" + body + rng.choice(("", "\n"))


def _outcome(read: object, text: str) -> object:
    try:
        got = read(text)  # type: ignore[operator]
    except NoteParseError as err:
        return ("refused", str(err), err.line)
    return (got.fields, got.body, got.key, got.type, got.source, got.recorded, got.title,
            got.links, got.invalidated_by, got.field("cites"))


@pytest.mark.parametrize("seed", range(3))
def test_a_note_read_without_its_sections_reads_as_the_parse_reads_it(seed: int) -> None:
    rng = random.Random(seed)
    heads = 0
    for _ in range(3000):
        text = _generated_note(rng)
        assert _outcome(parse_head, text) == _outcome(parse, text), text
        with contextlib.suppress(NoteParseError):
            heads += isinstance(parse_head(text), NoteHead)
    assert heads > 150  # readable notes are read without mistune, most of them


def test_a_note_s_links_are_found_outside_its_fences_without_mistune(
        monkeypatch: pytest.MonkeyPatch) -> None:
    text = ("---\nkey: a\ntype: topic\nsource: x\nrecorded: 2026-01-02\n---\n# A\n\n"
            "See [[b]].\n\n```\n[[in-code]]\n```\n\n- [[c]] and `[[span]]`\n")

    def refused(src: str) -> None:
        raise AssertionError("mistune was asked")

    monkeypatch.setattr(note, "_block_tokens", refused)
    head = parse_head(text)
    assert isinstance(head, NoteHead) and head.links == ("b", "c")
    monkeypatch.undo()
    assert parse(text).links == ("b", "c")
