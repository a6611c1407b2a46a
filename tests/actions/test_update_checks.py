"""update.py's checks on the text it writes, called in process: a value Markdown would
read back as something else, the refusals' line numbers, a team note's new links
checked one by one, a link to a note not written yet, the path an unchanged update
names, `title_differs`, and `recited`. The round trips are in test_update.py, the edges of the text
in test_update_edges.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from omh_git_memory.actions.update import Changes, recited, update
from omh_git_memory.actions.workspace import open_workspace
from omh_git_memory.model.errors import NoteRefused
from omh_git_memory.model.layers import Layer
from tests.helpers import (
    git,
    local_store,
    make_repo,
    note_text,
    remember_linked,
    with_linked_team_notes,
)
from tests.helpers.repo import head_of

A = "surprise/alpha-fails"
STRUCTURE = ("the note would not read back: a value changed the note's structure when "
             "written (a line starting with `#`, or an unclosed code fence?); indent such "
             "lines or put them in a closed fence")
HEAD = ("---\nkey: surprise/odd\ntype: surprise\nsource: cli\nrecorded: 2026-11-02\n---\n\n"
        "# The odd one.\n\n## Expected\nplain\n\n## Observed\nodd\n\n## Evidence\nseen\n")


def _plant(repo: Path, relpath: str, text: str) -> Path:
    path = local_store(repo) / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _refused(repo: Path, key: str, changes: Changes, **kw: object) -> str:
    """The refusal `update` gives; the note's file is left as it was."""
    path = local_store(repo) / f"{key}.md"
    before = path.read_bytes()
    with pytest.raises(NoteRefused) as err:
        update(open_workspace(repo), key, changes, **kw)  # type: ignore[arg-type]
    assert path.read_bytes() == before
    return str(err.value)


def test_an_answer_markdown_reads_as_a_list_in_a_list_is_refused(repo_dir: Path) -> None:
    """`- * b` is an item holding a list: the Answers list would read back with an
    empty item, though every heading is where it was."""
    assert remember_linked(repo_dir, "Alpha fails.") == A
    assert _refused(repo_dir, A, Changes(answers=["why?", "* b"])) == STRUCTURE


def test_a_title_markdown_reads_as_another_title_is_refused(repo_dir: Path) -> None:
    """`# Ends with #`: a closing `#` is no part of a heading's text."""
    assert remember_linked(repo_dir, "Alpha fails.") == A
    assert _refused(repo_dir, A, Changes(title="Ends with #")) == STRUCTURE
    done = update(open_workspace(repo_dir), A, Changes(title="Ends with C#"))
    assert done.changed and done.note.title == "Ends with C#"


def test_a_note_too_large_to_write_is_refused_with_no_line(repo_dir: Path) -> None:
    assert remember_linked(repo_dir, "Alpha fails.") == A
    refusal = _refused(repo_dir, A, Changes(evidence="x" * (1024 * 1024 + 1)))
    assert refusal.startswith("the note does not read back: is 10487")  # no `(line …)`
    assert refusal.endswith(" bytes; a note may hold at most 1048576")


def test_a_refusal_of_lint_names_its_line_when_it_has_one(repo_dir: Path) -> None:
    """An update writes no note lint refuses, even when the part that is wrong is
    one the update did not touch; the refusal says where, when there is a where."""
    _plant(repo_dir, "surprise/odd.md", HEAD)  # no `## Answers`: a whole-note problem
    assert _refused(repo_dir, "surprise/odd", Changes(evidence="new")) == (
        "MissingSection: a surprise needs a `## Answers` section")
    _plant(repo_dir, "surprise/odd.md", HEAD + "\n## Answers\n\nprose, not a list\n")
    assert _refused(repo_dir, "surprise/odd", Changes(evidence="new")) == (
        "ProseInListSection (line 21): `## Answers` holds a list and nothing else")


def test_each_new_link_of_a_team_note_is_checked(repo_dir: Path) -> None:
    """A link the team reaches does not end the check: the next one, which names no
    note, is still refused, and nothing is committed."""
    with_linked_team_notes(repo_dir)
    head = head_of(repo_dir)
    with pytest.raises(NoteRefused) as err:
        update(open_workspace(repo_dir), "ci", Changes(add_relates_to=["other", "no/such"]))
    assert str(err.value) == "[[no/such]] names no note; fix or remove the link"
    assert head_of(repo_dir) == head and git(repo_dir, "status", "--porcelain") == ""
    done = update(open_workspace(repo_dir), "ci", Changes(add_relates_to=["other"]))
    assert done.changed and done.commit == head_of(repo_dir) != head


def test_update_keeps_a_link_to_a_note_not_written_yet_unless_strict(repo_dir: Path) -> None:
    """As remember: a key is known before its note is written. `strict` (what
    `--strict` asks for) refuses it."""
    assert remember_linked(repo_dir, "Alpha fails.") == A
    assert _refused(repo_dir, A, Changes(add_relates_to=["later/x"]), strict=True) == (
        "relates_to: later/x names no note in the store; link only to keys that exist "
        "(recall finds them), or leave it out")
    done = update(open_workspace(repo_dir), A, Changes(add_relates_to=["later/x"]))
    assert done.changed and done.note.links == ("later/x",)


