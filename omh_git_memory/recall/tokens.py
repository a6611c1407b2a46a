"""Words for recall: whole words, identifier-aware, stemmed.

A text is split into words of letters and digits. An identifier such as
`CURLOPT_SSL_VERIFYPEER`, `parseHeaderLine` or `http2` also yields its parts
(`curlopt`, `ssl`, `verifypeer`; `parse`, `header`, `line`; `http`, `2`), and
keeps itself. Each word is lowercased and stemmed with Porter's step 1 (plurals
and tenses) and step 5a (a final `e`), so `mounted` finds `mounting`. Nothing
matches on part of a word, and there is no stopword list.
"""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import chain
from typing import Final

# What words a text yields: part of every index's shape (recall/shape.py), so a
# change to the splitting or the stemmer rebuilds indexes made by the old rules.
VERSION: Final = 2  # 2: a run of underscores no longer yields an empty word

_WORD = re.compile(r"[^\W_]+(?:_+[^\W_]+)*")  # letters/digits, joined by underscores
_LINK = re.compile(r"\[\[[^\[\]\n]*\]\]")
_VOWELS = frozenset("aeiou")


def words(text: str) -> list[str]:
    """The stemmed words of `text`, in order, identifier parts after the whole."""
    return list(chain.from_iterable(map(token_words, _WORD.findall(text))))


@lru_cache(maxsize=1 << 16)
def token_words(token: str) -> tuple[str, ...]:
    """One token's stemmed words: the whole, then its identifier parts (kept: a
    store repeats a few thousand tokens a million times)."""
    whole = stem(token.lower())
    parts = [p for piece in token.split("_") if piece for p in _parts(piece)]  # MAX__SIZE
    if len(parts) == 1:
        return (whole,)
    return (whole, *(s for s in (stem(p.lower()) for p in parts) if s != whole))


def _parts(piece: str) -> list[str]:
    """`parseHeaderLine` → parse, Header, Line; `HTTPServer` → HTTP, Server;
    `http2` → http, 2. Works on any script: case and digit changes split."""
    if piece.isalpha() and (piece.islower() or piece.isupper() or piece.istitle()):
        return [piece]  # most words: no case change to split at (a tenth of the time)
    return _case_parts(piece)


def _case_parts(piece: str) -> list[str]:
    """:func:`_parts`, a character at a time."""
    out: list[str] = []
    start = 0
    for i in range(1, len(piece)):
        prev, cur = piece[i - 1], piece[i]
        nxt = piece[i + 1] if i + 1 < len(piece) else ""
        if (
            prev.isdigit() != cur.isdigit()
            or (prev.islower() and cur.isupper())
            or (prev.isupper() and cur.isupper() and nxt.islower())
        ):
            out.append(piece[start:i])
            start = i
    out.append(piece[start:])
    return out


def without_links(text: str) -> str:
    """`text` with `[[links]]` removed: a link is an edge of the graph, not a word."""
    return _LINK.sub(" ", text) if "[[" in text else text


# English function words: in a question they say how it is asked, not what about.
_FUNCTION_WORDS: Final = (
    "a", "about", "above", "after", "again", "against", "all", "am", "an", "and", "any", "are",
    "as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but",
    "by", "can", "could", "did", "do", "does", "doing", "down", "during", "each", "few", "for",
    "from", "further", "had", "has", "have", "having", "he", "her", "here", "hers", "herself",
    "him", "himself", "his", "how", "i", "if", "in", "into", "is", "it", "its", "itself", "just",
    "me", "more", "most", "my", "myself", "no", "nor", "not", "now", "of", "off", "on", "once",
    "only", "or", "other", "our", "ours", "ourselves", "out", "over", "own", "same", "she",
    "should", "so", "some", "such", "than", "that", "the", "their", "theirs", "them", "themselves",
    "then", "there", "these", "they", "this", "those", "through", "to", "too", "under", "until",
    "up", "very", "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom",
    "why", "will", "with", "would", "you", "your", "yours", "yourself", "yourselves",
)


def is_function_word(term: str) -> bool:
    """Whether a stemmed word is an English function word (`the`, `does`, `why`)."""
    return term in _STOPWORDS


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """Porter step 1 (1a, 1b, 1c) and step 5a, for a lowercase word."""
    if len(word) <= 2 or not word.isalpha():
        return word
    w = _step1a(word)
    w = _step1b(w)
    w = _step1c(w)
    return _step5a(w)


def _is_consonant(w: str, i: int) -> bool:
    ch = w[i]
    if ch in _VOWELS:
        return False
    if ch == "y":
        return i == 0 or not _is_consonant(w, i - 1)
    return True


def _measure(stem_: str) -> int:
    """Porter's m: the number of vowel-consonant sequences in `stem_`."""
    m = 0
    prev_vowel = False
    for i in range(len(stem_)):
        vowel = not _is_consonant(stem_, i)
        if prev_vowel and not vowel:
            m += 1
        prev_vowel = vowel
    return m


def _has_vowel(stem_: str) -> bool:
    return any(not _is_consonant(stem_, i) for i in range(len(stem_)))


def _ends_double_consonant(w: str) -> bool:
    return len(w) >= 2 and w[-1] == w[-2] and _is_consonant(w, len(w) - 1)


def _cvc(w: str) -> bool:
    """Consonant-vowel-consonant at the end, the last not w, x or y."""
    return (
        len(w) >= 3
        and _is_consonant(w, len(w) - 3)
        and not _is_consonant(w, len(w) - 2)
        and _is_consonant(w, len(w) - 1)
        and w[-1] not in "wxy"
    )


def _step1a(w: str) -> str:
    if w.endswith("sses"):
        return w[:-2]
    if w.endswith("ies"):
        return w[:-2]
    if w.endswith("ss"):
        return w
    if w.endswith("s"):
        return w[:-1]
    return w


def _step1b(w: str) -> str:
    if w.endswith("eed"):
        return w[:-1] if _measure(w[:-3]) > 0 else w
    for suffix in ("ed", "ing"):
        if w.endswith(suffix) and _has_vowel(w[: -len(suffix)]):
            w = w[: -len(suffix)]
            if w.endswith(("at", "bl", "iz")):
                return w + "e"
            if _ends_double_consonant(w) and w[-1] not in "lsz":
                return w[:-1]
            if _measure(w) == 1 and _cvc(w):
                return w + "e"
            return w
    return w


def _step1c(w: str) -> str:
    if w.endswith("y") and _has_vowel(w[:-1]):
        return w[:-1] + "i"
    return w


def _step5a(w: str) -> str:
    if w.endswith("e"):
        base = w[:-1]
        m = _measure(base)
        if m > 1 or (m == 1 and not _cvc(base)):
            return base
    return w


_STOPWORDS: Final = frozenset(stem(w) for w in _FUNCTION_WORDS)
