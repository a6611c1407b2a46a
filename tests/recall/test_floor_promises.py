"""What recall's ranking and its answer promise, stated where the mutation pass found
them unchecked (passes 3 and 4).

The tests build the searcher in process from hand-made documents (no git, no
subprocess: each runs once per mutant) and state what a user or an agent sees:
which notes are returned and in what order (orderings a user expects, never scores
that depend on the tuned weights: docs/recall.md), how many were left out, which
neighbours each result names, and the lines of the rendered answer. Where a weight's
mechanism is tested, the test sets the weight itself; the scan is held to scoring
every document by its definition, and the fusion to its documented arithmetic.

Found by mutation testing (docs/records/mutation-passes.md); was tests/test_mutants_rank.py.
"""

from __future__ import annotations

import datetime as dt
import random
from array import array
from collections import Counter
from collections.abc import Sequence

import pytest

from omh_git_memory.model.note import parse
from omh_git_memory.recall import bm25 as bm25_module
from omh_git_memory.recall import content_id
from omh_git_memory.recall import floor as floor_module
from omh_git_memory.recall import render as render_module
from omh_git_memory.recall.answer import Answer, Hit, shown_docs
from omh_git_memory.recall.bm25 import Scan, Searcher, Term, area_label, question_words
from omh_git_memory.recall.document import Doc
from omh_git_memory.recall.floor import recall
from omh_git_memory.recall.neighbours import is_hub
from omh_git_memory.recall.postings import Postings
from omh_git_memory.recall.render import (
    date_of,
    excerpt,
    read_at,
    render_excerpts,
    render_tree,
    what_it_is,
)
from omh_git_memory.recall.snapshot import Snapshot
from omh_git_memory.recall.tokens import words
from tests.helpers import note_text

DAY = dt.date(2026, 11, 1).toordinal()
BLOB = "0" * 40


def doc(key: str, text: str = "", *, layer: str = "team", links: Sequence[str] = (),
        recorded: int = DAY, title: str = "", kind: str = "topic",
        problem: str | None = None) -> tuple[Doc, Counter[str]]:
    """A document and the words it is indexed under (`text`'s, as the index counts)."""
    terms = Counter(words(text))
    path = f".omh/notes/{key}.md"
    if layer == "local":
        source, location = content_id.LOCAL, f"/home/u/.omh/local/{key}.md"
    elif kind == "stub":
        source, location = content_id.stub_id(BLOB, f"{key}.md"), f"{key}.md"
    elif kind == "topic-of-repo":
        source, location = content_id.topic_id("facts"), "derived from the repository"
    else:
        source, location = content_id.note_id(BLOB, path), f"abcdef123456:{path}"
    d = Doc(layer, key, kind, recorded, title or key, tuple(links), source,
            sum(terms.values()), location, problem)
    return d, terms


def searcher(team: Sequence[tuple[Doc, Counter[str]]],
             local: Sequence[tuple[Doc, Counter[str]]] = ()) -> Searcher:
    columns: dict[str, tuple[list[int], list[int]]] = {}
    for slot, (_, terms) in enumerate(team):
        for term, tf in terms.items():
            slots, counts = columns.setdefault(term, ([], []))
            slots.append(slot)
            counts.append(tf)
    postings = Postings.build({t: (array("I", s).tobytes(), array("I", c).tobytes())
                               for t, (s, c) in columns.items()})
    snap = Snapshot("c" * 40, [d for d, _ in team], postings)
    return Searcher(snap, [(d, dict(t), parse(note_text(d.key))) for d, t in local])


def keys(answer: Answer) -> list[str]:
    return [h.doc.key for h in answer.results]


def neighbours(answer: Answer) -> dict[str, list[str]]:
    return {h.doc.key: [d.key for d in h.neighbours] for h in answer.results}


# --- Scan: the pruned candidate search equals its definition ------------------------


def _scan(rng: random.Random) -> tuple[Scan, list[int]]:
    n = rng.randint(0, 30)
    values = [0.0, 0.2, 0.4, 0.5, 0.9, 1.0, 1.5, 2.0, 3.0, 10.0]
    touched = sorted(rng.sample(range(n), rng.randint(0, n)))
    scores = [0.0] * n
    held = [0.0] * n
    for s in touched:
        scores[s] = rng.choice(values)
        held[s] = rng.choice(values)
    split = rng.randint(0, len(touched))
    terms = [Term(touched[:split], [1] * split, 1.0),
             Term(touched[split:], [1] * (len(touched) - split), 0.5)]
    return Scan(scores, held, terms), [rng.randint(0, 3) for _ in range(n)]


def test_the_best_k_are_the_first_k_by_order_of_every_document_holding_a_word() -> None:
    rng = random.Random(14)
    for _ in range(3000):
        scan, recorded = _scan(rng)
        k = rng.randint(1, 10)

        def order(slot: int, score: float) -> tuple[float, int, int, str]:
            return (-score, -recorded[slot], 0, f"{slot:03}")  # noqa: B023

        every = sorted(scan.touched(), key=lambda s: order(s, scan.scores[s]))
        assert scan.best(k, order) == every[:k], (scan.scores, k)


