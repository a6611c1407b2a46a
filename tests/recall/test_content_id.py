"""Content ids: one builder and one parser of the string the index keeps per note."""

from __future__ import annotations

import pytest

from omh_git_memory.recall import content_id
from omh_git_memory.recall.content_id import ContentId, Kind


def test_each_form_is_taken_apart_into_what_it_was_built_from() -> None:
    assert ContentId.parse(content_id.note_id("ab12", ".omh/notes/a/b.md")) == ContentId(
        Kind.NOTE, "ab12", ".omh/notes/a/b.md")
    assert ContentId.parse(content_id.stub_id("cd34", "docs/a:b.md")) == ContentId(
        Kind.STUB, "cd34", "docs/a:b.md")  # a colon in the path stays in the path
    topic = ContentId.parse(content_id.topic_id("name\0README.md"))
    assert topic.kind is Kind.TOPIC and len(topic.blob_id) == 40
    assert ContentId.parse(content_id.LOCAL) == ContentId(Kind.LOCAL)


def test_the_cheap_questions_agree_with_the_parser() -> None:
    ids = [content_id.note_id("a", "p"), content_id.stub_id("b", "q"),
           content_id.topic_id("x"), content_id.LOCAL]
    for text in ids:
        kind = ContentId.parse(text).kind
        assert content_id.kind_of(text) is kind
        assert content_id.is_stub(text) == (kind is Kind.STUB)
        assert content_id.is_topic(text) == (kind is Kind.TOPIC)
        assert content_id.is_derived(text) == (kind in (Kind.STUB, Kind.TOPIC))


@pytest.mark.parametrize("text", ["", "n:", "n:abc", "s::path", "n:abc:", "t:", "x:a:b",
                                  "locals"])
def test_a_string_of_no_form_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        ContentId.parse(text)
    assert content_id.kind_of(text) is None or text[:2] in ("n:", "s:", "t:")
