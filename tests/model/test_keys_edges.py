"""Behaviour of keys.py that the mutation pass showed no test stated:
the size limits at their edges, how a key sorts, how a name is printed for a
terminal, where a long slug is cut, and what a template may bind.

Found by mutation testing (docs/records/mutation-passes.md); was tests/test_mutants_keys.py."""

from __future__ import annotations

import re

import pytest

from omh_git_memory.model.errors import ConfigError, InvalidKey
from omh_git_memory.model.keys import (
    MAX_KEY_BYTES,
    MAX_SEGMENT_BYTES,
    Key,
    KeyTemplates,
    describe,
    is_ignorable,
    is_plain,
    is_unsafe,
    key_problem,
    path_slug,
    printable,
    slug,
)

# --- limits, at their edges --------------------------------------------------------


def test_a_segment_of_exactly_the_limit_is_a_key_and_one_byte_more_is_not() -> None:
    assert MAX_SEGMENT_BYTES == 200
    Key("a" * 200)
    with pytest.raises(InvalidKey, match="longer than 200 bytes"):
        Key("a" * 201)


def test_a_key_of_exactly_the_limit_is_a_key_and_one_byte_more_is_not() -> None:
    assert MAX_KEY_BYTES == 1000
    exact = "/".join(["a" * 199] * 5) + "b"  # 4 * 199 + 200 bytes and 4 slashes
    assert len(exact.encode()) == 1000
    Key(exact)
    with pytest.raises(InvalidKey, match="longer than 1000 bytes"):
        Key(exact + "c")


def test_the_limits_count_utf8_bytes_not_characters() -> None:
    Key("é" * 100)  # 200 bytes
    with pytest.raises(InvalidKey, match="longer than 200 bytes"):
        Key("é" * 100 + "a")


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        ("", "empty"),
        ("/a", "absolute"),
        ("a\\b", "backslash"),
        ("a//b", "empty segment"),
        ("a/.b", "starts with `.`"),
        ("a/b.", "ends with `.`"),
        ("a/B", "capitals"),
        ("a/b c", "whitespace"),
        ("a/b:c", "whitespace or one of"),
        ("a\u202eb", "U+202E (RIGHT-TO-LEFT OVERRIDE)"),
        ("e\u0301", "normal form"),
    ],
)
def test_each_refusal_says_why(bad: str, reason: str) -> None:
    problem = key_problem(bad)
    assert problem is not None and reason in problem
    with pytest.raises(InvalidKey, match="is not a usable key"):
        Key(bad)


@pytest.mark.parametrize("good", ["a", "a/b", "a-b/c_d", "été/ça", "x.y", "1/2/3"])
def test_a_usable_key_has_no_problem(good: str) -> None:
    assert key_problem(good) is None
    assert str(Key(good)) == good


# --- identity and order ------------------------------------------------------------


def test_keys_order_by_their_text_and_a_key_is_not_less_than_itself() -> None:
    a, b = Key("a"), Key("b")
    assert a < b and not b < a
    assert not a < Key("a")
    assert a <= Key("a") and b > a and b >= a
    assert sorted([Key("surprise/z"), Key("a"), Key("surprise/b")]) == [
        Key("a"), Key("surprise/b"), Key("surprise/z")]


def test_a_key_compared_with_text_is_a_type_error_not_an_answer() -> None:
    with pytest.raises(TypeError):
        assert Key("a") < "b"  # type: ignore[operator]


def test_a_key_splits_into_segments_and_carries_a_numbered_suffix() -> None:
    key = Key("surprise/x")
    assert key.segments == ("surprise", "x")
    assert key.with_suffix_number(2) == Key("surprise/x-2")
    assert str(key.relpath()) == "surprise/x.md"


def test_a_file_that_is_not_a_note_has_no_key() -> None:
    with pytest.raises(InvalidKey, match=r"does not end in \.md"):
        Key.from_relpath("surprise/x.txt")
    assert Key.from_relpath("a/b.md") == Key("a/b")


# --- printing a name a reader cannot trust -------------------------------------------


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("plain name", "plain name"),
        ("two\nlines", "two\\nlines"),
        ("cr\rtab\t", "cr\\rtab\\t"),
        ("esc\x1b[31m", "esc\\x1b[31m"),
        ("del\x7f", "del\\x7f"),
        ("c1\x85", "c1\\x85"),
        ("bidi\u202eevil", "bidi\\u202eevil"),
        ("zero\u200bwidth", "zero\\u200bwidth"),
        ("filler\u3164", "filler\\u3164"),
        ("nonchar\uffff", "nonchar\\uffff"),
        ("private\ue000", "private\\ue000"),
        ("tag\U000e0041", "tag\\U000e0041"),
        ("astral\U0010fffd", "astral\\U0010fffd"),
        ("byte\udc80", "byte\\x80"),
        ("byte\udcff", "byte\\xff"),
        ("lone\ud800", "lone\\ud800"),
        ("lone\udd00", "lone\\udd00"),
        ("lone\udc7f", "lone\\udc7f"),
        ("nbsp\u00a0", "nbsp\\xa0"),
        ("café ÿ Ā 中", "café ÿ Ā 中"),
    ],
)
def test_printable_escapes_what_a_terminal_would_hide_or_act_on(text: str, shown: str) -> None:
    assert printable(text) == shown


def test_is_plain_is_true_only_for_text_that_prints_as_itself() -> None:
    assert is_plain("abc def é")
    assert not is_plain("a\nb")
    assert not is_plain("a\u200bb")  # printable to Python, yet draws nothing
    assert not is_plain("a\u3164b")