def test_reaching_and_holding_are_the_documents_at_or_over_the_mark() -> None:
    rng = random.Random(15)
    for _ in range(500):
        scan, _ = _scan(rng)
        touched = {s for t in scan.terms for s in t.slots}
        assert scan.touched() == touched
        for mark in (-1.0, 0.0, 0.2, 0.5, 1.0, 1.5, 3.0):
            want = touched if mark <= 0 else {
                s for s, v in enumerate(scan.scores) if v >= mark}
            assert set(scan.reaching(mark)) == want, mark
        for need in (0.2, 0.5, 1.0, 1.5, 3.0):
            assert set(scan.holding(need)) == {s for s, v in enumerate(scan.held) if v >= need}


# --- what is returned ---------------------------------------------------------------


def test_a_local_note_is_found_by_its_words_and_a_broken_note_never() -> None:
    s = searcher([doc("team/a", "zebra stripes"), doc("team/bad", problem="unreadable"),
                  *[doc(f"x{i}", "filler") for i in range(3)]],
                 [doc("mine", "zebra quokka", layer="local")])
    assert s.count == 5  # the broken one is not a document recall counts
    assert keys(recall(s, "quokka")) == ["mine"]
    assert set(keys(recall(s, "zebra"))) == {"team/a", "mine"}


def test_at_most_eight_notes_and_the_rest_counted_as_left_out() -> None:
    notes = [doc(f"n{i:02}", "okapi " * (1 + i % 3) + "filler words here") for i in range(11)]
    answer = recall(searcher([*notes, doc("other", "nothing alike")]), "okapi")
    assert len(answer.results) == 8 and answer.left_out == 3
    assert render_tree(answer).splitlines()[-1] == (
        "3 more notes matched well enough but were left out; ask more precisely to see them")
    nine = recall(searcher([*notes[:9], doc("other", "nothing alike")]), "okapi")
    assert len(nine.results) == 8 and nine.left_out == 1
    assert render_tree(nine).splitlines()[-1] == (
        "1 more note matched well enough but was left out; ask more precisely to see it")
    eight = recall(searcher([*notes[:8], doc("other", "nothing alike")]), "okapi")
    assert len(eight.results) == 8 and eight.left_out == 0
    assert "left out" not in render_tree(eight)


def test_a_rarer_word_a_repeated_word_and_a_shorter_note_rank_first() -> None:
    common = [doc(f"c{i}", "build tool") for i in range(6)]
    s = searcher([*common, doc("rare", "build okapi"), doc("twice", "build okapi okapi"),
                  doc("long", "okapi padding padding padding")])
    assert keys(recall(s, "okapi"))[:3] == ["twice", "rare", "long"]
    assert keys(recall(s, "build okapi"))[0] == "twice"


def test_ties_go_to_the_newer_note_then_the_one_more_notes_link_to_then_the_key() -> None:
    s = searcher([doc("b-old", "okapi", recorded=DAY - 5), doc("c-new", "okapi"),
                  doc("d-linked", "okapi", recorded=DAY - 5),
                  doc("e", "zzz", links=["d-linked"]), doc("a-old", "okapi", recorded=DAY - 5)])
    assert keys(recall(s, "okapi")) == ["c-new", "d-linked", "a-old", "b-old"]


def test_a_note_holding_only_function_words_of_the_question_is_not_returned() -> None:
    s = searcher([doc("a", "the build of the thing"), doc("b", "why does it okapi"),
                  *[doc(f"x{i}", "unrelated words") for i in range(5)]])
    assert keys(recall(s, "why does the okapi")) == ["b"]
    assert keys(recall(s, "why does the")) == []
    assert keys(recall(s, "zzzz")) == []


def test_each_note_keeps_its_best_score_over_the_phrasings() -> None:
    s = searcher([doc("a", "okapi okapi okapi"), doc("b", "zebra"), doc("c", "lemur lemur"),
                  *[doc(f"x{i}", "unrelated words") for i in range(5)]])
    answer = recall(s, "okapi", ["zebra", "  "])
    assert set(keys(answer)) == {"a", "b"}
    assert answer.question == ("okapi", "zebra")  # a blank phrasing is no phrasing
    alone = recall(s, "okapi")
    assert [h.score for h in answer.results if h.doc.key == "a"] == [alone.results[0].score]


# --- neighbours -----------------------------------------------------------------------


def test_neighbours_are_one_hop_both_ways_best_match_first_never_the_note_itself() -> None:
    s = searcher([
        doc("a", "okapi okapi", links=["b", "c", "a", "missing"]),
        doc("b", "nothing"), doc("c", "stripes"), doc("d", "lemur", links=["a", "a"]),
        doc("e", "stripes more", links=["b"]), *[doc(f"x{i}", "filler") for i in range(4)],
    ])
    answer = recall(s, "okapi stripes")
    assert keys(answer)[0] == "a"
    # c matches the question, b and d do not: c first, then the links, then the linker.
    assert neighbours(answer)["a"] == ["c", "b", "d"]
    assert answer.results[0].more_neighbours == 0


def test_a_team_notes_neighbours_are_team_notes_and_a_local_notes_reach_both() -> None:
    s = searcher([doc("team/a", "okapi", links=["shared", "mine"]), doc("shared", "x"),
                  *[doc(f"x{i}", "filler") for i in range(4)]],
                 [doc("mine", "zebra", layer="local", links=["shared"]),
                  doc("shared", "y", layer="local")])
    assert neighbours(recall(s, "okapi")) == {"team/a": ["shared"]}
    assert [d.layer for d in recall(s, "okapi").results[0].neighbours] == ["team"]
    mine = recall(s, "zebra").results[0]
    assert sorted((d.layer, d.key) for d in mine.neighbours) == [
        ("local", "shared"), ("team", "shared")]
    # A local note's link does not make a team note link to anything.
    assert [d.key for d in recall(s, "okapi").results[0].neighbours] == ["shared"]


