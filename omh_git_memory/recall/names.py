"""The names a question gives that nothing in the store mentions.

A question that names a thing by its proper name — a tool, a product, a format:
`PyInstaller`, `CycloneDX`, `WebAssembly`, `Postgres` — asks about that thing. When
no note and no document of the repository holds that name as a word, whatever
documents share the question's other words (`bundle`, `executable`, `poetry`) are
not about it: recall then returns no document, and says which name nothing
mentions, so that the asker can try the name the repository uses (docs/recall.md
"A name nothing mentions").

A name is a word of the question, past its first word and not the first word of a
later sentence (nor the first after an area label, `docs: Fix …`, nor such a
label itself: a pasted error's `SolverProblemError: …`), written with a
capital letter (`Postgres`, `JSON`, `CVEs`, `PyCharm`, `wolfSSL`) — not `I`; a
sentence's first word only with a capital past its first letter (`PyCharm`). It is
looked up whole, as the index keeps every
identifier whole beside its parts: `PyInstaller` is missing even when `py` and
`installer` are not.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Final

from omh_git_memory.recall.tokens import is_function_word, words

# A word as written: letters, digits, and what joins an identifier's parts.
_WORD: Final = re.compile(r"[^\s]+")
_EDGES: Final = "\"'`()[]{}<>,;:!?.*"
_SENTENCE_END: Final = (".", "?", "!", ":")  # `docs: Fix …` begins anew after its label


def names(question: str) -> list[str]:
    """The words of `question` written as names (see above), as written, each once."""
    found: list[str] = []
    start = first = True  # the next word begins a sentence; it is the question's first
    for match in _WORD.finditer(question):
        raw = match.group()
        word = raw.strip(_EDGES)
        if word.endswith(("'s", "’s")):
            word = word[:-2]
        # A sentence's first word is capitalised anyway: a name there needs a capital
        # past its first letter (`PyCharm`, `JSON`).
        capital = any(c.isupper() for c in (word[1:] if start else word))
        # The question's first word as a label (`http: …`, a pasted error's
        # `SolverProblemError: …`) says where or what kind, not what is asked about.
        label = first and raw.endswith(":")
        first = False
        if word and word != "I" and capital and not label and word not in found:
            found.append(word)
        if word:
            start = raw.rstrip("\"')]}*`").endswith(_SENTENCE_END)
    return found


def unknown_names(question: str, held: Callable[[str], bool]) -> tuple[str, ...]:
    """The names of `question` whose whole word no note or document holds (`held`:
    whether the store holds a word, as the index spells it)."""
    missing = []
    for name in names(question):
        spelled = words(name)
        if spelled and not is_function_word(spelled[0]) and not held(spelled[0]):
            missing.append(name)
    return tuple(missing)


def unknown_in_every(phrasings: Sequence[str], held: Callable[[str], bool]
                     ) -> tuple[str, ...]:
    """The unknown names of the first phrasing when every phrasing names something
    nothing mentions (another phrasing that names only known things lifts it), else
    nothing."""
    found = [unknown_names(p, held) for p in phrasings]
    return found[0] if found and all(found) else ()
