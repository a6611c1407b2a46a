"""NearDuplicate at its edges: the numbers docs/lint.md states (a pair at 50 or more,
six words, a signature of the eight rarest shared words, three of them shared), what
a note says and what it does not, and which note of a pair holds the finding.

The notes are made in process (parse, or a Compared of the words themselves): each
rule is asked of near_duplicate directly, in milliseconds."""

from __future__ import annotations

import datetime as dt

from omh_git_memory.actions.near_duplicate import (
    Compared,
    compared,
    pairs,
    said,
    similarity,
)
from omh_git_memory.model.layers import Layer
from omh_git_memory.model.note import parse
from tests.helpers import note_text

DAY = dt.date(2026, 11, 1)


def _item(key: str, text: str, layer: Layer = Layer.LOCAL, recorded: dt.date = DAY,
          kind: str = "surprise") -> Compared:
    """A note that says `text` (folded words, one space apart), as compared() makes it."""
    return Compared(layer, key, recorded, f"{key}.md", text, kind)


def _found(found: list) -> list[tuple[str, str, float]]:  # type: ignore[type-arg]
    return [(p.note.name, p.original.name, p.similarity) for p in found]


# --- what a note says --------------------------------------------------------------


def test_a_stub_and_the_repository_topic_say_nothing_to_compare() -> None:
    words = "the upload test retries three times before it fails\n"
    assert said(parse(note_text("s", kind="stub", body=words))) is None
    assert said(parse(note_text("t", source="derived from the repository", body=words))) is None
    # Either alone is enough; a written topic or surprise says its words.
    assert said(parse(note_text("n", body=words))) == \
        "n the upload test retries three times before it fails"


def test_the_related_section_is_not_what_a_note_says_even_in_plain_words() -> None:
    note = parse(note_text("n", body="The cache is keyed on the lockfile.\n\n"
                                     "## Why\n\nA changed lockfile rebuilds it.\n\n"
                                     "## Related\n\n- see the deploy runbook\n- [[ci/cache]]\n"))
    text = said(note) or ""
    assert text == "n the cache is keyed on the lockfile a changed lockfile rebuilds it"
    assert "runbook" not in text and "why" not in text


def test_six_words_are_compared_and_five_are_not() -> None:
    six = parse(note_text("k", body="one two three four five\n"))  # the title is a word
    five = parse(note_text("k", body="one two three four\n"))
    got = compared(Layer.LOCAL, "k.md", six)
    assert got is not None and got.text == "k one two three four five"
    assert compared(Layer.LOCAL, "k.md", five) is None


# --- the threshold -----------------------------------------------------------------


def test_a_pair_exactly_fifty_alike_is_reported() -> None:
    # Six word pairs each, three of them shared: 200 × 3 / 12 = 50.
    a = _item("a", "a b c d e f g")
    b = _item("b", "a b c d x y z")
    assert similarity(a, b) == 50.0
    assert _found(pairs([a, b])) == [("local/b", "local/a", 50.0)]
    # One pair fewer shared is below it.
    c = _item("c", "a b c q x y z")
    assert similarity(a, c) < 50.0 and pairs([a, c]) == []


# --- which pairs are scored --------------------------------------------------------


def test_two_notes_are_scored_when_their_signatures_share_three_words() -> None:
    three = [_item("a", "a b c a b c"), _item("b", "a b c a b c")]
    assert _found(pairs(three)) == [("local/b", "local/a", 100.0)]
    # Two identical notes of two words' pairs share two words only: never scored.
    two = [_item("a", "a b a b a b"), _item("b", "a b a b a b")]
    assert pairs(two) == []


def test_the_signature_is_a_note_s_eight_rarest_shared_words() -> None:
    """`a` holds six words another note has once more (rarity 2), then s1 s2 s3 (held by
    three notes): its signature is u1…u6 s1 s2, two words of `b`'s s1 s2 s3, so `a` and
    `b` are never scored; `b` and `g`, whose signatures are s1 s2 s3 both, are. Words
    no other note has (x…, y…) are in no signature."""
    notes = [_item("a", "u1 u2 u3 u4 u5 u6 s1 s2 s3"),
             _item("b", "s1 s2 s3 x1 x2 x3"),
             _item("g", "s1 s2 s3 y1 y2 y3"),
             *(_item(f"f{k}", f"u{k} z{k}a z{k}b z{k}c z{k}d z{k}e") for k in range(1, 7))]
    # threshold 0: every pair scored is reported, so this lists what was scored.
    scored = {(p.note.key, p.original.key) for p in pairs(notes, threshold=0.0)}
    assert scored == {("g", "b")}