def test_at_most_eight_neighbours_a_result_and_a_count_of_the_rest() -> None:
    many = [f"m{i}" for i in range(11)]
    s = searcher([doc("a", "okapi", links=many), *[doc(m, "filler") for m in many],
                  *[doc(f"x{i}", "other") for i in range(20)]])
    hit = recall(s, "okapi").results[0]
    assert len(hit.neighbours) == 8 and hit.more_neighbours == 3
    lines = render_tree(recall(s, "okapi")).splitlines()
    assert lines[-1] == "└─ … and 3 more linked notes (omh memory show a)"
    assert sum(ln.startswith("├─ ") for ln in lines) == 8


def test_the_whole_answer_names_at_most_twenty_four_notes_dealt_in_rank_order() -> None:
    team = []
    for i in range(8):
        links = [f"r{i}-{j}" for j in range(5)]
        team.append(doc(f"r{i}", "okapi okapi " + "pad " * i, links=links))
        team += [doc(link, "filler") for link in links]
    answer = recall(searcher(team), "okapi")
    assert keys(answer) == [f"r{i}" for i in range(8)]
    assert len(shown_docs(answer)) == 24
    assert [len(h.neighbours) for h in answer.results] == [2] * 8
    assert [h.more_neighbours for h in answer.results] == [3] * 8
    # Fewer results leave more room for each one's neighbours.
    three = recall(searcher(team), "okapi", floor=0.99)
    assert len(three.results) == 1 and len(three.results[0].neighbours) == 5


def test_the_topic_and_a_note_linking_to_half_the_store_are_named_once() -> None:
    team = [doc("repo", "facts", kind="topic-of-repo"),
            doc("index", "filler", links=["a", "b", "c", "d", "e"]),
            doc("a", "okapi okapi okapi", links=["repo", "index"]),
            doc("b", "okapi okapi", links=["repo", "index"]),
            doc("c", "okapi", links=["repo", "index"]),
            doc("d", "unrelated"), doc("e", "unrelated"), doc("f", "unrelated"),
            doc("g", "unrelated"), doc("h", "unrelated")]
    s = searcher(team)
    assert is_hub(s, 0) and is_hub(s, 1) and not is_hub(s, 2)
    got = neighbours(recall(s, "okapi"))
    assert got["a"] == ["repo", "index"]
    assert got["b"] == [] and got["c"] == []
    # Linking to fewer than half the store, or in a store of three, is no hub.
    small = searcher([doc("i", "x", links=["j", "k"]), doc("j", "x"), doc("k", "x")])
    assert not is_hub(small, 0)
    four = searcher([doc("i", "x", links=["j", "k"]), doc("j", "x"), doc("k", "x"),
                     doc("l", "x")])
    assert is_hub(four, 0)  # half of a store of four
    few = searcher([doc("i", "x", links=["j", "zz", "yy", "ww", "vv"]), doc("j", "x"),
                    doc("k", "x"), doc("l", "x"), doc("m", "x")])
    assert not is_hub(few, 0)  # five links, but only one of them reaches a note


# --- the rendered answer --------------------------------------------------------------


def _hit(d: Doc, near: Sequence[Doc] = (), more: int = 0) -> Hit:
    return Hit(d, 1.0, tuple(near), more)


def test_the_tree_names_each_note_with_layer_date_title_and_where_to_read_it() -> None:
    a, _ = doc("a", title="Alpha  note")
    b, _ = doc("bee/b", title="B")
    c, _ = doc("c", layer="local", recorded=0)
    answer = Answer((_hit(a, [b, c]),), 0)
    assert render_tree(answer).splitlines() == [
        "a         team · 2026-11-01  Alpha note — .omh/notes/a.md",
        "├─ bee/b  team · 2026-11-01  B — .omh/notes/bee/b.md",
        "└─ c      local · undated    c — /home/u/.omh/local/c.md",
    ]
    more = render_tree(Answer((_hit(a, [b], 1),), 0)).splitlines()
    assert more[1].startswith("├─ bee/b") and more[2] == (
        "└─ … and 1 more linked note (omh memory show a)")


def test_a_stale_note_is_marked_on_its_line_and_the_answer_says_what_it_means() -> None:
    a, _ = doc("a")
    b, _ = doc("b")
    lines = render_tree(Answer((_hit(a, [b]),), 0), {("team", "b"): "fired"}).splitlines()
    assert lines[0].split("  ")[0:1] == ["a"] and "stale" not in lines[0]
    assert "team · 2026-11-01 · stale" in lines[1]
    assert lines[-1] == ("stale: a note's invalidated_by has fired; "
                         "`omh memory stale` says why")
    assert "stale" not in render_tree(Answer((_hit(a, [b]),), 0), {("local", "b"): "x"})


def test_no_match_says_how_to_ask_again_in_the_askers_own_words() -> None:
    assert render_tree(Answer((), 0)) == (
        "no note matched well enough; try other words, or add --also with another phrasing\n")
    assert "add also_phrased_as with" in render_tree(Answer((), 5), also="also_phrased_as")


