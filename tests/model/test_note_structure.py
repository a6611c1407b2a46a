"""Behaviour of note.py that the mutation pass showed no test stated:
the line a refusal names, the size limit at its edge, the byte rules on the
writing side, where sections, blocks and fences are, and how links are found
and retargeted.

Found by mutation testing (docs/records/mutation-passes.md); was tests/test_mutants_note.py."""

from __future__ import annotations

import re

import pytest

from omh_git_memory.model.errors import NoteParseError
from omh_git_memory.model.note import (
    MAX_NOTE_BYTES,
    char_problem,
    compose,
    decode,
    encode,
    outline,
    parse,
    render,
    retarget_links,
    with_field,
)
from tests.helpers import note_text

FIELDS = [("key", "k"), ("type", "topic"), ("source", "t"), ("recorded", "2026-01-01")]


def refusal(text: str) -> NoteParseError:
    with pytest.raises(NoteParseError) as caught:
        parse(text)
    return caught.value


# --- the byte rules, both ways -----------------------------------------------------


def test_a_note_of_exactly_the_size_limit_is_read_and_one_byte_more_is_not() -> None:
    assert MAX_NOTE_BYTES == 1024 * 1024
    assert decode(b"a" * MAX_NOTE_BYTES) == "a" * MAX_NOTE_BYTES
    assert encode("a" * MAX_NOTE_BYTES) == b"a" * MAX_NOTE_BYTES
    with pytest.raises(NoteParseError, match=f"at most {MAX_NOTE_BYTES}"):
        decode(b"a" * (MAX_NOTE_BYTES + 1))
    with pytest.raises(NoteParseError, match=f"is {MAX_NOTE_BYTES + 1} bytes"):
        encode("a" * (MAX_NOTE_BYTES + 1))


