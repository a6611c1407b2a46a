"""A document's sections, the one that best matches a question, and its lines to quote.

The cases after the first ones came from a mutation pass over recall/sections.py
(tools/mutation.py): each pins a weight the first cases did not tell apart.
"""

from __future__ import annotations

import pytest

from omh_git_memory.recall import sections
from omh_git_memory.recall.document import MAX_INDEXED
from omh_git_memory.recall.sections import (
    Section,
    best_section,
    counted,
    lines_of,
    places,
    quoted_lines,
    spanned,
    split,
)

GUIDE = """\
Some words before any heading.

# Guide

Intro paragraph.

## Running the tests

Run these two commands:

    cargo run python install
    cargo nextest run

## Releases

```sh
# not a heading: inside a fence
make release
```
Tag the release.

### Changelog ###

Write the changelog entry.


"""


def test_a_document_splits_at_every_heading_level_outside_code_fences() -> None:
    """Each ATX heading of any level starts a section; a `#` line inside a fence is
    code, and a closing `###` sequence is not part of the heading's text."""
    got = [(s.heading, s.start, s.end) for s, _ in split(GUIDE)]
    assert got == [(None, 1, 1), ("Guide", 3, 5), ("Running the tests", 7, 12),
                   ("Releases", 14, 20), ("Changelog", 22, 24)]


def test_a_sections_lines_start_at_its_heading_and_end_at_its_last_written_line() -> None:
    """Trailing blank lines belong to no section: the range ends where the text does."""
    sections = dict((s.heading, lines) for s, lines in split(GUIDE))
    assert sections["Changelog"] == ["### Changelog ###", "", "Write the changelog entry."]


def test_a_fence_closes_only_with_its_own_kind_and_length() -> None:
    """A `~~~` line does not close a ``` fence, nor a shorter fence a longer one: the
    heading-looking lines inside stay code."""
    text = "````\n```\n# inside\n~~~\n````\n# After\nx\n"
    assert [(s.heading, s.start) for s, _ in split(text)] == [(None, 1), ("After", 6)]


def test_a_hash_without_a_space_is_text_and_a_bare_hash_is_an_empty_heading() -> None:
    text = "#hashtag line\n# \nbody\n"
    assert [(s.heading, s.start, s.end) for s, _ in split(text)] == [(None, 1, 1), (None, 2, 3)]


def test_the_best_section_is_the_one_holding_the_questions_words() -> None:
    found = best_section(GUIDE, {"test": 2.0, "run": 1.0})
    assert found == Section("Running the tests", 7, 12)


def test_a_heading_that_names_the_question_outweighs_a_passing_mention() -> None:
    """A section titled with the word wins over a same-length one that only says it."""
    text = "## Setup\nthe release notes say little\n\n## Release\nhow to go about it\n"
    assert best_section(text, {"releas": 1.0}) == Section("Release", 4, 5)


def test_rarer_words_weigh_more_than_common_ones() -> None:
    text = "## A\nrun run run\n\n## B\nnextest\n"
    assert best_section(text, {"run": 0.1, "nextest": 3.0}).heading == "B"  # type: ignore[union-attr]


def test_no_section_when_no_line_holds_a_word_of_the_question() -> None:
    assert best_section(GUIDE, {"kubernetes": 1.0}) is None
    assert best_section("", {"test": 1.0}) is None


def test_sections_tie_to_the_earlier_one() -> None:
    text = "## One\nbuild\n\n## Two\nbuild\n"
    assert best_section(text, {"build": 1.0}) == Section("One", 1, 2)


def test_a_long_section_is_discounted_against_a_short_one_with_the_word_once() -> None:
    """BM25's length normalisation: the word once in a short section beats it once
    in a section ten times as long."""
    filler = " ".join(["other"] * 200)
    text = f"## Long\nbuild {filler}\n\n## Short\nbuild it\n"
    assert best_section(text, {"build": 1.0}).heading == "Short"  # type: ignore[union-attr]