def test_only_the_first_two_thousand_words_are_compared() -> None:
    """docs/recall.md, "Compared: the first 2,000 words": two pasted logs alike in
    their first 2,000 words are alike, whatever follows."""
    start = " ".join(f"line{i} ok" for i in range(1000))  # 2,000 words
    a = parse(note_text("a", body=f"{start} the build passed then\n").replace("# a\n", "# Log\n"))
    b = parse(note_text("b", body=f"{start} a disk filled up\n").replace("# b\n", "# Log\n"))
    x, y = compared(Layer.LOCAL, "a.md", a), compared(Layer.LOCAL, "b.md", b)
    assert x is not None and y is not None
    assert len(x.text.split(" ")) == 2000 and x.text.split(" ")[-1] == "line999"
    assert similarity(x, y) == 100.0


def test_with_no_cutoff_a_faint_likeness_is_its_score_not_nothing() -> None:
    # One word pair shared of 299 + 299: 200 / 598, a third of a per cent.
    a = _item("a", " ".join(["shared", "pair", *(f"a{i}" for i in range(298))]))
    b = _item("b", " ".join(["shared", "pair", *(f"b{i}" for i in range(298))]))
    assert abs(similarity(a, b) - 200 / 598) < 1e-9
    assert similarity(a, b, 1.0) == 0.0


# --- which note holds a finding, and in what order -----------------------------------


def test_two_files_of_one_key_in_one_layer_are_not_this_rule_s_but_across_layers_are(
        ) -> None:
    text = "the cache is keyed on the lockfile digest"
    same_layer = [_item("k", text), Compared(Layer.LOCAL, "k", DAY, "k-copy.md", text)]
    assert pairs(same_layer) == []  # DuplicateKey's
    # ... and skipping that pair skips no other.
    assert _found(pairs([*same_layer, _item("m", text)])) == [
        ("local/m", "local/k", 100.0), ("local/m", "local/k", 100.0)]
    across = [_item("k", text), _item("k", text, layer=Layer.TEAM)]
    assert _found(pairs(across)) == [("local/k", "team/k", 100.0)]
    # A subject is compared with a note at its own key too (remember decides).
    assert _found(pairs([_item("k", text)], subject=_item("k", text))) == [
        ("local/k", "local/k", 100.0)]


def test_the_finding_is_the_local_note_s_else_the_later_one_s() -> None:
    from omh_git_memory.actions.near_duplicate import reported_on

    text = "the cache is keyed on the lockfile digest"
    team = _item("a", text, layer=Layer.TEAM, recorded=dt.date(2026, 12, 1))
    local = _item("b", text, recorded=dt.date(2026, 1, 1))
    for x, y in ((team, local), (local, team)):
        pair = reported_on(x, y, 90.0)
        assert (pair.note, pair.original, pair.similarity) == (local, team, 90.0)
    earlier, later = _item("z", text, recorded=DAY), _item("a", text, recorded=dt.date(2026, 11, 2))
    assert reported_on(earlier, later, 90.0).note is later
    assert reported_on(later, earlier, 90.0).note is later
    # One day: the key that sorts last, then the location.
    a, b = _item("a", text), _item("b", text)
    assert reported_on(a, b, 90.0).note is b and reported_on(b, a, 90.0).note is b
    here = Compared(Layer.LOCAL, "a", DAY, "x/a.md", text)
    there = Compared(Layer.LOCAL, "a", DAY, "y/a.md", text)
    assert reported_on(here, there, 90.0).note is there


def test_pairs_come_most_alike_first_then_by_name() -> None:
    base = "one two three four five six seven eight"
    notes = [_item("a", base), _item("b", base),
             _item("c", "one two three four five six seven nine"),
             _item("d", base)]
    found = _found(pairs(notes))
    assert [f[2] for f in found] == sorted((f[2] for f in found), reverse=True)
    hundred = [f[:2] for f in found if f[2] == 100.0]
    assert hundred == sorted(hundred) == [("local/b", "local/a"), ("local/d", "local/a"),
                                          ("local/d", "local/b")]