def test_where_to_read_a_note_and_what_it_is() -> None:
    team, _ = doc("a/b")
    stub, _ = doc("docs/guide", kind="stub", title="The  guide")
    topic, _ = doc("repo", kind="topic-of-repo", title="repo")
    named, _ = doc("omh", kind="topic-of-repo", title="omh")
    local, _ = doc("mine", layer="local")
    odd, _ = doc("odd", title="   ")
    assert [read_at(d) for d in (team, stub, topic, local)] == [
        ".omh/notes/a/b.md", "docs/guide.md",
        "derived from the repository (omh memory show repo)", "/home/u/.omh/local/mine.md"]
    no_colon = team._replace(location="plain/path.md")
    assert read_at(no_colon) == "plain/path.md"
    assert what_it_is(stub) == "The guide" and what_it_is(odd) == "odd"
    assert what_it_is(topic) == "the repository topic"
    assert what_it_is(named) == "the repository topic of omh"
    assert what_it_is(team._replace(title="x" * 60)) == "x" * 60
    assert what_it_is(team._replace(title="x" * 58 + " yz")) == "x" * 58 + "…"
    assert date_of(team) == "2026-11-01" and date_of(team._replace(recorded=0)) == "undated"


# --- excerpts (MCP) ---------------------------------------------------------------------


SURPRISE = """\
---
key: s
type: surprise
source: test
recorded: 2026-11-01
---

# Mounting fails.

## Expected
It mounts.

## Observed
Mounting a
credential file returns EBUSY.

## Evidence

  EBUSY from the mount syscall
second line
"""

STUB = """\
---
key: docs/guide
type: stub
source: docs/guide.md
recorded: 2026-11-01
---

# Guide

Repo document. Read `docs/guide.md`; this note points at it and does not restate it.

## Answers

- Installing it
- Running the tests
"""

TOPIC = """\
---
key: notes/build
type: topic
source: test
recorded: 2026-11-01
---

# How the build works

## Why
It uses [[make]] everywhere.

## Related
- [[other]]

## How
Run make.

## More
Third.
"""


def test_an_excerpt_quotes_what_the_note_says() -> None:
    d, _ = doc("s")
    answer = Answer((), 0, ("why does mounting fail",))
    assert excerpt(d, parse(SURPRISE), answer) == [
        "Observed: Mounting a credential file returns EBUSY.",
        "Evidence: EBUSY from the mount syscall"]
    stub, _ = doc("docs/guide", kind="stub")
    assert excerpt(stub, parse(STUB), Answer((), 0, ("how to run the tests",))) == [
        "Read docs/guide.md", "Headings that match: Running the tests"]
    assert excerpt(stub, parse(STUB), Answer((), 0, ("the zebra",))) == [
        "Read docs/guide.md", "Matched in its text; headings: Installing it; Running the tests"]
    topic, _ = doc("notes/build")
    assert excerpt(topic, parse(TOPIC), answer) == [
        "Why: It uses everywhere.", "How: Run make."]
    plain = parse(note_text("p", body="First paragraph\nof text.\n\nSecond.\n\nThird.\n"))
    assert excerpt(topic, plain, answer) == ["First paragraph of text.", "Second."]


def test_excerpts_quote_the_best_three_results_within_their_byte_budget() -> None:
    long_text = "é" * 300
    notes = {}
    hits = []
    for i in range(5):
        d, _ = doc(f"n{i}")
        notes[("team", d.key)] = parse(note_text(d.key, body=f"## Why\n\n{long_text} {i}\n"))
        hits.append(_hit(d))
    out = render_excerpts(Answer(tuple(hits), 0, ("why",)), notes)
    parts = out.split("n")[1:]
    assert [p.split("  ")[0] for p in parts] == ["0", "1", "2"]
    assert len(out.encode()) <= render_module.EXCERPT_BUDGET
    for part in ("n" + p for p in parts):
        assert len(part.encode()) <= 400
        assert part.rstrip("\n").endswith("…")
    short = render_excerpts(Answer(tuple(hits[:1]), 0, ("why",)), {
        ("team", "n0"): parse(note_text("n0", body="## Why\n\nShort.\n"))})
    assert short == "n0  team · 2026-11-01\n  Why: Short.\n"
    assert render_excerpts(Answer(tuple(hits[:1]), 0, ("why",)), {}) == ""


# --- the question -------------------------------------------------------------------------


@pytest.mark.parametrize(("question", "label"), [
    ("docs: how to build", "docs"), ("fix(git): a crash", "fix(git)"),
    ("feat!: break it", "feat"), ("how to build", None), ("docs:nospace", None),
])
def test_the_area_label_in_front_of_a_question(question: str, label: str | None) -> None:
    assert area_label(question) == label


def test_a_word_only_in_the_area_label_weighs_as_the_label_weight_says(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bm25_module, "AREA_WEIGHT", 0.5)  # the mechanism, not the tuned value
    assert question_words("zstream: fix zstream reading") == {
        "zstream": 1.0, "fix": 1.0, "read": 1.0}
    assert question_words("fix(zstream): reading") == {"read": 1.0, "fix": 0.5, "zstream": 0.5}


# --- the whole module (pass 4): the weight a note must hold, lengths, rarity ---------------


