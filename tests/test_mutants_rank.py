"""What recall's ranking and its answer promise, stated where the mutation pass found
them unchecked (issue 14, pass 3).

The tests build the searcher in process from hand-made documents (no git, no
subprocess: each runs once per mutant) and state what a user or an agent sees:
which notes are returned and in what order (orderings a user expects, never exact
scores: the weights are tuned on benchmarks, docs/recall.md), how many were left
out, which neighbours each result names, and the lines of the rendered answer.
"""

from __future__ import annotations

import datetime as dt
import random
from array import array
from collections import Counter
from collections.abc import Sequence

import pytest

from omh_git_memory.note import parse
from omh_git_memory.recall import content_id
from omh_git_memory.recall import rank as rank_module
from omh_git_memory.recall.index import Doc, Postings, Snapshot
from omh_git_memory.recall.rank import (
    Answer,
    Hit,
    Scan,
    Searcher,
    _Term,
    area_label,
    date_of,
    excerpt,
    is_hub,
    question_words,
    read_at,
    recall,
    render_excerpts,
    render_tree,
    shown_docs,
    what_it_is,
)
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
    terms = [_Term(touched[:split], [1] * split, 1.0),
             _Term(touched[split:], [1] * (len(touched) - split), 0.5)]
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
    assert len(out.encode()) <= rank_module.EXCERPT_BUDGET
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
    monkeypatch.setattr(rank_module, "AREA_WEIGHT", 0.5)  # the mechanism, not the tuned value
    assert question_words("zstream: fix zstream reading") == {
        "zstream": 1.0, "fix": 1.0, "read": 1.0}
    assert question_words("fix(zstream): reading") == {"read": 1.0, "fix": 0.5, "zstream": 0.5}