def test_the_size_limit_counts_bytes_not_characters() -> None:
    with pytest.raises(NoteParseError, match="bytes"):
        encode("é" * (MAX_NOTE_BYTES // 2 + 1))


@pytest.mark.parametrize(
    ("text", "message", "line"),
    [
        ("ok\nok\nnul\x00", "NUL byte", 3),
        ("a\r\nb", "CR line endings", 1),
        ("a\n\nlone \ud800", "U+D800, a lone surrogate", 3),
        ("a\nlone \udfff", "U+DFFF, a lone surrogate", 2),
        ("bell\x07", "control character U+0007", 1),
        ("a\nesc\x1b", "control character U+001B", 2),
        ("del\x7f", "control character U+007F", 1),
        ("c1\x9f", "control character U+009F", 1),
    ],
)
def test_a_character_a_note_may_not_hold_is_named_with_its_line(
        text: str, message: str, line: int) -> None:
    problem = char_problem(text)
    assert problem is not None
    assert message in problem[0] and problem[1] == line
    with pytest.raises(NoteParseError, match=re.escape(message)) as caught:
        encode(text)
    assert caught.value.line == line


@pytest.mark.parametrize("text", ["tab\tand\nline feed", "é ü 中 \u00a0 \ue000", ""])
def test_tabs_line_feeds_and_other_text_are_allowed(text: str) -> None:
    assert char_problem(text) is None
    assert decode(encode(text)) == text


def test_invalid_utf8_is_refused_naming_the_line_of_the_bad_byte() -> None:
    with pytest.raises(NoteParseError, match=r"not valid UTF-8 \(byte 6\)") as caught:
        decode(b"a\nb\nc\n\xff")
    assert caught.value.line == 4


def test_a_bom_is_refused_when_writing_too() -> None:
    with pytest.raises(NoteParseError, match="byte-order mark") as caught:
        encode("\ufeff---\n")
    assert caught.value.line == 1


def test_a_control_character_is_refused_when_reading_with_its_line() -> None:
    with pytest.raises(NoteParseError, match=re.escape("U+0001")) as caught:
        decode(b"a\nb\x01")
    assert caught.value.line == 2


# --- where a refusal points ------------------------------------------------------------


def test_a_bad_key_type_or_date_is_refused_at_its_own_line() -> None:
    # note_text writes key, type, source, recorded on lines 2 to 5.
    assert refusal(note_text("../k")).line == 2
    assert refusal(note_text("k", kind="idea")).line == 3
    assert refusal(note_text("k", recorded="someday")).line == 5
    assert refusal(note_text("k", recorded="2026-02-30")).line == 5


def test_a_frontmatter_error_points_at_its_line() -> None:
    assert refusal("---\nkey: k\ntype: topic\nbad line\n---\n").line == 4
    assert refusal("---\nkey: k\nkey: j\n---\n").line == 3
    assert refusal("# no frontmatter\n").line == 1
    assert refusal("---\nkey: k\n").line == 2


def test_a_note_with_no_title_points_at_the_body() -> None:
    text = "---\nkey: k\ntype: topic\nsource: s\nrecorded: 2026-01-01\n---\n\nno title\n"
    assert refusal(text).line == 7


def test_a_frontmatter_closed_at_the_very_end_is_a_note_with_no_body() -> None:
    # "---" as the last line, with no line feed: the frontmatter closes, so the
    # refusal is the one for a note with no title, as with the line feed.
    text = "---\nkey: k\ntype: topic\nsource: s\nrecorded: 2026-01-01\n---"
    err, with_line_feed = refusal(text), refusal(text + "\n")
    assert "no `# Title` line" in str(err) and "never closes" not in str(err)
    assert (str(err), err.line) == (str(with_line_feed), with_line_feed.line) == (
        str(err), 7)
    # An empty frontmatter closed the same way lacks its fields, and one whose
    # last line is a field still never closes.
    assert "fields `key`, `type`, `source` and `recorded` are missing" in str(refusal("---\n---"))
    assert "never closes" in str(refusal("---\nkey: k\ntype: topic"))
    assert "never closes" in str(refusal("---\nkey: k\nabc"))  # a last line of three


def test_the_type_refusal_lists_the_types() -> None:
    assert "use one of surprise, topic, stub" in str(refusal(note_text("k", kind="idea")))


# --- fields ------------------------------------------------------------------------


def test_field_reads_a_value_trimmed_and_none_when_absent() -> None:
    note = parse(note_text("k", extra="  padded  "))
    assert note.field("extra") == "padded"
    assert note.field("missing") is None


def test_invalidated_by_is_none_when_absent_or_blank() -> None:
    assert parse(note_text("k")).invalidated_by is None
    assert parse(note_text("k", invalidated_by="   ")).invalidated_by is None
    assert parse(note_text("k", invalidated_by=" file:a.py ")).invalidated_by == "file:a.py"


def test_with_field_replaces_in_place_or_appends_and_refuses_two_lines() -> None:
    note = parse(note_text("k", extra="old"))
    replaced = with_field(note, "extra", "new")
    assert [n for n, _ in replaced.fields] == [n for n, _ in note.fields]
    assert replaced.field("extra") == "new"
    added = with_field(note, "later", "")
    assert added.fields[-1] == ("later", "")
    assert render(added).count("later:\n") == 1
    with pytest.raises(NoteParseError, match="one line"):
        with_field(note, "extra", "a\nb")


# --- structure: sections, blocks, fences, links ----------------------------------------


def test_sections_blocks_and_fences_carry_their_file_lines() -> None:
    body = ("Intro.\n\n## First\n\n- one\n- two\n\n## Second\n\nProse here.\n\n"
            "```\ncode\n```\n\n~~~~\nnever closed\n")
    note = parse(note_text("k", body=body))
    # Lines: 8 `# k`, 10 Intro, 12 `## First`, 14 list, 17 `## Second`, 19 prose,
    # 21 closed fence, 25 open fence.
    first, second = note.sections
    assert (first.name, first.line, first.text) == ("First", 12, "- one\n- two")
    assert [(b.kind, b.line, b.items) for b in first.blocks] == [("list", 13, ("one", "two"))]
    assert second.line == 17
    assert [(b.kind, b.line) for b in second.blocks][:1] == [("paragraph", 19)]
    assert [(f.line, f.closed) for f in note.fences] == [(21, True), (25, False)]


def test_a_fence_closed_by_a_shorter_run_stays_open() -> None:
    note = parse(note_text("k", body="````\ncode\n```\n"))
    assert [f.closed for f in note.fences] == [False]
    note = parse(note_text("k", body="````\ncode\n`````\n"))
    assert [f.closed for f in note.fences] == [True]


def test_a_list_item_without_text_is_empty() -> None:
    note = parse(note_text("k", body="## Related\n\n-\n- [[a]]\n"))
    related = note.section("Related")
    assert related is not None and related.items == ("", "[[a]]")


def test_links_are_in_order_of_first_appearance_once_each_trimmed() -> None:
    note = parse(note_text("k", body="See [[ b ]], [[a]] and [[b]].\n\n`[[code]]`\n"))
    assert note.links == ("b", "a")


def test_retarget_keeps_every_other_byte_and_skips_code() -> None:
    body = "See [[ old ]] and [[other]].\n\n```\n[[old]]\n```\n\n`[[old]]` and [[old]]\n"
    note = parse(note_text("k", body=body))
    moved = retarget_links(note, "old", "new/place")
    assert moved.body == note.body.replace("[[ old ]]", "[[ new/place ]]").replace(
        "and [[old]]\n", "and [[new/place]]\n")
    assert moved.links == ("new/place", "other")
    assert moved.fields == note.fields
    assert render(moved) == render(note).replace(note.body, moved.body)


def test_retarget_of_a_link_that_is_not_there_is_the_same_note() -> None:
    note = parse(note_text("k", body="See [[a]].\n"))
    assert retarget_links(note, "b", "c") is note


def test_outline_is_the_title_and_second_level_headings_outside_code() -> None:
    doc = "intro\n# Title\n\n## One\n### deeper\n```\n## not\n```\n## Two\n"
    assert outline(doc) == ("Title", ["One", "Two"])
    assert outline("## only\n") == (None, ["only"])
    assert outline("#\n") == (None, [])


# --- compose ---------------------------------------------------------------------------


def test_compose_lays_out_intro_sections_and_lists() -> None:
    note = compose(FIELDS, "Title", [("Notes", "\ntext\n"), ("Related", ["[[a]]", "[[b]]"])],
                   intro="\nThe intro.\n")
    assert note.body == ("\n# Title\n\nThe intro.\n\n## Notes\ntext\n\n## Related\n\n"
                         "- [[a]]\n- [[b]]\n")
    assert render(note).startswith("---\nkey: k\ntype: topic\n")


def test_compose_refuses_a_title_or_an_item_on_two_lines() -> None:
    with pytest.raises(NoteParseError, match="title must fit on one line"):
        compose(FIELDS, "two\nlines", [])
    with pytest.raises(NoteParseError, match="each item of `Related`"):
        compose(FIELDS, "Title", [("Related", ["a", "b\nc"])])


def test_compose_refuses_a_title_that_reads_back_otherwise() -> None:
    with pytest.raises(NoteParseError, match="structure"):
        compose(FIELDS, "Title #", [])


def test_compose_refuses_a_value_that_swallows_the_next_section() -> None:
    with pytest.raises(NoteParseError, match="structure"):
        compose(FIELDS, "Title", [("Notes", "```\nopen fence"), ("Related", ["a"])])


def test_a_bad_character_after_a_leading_line_feed_is_on_line_two() -> None:
    assert char_problem("\n\x00") == ("holds a NUL byte", 2)
    assert char_problem("\x00") == ("holds a NUL byte", 1)


def test_a_bom_is_refused_when_reading_at_line_one() -> None:
    with pytest.raises(NoteParseError, match="byte-order mark") as caught:
        decode(b"\xef\xbb\xbf---\n")
    assert caught.value.line == 1


def test_a_missing_or_empty_required_field_points_at_the_frontmatter() -> None:
    text = note_text("k")
    assert refusal(text.replace("source: test\n", "")).line == 1
    assert refusal(text.replace("source: test", "source:")).line == 1


def test_an_empty_frontmatter_closes_and_then_lacks_its_fields() -> None:
    err = refusal("---\n---\n\n# t\n")
    assert "fields `key`, `type`, `source` and `recorded` are missing" in str(err)
    assert err.line == 1


def test_compose_refuses_an_item_that_reads_back_otherwise() -> None:
    # A list item's text is read with its runs of spaces joined: "a  b" comes back
    # as "a b", so it cannot be written as asked; the refusal says so.
    with pytest.raises(NoteParseError, match="would read back as 'a b'"):
        compose(FIELDS, "Title", [("Related", ["a  b"])])


def test_a_parsed_note_and_its_parts_cannot_be_changed() -> None:
    note = parse(note_text("k", body="## Related\n\n- a\n\n```\nx\n```\n"))
    section = note.sections[0]
    for thing, name in [(note, "body"), (section, "text"), (section.blocks[0], "line"),
                        (note.fences[0], "closed"), (note.spec, "required")]:
        before = getattr(thing, name)  # the attribute is there; assigning to it is refused
        with pytest.raises(AttributeError):
            setattr(thing, name, None)
        assert getattr(thing, name) == before


def test_importing_the_note_module_does_not_import_mistune() -> None:
    import subprocess
    import sys

    code = "import sys, omh_git_memory.model.note; print('mistune' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "False"