def test_share_is_the_part_of_the_content_weight_a_note_holds() -> None:
    s = searcher([doc("a", "okapi build"), doc("b", "okapi"), doc("c", "why build"),
                  *[doc(f"x{i}", "build filler") for i in range(5)]])
    for question in ("okapi build", "why okapi", "why build okapi", "why", "zzzz okapi"):
        terms = s.terms(question)
        total = s.question_weight(question)
        scan = s.scan(terms)
        for slot in range(len(s.docs)):
            want = scan.held[slot] / total if total > 0 else 0.0
            assert s.share(terms, slot, total) == pytest.approx(want), (question, slot)
    terms = s.terms("okapi build")
    assert s.share(terms, 0, s.question_weight("okapi build")) == pytest.approx(1.0)
    assert s.share(terms, 0, 0.0) == 0.0  # a question with no content weight


WHOLE = 1 - 1e-9  # "holds all of the question's content weight", to the float


def _share_store() -> Searcher:
    # a holds both words, p only the rarer one; build is in every note but p.
    return searcher([doc("a", "okapi build"), doc("p", "okapi"),
                     *[doc(f"x{i}", "build filler") for i in range(8)]])


def test_a_note_holding_every_content_word_holds_the_whole_question() -> None:
    s = _share_store()
    assert keys(recall(s, "okapi build", floor=0.0, min_share=WHOLE)) == ["a"]
    # Function words are no part of the weight a note must hold.
    assert keys(recall(s, "why does okapi build", floor=0.0, min_share=WHOLE)) == ["a"]
    # Each content word counts once, however often it is asked.
    assert keys(recall(s, "okapi build okapi", floor=0.0, min_share=WHOLE)) == ["a"]


def test_a_word_no_note_has_counts_as_the_rarest_in_the_questions_weight() -> None:
    s = _share_store()
    # okapi is in two notes, zzzz in none: okapi is less than half of the weight.
    assert keys(recall(s, "okapi zzzz", floor=0.0, min_share=0.5)) == []
    assert set(keys(recall(s, "okapi zzzz", floor=0.0, min_share=0.2))) == {"a", "p"}


def test_a_word_every_note_holds_still_counts_a_little() -> None:
    notes = [doc(f"n{i}", "build " + "pad " * i) for i in range(5)]
    answer = recall(searcher(notes), "build")
    assert keys(answer) == ["n0", "n1", "n2", "n3", "n4"]  # the shortest first
    assert all(h.score > 0 for h in answer.results)


def test_only_a_notes_length_against_the_stores_average_counts() -> None:
    # Every note made three times as long with words nobody asks for: the same scores.
    texts = {"a": "okapi okapi zebra", "b": "okapi filler", "c": "zebra lemur okapi pad pad",
             "d": "lemur", "e": "unrelated words here"}
    short = searcher([doc(k, t) for k, t in texts.items()])
    long = searcher([doc(k, t + " qqq" * (2 * len(t.split()))) for k, t in texts.items()])
    for question in ("okapi", "zebra okapi", "lemur", "okapi lemur zebra"):
        got, want = recall(long, question), recall(short, question)
        assert keys(got) == keys(want), question
        assert [h.score for h in got.results] == pytest.approx(
            [h.score for h in want.results]), question


def test_with_full_length_normalisation_a_note_said_twice_over_scores_as_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # b = 1 (the mechanism, not the tuned value): a word's count is read per length.
    monkeypatch.setattr(bm25_module, "B", 1.0)
    s = searcher([doc("once", "okapi zebra pad"), doc("twice", "okapi zebra pad " * 2),
                  *[doc(f"x{i}", "filler words") for i in range(4)]])
    scores = {h.doc.key: h.score for h in recall(s, "okapi").results}
    assert scores["once"] == pytest.approx(scores["twice"])
    monkeypatch.setattr(bm25_module, "B", 0.0)  # b = 0: length does not count at all
    s = searcher([doc("short", "okapi"), doc("long", "okapi pad pad pad pad"),
                  *[doc(f"x{i}", "filler words") for i in range(4)]])
    scores = {h.doc.key: h.score for h in recall(s, "okapi").results}
    assert scores["short"] == pytest.approx(scores["long"])


def _random_store(rng: random.Random, pad: int = 0) -> Searcher:
    """Notes over a small vocabulary: a few words in most notes (added as whole
    columns), many in a few (added posting by posting), function words, local notes;
    each padded with up to `pad` words nobody asks for."""
    common = ["the", "how", "build", "fails"]
    rare = ["why", "does", *(f"w{a}{b}" for a in "abcdef" for b in "abcdef")]  # and 2 function

    def text() -> str:
        return " ".join(rng.choices(common, k=rng.randint(0, 5))
                        + rng.choices(rare, weights=range(len(rare), 0, -1),
                                      k=rng.randint(1, 10))
                        + ["qqq"] * rng.randint(0, pad))
    team = [doc(f"n{i:02}", text(), recorded=DAY - rng.randint(0, 3),
                links=rng.sample([f"n{j:02}" for j in range(40)], rng.randint(0, 2)))
            for i in range(rng.randint(4, 40))]
    local = [doc(f"l{i}", text(), layer="local") for i in range(rng.randint(0, 3))]
    return searcher(team, local)


