"""What recall indexes of a note: its words in order, and of a long text its first
65,536 characters, cut at white space.

Its cases came from a mutation pass over recall/document.py (tools/mutation.py). The
limit is written out (docs/recall.md promises 65,536 characters), not read from
MAX_INDEXED, so that a changed limit fails here.
"""

from __future__ import annotations

import datetime as dt

from omh_git_memory.model.note import parse
from omh_git_memory.recall.document import analyse, indexed_part
from tests.helpers import note_text

LIMIT = 65_536


def test_a_text_of_exactly_the_limit_is_indexed_whole() -> None:
    text = "ab " * 21_845 + "c"
    assert len(text) == LIMIT
    assert indexed_part(text) == text
    assert indexed_part("two words") == "two words"


def test_a_longer_text_is_cut_at_the_last_white_space_before_the_limit() -> None:
    """The word that straddles the 65,536th character is left out whole."""
    text = "ab " * 21_845 + "cd"  # "cd" holds characters 65,536 and 65,537
    assert len(text) == LIMIT + 1
    assert indexed_part(text) == "ab " * 21_844 + "ab"


def test_a_cut_after_the_first_character_keeps_that_character() -> None:
    assert indexed_part("a " + "x" * LIMIT) == "a"
    assert indexed_part("a\n" + "x" * LIMIT) == "a"
    assert indexed_part("a\t" + "x" * LIMIT) == "a"


def test_a_text_with_no_white_space_to_cut_at_is_kept_to_the_limit() -> None:
    """With no white space before the limit, or only as its first character, there is
    no whole word to keep: the text is cut at the limit rather than emptied."""
    assert indexed_part("x" * (LIMIT + 10)) == "x" * LIMIT
    assert indexed_part(" " + "x" * LIMIT) == " " + "x" * (LIMIT - 1)


def test_a_notes_words_past_the_limit_find_nothing() -> None:
    body = "early\n\n" + "filler " * 10_000 + "\n\nlate\n"
    terms = analyse(parse(note_text("long", body=body)))
    assert terms["earli"] == 1 and terms["late"] == 0


def test_a_note_s_words_are_its_parts_counted_one_after_the_other() -> None:
    from collections import Counter

    from omh_git_memory.model.keys import DEFAULT_KEY_TEMPLATES
    from omh_git_memory.model.note import parse_head
    from omh_git_memory.recall.stubs import stub_note
    from omh_git_memory.recall.tokens import words

    def counted(*parts: str) -> list[tuple[str, int]]:
        terms: Counter[str] = Counter()
        for part in parts:
            terms.update(words(part))
        return list(terms.items())  # in order: the index's postings follow it

    text = note_text("deploy/rollback", body="Rolling back a deploy: `kubectl rollout`.\n"
                     "See [[other]].\n")
    for note in (parse(text), parse_head(text)):
        assert list(analyse(note).items()) == counted(
            note.body.replace("[[other]]", " "), "deploy rollback")
    document = "# Deploying\n\n## Rolling back\n\nUndo a rollout.\n\n## Blue green\n"
    stub = stub_note("docs/deploy.md", document, DEFAULT_KEY_TEMPLATES, dt.date(2026, 1, 2))
    assert stub is not None
    assert list(analyse(stub, document).items()) == counted(
        "Deploying", "docs deploy.md", "Rolling back", "Blue green", document)
    plain = stub_note("docs/plain.md", "Just text.\n", DEFAULT_KEY_TEMPLATES, dt.date(2026, 1, 2))
    assert plain is not None and plain.section("Answers").items == ("the whole of `docs/plain.md`",)  # type: ignore[union-attr]
    assert list(analyse(plain, "Just text.\n").items()) == counted(
        "docs/plain.md", "docs plain.md", "Just text.\n")  # never omh's own sentence