def test_past_the_indexed_part_a_heading_is_a_section_of_its_line_alone() -> None:
    """Recall indexes a document's first MAX_INDEXED characters and every heading (the
    stub's Answers): a heading past that part is a section of its heading line, the
    lines under it unread, so the floor's check sees what the index saw."""
    text = "## Early\nbuild\n" + "x " * MAX_INDEXED + "\n## Late\nbuild build build\n"
    found = split(text)
    assert [(s.heading, s.start, s.end) for s, _ in found] == [
        ("Early", 1, 3), ("Late", 4, 4)]
    assert found[1][1] == ["## Late"]
    assert places(counted(text))[1] == frozenset({"late"})


def test_lines_are_numbered_at_line_feeds_only() -> None:
    """A form feed or a U+2028 inside a line ends nothing (an editor numbers lines at
    line feeds), and the CR of a CRLF is not part of the line."""
    text = "# A\r\nintro\x0cmore\u2028more\r\n\r\n## Tomato\r\nwater\r\n## B\x0c## C\n"
    assert [(s.heading, s.start, s.end) for s, _ in split(text)] == [
        ("A", 1, 2), ("Tomato", 4, 5), ("B ## C", 6, 6)]
    assert lines_of("a\r\nb\rc\n") == ["a", "b\rc", ""]


def test_quoted_lines_keep_line_breaks_from_the_first_matching_line() -> None:
    """Two commands on two lines stay two lines; the heading itself is not quoted,
    blank lines are dropped, and quoting starts where the question's words first are."""
    section = Section("Running the tests", 7, 12)
    assert quoted_lines(GUIDE, section, ["nextest"]) == ["    cargo nextest run"]
    assert quoted_lines(GUIDE, section, ["command"]) == [
        "Run these two commands:", "    cargo run python install", "    cargo nextest run"]


def test_a_section_with_no_matching_line_is_quoted_from_its_start() -> None:
    section = Section("Releases", 14, 20)
    assert quoted_lines(GUIDE, section, ["absent"])[:2] == [
        "```sh", "# not a heading: inside a fence"]


def test_the_text_before_any_heading_is_quoted_whole() -> None:
    assert quoted_lines(GUIDE, Section(None, 1, 1), ["absent"]) == [
        "Some words before any heading."]


def test_a_section_describes_its_heading_and_its_lines() -> None:
    assert Section("Releases", 14, 20).describe() == "§ Releases, lines 14–20"
    assert Section("Releases", 14, 14).describe() == "§ Releases, line 14"
    assert Section(None, 1, 3).describe() == "lines 1–3"


# From the mutation pass: the section score's weights and parameters.


def test_a_heading_word_counts_as_twice_in_the_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """HEADING_WEIGHT is 2: a word once in a heading scores as it twice in the lines of
    a section of the same length, and the tie goes to the earlier section (the
    heading's further weight for being asked, HEADING_ASKED, set aside)."""
    monkeypatch.setattr(sections, "HEADING_ASKED", 0.0)
    text = "## One\nbuild build\n\n## Build\nfoo bar\n"
    assert best_section(text, {"build": 1.0}) == Section("One", 1, 2)


def test_a_repeated_word_adds_less_than_a_second_word_of_the_question() -> None:
    """BM25's saturation (k1 = 1.2): four times one word scores below that word once
    and a second, slightly less rare, word of the question once."""
    text = "## One\nbuild build build build\n\n## Two\nbuild deploy foo bar\n"
    assert best_section(text, {"build": 1.0, "deploi": 0.85}) == Section("Two", 4, 5)


def test_a_word_twice_in_a_long_section_loses_to_it_once_in_a_short_one() -> None:
    """BM25's length normalisation (b = 0.75): a section four times as long needs
    more than twice the word."""
    filler = "alpha beta gamma delta epsilon zeta eta theta"
    text = f"## One\nbuild\n\n## Two\nbuild build {filler}\n"
    assert best_section(text, {"build": 1.0}) == Section("One", 1, 2)


