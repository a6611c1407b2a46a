"""What recall prints comes partly from the repository's tree and documents: a path
holding a line feed, a heading or a quoted line holding an escape sequence, is
written with visible escapes, so it can forge no line of the answer and send no
control sequence to a terminal or an agent (recall/render.py)."""

from __future__ import annotations

from pathlib import Path

from omh_git_memory.actions.ask import Question, ask
from omh_git_memory.actions.workspace import open_workspace
from omh_git_memory.recall.render import render_excerpts, render_tree
from tests.helpers import make_repo


def test_a_path_with_a_line_feed_stays_on_its_result_line(tmp_path: Path) -> None:
    make_repo(tmp_path / "r", {"odd\nname.md": "# Walrus\n\n## Tusks\n\nWalrus tusks.\n"})
    answered = ask(open_workspace(tmp_path / "r"), Question("walrus tusks"))
    text = render_tree(answered.answer, sections=answered.sections)
    first = text.splitlines()[0]
    assert "odd\\nname.md § Tusks, lines 3–5" in first
    assert len(text.splitlines()) == len(answered.answer.results) + sum(
        len(h.neighbours) for h in answered.answer.results)


def test_quoted_lines_keep_tabs_and_escape_control_characters(tmp_path: Path) -> None:
    doc = ("# Guide\n\n## Clear the screen\n\nRun\tthis:\n\x1b]0;owned\x07 and \u202e"
           "evil \x1b[2J clear\n")
    make_repo(tmp_path / "r", {"guide.md": doc})
    ws = open_workspace(tmp_path / "r")
    answered = ask(ws, Question("clear screen run"), excerpts=2)
    quoted = render_excerpts(answered.answer, answered.notes, answered.quotes)
    assert "\x1b" not in quoted and "\x07" not in quoted and "\u202e" not in quoted
    assert "Run\tthis:" in quoted  # a tab is kept: a command stays a command
    assert "\\x1b]0;owned\\x07 and \\u202eevil \\x1b[2J clear" in quoted


def test_keys_are_aligned_up_to_a_column_and_a_longer_one_runs_past_it(tmp_path: Path) -> None:
    from omh_git_memory.recall.render import KEY_COLUMN

    long = "walrus-" + "tusk-" * 20 + "notes"  # a key longer than the column
    make_repo(tmp_path / "r", {f"{long}.md": "# Walrus tusks\n\nWalrus tusks grow.\n",
                               "walrus.md": "# Walrus\n\nWalrus tusks again.\n",
                               "w.md": "# Tusks\n\nWalrus tusks, once more.\n"})
    answered = ask(open_workspace(tmp_path / "r"), Question("walrus tusks"))
    lines = {ln.split()[0]: ln for ln in render_tree(answered.answer).splitlines()}
    assert set(lines) >= {long, "walrus", "w"}
    # the short keys share one column, padded to KEY_COLUMN, not to the long key
    assert lines["walrus"].index("team ·") == lines["w"].index("team ·") == KEY_COLUMN + 2
    assert lines[long].index("team ·") == len(long) + 2
