from __future__ import annotations

import datetime as dt

import pytest

from omh_git_memory.actions.remember import Observation, build_surprise
from omh_git_memory.model.errors import NoteParseError
from omh_git_memory.model.keys import DEFAULT_KEY_TEMPLATES
from omh_git_memory.model.note import (
    compose,
    decode,
    link_line,
    outline,
    parse,
    render,
    retarget_links,
    with_field,
)
from tests.helpers import FIXTURES, SEED_NOTE, note_text

SEED_OBSERVATION = Observation(
    expected="A bind mount of the token file would persist the login.",
    observed="Mounting a credential file returns EBUSY.",
    evidence="EBUSY from the mount syscall",
    answers=["why does mounting the token file fail?"],
    relates_to=["credentials-are-a-named-volume"],
)


def test_remember_composes_the_seed_example_byte_for_byte() -> None:
    note = build_surprise(SEED_OBSERVATION, DEFAULT_KEY_TEMPLATES, dt.date(2026, 10, 11))
    assert render(note) == SEED_NOTE


def test_the_recorded_date_is_injected_not_fixed() -> None:
    note = build_surprise(SEED_OBSERVATION, DEFAULT_KEY_TEMPLATES, dt.date(2027, 2, 3))
    assert "recorded: 2027-02-03\n" in render(note)
    assert render(note) == SEED_NOTE.replace("2026-10-11", "2027-02-03")


READABLE_FIXTURES = sorted((FIXTURES / "notes").glob("*.md")) + [
    p for p in sorted((FIXTURES / "lint/store").glob("*.md")) if p.name != "unreadable.md"
]


@pytest.mark.parametrize("path", READABLE_FIXTURES, ids=lambda p: p.name)
def test_render_parse_round_trips_every_readable_fixture(path) -> None:
    text = path.read_text(encoding="utf-8")
    note = parse(text)
    assert render(note) == text
    assert parse(render(note)) == note


def test_unknown_fields_survive_a_round_trip_in_place() -> None:
    text = note_text("k", reviewer="ana", priority="") .replace("# k", "# Title")
    note = parse(text)
    assert note.field("reviewer") == "ana"
    assert note.field("priority") == ""
    assert render(note) == text


def test_writing_never_rewrites_link_text() -> None:
    body = "See [[Some Odd  Key]] and [[docs/deploy]] and [[a/b-c]].\n"
    text = note_text("k", body=body)
    note = with_field(parse(text), "source", "another writer")
    assert body in render(note)
    assert note.links == ("Some Odd  Key", "docs/deploy", "a/b-c")


def test_a_heading_inside_a_code_fence_is_not_a_section() -> None:
    body = "## Answers\n\n- a question\n\n## Evidence\n```\n## Observed\n```\n"
    note = parse(note_text("k", "stub", body))
    assert [s.name for s in note.sections] == ["Answers", "Evidence"]


def test_links_inside_code_are_not_links() -> None:
    body = "Text [[real]] and `[[span]]`.\n\n```\n[[fenced]]\n```\n"
    assert parse(note_text("k", body=body)).links == ("real",)


def test_a_body_without_its_final_line_feed_is_read_linked_and_moved_alike() -> None:
    text = note_text("k", body="## Section\n\nsee [[b]]").rstrip("\n")
    note = parse(text)
    assert not note.body.endswith("\n") and note.links == ("b",)
    assert link_line(note, "b") == text.count("\n") + 1  # the file's last line
    assert retarget_links(note, "b", "c").body.endswith("see [[c]]")
    assert outline("# Title\n\n## Section") == ("Title", ["Section"])


def test_only_code_blocks_hide_links_headings_lists_and_quotes_do_not() -> None:
    # a `~~~` fence: no backtick for the code-span pass to blank it by chance
    body = ("~~~\n[[tilde]]\n~~~\n\n- item [[listed]]\n\n> quoted [[quoted]]\n\n"
            "## Section [[heading]]\n\nText [[prose]]\n")
    note = parse(note_text("k", body=body))
    assert note.links == ("listed", "quoted", "heading", "prose")
    assert retarget_links(note, "tilde", "elsewhere") is note  # nothing to rewrite
    assert "## Section [[x]]" in retarget_links(note, "heading", "x").body


def test_links_in_an_indented_code_block_are_not_links_nor_moved() -> None:
    body = ("Text [[real]].\n\n    omh memory show [[real]]\n\tcat [[tabbed]]\n\n"
            "A paragraph\n    [[continued]] on an indented line.\n")
    note = parse(note_text("k", body=body))
    assert note.links == ("real", "continued")
    moved = retarget_links(note, "real", "elsewhere").body
    assert "Text [[elsewhere]]." in moved and "show [[real]]" in moved


