"""update.py at its edges: which note a key names (the refusals that say where it
is instead), the `add_…` lists, and what `edit` reports. The round trips are in
test_update.py."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from omh_git_memory.actions.update import Changes, update
from omh_git_memory.actions.workspace import open_workspace
from omh_git_memory.model.errors import AmbiguousKey, NoteNotFound, NoteRefused
from omh_git_memory.model.layers import Layer
from omh_git_memory.model.note import parse
from tests.helpers import local_store, note_text, omh, remember_linked

A = "surprise/alpha-fails"


def _plant(repo: Path, relpath: str, text: str) -> Path:
    path = local_store(repo) / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_add_relates_to_skips_a_blank_item_and_one_the_list_holds() -> None:
    note = parse(note_text("t", body="## Related\n\n- [[a]]\n"))
    changes = Changes(add_relates_to=["  ", "a", "b"]).with_additions(note)
    assert changes.relates_to == ["a", "b"] and changes.add_relates_to is None


def test_a_key_the_other_layer_holds_is_named_with_its_layer(repo_dir: Path) -> None:
    assert remember_linked(repo_dir, "Alpha fails.") == A
    with pytest.raises(NoteNotFound) as err:
        update(open_workspace(repo_dir), A, Changes(evidence="x"), layer=Layer.TEAM)
    assert str(err.value) == (f"no note {A} in the team layer; the local layer holds it: use "
                              "--layer local, or leave --layer out")


def test_a_file_of_the_key_that_does_not_read_back_is_named(repo_dir: Path) -> None:
    assert remember_linked(repo_dir, "Alpha fails.") == A
    _plant(repo_dir, "surprise/broken.md", "not a note\n")
    ws = open_workspace(repo_dir)
    with pytest.raises(NoteRefused) as err:
        update(ws, "surprise/broken", Changes(evidence="x"))
    assert "surprise/broken.md" in str(err.value)
    assert str(err.value).endswith("; it does not read back as a note, so fix the file by hand")
    with pytest.raises(NoteNotFound) as missing:  # another file's breakage is not this key's
        update(ws, "surprise/nowhere", Changes(evidence="x"))
    assert str(missing.value).startswith("no note surprise/nowhere in any layer")


def test_a_missing_key_says_which_layer_was_searched(repo_dir: Path) -> None:
    ws = open_workspace(repo_dir)
    with pytest.raises(NoteNotFound) as err:
        update(ws, "surprise/nowhere", Changes(evidence="x"), layer=Layer.LOCAL)
    assert str(err.value).startswith("no note surprise/nowhere in the local layer")


def test_two_files_of_one_layer_claiming_a_key_are_refused(repo_dir: Path) -> None:
    assert remember_linked(repo_dir, "Alpha fails.") == A
    text = (local_store(repo_dir) / f"{A}.md").read_text()
    _plant(repo_dir, "surprise/copy.md", text)
    with pytest.raises(AmbiguousKey) as err:
        update(open_workspace(repo_dir), A, Changes(evidence="x"))
    assert f"{A} is claimed by 2 files" in str(err.value)


def test_a_note_whose_path_is_no_key_is_refused(repo_dir: Path) -> None:
    _plant(repo_dir, "surprise/Not A Key.md", note_text("surprise/fine", kind="topic"))
    with pytest.raises(NoteRefused) as err:
        update(open_workspace(repo_dir), "surprise/fine", Changes(answers=["q?"]))
    assert "Not A Key.md: its path is no key (" in str(err.value)


EDITOR = """\
import sys
path = sys.argv[-1]
text = open(path, encoding="utf-8").read()
open(path, "w", encoding="utf-8").write(text.replace("- q?", "- why?"))
"""


def test_edit_reports_no_title_difference(repo_dir: Path, tmp_path: Path) -> None:
    assert remember_linked(repo_dir, "Alpha fails.") == A
    script = tmp_path / "editor.py"
    script.write_text(EDITOR)
    env = {"EDITOR": f"{sys.executable} {script}", "VISUAL": ""}
    run = omh(repo_dir, "memory", "edit", A, "--json", env=env)
    assert run.code == 0, run.err
    done = json.loads(run.out)
    assert done["changed"] is True and done["title_differs"] is False
    run = omh(repo_dir, "memory", "edit", A, env={**env, "EDITOR": env["EDITOR"]})
    assert "the title still reads" not in run.out + run.err


CITES = "cites: src/app.py@" + "a" * 40


def _cited(repo: Path) -> Path:
    assert remember_linked(repo, "Alpha fails.") == A
    path = local_store(repo) / f"{A}.md"
    path.write_text(path.read_text().replace("source:", f"{CITES}\nsource:", 1))
    return path


def test_an_update_that_sets_no_evidence_keeps_the_cites_field(repo_dir: Path) -> None:
    path = _cited(repo_dir)
    update(open_workspace(repo_dir), A, Changes(add_answers=["and then?"]))
    assert CITES in path.read_text() and "- and then?" in path.read_text()


def test_new_evidence_naming_no_file_takes_the_cites_field_away(repo_dir: Path) -> None:
    path = _cited(repo_dir)
    update(open_workspace(repo_dir), A, Changes(evidence="plain words"))
    assert "cites:" not in path.read_text() and "plain words" in path.read_text()


def test_source_is_set_as_one_line_and_a_blank_or_second_line_refused(repo_dir: Path) -> None:
    assert remember_linked(repo_dir, "Alpha fails.") == A
    path = local_store(repo_dir) / f"{A}.md"
    ws = open_workspace(repo_dir)
    update(ws, A, Changes(source="Ada"))
    assert "\nsource: Ada\n" in path.read_text()
    before = path.read_bytes()
    for source in ("  ", "Ada\nBob"):
        with pytest.raises(NoteRefused) as err:
            update(ws, A, Changes(source=source))
        assert str(err.value) == "`source` must be one non-empty line saying who observed this"
    assert path.read_bytes() == before


HEAD = ("---\nkey: surprise/odd\ntype: surprise\nsource: cli\nrecorded: 2026-11-02\n---\n\n"
        "# The odd one.\n\n## Expected\nplain\n\n## Observed\nodd\n")


def test_a_section_between_two_headings_with_no_blank_line_is_replaced_whole(
    repo_dir: Path,
) -> None:
    path = _plant(repo_dir, "surprise/odd.md",
                  HEAD + "\n## Evidence\nold evidence\n## Answers\n\n- why?\n")
    update(open_workspace(repo_dir), "surprise/odd", Changes(evidence="new evidence"))
    assert path.read_text() == HEAD + "\n## Evidence\nnew evidence\n## Answers\n\n- why?\n"


def test_a_section_added_to_a_note_without_a_final_line_feed(repo_dir: Path) -> None:
    text = HEAD + "\n## Evidence\nseen\n\n## Answers\n\n- why?"
    path = _plant(repo_dir, "surprise/odd.md", text)
    update(open_workspace(repo_dir), "surprise/odd", Changes(relates_to=["other"]))
    assert path.read_text() == text + "\n\n## Related\n\n- [[other]]\n"


def test_an_empty_last_heading_with_no_line_end_gets_its_content(repo_dir: Path) -> None:
    text = HEAD + "\n## Evidence\nseen\n\n## Answers"
    path = _plant(repo_dir, "surprise/odd.md", text)
    update(open_workspace(repo_dir), "surprise/odd", Changes(answers=["why?"]))
    assert path.read_text() == text + "\n\n- why?\n"


def test_empty_sections_in_the_middle_get_their_content_and_a_blank_line(
    repo_dir: Path,
) -> None:
    path = _plant(repo_dir, "surprise/odd.md",
                  HEAD + "\n## Evidence\n\n## Answers\n\n## Related\n- [[other]]\n")
    update(open_workspace(repo_dir), "surprise/odd", Changes(evidence="seen", answers=["why?"]))
    assert path.read_text() == (HEAD + "\n## Evidence\nseen\n\n## Answers\n\n- why?\n\n"
                                "## Related\n- [[other]]\n")


def test_a_list_written_right_under_its_heading_stays_so(repo_dir: Path) -> None:
    path = _plant(repo_dir, "surprise/odd.md",
                  HEAD + "\n## Evidence\nseen\n\n## Answers\n- why?\n")
    update(open_workspace(repo_dir), "surprise/odd", Changes(add_answers=["how?"]))
    assert path.read_text() == HEAD + "\n## Evidence\nseen\n\n## Answers\n- why?\n- how?\n"


@pytest.mark.parametrize("gap", ["\n", ""], ids=["a blank line", "none"])
def test_a_new_title_replaces_the_title_line_however_close_to_the_fields(
    repo_dir: Path, gap: str
) -> None:
    text = HEAD.replace("---\n\n# The odd one.", f"---\n{gap}# The odd one.") + (
        "\n## Evidence\nseen\n\n## Answers\n\n- why?\n")
    path = _plant(repo_dir, "surprise/odd.md", text)
    update(open_workspace(repo_dir), "surprise/odd", Changes(title="The  plain one."))
    assert path.read_text() == text.replace("# The odd one.", "# The plain one.")


def test_a_title_on_the_last_line_with_no_line_end_is_replaced_whole(repo_dir: Path) -> None:
    text = note_text("ops/deploy").rstrip("\n")
    assert text.endswith("\n# ops/deploy")
    path = _plant(repo_dir, "ops/deploy.md", text)
    update(open_workspace(repo_dir), "ops/deploy", Changes(title="How we ship"))
    assert path.read_text() == text.replace("# ops/deploy", "# How we ship")