def test_a_word_twice_in_a_somewhat_longer_section_beats_it_once_in_a_short_one() -> None:
    """…while a section about twice as long wins with the word twice: the length only
    discounts, it does not outweigh what the section says."""
    text = "## One\nbuild\n\n## Two\nbuild build alpha beta gamma\n"
    assert best_section(text, {"build": 1.0}) == Section("Two", 4, 5)


def test_the_line_right_under_a_heading_is_quoted() -> None:
    """Only the heading line is left out of a quote, also when the text follows it
    with no blank line between."""
    text = "## Setup\nfirst line\nsecond line\n"
    assert quoted_lines(text, Section("Setup", 1, 3), ["absent"]) == [
        "first line", "second line"]


def test_a_quote_starting_inside_a_code_block_starts_at_its_fence() -> None:
    """The first line holding the question's word is inside a fence: the quote opens
    with the fence, so it does not end on a closing fence that opens nothing."""
    text = "## Testing\n\nRun this:\n\n```sh\npoetry build\ntar tzf dist/*.tar.gz\n```\n\nDone.\n"
    found = split(text)[0][0]
    assert quoted_lines(text, found, ["tar"]) == [
        "```sh", "poetry build", "tar tzf dist/*.tar.gz", "```", "Done."]
    assert quoted_lines(text, found, ["done"]) == ["Done."]


def test_a_heading_the_question_asks_in_full_beats_one_it_asks_in_part() -> None:
    """`## remove` before `## self remove` for "remove a package", though the second
    section is shorter: all of the first heading's words are asked, half of the
    second's. A function word in a heading does not count against it."""
    text = ("## self remove\nThe self remove command removes a plugin package.\n\n"
            "## remove\nThe remove command removes a package from the project and more\n")
    assert best_section(text, {"remov": 1.0, "packag": 1.0}) == Section("remove", 4, 5)
    text = text.replace("## remove\n", "## remove it\n")  # `it`: a function word
    assert best_section(text, {"remov": 1.0, "packag": 1.0}) == Section("remove it", 4, 5)


def test_a_heading_the_question_does_not_ask_gets_nothing_more() -> None:
    text = ("## Options\nremove a package\n\n## Usage\nremove a package, more words\n")
    assert best_section(text, {"remov": 1.0, "packag": 1.0}) == Section("Options", 1, 2)


NESTED = """\
# Lock files

## Committing your lock file

### As an application developer

Commit it.

### As a library developer

Commit it too.

## Installing

Run install.
"""


def test_a_section_that_is_only_its_heading_stands_for_its_subsections() -> None:
    """Its text is all under its subsections: the section named and quoted is the
    whole part under it, to the next heading of its level."""
    parts = [s for s, _ in split(NESTED)]
    chosen = best_section(NESTED, {"commit": 1.0, "lock": 0.5})
    assert chosen == Section("Committing your lock file", 3, 3)
    whole = spanned(parts, chosen)
    assert (whole.heading, whole.start, whole.end) == ("Committing your lock file", 3, 11)
    assert quoted_lines(NESTED, whole, ["commit"]) == [
        "Commit it.", "### As a library developer", "Commit it too."]
    assert quoted_lines(NESTED, whole, ["releas"]) == [
        "### As an application developer", "Commit it.", "### As a library developer",
        "Commit it too."]


def test_a_section_with_lines_of_its_own_or_no_deeper_heading_after_it_is_kept() -> None:
    parts = [s for s, _ in split(NESTED)]
    for s in parts[2:]:
        assert spanned(parts, s) == s, s
    top = spanned(parts, parts[0])  # `# Lock files`, alone on its line: all under it
    assert (top.heading, top.start, top.end) == ("Lock files", 1, 15)
    # a heading alone followed by one of its own level, or at the end: itself
    text = "## A\n\n## B\nb\n\n### C\n"
    parts = [s for s, _ in split(text)]
    assert [(s.heading, s.start, s.end) for s in (spanned(parts, p) for p in parts)] == [
        ("A", 1, 1), ("B", 3, 4), ("C", 6, 6)]
    # the lines before any heading (level 0) are never extended
    assert spanned(parts, Section(None, 1, 1)) == Section(None, 1, 1)


