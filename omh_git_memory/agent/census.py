"""How many notes the store holds, counted by what they are about — never listing titles.

The census rides in the `recall` tool's description and in `omh doctor`, so
its size must not grow with the store: at most a handful of groups, the rest
counted as `other`.

A note's group says what it is about, found the cheapest way that works:

1. the topic note it links to (or is), when that topic gathers two notes or more
   — the one that gathers the most when it links to several;
2. else its key's first folder, once the type's own prefix (`surprise/` of the
   template `surprise/{{slug}}`) is taken off: `deploy/…`, `docs/…`;
3. else a word its title shares with other such titles: the word most of them
   share names a group, then the next among the rest, up to the group limit.
   A stub of a document at the top level counts as `docs`.

What nothing names is counted as `other`.
The repository topic gathers nothing: every note is about the repository. Only
counts leave this module, and the work is one pass over keys, links and titles
(plus one per title-word group), with ties broken by name, so the same store
always gives the same sentence.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from itertools import chain, compress
from typing import Final

from omh_git_memory.recall.document import Doc
from omh_git_memory.recall.tokens import is_function_word, stem

MAX_GROUPS: Final = 5  # named groups in a census; the rest are "other"
MAX_LABEL: Final = 24  # characters of a group's name
MIN_GROUP: Final = 2  # notes a topic or a title word must gather to name a group
TITLE_WORDS: Final = 12  # a title's first words say what it is about; the rest cost time
# A title word: three characters or more, starting with a letter; an identifier
# (`git_buf_free`) stays whole, so a shared prefix does not pass for a subject.
_TITLE_WORD = re.compile(r"[^\W\d_][\w'-]{2,}")
# Words a title uses to say what happened rather than what it is about.
_NOT_A_SUBJECT: Final = frozenset(stem(w) for w in (
    "able", "add", "added", "adds", "allow", "allows", "already", "also", "always", "another",
    "anymore", "avoid", "back", "call", "calls", "can't", "cannot", "case", "cases", "change",
    "changes", "check", "checks", "code", "correctly", "currently", "doesn't", "don't", "due",
    "ensure", "even", "every", "fail", "fails", "failed", "first", "fix", "fixed", "fixes",
    "function", "get", "gets", "however", "instead", "introduce", "isn't", "like", "make",
    "makes", "many", "may", "might", "must", "need", "needs", "never", "new", "now", "old",
    "one", "possible", "previously", "properly", "provide", "rather", "remove", "return",
    "returns", "seen", "set", "since", "still", "support", "supports", "though", "two", "use",
    "used", "uses", "using", "via", "want", "way", "without", "work", "works", "won't",
    "wrong", "yet",
))


@dataclass(frozen=True)
class Census:
    total: int
    by_layer: dict[str, int]
    groups: list[tuple[str, int]]  # largest first, "other" last

    def sentence(self) -> str:
        """`412 notes (400 team, 12 local): 300 docs, 40 credentials, …, 12 other`."""
        if not self.total:
            return "0 notes"
        layers = ", ".join(f"{n} {layer}" for layer, n in self.by_layer.items())
        groups = ", ".join(f"{n} {name}" for name, n in self.groups)
        noun = "note" if self.total == 1 else "notes"
        return f"{self.total} {noun} ({layers}): {groups}"


def own_prefixes(templates: Mapping[str, str]) -> dict[str, str]:
    """Each type's own literal first segment: `surprise/{{slug}}` → `surprise`."""
    out = {}
    for kind, template in templates.items():
        head, sep, _ = template.partition("/")
        if sep and "{{" not in head:
            out[kind] = head
    return out


def _label(key: str) -> str:
    return key.rpartition("/")[2].replace("-", " ").replace("_", " ")[:MAX_LABEL]


def _folder(doc: Doc, prefixes: Mapping[str, str]) -> str | None:
    """The key's first folder once the type's own prefix is off, or None."""
    key = doc.key
    own = prefixes.get(doc.kind, doc.kind)
    if key.startswith(own + "/"):
        key = key[len(own) + 1:]
    head, sep, _ = key.partition("/")
    return head[:MAX_LABEL] if sep and head else None