def test_scoring_in_one_pass_equals_scoring_every_document_by_its_definition() -> None:
    from tests.helpers.rank import full, held, reference

    rng = random.Random(41)
    vocab = ["the", "how", "why", "does", "build", "fails", "nothing", "waa", "wab", "wba",
             "wcc", "wdd", "wee", "wff", "wfa"]
    matched = 0
    for _ in range(12):
        s = _random_store(rng)  # each store asked many questions: its columns are reused
        for _ in range(12):
            question = " ".join(rng.choices(vocab, k=rng.randint(1, 5)))
            also = [" ".join(rng.choices(vocab, k=2))] if rng.random() < 0.3 else []
            terms = s.terms(question)
            scan = s.scan(terms)
            assert scan.scores == [full(s, terms, d) for d in range(len(s.docs))], question
            assert scan.held == [held(terms, d) for d in range(len(s.docs))], question
            for floor, least in ((floor_module.FLOOR, floor_module.MIN_SHARE), (0.0, 0.0),
                                 (0.7, 0.5), (0.2, 1.0)):
                got = recall(s, question, also, floor=floor, min_share=least)
                want = reference(s, question, also, floor, least)
                assert ([(h.doc.key, h.score) for h in got.results], got.left_out) == want, (
                    question, also, floor, least)
                matched += bool(want[0])
    assert matched > 300


def test_a_removed_slot_and_a_broken_note_link_nothing_and_hide_no_linker() -> None:
    # A patched index keeps the slot of a removed note as None; an unreadable note
    # is a document with a problem. Neither links anywhere, and neither stops the
    # notes after them from counting as linkers.
    built = searcher([doc("a", "okapi okapi"), doc("broken", problem="unreadable", links=["a"]),
                      doc("gone"), doc("b", "filler", links=["a"]),
                      *[doc(f"x{i}", "filler") for i in range(4)]])
    docs: list[Doc | None] = list(built.snapshot.docs)
    docs[2] = None
    s = Searcher(Snapshot("c" * 40, docs, built.snapshot.postings), [])
    assert s.count == 6 and not is_hub(s, 2)
    assert neighbours(recall(s, "okapi")) == {"a": ["b"]}


def test_a_common_words_column_is_kept_within_the_cache_and_computed_again_after(
        monkeypatch: pytest.MonkeyPatch) -> None:
    notes = [doc(f"n{i}", "build fails tool") for i in range(10)]
    s = searcher(notes)
    n = len(s.docs)
    monkeypatch.setattr(bm25_module, "COLUMN_CACHE", 4 * n)  # two content columns exactly
    build, fails, tool = (s.terms(w)[0] for w in ("build", "fails", "tool"))
    first = s._column(build)
    assert s._column(build) is first  # kept
    assert s._column(fails) is not first and s._column(build) is first  # both fit exactly
    third = s._column(tool)  # a third does not fit: the cache starts afresh
    again = s._column(build)
    assert again is not first and again == first  # computed again, equal
    assert s._column(tool) is third  # and the fresh cache holds two again


# --- fused with the semantic ranking (a stand-in for the embedding model) ---------------


class _Similar:
    """Fixed similarities per key (a removed slot: -inf, as no model gives it)."""

    def __init__(self, s: Searcher, by_key: dict[str, float]) -> None:
        self.values = [by_key.get(d.key, 0.0) if d else float("-inf") for d in s.docs]

    def similarities(self, phrasings: Sequence[str]) -> list[float]:
        return self.values


def _fused_store() -> tuple[Searcher, _Similar]:
    # lex matches the question's word and is the least similar of the nominees; the
    # s-notes share no word with it; broken is the most similar but unreadable.
    sims = {"s1": 1.0, "s2": 0.9, "s3": 0.8, "s4": 0.7, "s5": 0.6, "s6": 0.45, "s7": 0.3,
            "s8": 0.1, "s9": 0.08, "lex": 0.05, "broken": 5.0}
    notes = [doc(k, "okapi" if k == "lex" else "filler text",
                 problem="unreadable" if k == "broken" else None) for k in sims]
    s = searcher(notes)
    return s, _Similar(s, sims)


def test_fused_the_embeddings_best_eight_and_the_lexical_best_ordered_by_their_mean() -> None:
    s, similar = _fused_store()
    answer = recall(s, "okapi", semantic=similar)
    # lex: lexical 1 (the best), similarity 0 → 0.5; an s-note: its similarity alone,
    # rescaled over the nominees from lex's 0.05 (0) to s1's 1.0 (1). s9 is not among
    # the embedding's best eight, broken never is.
    assert keys(answer) == ["s1", "s2", "s3", "s4", "s5", "lex", "s6", "s7"]
    assert answer.left_out == 1  # s8
    scores = {h.doc.key: h.score for h in answer.results}
    assert scores["s1"] == pytest.approx(1.0) and scores["lex"] == pytest.approx(0.5)
    assert scores["s4"] == pytest.approx((0.7 - 0.05) / 0.95)
    # A lexical zero averaged in as evidence halves every s-note's score.
    averaged = recall(s, "okapi", semantic=similar, zero_is_evidence=True)
    scores = {h.doc.key: h.score for h in averaged.results}
    assert scores["s1"] == pytest.approx(0.5) and scores["lex"] == pytest.approx(0.5)
    assert scores["s4"] == pytest.approx((0.7 - 0.05) / 0.95 / 2)
    assert keys(averaged)[2:] == ["s2", "s3", "s4", "s5", "s6", "s7"]


