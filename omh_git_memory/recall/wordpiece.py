"""BERT's uncased WordPiece tokenizer, for the optional semantic model.

Same steps as the reference implementation the model was trained with: clean
control characters, space out CJK ideographs, lowercase and strip accents, split
on whitespace and punctuation, then greedy longest-match-first word pieces with a
`##` prefix for continuations. The vocabulary ships with the package
(`data/minilm-vocab.txt`, from all-MiniLM-L6-v2, Apache-2.0). Tested token for
token against the reference `tokenizers` library on the development corpus.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from importlib import resources
from typing import Final

MAX_WORD_CHARS: Final = 100
# For ASCII text the steps below reduce to: drop control characters, lowercase, and
# take runs of letters and digits and single punctuation marks.
_ASCII_CONTROL: Final = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_ASCII_TOKEN: Final = re.compile(r"[a-z0-9]+|[!-/:-@\[-`{-~]")


@lru_cache(maxsize=1)
def vocabulary() -> dict[str, int]:
    text = resources.files("omh_git_memory").joinpath("data/minilm-vocab.txt").read_text(
        encoding="utf-8")
    return {token: index for index, token in enumerate(text.splitlines())}


def _is_control(ch: str) -> bool:
    if ch in "\t\n\r":
        return False
    return unicodedata.category(ch) in ("Cc", "Cf")


def _is_whitespace(ch: str) -> bool:
    return ch in " \t\n\r" or unicodedata.category(ch) == "Zs"


def _is_punctuation(ch: str) -> bool:
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def _is_cjk(cp: int) -> bool:
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF
            or 0x2A700 <= cp <= 0x2B73F or 0x2B740 <= cp <= 0x2B81F or 0x2B820 <= cp <= 0x2CEAF
            or 0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F)


def basic_tokens(text: str) -> list[str]:
    """The words and punctuation marks of `text`, cleaned and lowercased."""
    if text.isascii():  # the common case, about ten times faster
        return _ASCII_TOKEN.findall(_ASCII_CONTROL.sub("", text).lower())
    return general_basic_tokens(text)


def general_basic_tokens(text: str) -> list[str]:
    """`basic_tokens` for any text, step by step as the reference does it."""
    out: list[str] = []
    for ch in text:
        cp = ord(ch)
        if cp == 0 or cp == 0xFFFD or _is_control(ch):
            continue
        if _is_whitespace(ch):
            out.append(" ")
        elif _is_cjk(cp):
            out.append(f" {ch} ")
        else:
            out.append(ch)
    cleaned = "".join(out).lower()
    cleaned = "".join(c for c in unicodedata.normalize("NFD", cleaned)
                      if unicodedata.category(c) != "Mn")
    tokens: list[str] = []
    for word in cleaned.split():
        current = ""
        for ch in word:
            if _is_punctuation(ch):
                if current:
                    tokens.append(current)
                    current = ""
                tokens.append(ch)
            else:
                current += ch
        if current:
            tokens.append(current)
    return tokens


def word_pieces(word: str, vocab: dict[str, int]) -> list[int]:
    if len(word) > MAX_WORD_CHARS:
        return [vocab["[UNK]"]]
    pieces: list[int] = []
    start = 0
    while start < len(word):
        end = len(word)
        found = None
        while start < end:
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            if piece in vocab:
                found = vocab[piece]
                break
            end -= 1
        if found is None:
            return [vocab["[UNK]"]]
        pieces.append(found)
        start = end
    return pieces


def encode(text: str, max_length: int, memo: dict[str, list[int]] | None = None) -> list[int]:
    """Token ids with [CLS] and [SEP], cut to `max_length` in all. `memo` keeps each
    word's pieces for the next text (a caller encoding many texts passes one)."""
    vocab = vocabulary()
    known = {} if memo is None else memo
    ids: list[int] = []
    for word in basic_tokens(text):
        pieces = known.get(word)
        if pieces is None:
            pieces = known[word] = word_pieces(word, vocab)
        ids.extend(pieces)
        if len(ids) >= max_length - 2:
            break
    return [vocab["[CLS]"], *ids[: max_length - 2], vocab["[SEP]"]]