def take_census(docs: Iterable[Doc | None], prefixes: Mapping[str, str] | None = None
                ) -> Census:
    """Count `docs` by layer and by what they are about. `prefixes`: each type's own
    first key segment (`own_prefixes` of the key templates); by default the type's
    name, which is what the shipped templates use."""
    usable = [d for d in docs if d is not None and not d.problem]
    by_layer = Counter(d.layer for d in usable)
    prefixes = prefixes or {}
    topics = {d.key for d in usable if d.kind == "topic" and not d.derived}
    # A topic gathers the notes linking to it, and itself: only a linked one can
    # reach MIN_GROUP, so only those are looked at (most topics, at scale, are not).
    linked_to = Counter(t for d in usable if d.links for t in set(d.links) if t in topics)
    gathers = Counter({t: n + 1 for t, n in linked_to.items()})
    claims: dict[int, list[str]] = {}  # slot -> the gathering topics it links to or is
    if gathers:
        for slot, d in enumerate(usable):
            linked = {t for t in d.links if t in gathers}
            if d.key in gathers:
                linked.add(d.key)
            if linked:
                claims[slot] = sorted(linked)
    groups: Counter[str] = Counter()
    unnamed: list[Doc] = []
    for slot, d in enumerate(usable):
        mine = claims.get(slot)
        if mine:
            best = max(mine, key=gathers.__getitem__)  # the first by name on a tie
            if gathers[best] >= MIN_GROUP:
                groups[_label(best)] += 1
                continue
        folder = _folder(d, prefixes)
        if folder is not None:
            groups[folder] += 1
        elif d.kind == "stub":
            groups["docs"] += 1
        else:
            unnamed.append(d)
    # Every note is about the repository: its own name names no group.
    own = {w for d in usable if d.kind == "topic" and d.derived
           for w in _subjects(f"{d.key} {d.title}", {})}
    left = _title_groups(unnamed, groups, own)
    left += groups.pop("other", 0)  # a folder called `other` is counted with the rest
    ranked = sorted(groups.items(), key=lambda item: (-item[1], item[0]))
    named = ranked[:MAX_GROUPS]
    rest = left + sum(n for _, n in ranked[MAX_GROUPS:])
    if rest:
        named.append(("other", rest))
    ordered = {layer: by_layer[layer] for layer in ("team", "local") if by_layer[layer]}
    return Census(len(usable), ordered, named)


def _judge(token: str) -> tuple[tuple[str, str], ...]:
    """The (stem, spelling) of each word of a title's token (split at white space)
    that could name a subject."""
    out = []
    for found in _TITLE_WORD.findall(token):
        word = found.strip("-'").removesuffix("'s")
        s = stem(word)
        if len(word) > 2 and not is_function_word(s) and s not in _NOT_A_SUBJECT:
            out.append((s, word))
    return tuple(out)


def _subjects(text: str, memo: dict[str, tuple[tuple[str, str], ...]]) -> dict[str, str]:
    """The words of `text` that could say what it is about: stem → spelling. A title
    is split at white space (cheap), its first TITLE_WORDS tokens kept, and each token
    judged once per census (`memo`)."""
    out: dict[str, str] = {}
    for token in text.lower().split()[:TITLE_WORDS]:
        judged = memo.get(token)
        if judged is None:
            judged = memo[token] = _judge(token)
        for s, word in judged:
            out.setdefault(s, word)
    return out


def _title_groups(docs: list[Doc], groups: Counter[str], exclude: set[str]) -> int:
    """Name groups after the words most titles of `docs` share (greedily: the word
    most share, then the word most of the rest share, …), adding them to `groups`;
    returns how many docs no such word gathers. `exclude`: stems that name nothing.
    A group is named by its word's most frequent spelling among the titles it
    gathers (`windows`, `test`).

    The per-title work is done by C loops (split, set, Counter, isdisjoint, compress):
    Python only judges each distinct token once and walks the gathered titles."""
    titles = [set(d.title.lower().split(None, TITLE_WORDS)[:TITLE_WORDS]) for d in docs]
    frequency = Counter(chain.from_iterable(titles))  # token -> titles holding it
    tokens_of: dict[str, set[str]] = {}  # stem -> the tokens that hold it
    spellings: dict[tuple[str, str], str] = {}  # (token, stem) -> the word as spelled
    for token in frequency:
        for s, word in _judge(token):
            if s not in exclude:
                tokens_of.setdefault(s, set()).add(token)
                spellings[(token, s)] = word
    remaining = list(range(len(docs)))
    for _ in range(MAX_GROUPS):
        # An estimate (a title holding two spellings counts twice); the group
        # itself is counted exactly below.
        estimate = {s: sum(frequency[t] for t in held) for s, held in tokens_of.items()}
        best = min(estimate.items(), key=lambda item: (-item[1], item[0]), default=None)
        if best is None or best[1] < MIN_GROUP:
            break
        held = tokens_of.pop(best[0])
        outside = list(map(held.isdisjoint, (titles[i] for i in remaining)))
        gathered = list(compress(remaining, (not o for o in outside)))
        if len(gathered) < MIN_GROUP:
            continue
        remaining = list(compress(remaining, outside))
        gone = Counter(chain.from_iterable(titles[i] for i in gathered))
        frequency.subtract(gone)
        spelled: Counter[str] = Counter()
        for t in held:
            spelled[spellings[(t, best[0])]] += gone[t]
        word = min(spelled.items(), key=lambda item: (-item[1], item[0]))[0]
        groups[word[:MAX_LABEL]] += len(gathered)
    return len(remaining)