REPEATED = """\
# Commands

## add

### Options

Add a package.

## remove

### Options

Remove a package.

## Options

Global ones.
"""


def test_a_heading_the_document_repeats_is_named_with_the_one_it_is_under() -> None:
    """`Options` under each command: the section says whose; a heading said once, or
    one at the top with nothing over it, is named alone."""
    found = [(s.heading, s.within, s.describe()) for s, _ in split(REPEATED)]
    assert found == [
        ("Commands", None, "§ Commands, line 1"), ("add", None, "§ add, line 3"),
        ("Options", "add", "§ add › Options, lines 5–7"), ("remove", None, "§ remove, line 9"),
        ("Options", "remove", "§ remove › Options, lines 11–13"),
        ("Options", "Commands", "§ Commands › Options, lines 15–17")]
    # a deeper heading closes nothing above it; a shallower one closes the deeper
    text = "## A\n#### X\nx\n### B\n#### X\ny\n"
    assert [s.describe() for s, _ in split(text)] == [
        "§ A, line 1", "§ A › X, lines 2–3", "§ B, line 4", "§ B › X, lines 5–6"]


def test_a_result_line_cuts_a_long_heading_and_the_one_it_is_under() -> None:
    from omh_git_memory.recall.render import TITLE_WIDTH, section_label

    long = "w" * (TITLE_WIDTH + 5)
    label = section_label(Section(long, 3, 9, 3, within=long))
    cut = "w" * (TITLE_WIDTH - 1) + "…"
    assert label == f"§ {cut} › {cut}, lines 3–9"
    fits = "v" * TITLE_WIDTH
    assert section_label(Section(fits, 3, 3, 2, within=fits)) == f"§ {fits} › {fits}, line 3"


def test_the_text_before_any_heading_is_never_extended_nor_given_a_headings_weight() -> None:
    """The lines before the first heading have no level: never spanned over the
    headings after them, and chosen by their words alone."""
    text = "walrus tusks\n## A\na\n### B\nb\n"
    parts = [s for s, _ in split(text)]
    assert (parts[0].heading, parts[0].level) == (None, 0)
    assert spanned(parts, parts[0]) == Section(None, 1, 1)
    assert best_section(text, {"tusk": 1.0}) == Section(None, 1, 1)


def test_a_heading_asked_weighs_in_however_small_the_scores() -> None:
    """The heading's extra weight is a share of the score, whatever its size: with
    weights far below 1 it still picks `## remove` over `## self remove`."""
    text = ("## self remove\nThe self remove command removes a plugin package.\n\n"
            "## remove\nThe remove command removes a package from the project and more\n")
    assert best_section(text, {"remov": 0.01, "packag": 0.01}) == Section("remove", 4, 5)


def test_a_heading_asked_adds_a_half_not_more() -> None:
    """HEADING_ASKED is 0.5: a section that holds both words of the question beats
    one whose heading is one of them and whose text has the other not at all, even
    though the heading is all asked."""
    text = ("## Details\nremove package remove package\n\n"
            "## remove\nThe step takes remove and more words here too.\n")
    assert best_section(text, {"remov": 1.0, "packag": 1.0}) == Section("Details", 1, 2)


def test_a_closing_sequence_is_taken_off_a_heading_and_one_of_hashes_alone_is_empty() -> None:
    text = "## Changelog ##\na\n## Tabs\t#\t\nb\n## C#\nc\n## ##\nd\n##\t#  \ne\n"
    assert [s.heading for s, _ in split(text)] == ["Changelog", "Tabs", "C#", None, None]