def test_fused_the_least_similar_nominee_sharing_no_word_has_no_evidence() -> None:
    s, similar = _fused_store()
    answer = recall(s, "zzzz", semantic=similar)  # no note has the word
    # The embedding's eight, s1 … s8: s8, the least similar, rescales to 0.
    assert keys(answer) == ["s1", "s2", "s3", "s4", "s5", "s6", "s7"]
    assert answer.left_out == 0
    assert [h.score for h in answer.results] == pytest.approx(
        [(v - 0.1) / 0.9 for v in (1.0, 0.9, 0.8, 0.7, 0.6, 0.45, 0.3)])


def test_fused_scores_rescale_the_lexical_score_by_the_best_nominee() -> None:
    notes = [doc("a", "okapi okapi okapi"), doc("b", "okapi"), doc("c", "filler"),
             *[doc(f"x{i}", "filler words") for i in range(6)]]
    s = searcher(notes)
    similar = _Similar(s, {d.key: 0.5 for d, _ in notes})  # every similarity alike
    answer = recall(s, "okapi", semantic=similar)
    fused = {h.doc.key: h.score for h in answer.results}
    plain = {h.doc.key: h.score for h in recall(s, "okapi").results}
    assert fused["a"] == pytest.approx(0.5)  # (1 + 0) / 2: no spread in similarity
    assert fused["b"] == pytest.approx(plain["b"] / plain["a"] / 2)
    assert keys(answer) == ["a", "b"]  # similarity alike says nothing of the others
    # A weak lexical match (a common word) is evidence all the same.
    weak = recall(s, "words", semantic=similar)
    assert len(weak.results) == 6 and all(h.score == pytest.approx(0.5) for h in weak.results)
    assert all(h.score < 1 for h in recall(s, "words").results)  # weak indeed


@pytest.mark.parametrize("pad", [0, 50])  # 50: long notes, scores under 1
def test_at_a_floor_of_the_best_score_the_best_notes_are_returned(pad: int) -> None:
    # A note's score in the answer adds its words in the question's order, the scan
    # that finds candidates rarest first: the two may differ in the last bit, and
    # the best note must pass a floor of exactly its own score either way.
    rng = random.Random(43)
    vocab = ["build", "fails", "waa", "wab", "wba", "wcc", "wdd", "wee", "wff", "wfa"]
    for _ in range(40):
        s = _random_store(rng, pad)
        for _ in range(20):
            question = " ".join(rng.choices(vocab, k=rng.randint(2, 6)))
            terms = s.terms(question)
            score = {d: sum(s.contribution(t, d) for t in terms) for d in range(len(s.docs))}
            top = max(score.values())
            answer = recall(s, question, floor=1.0, min_share=0.0)
            assert [h.score for h in answer.results][:1] == ([top] if top > 0 else []), question
            tied = sum(v == top for v in score.values()) if top > 0 else 0
            assert len(answer.results) + answer.left_out == tied, question


def test_with_the_share_rule_off_function_words_alone_match() -> None:
    s = searcher([doc("a", "why does it build"), doc("b", "okapi"),
                  *[doc(f"x{i}", "unrelated words") for i in range(5)]])
    assert keys(recall(s, "why does it")) == []  # the shipped rule
    assert keys(recall(s, "why does it", min_share=0.0)) == ["a"]


def test_a_hub_links_to_at_least_half_the_notes_it_reaches() -> None:
    def store(links: Sequence[str], size: int) -> Searcher:
        return searcher([doc("h", "x", links=links),
                         *[doc(f"n{i}", "x") for i in range(size - 1)]])

    assert not is_hub(store(["n1", "n2", "n3", "n4"], 10), 0)  # 4 of 10: under half
    assert is_hub(store(["n1", "n2", "n3", "n4", "n5"], 10), 0)
    assert not is_hub(store(["n1", "n2", "n3", "n4", "zz"], 10), 0)  # 5 links, 4 notes
    # A local note's link reaches the team note and the local note of that key.
    both = searcher([*[doc(f"n{i}", "x") for i in range(3)],
                     *[doc(f"t{i}", "x") for i in range(3)]],
                    [doc("h", "x", layer="local", links=["n0", "n1", "n2"]),
                     *[doc(f"n{i}", "x", layer="local") for i in range(2)]])
    assert both.count == 9 and not is_hub(both, 6)  # 3 links of 9, though 5 notes reached


def test_a_hub_named_already_is_left_out_and_the_other_neighbours_kept() -> None:
    team = [doc("repo", "facts", kind="topic-of-repo"),
            doc("a", "okapi okapi okapi", links=["repo", "x1"]),
            doc("b", "okapi okapi", links=["repo", "x2"]),
            doc("x1", "filler"), doc("x2", "filler"),
            *[doc(f"u{i}", "unrelated") for i in range(4)]]
    assert neighbours(recall(searcher(team), "okapi")) == {"a": ["repo", "x1"], "b": ["x2"]}


def test_the_last_line_of_the_budget_goes_to_the_next_result_in_rank_order() -> None:
    # Eight results, five with four neighbours each: 16 lines of neighbours are dealt
    # five a round, and the sixteenth (the fourth round's first) goes to the best.
    team = []
    for i in range(8):
        links = [f"r{i}-{j}" for j in range(4)] if i < 5 else []
        team.append(doc(f"r{i}", "okapi okapi " + "pad " * i, links=links))
        team += [doc(link, "filler") for link in links]
    answer = recall(searcher(team), "okapi")
    assert keys(answer) == [f"r{i}" for i in range(8)]
    assert [len(h.neighbours) for h in answer.results] == [4, 3, 3, 3, 3, 0, 0, 0]
    assert [h.more_neighbours for h in answer.results] == [0, 1, 1, 1, 1, 0, 0, 0]
    assert len(shown_docs(answer)) == 24


