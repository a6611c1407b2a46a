"""The line scan of model/plain_markdown.py against mistune's parse: where the scan
answers, its answer is the parse's — on this repository's own Markdown, on the
documents of docs-dev when they are there, and on generated documents built from
the lines that open or end Markdown blocks in every awkward way."""

from __future__ import annotations

from pathlib import Path

import pytest

from omh_git_memory.model import note, plain_markdown
from tests.helpers import FIXTURES
from tests.helpers.markdown import generated

ROOT = Path(__file__).resolve().parents[2]
DOCS_DEV = ROOT.parent / "shared" / "bench" / "docs-dev"

def _markdown_files() -> list[Path]:
    files = [*sorted((ROOT / "docs").rglob("*.md")), ROOT / "README.md"]
    files += sorted(FIXTURES.rglob("*.md"))
    if DOCS_DEV.is_dir():
        files += sorted(DOCS_DEV.rglob("*.md"))
    return files


def _parsed_outline(src: str) -> tuple[str | None, list[str]]:
    """What `outline` gives from mistune's tokens, the scan left out."""
    tokens, at = note._block_tokens(src)
    title = next((str(t["text"]).strip() for t in tokens if note._is_atx(t, 1, at)), None)
    return title or None, [str(t["text"]).strip() for t in tokens if note._is_atx(t, 2, at)]


def _parsed_fences(src: str) -> list[tuple[int, int]]:
    tokens, at = note._block_tokens(src)
    return [(at.starts[id(t)], at.code_end[id(t)]) for t in tokens if id(t) in at.code_end]


def test_the_outline_a_scan_gives_is_the_parse_s_on_real_documents() -> None:
    answered = 0
    for path in _markdown_files():
        src = path.read_text(encoding="utf-8", errors="replace")
        src = src if src.endswith("\n") else src + "\n"
        scanned = plain_markdown.outline(src)
        if scanned is not None:
            answered += 1
            assert scanned == _parsed_outline(src), path
    # the scan is the rule, the parse the exception (docs-dev's book: every document)
    assert answered >= 0.9 * len(_markdown_files())


@pytest.mark.parametrize("seed", range(4))
def test_the_outline_a_scan_gives_is_the_parse_s_on_generated_documents(seed: int) -> None:
    answered = 0
    for src in generated(seed, 3000):
        scanned = plain_markdown.outline(src)
        if scanned is not None:
            answered += 1
            assert scanned == _parsed_outline(src), repr(src)
    assert answered > 500  # the generator reaches the scan's answers, not only its refusals


@pytest.mark.parametrize("seed", range(4, 8))
def test_the_code_a_scan_finds_is_the_parse_s_on_generated_documents(seed: int) -> None:
    answered = 0
    for src in generated(seed, 3000):
        fences = plain_markdown.fenced_code(src)
        if fences is not None:
            answered += 1
            assert fences == _parsed_fences(src), repr(src)
    assert answered > 300


@pytest.mark.parametrize(
    "src",
    [
        "- item\n\n   ```\n## not a heading at the top\n   ```\n",  # a fence under a list item
        "<div>\n```\n## in the HTML block\n```\n",  # HTML whose lines open a fence
        "* star\n<pre>\n# T\n",  # `<pre>` continuing a list item
        "> quote\n## continues the quote lazily\n",  # a heading right under a line
        "[b\n## x\n]: /u\n",  # a link label over three lines
        "[a]: /url\n'title\n\n## x'\n",  # a definition whose title may follow
        "# Title\r\n## H\r\n",  # a CR: blank to one rule of mistune's, not to another
        "  ## indented\n",
    ],
)
def test_the_scan_leaves_to_the_parse_what_it_cannot_be_sure_of(src: str) -> None:
    assert plain_markdown.outline(src) is None


def test_a_heading_under_a_closed_fence_or_a_heading_is_sure() -> None:
    src = "# Title\n## First\n```\n## code\n```\n## Second\n"
    assert plain_markdown.outline(src) == ("Title", ["First", "Second"]) == _parsed_outline(src)


def test_html_ending_at_a_blank_line_is_stepped_over() -> None:
    src = "# T\n\n<a id=\"x\"></a>\n<a id=\"y\"></a>\n\n## Kept\n\n<!-- a comment\n## hidden\n-->\n"
    assert plain_markdown.outline(src) == ("T", ["Kept"]) == _parsed_outline(src)


@pytest.mark.parametrize(
    ("src", "title"),
    [("\n\n# Title #\n## A\n", "Title"), ("#\tTabbed\n", "Tabbed"), ("   # Three\n", "Three"),
     ("## Two\n", None), ("Title\n=====\n", None), ("#NoSpace\n", None), ("", None),
     ("\n\n", None), ("# T\r\n", None)],
)
def test_the_title_line_is_the_parse_s_title_or_nothing(src: str, title: str | None) -> None:
    assert plain_markdown.title_line(src) == title
    if title is not None:
        assert note._parse_body(src, 1)[0] == title


@pytest.mark.parametrize(
    ("src", "opening"),
    [("\n## Two ##\ntext\n", (2, "Two")), ("###### Six\n", (6, "Six")), ("# One\n", (1, "One")),
     ("text\n## Later\n", None), ("####### Seven\n", None), ("## T\r\n", None), ("", None)],
)
def test_the_opening_heading_is_the_first_lines_of_any_level(
        src: str, opening: tuple[int, str] | None) -> None:
    assert plain_markdown.opening_heading(src) == opening


@pytest.mark.parametrize(
    "src",
    [
        "para\n<!-- c -->\n## H\n",  # a comment may interrupt a paragraph: no refusal
        "para\n<?php x ?>\n## H\n",  # and so may a processing instruction
        "<pre>\n# x\n</pre>\n## H\n",  # `<pre>` where a block surely begins
        "# T\n\n<pre>\n## x\n</pre>\n## H\n",  # and after a blank line
        "<!-- c -->\n## H\n",  # a comment on the first line
        "<!--\nc\n-->\n## H\n",  # a heading right after the line that ends HTML
        "\n\n## H\n",  # blank lines first: the heading's line has a blank one before it
    ],
)
def test_the_scan_answers_where_it_can_be_sure(src: str) -> None:
    """Refusing is safe but costs a parse: these are sure, and the scan says so."""
    scanned = plain_markdown.outline(src)
    assert scanned is not None
    assert scanned == _parsed_outline(src)


def test_a_closing_sequence_is_taken_off_as_mistunes_pattern_takes_it() -> None:
    """`without_closing` answers as mistune's `re.sub(r"(\\s+|^)#+\\s*$", "", text)`,
    on every short text of the characters that matter, and in time linear in a long
    run of white space, where that pattern takes seconds."""
    import itertools
    import re

    pattern = re.compile(r"(\s+|^)#+\s*$")
    for n in range(1, 6):
        for chars in itertools.product("a# \t\u00a0", repeat=n):
            text = "".join(chars)
            assert plain_markdown.without_closing(text) == pattern.sub("", text), repr(text)