def test_unsafe_and_ignorable_characters() -> None:
    assert is_ignorable("\u200b") and is_ignorable("\u3164") and not is_ignorable("a")
    assert is_unsafe("\u3164")  # a letter by category, but draws nothing
    assert is_unsafe("\x00") and is_unsafe("\ue000") and is_unsafe("\u2028")
    assert not is_unsafe("a") and not is_unsafe(" ")


def test_describe_names_a_character_and_leaves_the_name_out_when_it_has_none() -> None:
    assert describe("\u202e") == "U+202E (RIGHT-TO-LEFT OVERRIDE)"
    assert describe("\x00") == "U+0000"


# --- slugs ---------------------------------------------------------------------------


def test_a_slug_has_no_dash_at_either_end_and_one_between_words() -> None:
    assert slug("--Hello,  world!--") == "hello-world"
    assert slug("!x") == "x"


def test_characters_that_draw_nothing_do_not_split_a_word() -> None:
    assert slug("pass\u200bword") == "password"
    assert slug("a\ue000b") == "a-b"  # private use: not a letter a reader sees


def test_a_slug_of_exactly_the_limit_is_kept_whole() -> None:
    exact = "ab-" * 66 + "cd"  # 200 bytes
    assert len(exact) == 200
    assert slug(exact) == exact


def test_a_long_slug_is_cut_at_the_last_dash_that_fits() -> None:
    text = "a " + "b" * 250
    assert slug(text) == "a"
    words = "w" * 150 + " " + "x" * 60
    assert slug(words) == "w" * 150


def test_a_long_slug_with_no_dash_is_cut_at_the_limit() -> None:
    assert slug("z" * 300) == "z" * 200
    cut = slug("é" * 150)
    assert cut == "é" * 100 and len(cut.encode()) == 200


def test_path_slug_drops_the_md_suffix_in_any_case_and_empty_segments() -> None:
    assert path_slug("Docs/Guide.MD") == "docs/guide"
    assert path_slug("/docs//guide.txt") == "docs/guide-txt"
    assert path_slug("notes.md.bak") == "notes-md-bak"


# --- templates -----------------------------------------------------------------------


def test_a_template_may_use_only_its_types_placeholders() -> None:
    with pytest.raises(ConfigError, match=r"placeholder \{\{path\}\} is bound to nothing"):
        KeyTemplates({"surprise": "s/{{path}}"})
    with pytest.raises(ConfigError, match=r"can use \{\{slug\}\}"):
        KeyTemplates({"topic": "{{ title }}"})
    KeyTemplates({"stub": "docs/{{ path }}", "topic": "t/{{slug}}"})


def test_expand_uses_the_configured_template_then_the_default() -> None:
    templates = KeyTemplates({"surprise": "found/{{slug}}"})
    assert templates.expand("surprise", slug="x") == Key("found/x")
    assert templates.expand("topic", slug="x") == Key("x")
    assert templates.expand("stub", path="docs/a") == Key("docs/a")


def test_expand_of_an_unknown_type_or_an_unbound_value_is_a_config_error() -> None:
    templates = KeyTemplates({})
    with pytest.raises(ConfigError, match="no key template for type 'idea'"):
        templates.expand("idea", slug="x")
    with pytest.raises(ConfigError, match="bound to nothing"):
        templates.expand("surprise", path="x")


def test_a_template_that_gives_an_unusable_key_says_which_template() -> None:
    message = re.escape("template 'surprise/{{slug}}' gave an unusable key")
    with pytest.raises(InvalidKey, match=message):
        KeyTemplates({}).expand("surprise", slug="")


def test_a_key_is_a_value_that_can_be_hashed_and_not_changed() -> None:
    assert {Key("a"), Key("a"), Key("b")} == {Key("a"), Key("b")}
    assert {Key("a"): 1}[Key("a")] == 1
    key = Key("a")
    assert key.value == "a"  # the attribute is there; assigning to it is refused
    with pytest.raises(AttributeError):
        key.value = "b"  # type: ignore[misc]
    assert key.value == "a"


# Unicode 15's Default_Ignorable_Code_Point ranges (DerivedCoreProperties.txt), as
# the spec states them: each end is ignorable, the code points just outside are not.
DEFAULT_IGNORABLE = (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160),
    (0x17B4, 0x17B5), (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E),
    (0x2060, 0x206F), (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)


@pytest.mark.parametrize(("low", "high"), DEFAULT_IGNORABLE,
                         ids=[f"{low:04X}-{high:04X}" for low, high in DEFAULT_IGNORABLE])
def test_the_ignorable_set_is_unicodes_at_both_ends_of_each_range(low: int, high: int) -> None:
    assert is_ignorable(chr(low)) and is_ignorable(chr(high))
    assert not is_ignorable(chr(low - 1)) and not is_ignorable(chr(high + 1))
    # What that means for a key: a character that draws nothing joins its neighbours.
    assert slug(f"ab{chr(low)}cd") == "abcd" == slug(f"ab{chr(high)}cd")


def test_a_too_long_segment_is_named_by_its_first_twenty_characters() -> None:
    problem = key_problem("x/" + "abcdefghij" * 21)
    assert problem is not None
    assert problem.startswith("segment 'abcdefghijabcdefghij'… is longer than 200 bytes")


def test_an_odd_length_slug_with_no_dash_is_cut_at_exactly_the_limit() -> None:
    assert slug("z" * 301) == "z" * 200
    assert slug("é" * 151) == "é" * 100


def test_the_key_templates_of_a_config_cannot_be_replaced() -> None:
    templates = KeyTemplates({})
    assert templates.templates == {}  # the attribute is there; assigning to it is refused
    with pytest.raises(AttributeError):
        templates.templates = {"surprise": "x/{{slug}}"}  # type: ignore[misc]
    assert templates.expand("surprise", slug="x") == Key("surprise/x")
