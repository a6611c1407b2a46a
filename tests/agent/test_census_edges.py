"""The census's edges: the group limits exactly at their bounds, which words may name
a group, and ties broken by name so the same store always gives the same sentence."""

from __future__ import annotations

from omh_git_memory.agent.census import own_prefixes, take_census
from omh_git_memory.recall.document import Doc


def _doc(key: str, kind: str = "surprise", title: str = "", links: tuple[str, ...] = (),
         layer: str = "local", source: str = "local") -> Doc:
    return Doc(layer, key, kind, 1, title or key, links, source, 5, f"{key}.md")


def _titled(*titles: str) -> list[Doc]:
    """Notes whose keys name no folder and which link nowhere: only titles can group them."""
    return [_doc(f"n{i}", title=t) for i, t in enumerate(titles)]


def test_only_a_template_with_a_literal_folder_gives_its_type_a_prefix() -> None:
    templates = {"surprise": "surprise/{{slug}}", "flat": "flat",
                 "dyn": "{{kind}}/{{slug}}", "bare": "{{slug}}"}
    assert own_prefixes(templates) == {"surprise": "surprise"}


def test_a_topic_one_note_links_to_gathers_two_and_names_a_group() -> None:
    docs = [_doc("sandbox", "topic", layer="team", source="n:t"),
            _doc("surprise/s1", links=("sandbox",))]
    assert take_census(docs).groups == [("sandbox", 2)]


def test_a_link_to_a_note_that_is_not_a_topic_gathers_nothing() -> None:
    docs = [_doc("surprise/deploy/a"), _doc("surprise/net/b", links=("surprise/deploy/a",))]
    assert take_census(docs).groups == [("deploy", 1), ("net", 1)]


def test_a_title_word_two_notes_share_names_a_group() -> None:
    assert take_census(_titled("Kiwi crashes", "Kiwi leaks")).groups == [("kiwi", 2)]


def test_a_word_past_the_titles_first_words_names_nothing() -> None:
    def title(n: int) -> str:  # twelve words no other title has, then "kiwi"
        return " ".join(f"w{n}x{i}" for i in range(12)) + " kiwi"
    assert take_census(_titled(title(0), title(1))).groups == [("other", 2)]
    # the same word one place earlier does
    earlier = [" ".join(f"w{n}x{i}" for i in range(11)) + " kiwi" for n in (0, 1)]
    assert take_census(_titled(*earlier)).groups == [("kiwi", 2)]


def test_a_three_letter_word_names_a_group_and_a_two_letter_one_does_not() -> None:
    assert take_census(_titled("git hangs", "git loops")).groups == [("git", 2)]
    # `ox's` passes the three-character pattern, but the word is `ox`
    assert take_census(_titled("The ox's cart", "An ox's horn")).groups == [("other", 2)]


def test_function_words_and_words_of_what_happened_name_no_group() -> None:
    assert take_census(_titled("Fixed the alpha", "Fixed the beta")).groups == [("other", 2)]


def test_a_title_holding_two_spellings_of_a_word_alone_does_not_stop_the_next_group() -> None:
    # "appl" is estimated at 2 (two spellings in one title) and, tied with "kiwi", is
    # tried first; it gathers one title, so the next word is still tried.
    census = take_census(_titled("Apple apples", "kiwi one", "kiwi two"))
    assert census.groups == [("kiwi", 2), ("other", 1)]


def test_groups_of_the_same_size_are_ordered_by_name() -> None:
    assert take_census([_doc("b/1"), _doc("a/1")]).groups == [("a", 1), ("b", 1)]


def test_title_words_as_frequent_as_each_other_are_tried_by_name() -> None:
    # zebra and yak are both in three titles; yak is tried first and takes the
    # title holding both, although zebra was seen first.
    census = take_census(_titled("zebra", "zebra", "yak", "yak", "yak zebra"))
    assert census.groups == [("yak", 3), ("zebra", 2)]


def test_a_group_is_named_by_the_first_spelling_by_name_on_a_tie() -> None:
    # Which spelling a set holds first differs from process to process (string
    # hashing); over many words, only a tie broken by name is always right.
    for noun in ["window", "socket", "apple", "kiwi", "branch", "parser", "token", "bucket",
                 "cache", "mirror", "tunnel", "ticket", "widget", "pixel", "router", "lemon",
                 "badge", "folder", "crate", "kernel", "plugin", "sensor"]:
        assert take_census(_titled(f"{noun}s", noun)).groups == [(noun, 2)], noun
