"""The semantic model's tokenizer, step by step as BERT's reference tokenizer takes
them (recall/wordpiece.py). The token ids the reference gives for whole texts are
checked in tests/recall/test_semantic.py; these pin each step's edges."""

from __future__ import annotations

import unicodedata

import pytest

from omh_git_memory.recall.wordpiece import (
    MAX_WORD_CHARS,
    basic_tokens,
    encode,
    general_basic_tokens,
    vocabulary,
)

# The reference's "Chinese character" blocks (BERT's `_is_chinese_char`), first and last.
CJK_BLOCKS = [(0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
              (0x2B740, 0x2B81F), (0x2B820, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F)]


def _is_inside(cp: int) -> bool:
    return any(first <= cp <= last for first, last in CJK_BLOCKS)


@pytest.mark.parametrize("cp", sorted({cp for block in CJK_BLOCKS for cp in block}),
                         ids=hex)
def test_an_ideograph_at_either_end_of_a_block_is_a_word_of_its_own(cp: int) -> None:
    # A compatibility ideograph comes out as the unified one it decomposes to.
    ideograph = unicodedata.normalize("NFD", chr(cp))
    assert general_basic_tokens(f"a{chr(cp)}b") == ["a", ideograph, "b"]


@pytest.mark.parametrize(
    "cp", sorted({cp for first, last in CJK_BLOCKS for cp in (first - 1, last + 1)
                  if not _is_inside(cp)}), ids=hex)
def test_a_character_just_outside_a_block_stays_in_its_word(cp: int) -> None:
    # Hexagrams, Yi syllables, a ligature, private use, unassigned code points.
    assert general_basic_tokens(f"a{chr(cp)}b") == [f"a{chr(cp)}b"]


@pytest.mark.parametrize("cp", range(128), ids=hex)
def test_every_ascii_character_splits_in_the_reference_steps_as_in_the_shortcut(
    cp: int,
) -> None:
    text = f"x{chr(cp)}y"
    assert general_basic_tokens(text) == basic_tokens(text)


def test_non_ascii_text_is_cleaned_as_the_reference_cleans_it() -> None:
    # A tab and a no-break space split; a zero-width space (a format character),
    # a replacement character and a NUL are dropped; accents go.
    assert basic_tokens("né\tla\u00a0b\u200bc\ufffdd\x00e") == ["ne", "la", "bcde"]


def test_a_word_of_more_than_a_hundred_characters_is_one_unknown_piece() -> None:
    vocab = vocabulary()
    assert MAX_WORD_CHARS == 100
    at_limit = encode("a" * MAX_WORD_CHARS, 512)  # "aaa", then "##aa" and "##a"
    assert len(at_limit) > 3 and vocab["[UNK]"] not in at_limit
    assert encode("a" * (MAX_WORD_CHARS + 1), 512) == [
        vocab["[CLS]"], vocab["[UNK]"], vocab["[SEP]"]]


def test_a_word_with_no_pieces_in_the_vocabulary_is_one_unknown_piece() -> None:
    vocab = vocabulary()
    assert encode("a\U0001f9ff", 16) == [vocab["[CLS]"], vocab["[UNK]"], vocab["[SEP]"]]