def test_a_long_title_is_cut_to_the_width_and_a_colon_in_a_path_kept() -> None:
    team, _ = doc("a/b")
    assert what_it_is(team._replace(title="x" * 61)) == "x" * 59 + "…"
    assert len(what_it_is(team._replace(title="y" * 200))) == render_module.TITLE_WIDTH
    # Only the commit is cut off a team note's location, at the first colon.
    assert read_at(team._replace(location="abcdef123456:.omh/notes/odd:name.md")) == (
        ".omh/notes/odd:name.md")


def _note(body: str, kind: str = "topic", key: str = "p") -> str:
    return (f"---\nkey: {key}\ntype: {kind}\nsource: test\nrecorded: 2026-11-01\n---\n\n"
            + body)


def test_an_excerpt_of_a_surprise_without_evidence_and_of_the_repository_topic() -> None:
    d, _ = doc("s")
    asked = Answer((), 0, ("mounting",))
    bare = _note("# Mounting fails.\n\n## Expected\nIt mounts.\n\n## Observed\nEBUSY.\n",
                 "surprise", "s")
    assert excerpt(d, parse(bare), asked) == ["Observed: EBUSY."]
    blank = bare + "\n## Evidence\n\n"
    assert excerpt(d, parse(blank), asked) == ["Observed: EBUSY."]
    topic, _ = doc("repo", kind="topic-of-repo")
    facts = _note("# repo\n\n## Facts\n- Python package\n\n- tests under tests/\n", key="repo")
    assert excerpt(topic, parse(facts), asked) == ["Python package", "tests under tests/"]
    assert excerpt(topic, parse(_note("# repo\n", key="repo")), asked) == []


def test_a_plain_notes_excerpt_starts_after_its_title_line() -> None:
    d, _ = doc("p")
    asked = Answer((), 0, ("anything",))
    tight = _note("# The title\nFirst line\nsecond.\n\nNext paragraph.\n\nThird.\n")
    assert excerpt(d, parse(tight), asked) == ["First line second.", "Next paragraph."]
    # A note that is only its title quotes nothing, with or without a final newline.
    assert excerpt(d, parse(_note("# Only a title\n")), asked) == []
    assert excerpt(d, parse(_note("# Only a title")), asked) == []


def test_cut_lines_fit_their_byte_limit_and_share_it_fairly() -> None:
    from omh_git_memory.recall.render import _cut

    rng = random.Random(47)
    overhead = len("  ") + 1  # each line is indented and ends in a newline
    for _ in range(3000):
        lines = ["".join(rng.choices("ab é中", k=rng.randint(0, 120)))
                 for _ in range(rng.randint(1, 4))]
        limit = rng.randint(0, 400)
        need = [len(line.encode()) + overhead for line in lines]
        out = _cut(lines, limit)
        assert sum(len(line.encode()) + overhead for line in out) <= limit, (lines, limit)
        if sum(need) <= limit:
            assert out == lines  # all fit whole
        kept = iter(lines)  # in order, each whole or its start and `…`
        for line in out:
            assert any(line == whole or (line.endswith("…") and whole.startswith(line[:-1]))
                       for whole in kept), (lines, limit, out)
        # A line needing no more than an equal share is never cut.
        share = limit // len(lines)
        assert all(line in out for line, n in zip(lines, need, strict=True) if n <= share)


def test_a_cut_line_keeps_more_than_eight_bytes_of_text() -> None:
    from omh_git_memory.recall.render import _cut

    line = "abcdefghijklmnopqrstuvwxyz"
    room = len("  ") + 1 + 9  # nine bytes of text: eight and the `…` (three bytes)
    assert _cut([line], room) == ["abcdef…"]
    assert _cut([line], room - 1) == []  # eight bytes of room: nothing is worth it
    assert _cut([line, "x"], room + 4) == ["abcdef…", "x"]  # the short line first


def test_excerpts_skip_a_result_whose_note_is_not_given_and_quote_the_next() -> None:
    a, _ = doc("a")
    b, _ = doc("b")
    notes = {("team", "b"): parse(note_text("b", body="## Why\n\nBecause.\n"))}
    assert render_excerpts(Answer((_hit(a), _hit(b)), 0, ("why",)), notes) == (
        "b  team · 2026-11-01\n  Why: Because.\n")


def test_a_function_word_weighs_less_than_a_content_word_as_rare() -> None:
    s = searcher([doc("a", "why lemur"), doc("b", "zebra lemur"),
                  *[doc(f"x{i}", "filler words") for i in range(6)]])
    assert keys(recall(s, "why zebra lemur")) == ["b", "a"]
    assert keys(recall(s, "zebra why lemur")) == ["b", "a"]


def test_a_title_written_with_a_tab_after_its_hash_is_not_quoted_either() -> None:
    # `#<tab>Title` is an ATX heading as much as `# Title` (the note's title reads so)
    d, _ = doc("p")
    asked = Answer((), 0, ("anything",))
    assert parse(_note("#\tTab title\n")).title == "Tab title"
    assert excerpt(d, parse(_note("#\tTab title\n")), asked) == []
    assert excerpt(d, parse(_note("#\tTab title\n\nIntro.\n")), asked) == ["Intro."]