def test_sections_are_headings_not_words() -> None:
    body = "Expected, Observed, Evidence and Answers are all mentioned here.\n"
    note = parse(note_text("k", "surprise", body))
    assert note.sections == ()


@pytest.mark.parametrize(
    ("value", "message"),
    [("2026-13-45", "not a date that exists"), ("2026-02-30", "not a date that exists"),
     ("26-1-1", "YYYY-MM-DD"), ("yesterday", "YYYY-MM-DD")],
)
def test_recorded_must_be_a_date_that_exists(value: str, message: str) -> None:
    with pytest.raises(NoteParseError, match=message):
        parse(note_text("k", recorded=value))


@pytest.mark.parametrize("field", ["key", "type", "source", "recorded"])
def test_every_required_field_is_refused_missing_or_blank(field: str) -> None:
    text = note_text("k")
    line = next(x for x in text.splitlines() if x.startswith(f"{field}:"))
    with pytest.raises(NoteParseError, match=f"`{field}` is missing"):
        parse(text.replace(line + "\n", ""))
    with pytest.raises(NoteParseError, match=f"`{field}` is empty"):
        parse(text.replace(line, f"{field}:   "))


def test_every_missing_or_blank_field_is_named_at_once() -> None:
    """A hand-written note is mended in one go: not one field per try."""
    with pytest.raises(NoteParseError) as err:
        parse("---\nkey: k\n---\n\n# k\n")
    assert str(err.value) == "frontmatter fields `type`, `source` and `recorded` are missing"
    with pytest.raises(NoteParseError) as err:
        parse("---\nkey: k\ntype: topic\nsource:\nrecorded: \n---\n\n# k\n")
    assert str(err.value) == "frontmatter fields `source` and `recorded` are empty"
    with pytest.raises(NoteParseError) as err:
        parse("---\ntype: topic\nsource:\n---\n\n# k\n")
    assert str(err.value) == ("frontmatter fields `key` and `recorded` are missing and "
                              "field `source` is empty")
    assert err.value.line == 1


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("# no frontmatter\n", "does not start"),
        ("---\nkey: k\n", "never closes"),
        ("---\nkey k\n---\n", "not `name: value`"),
        ("---\nkey: a\nkey: b\n---\n", "appears twice"),
        (note_text("k", kind="idea"), "not a note type"),
        (note_text("k").replace("# k\n", "No title here.\n"), "no `# Title`"),
        (note_text("k").replace("key: k", "key: ../escape"), "not a usable key"),
    ],
)
def test_malformed_notes_are_refused_with_a_reason(text: str, message: str) -> None:
    with pytest.raises(NoteParseError, match=message):
        parse(text)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\xef\xbb\xbf---\n", "byte-order mark"),
        (b"---\nkey: \xff\n", "not valid UTF-8"),
        (b"---\r\nkey: k\r\n", "CR line endings"),
        (b"---\nkey: k\x00\n", "NUL"),
    ],
)
def test_bytes_a_note_may_not_hold_are_refused(data: bytes, message: str) -> None:
    with pytest.raises(NoteParseError, match=message):
        decode(data)


def test_compose_refuses_a_value_that_would_change_the_structure() -> None:
    fields = [("key", "k"), ("type", "topic"), ("source", "t"), ("recorded", "2026-01-01")]
    with pytest.raises(NoteParseError, match="changed the note's structure"):
        compose(fields, "Title", [("Notes", "fine\n## Sneaky\nsection")])
    with pytest.raises(NoteParseError, match="one line"):
        compose([*fields[:2], ("source", "two\nlines"), fields[3]], "Title", [])


@pytest.mark.parametrize(("item", "said"), [
    ("why  now?", "the Answers item 'why  now?' would read back as 'why now?' (Markdown reads "
                  "a run of spaces as one); write it with single spaces"),
    ("# heading", "the Answers item '# heading' would read back as '' (Markdown takes its "
                  "start as a mark); reword it, or put that part in `backticks`"),
])
def test_compose_names_the_list_item_that_would_read_back_otherwise(item: str,
                                                                    said: str) -> None:
    fields = [("key", "k"), ("type", "topic"), ("source", "t"), ("recorded", "2026-01-01")]
    with pytest.raises(NoteParseError) as refused:
        compose(fields, "Title", [("Answers", ("fine?", item))])
    assert str(refused.value) == said


def test_list_sections_keep_their_items() -> None:
    body = "## Answers\n\n- first question\n- second\n  question\n"
    note = parse(note_text("k", "stub", body))
    answers = note.section("Answers")
    assert answers is not None
    assert answers.items == ("first question", "second question")
