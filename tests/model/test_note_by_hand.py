"""Holes the mutation pass found in the note format, lint's exit status and the
`[keys]` table: each test states what a user sees, on notes written by
hand rather than by omh.

Found by mutation testing (the holes it left: docs/records/mutation-holes.md);
was tests/test_holes_note.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from omh_git_memory.model.config import load_config
from omh_git_memory.model.errors import ConfigError, NoteParseError
from omh_git_memory.model.note import parse, render, retarget_links, with_field
from tests.helpers import SEED_ARGS, git, omh

# A note as a person types it: no space after a colon, spaces after a value, a
# field omh does not know, a tab, two spaces, an empty unknown field.
HAND_FRONTMATTER = (
    "---\n"
    "key:hand/typed\n"
    "type:  topic\n"
    "source: a person   \n"
    "recorded:\t2026-11-01\n"
    "reviewer:ana\n"
    "priority:\n"
    "ticket:   OPS-12  \n"
    "---\n"
)
HAND_BODY = "\n# Typed by hand\n\nSee [[other]] and [[ spaced ]].\n"
HAND_NOTE = HAND_FRONTMATTER + HAND_BODY


def _store(repo: Path) -> Path:
    return Path(omh(repo, "memory", "--json").json()["local_store"])


def _plant(repo: Path, relpath: str, text: str) -> Path:
    assert omh(repo, "init").code == 0
    path = _store(repo) / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# --- render keeps a hand-written frontmatter byte for byte -------------------------


@pytest.mark.parametrize("line", HAND_FRONTMATTER.splitlines()[1:-1])
def test_each_hand_written_field_line_reads_back_byte_for_byte(line: str) -> None:
    # Each odd spelling alone, so a renderer that normalises any one of them fails.
    base = {"key": "key: k", "type": "type: topic", "source": "source: t",
            "recorded": "recorded: 2026-11-01"}
    name = line.split(":", 1)[0]
    lines = [line if n == name else text for n, text in base.items()]
    if name not in base:
        lines.append(line)
    text = "---\n" + "\n".join(lines) + "\n---\n\n# T\n"
    note = parse(text)
    assert render(note) == text
    assert parse(render(note)) == note


def test_a_hand_written_note_round_trips_and_its_values_are_read_trimmed() -> None:
    note = parse(HAND_NOTE)
    assert render(note) == HAND_NOTE
    assert (note.key.value, note.type, note.source) == ("hand/typed", "topic", "a person")
    assert note.field("ticket") == "OPS-12" and note.field("priority") == ""


def test_setting_one_field_keeps_every_other_hand_written_line() -> None:
    changed = render(with_field(parse(HAND_NOTE), "source", "someone else"))
    assert changed == HAND_NOTE.replace("source: a person   \n", "source: someone else\n")
    added = render(with_field(parse(HAND_NOTE), "invalidated_by", "base:2026-09"))
    assert added == HAND_NOTE.replace("---\n\n#", "invalidated_by: base:2026-09\n---\n\n#")


def test_retargeting_a_link_keeps_the_hand_written_frontmatter() -> None:
    moved = render(retarget_links(parse(HAND_NOTE), "other", "elsewhere"))
    assert moved == HAND_NOTE.replace("[[other]]", "[[elsewhere]]")


def test_update_on_the_command_line_keeps_a_hand_written_frontmatter(repo_dir: Path) -> None:
    path = _plant(repo_dir, "hand/typed.md", HAND_NOTE)
    run = omh(repo_dir, "memory", "update", "hand/typed", "--title", "Retitled")
    assert run.code == 0, run.err
    assert path.read_text(encoding="utf-8") == HAND_NOTE.replace("# Typed by hand",
                                                                  "# Retitled")


# --- the closing `---` is exactly three dashes -------------------------------------
# The page says frontmatter sits "between two `---` lines" and that omh reads back
# exactly what it writes. `--- ` (a trailing space) is not that line, so a note
# closed by it does not read back: refused, never read as if it were `---` (render
# would then write different bytes than the file holds).


@pytest.mark.parametrize("closing", ["--- ", "---\t", " ---", "----"])
def test_a_closing_line_that_is_not_exactly_three_dashes_is_refused(closing: str) -> None:
    head = "---\nkey: k\ntype: topic\nsource: t\nrecorded: 2026-11-01\n"
    alone = head + f"{closing}\n\n# T\n"
    # with a thematic break further down, the body holds a real `---` line
    with_rule = head + f"{closing}\n\n# T\n\nAbove.\n\n---\n\nBelow.\n"
    for text in (alone, with_rule):
        with pytest.raises(NoteParseError):
            parse(text)


def test_an_opening_line_with_a_trailing_space_is_refused() -> None:
    with pytest.raises(NoteParseError, match="does not start"):
        parse("--- \nkey: k\ntype: topic\nsource: t\nrecorded: 2026-11-01\n---\n\n# T\n")


def test_lint_calls_a_note_closed_by_dashes_and_a_space_unreadable(repo_dir: Path) -> None:
    text = ("---\nkey: spaced\ntype: topic\nsource: t\nrecorded: 2026-11-01\n--- \n\n"
            "# T\n\n---\n")
    _plant(repo_dir, "spaced.md", text)
    run = omh(repo_dir, "memory", "lint", "--json")
    assert run.code == 1, run.out
    findings = [f for f in run.json()["findings"] if f["key"] == "spaced"]
    assert [(f["rule"], f["severity"]) for f in findings] == [("Unreadable", "refused")]


# --- KeyDisagreesWithPath fails lint ------------------------------------------------


def test_a_key_that_disagrees_with_its_path_fails_lint(repo_dir: Path) -> None:
    # The only finding besides warnings: lint must still exit 1 and say refused.
    body = "\n# Misfiled\n\nSee [[misfiled]].\n"
    _plant(repo_dir, "misfiled.md", HAND_FRONTMATTER.replace("hand/typed", "elsewhere")
           + body)
    text = omh(repo_dir, "memory", "lint")
    assert text.code == 1, text.out
    assert "KeyDisagreesWithPath (refused)" in text.out
    report = omh(repo_dir, "memory", "lint", "--json")
    assert report.code == 1
    data = report.json()
    assert data["refused"] is True
    rules = {(f["rule"], f["severity"]) for f in data["findings"]}
    assert ("KeyDisagreesWithPath", "refused") in rules
    assert {r for r, s in rules if s == "refused"} == {"KeyDisagreesWithPath"}


def test_a_committed_note_whose_key_disagrees_fails_the_ci_check(repo_dir: Path) -> None:
    notes = repo_dir / ".omh/notes"
    notes.mkdir(parents=True)
    (notes / "here.md").write_text(
        "---\nkey: there\ntype: topic\nsource: t\nrecorded: 2026-11-01\n---\n\n# Here\n")
    git(repo_dir, "add", "-A")
    git(repo_dir, "commit", "-qm", "a misfiled note")
    run = omh(repo_dir, "memory", "lint", "--ref", "HEAD", "--json")
    assert run.code == 1, run.out
    assert run.json()["refused"] is True
    assert [f["severity"] for f in run.json()["findings"]
            if f["rule"] == "KeyDisagreesWithPath"] == ["refused"]


# --- an unknown type under [keys] ----------------------------------------------------


@pytest.mark.parametrize("template", ['"ideas/{{slug}}"', '"ideas/fixed"'])
def test_an_unknown_type_under_keys_is_a_config_error(tmp_path: Path, template: str) -> None:
    (tmp_path / ".omh").mkdir()
    (tmp_path / ".omh/memory.toml").write_text(f"[keys]\nidea = {template}\n")
    with pytest.raises(ConfigError, match="names type 'idea', which does not exist"):
        load_config(tmp_path)


def test_an_unknown_type_under_keys_is_one_line_and_exit_1(repo_dir: Path) -> None:
    (repo_dir / ".omh").mkdir()
    (repo_dir / ".omh/memory.toml").write_text('[keys]\nidea = "ideas/{{slug}}"\n')
    run = omh(repo_dir, *SEED_ARGS)
    assert run.code == 1, run.err
    assert run.err.startswith("omh: ") and run.err.count("\n") == 1, run.err
    assert "'idea'" in run.err and "use one of stub, surprise, topic" in run.err