def test_each_note_keeps_its_most_alike_pair_only() -> None:
    from omh_git_memory.actions.near_duplicate import Pair, one_per_note

    text = "the cache is keyed on the lockfile digest"
    a, b, c = _item("a", text), _item("b", text), _item("c", text)
    team_c = _item("c", text, layer=Layer.TEAM)
    found = [Pair(c, a, 100.0), Pair(c, b, 90.0), Pair(b, a, 80.0), Pair(team_c, a, 70.0)]
    assert one_per_note(found) == [found[0], found[2], found[3]]


def test_the_count_of_repeats_left_unnamed() -> None:
    from omh_git_memory.actions.near_duplicate import NAMED, Pair, more_than_named

    text = "the cache is keyed on the lockfile digest"
    one = Pair(_item("a", text), _item("b", text), 90.0)
    assert NAMED == 3
    assert more_than_named([one] * 3) == ""
    assert more_than_named([one] * 4) == "and 1 more note looks like it"
    assert more_than_named([one] * 5) == "and 2 more notes look like it"


# --- the bounds on a crowded store (docs/lint.md: 32 and 8) --------------------------


def test_each_note_is_scored_against_its_8_closest_candidates_at_most() -> None:
    text = "the cache is keyed on the lockfile digest"
    ten = [_item(f"n{i}", text) for i in range(10)]
    found = {(p.note.key, p.original.key) for p in pairs(ten)}
    # Each note's 8 candidates are the earliest others: n8 and n9 never meet.
    assert len(found) == 44 and ("n9", "n8") not in found


def _crowd(per_word: int) -> list[Compared]:
    """Two groups of `per_word` notes, each note with four crowded words (c1-c4 or
    c5-c8) and four words one other note has; then x and y (later), which say the
    same eight crowded words."""
    notes = []
    for group, words in (("a", "c1 c2 c3 c4"), ("b", "c5 c6 c7 c8")):
        for i in range(per_word):
            pair = f"{group}{i // 2}"
            notes.append(_item(f"{group}{i:02}", f"{words} {pair}p {pair}q {pair}r {pair}s"))
    later = dt.date(2026, 11, 2)
    return [*notes, _item("x", "c1 c2 c3 c4 c5 c6 c7 c8", recorded=later),
            _item("y", "c1 c2 c3 c4 c5 c6 c7 c8", recorded=later)]


def test_a_word_in_32_signatures_already_pairs_no_later_note() -> None:
    blocked = {(p.note.key, p.original.key) for p in pairs(_crowd(32))}
    assert ("y", "x") not in blocked  # every word they share is crowded: never scored
    open_ = {(p.note.key, p.original.key) for p in pairs(_crowd(30))}
    assert ("y", "x") in open_


# --- a long note is folded a piece at a time, never splitting a word -----------------


def test_a_long_note_s_words_are_whole_across_the_pieces_it_is_folded_in() -> None:
    import re

    from omh_git_memory.actions.near_duplicate import first_words

    # Words of every length from 1 to 12, so that some word straddles each piece's end
    # wherever the pieces fall; ten pieces' worth of text.
    words = [("abcdefghijkl"[: 1 + i % 12]) + str(i) for i in range(25_000)]
    for sep in (" ", "\n"):
        text = sep.join(words)
        assert len(text) > 10 * (1 << 14)
        assert first_words(text, 10**6) == re.findall(r"[^\W_]+", text)
        assert first_words(text, 1000) == re.findall(r"[^\W_]+", text)[:1000]



def test_a_word_longer_than_a_piece_is_cut_where_the_piece_ends() -> None:
    from omh_git_memory.actions.near_duplicate import first_words

    # A piece is 16,384 characters (1 << 14), ended sooner at its last white space; a
    # word longer than that (a pasted blob) is cut where a piece with no other white
    # space ends: 16,384 characters after the piece's start, which is the text's start
    # even when the text's first character is a space.
    word = "x" * 20_000
    assert first_words(f"{word} y", 10) == ["x" * 16_384, "x" * 3_616, "y"]
    assert first_words(f" {word} y", 10) == ["x" * 16_383, "x" * 3_617, "y"]
    assert first_words(f"ab {word} y", 10) == ["ab", "x" * 16_384, "x" * 3_616, "y"]

def test_a_pair_whose_lengths_allow_exactly_the_threshold_is_still_scored() -> None:
    # 3 word pairs against 9, all 3 shared: 200 × 3 / 12 = 50, the most their lengths
    # allow; the length bound must not rule it out.
    a = _item("a", "p q r p q r")
    b = _item("b", "p q r p s t u v w x")
    assert similarity(a, b, 50.0) == 50.0
    assert _found(pairs([a, b])) == [("local/b", "local/a", 50.0)]
