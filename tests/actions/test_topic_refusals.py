"""`build_topic`: what a topic's writer is told when a part would not make a sound
note, and what a sound part gives."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from omh_git_memory.actions.topic import TopicDraft, build_topic
from omh_git_memory.model.config import load_config
from omh_git_memory.model.errors import NoteRefused
from omh_git_memory.model.note import MAX_NOTE_BYTES

TODAY = dt.date(2026, 10, 12)
TOKEN = "ghp_1234567890abcdefghijklmnopqrstuvwxyzab"


def _build(draft: TopicDraft):  # type: ignore[no-untyped-def]
    return build_topic(draft, load_config(Path("/nonexistent")).keys, TODAY)


def _refusal(draft: TopicDraft) -> str:
    with pytest.raises(NoteRefused) as caught:
        _build(draft)
    return str(caught.value)


def test_a_title_that_is_only_a_token_says_the_token_was_left_out() -> None:
    said = _refusal(TopicDraft(title=TOKEN))
    assert said == ("the title has no letter or digit to derive a key from once its "
                    "token is left out (a key may not carry one)")


def test_a_title_with_no_word_says_only_that() -> None:
    assert _refusal(TopicDraft(title="!!! ???")) == (
        "the title has no letter or digit to derive a key from")


@pytest.mark.parametrize("source", ["   ", "", "\n"])
def test_an_empty_source_is_refused_by_name(source: str) -> None:
    assert _refusal(TopicDraft(title="T", source=source)) == (
        "`source` must be one non-empty line saying who observed this")


def test_a_trigger_omh_can_evaluate_is_written() -> None:
    note = _build(TopicDraft(title="Build layout", sections=[("Notes", "text")],
                             invalidated_by="symbol:load_config"))
    assert note.invalidated_by == "symbol:load_config"


def test_a_trigger_omh_cannot_evaluate_says_why() -> None:
    said = _refusal(TopicDraft(title="T", invalidated_by="whenever"))
    assert said.startswith("invalidated_by: 'whenever' is not a trigger omh can evaluate")


def test_a_topic_over_the_size_limit_is_refused_before_it_is_composed() -> None:
    big = "word " * (MAX_NOTE_BYTES // 5 + 1)
    said = _refusal(TopicDraft(title="T", sections=[("Notes", big)]))
    assert said.startswith("the note would hold about ")
    assert f"a note holds at most {MAX_NOTE_BYTES}" in said and "keep the topic" in said


@pytest.mark.parametrize(("over", "early"), [(0, False), (1, True)])
def test_only_text_past_the_limit_is_refused_before_it_is_composed(over: int,
                                                                  early: bool) -> None:
    # exactly the limit of text: refused once composed (its frontmatter makes it larger)
    body = "x" * (MAX_NOTE_BYTES - 1 + over)
    said = _refusal(TopicDraft(title="T", sections=[("Notes", body)]))
    assert said.startswith("the note would hold about ") is early
    assert said.startswith("the note would not read back: is ") is not early


@pytest.mark.parametrize(("draft", "where"), [
    (TopicDraft(title="T\x1b"), "the title"),
    (TopicDraft(title="T", source="me\x1b"), "`source`"),
    (TopicDraft(title="T", sections=[("A", "esc \x1b")]), "section 'A'"),
    (TopicDraft(title="T", sections=[("A", "x")], answers=["q\x1b?"]), "`answers`"),
])
def test_a_control_character_is_refused_where_it_was_given(draft: TopicDraft,
                                                            where: str) -> None:
    assert _refusal(draft) == (f"{where} holds the control character U+001B; a note holds "
                               "text, tabs and line feeds only; remove it and write the "
                               "note again")


def test_a_section_without_a_name_is_refused() -> None:
    assert _refusal(TopicDraft(title="T", sections=[("  ", "text")])) == (
        "a section has no name: write --section NAME=TEXT")


def test_a_link_given_twice_is_listed_once() -> None:
    note = _build(TopicDraft(title="T", sections=[("Notes", "text")],
                             relates_to=["ci", " ci ", "deploy"]))
    assert list(note.links) == ["ci", "deploy"]
    assert note.body.count("[[ci]]") == 1