def test_an_unchanged_update_names_the_file_of_the_note(repo_dir: Path) -> None:
    """Nothing written: the path is still the note's file (a local note's whole path,
    a colon in it too) or, for a team note, its path in the repository."""
    with_linked_team_notes(repo_dir)
    done = update(open_workspace(repo_dir), "deploy", Changes(title="deploy"))
    assert not done.changed and done.layer is Layer.TEAM
    assert done.path == ".omh/notes/deploy.md" and done.commit is None
    assert remember_linked(repo_dir, "Alpha fails.") == A
    done = update(open_workspace(repo_dir), A, Changes(evidence="v"))
    assert not done.changed and done.path == str(local_store(repo_dir) / f"{A}.md")


def test_an_unchanged_update_under_a_folder_with_a_colon_names_the_whole_path(
        repo_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OMH_HOME", str(tmp_path / "a:b" / ".omh"))
    assert remember_linked(repo_dir, "Alpha fails.") == A
    path = local_store(repo_dir) / f"{A}.md"
    assert ":" in str(path) and path.is_file()
    done = update(open_workspace(repo_dir), A, Changes(evidence="v"))
    assert not done.changed and done.path == str(path)
    done = update(open_workspace(repo_dir), A, Changes(evidence="w"))
    assert done.changed and done.path == str(path)



def test_a_team_note_whose_file_name_holds_a_colon_is_refused_before_anything_is_written(
        tmp_path: Path) -> None:
    # a key never holds a colon, but a committed file's name may; update refuses such a
    # note by its path, so a team note's location it writes back holds one colon only
    repo = tmp_path / "repo"
    make_repo(repo, {".omh/notes/docs/x:deploy.md": note_text("docs/deploy")})
    head = head_of(repo)
    with pytest.raises(NoteRefused, match=r"^HEAD:\.omh/notes/docs/x:deploy\.md: its path is "
                                          r"no key \('docs/x:deploy' is not a usable key"):
        update(open_workspace(repo), "docs/deploy", Changes(source="test"))
    assert head_of(repo) == head


BLOB1, BLOB2 = "1" * 40, "2" * 40


@pytest.mark.parametrize(("before", "after", "expected"), [
    (f"a.py@{BLOB1}, b.py@{BLOB1}", f"a.py@{BLOB2}, b.py@{BLOB1}, c.py@{BLOB2}", ("a.py",)),
    (f"a.py@{BLOB1}", f"a.py@{BLOB1}", ()),
    (f"a.py@{BLOB1}", f"c.py@{BLOB2}", ()),
    (None, f"a.py@{BLOB2}", ()),
    (f"a.py@{BLOB1}", None, ()),
    (f"a.py@{BLOB1}", "", ()),
], ids=["one cited again at another blob", "the same blob", "another file", "none before",
        "no new evidence", "evidence naming no file"])
def test_recited_is_a_file_cited_before_and_again_at_another_blob(
        before: str | None, after: str | None, expected: tuple[str, ...]) -> None:
    assert recited(before, after) == expected


def test_title_differs_only_when_observed_changes_and_the_title_does_not(
        repo_dir: Path) -> None:
    """`title_differs` warns that a new Observed no longer starts with the title: not
    after an update that leaves Observed alone, nor one that sets the title too."""
    assert remember_linked(repo_dir, "Alpha fails.") == A
    ws = open_workspace(repo_dir)
    done = update(ws, A, Changes(observed="Beta fails instead."))
    assert done.changed and done.title_differs  # the title still reads "Alpha fails."
    done = update(ws, A, Changes(evidence="other evidence"))
    assert done.changed and not done.title_differs
    done = update(ws, A, Changes(observed="Gamma fails.", title="A title of its own"))
    assert done.changed and not done.title_differs
    assert done.note.title == "A title of its own"


def test_a_field_that_makes_the_note_too_large_is_refused(repo_dir: Path) -> None:
    """A frontmatter field is set after the sections: a note the field pushes past
    the size cap is refused as one that would not read back."""
    assert remember_linked(repo_dir, "Alpha fails.") == A
    refusal = _refused(repo_dir, A, Changes(evidence="x" * (1024 * 1024 + 1), source="Ada"))
    assert refusal.startswith("the note would not read back: is 10487")
    assert refusal.endswith(" bytes; a note may hold at most 1048576")


@pytest.mark.parametrize(("changes", "said"), [
    (Changes(observed="odd \x1b[31mred"), "`observed` holds the control character U+001B;"),
    (Changes(answers=["", "  "]), "`answers` is empty; a note nobody can find is a note "
                                  "nobody wrote"),
    (Changes(answers=["why\nnow?"]), "each `answers` must fit on one line"),
    (Changes(relates_to=[]), "`relates_to` is empty; give the keys of related notes"),
    (Changes(invalidated_by="whenever"), "invalidated_by: 'whenever' is not a trigger omh "
                                         "can evaluate"),
], ids=["control character", "no answer", "answer over lines", "no related key",
        "unknown trigger"])
def test_each_refusal_of_a_value_says_which_and_changes_nothing(
        repo_dir: Path, changes: Changes, said: str) -> None:
    assert remember_linked(repo_dir, "Alpha fails.") == A
    assert _refused(repo_dir, A, changes).startswith(said)
