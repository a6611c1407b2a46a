"""`rm` (actions/remove.py): one note removed, local or team, the notes that still
link to it named; a derived note, an ambiguous key, a dangling team link, a signoff
without a commit and a note changed meanwhile refused with nothing removed."""

from __future__ import annotations

from pathlib import Path

import pytest

from omh_git_memory.actions.remove import remove
from omh_git_memory.actions.workspace import open_workspace
from omh_git_memory.model import faults
from omh_git_memory.model.errors import (
    AmbiguousKey,
    BadArguments,
    ChangedMeanwhile,
    NoteNotFound,
    NoteRefused,
    NotUpdatable,
)
from omh_git_memory.model.layers import Layer
from tests.helpers import commit_files, git, make_repo, note_text, omh, remember_linked
from tests.helpers.repo import head_of, killed_after_landing

LINKED = "surprise/the-port-is-taken"
LINKER = "surprise/the-build-needs-the-port"
RELATED = "## Related\n\n- [[shared]]\n"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A README (a stub), team notes `shared` and `other` (which links to `shared`),
    and a local note linked from another local note."""
    path = tmp_path / "widget"
    make_repo(path, {"README.md": "# Widget\n\nHow to build the widget.\n"})
    assert omh(path, "init").code == 0
    commit_files(path, {".omh/notes/shared.md": note_text("shared", body="team text\n"),
                        ".omh/notes/other.md": note_text("other", body=RELATED)})
    assert remember_linked(path, "The port is taken.") == LINKED
    assert remember_linked(path, "The build needs the port.", LINKED) == LINKER
    return path


def test_rm_of_a_local_note_removes_its_file_and_names_the_notes_linking_to_it(
    repo: Path,
) -> None:
    ws = open_workspace(repo)
    path = ws.local.root / f"{LINKED}.md"
    head = head_of(repo)
    done = remove(ws, LINKED)
    assert (done.key, done.layer, done.path, done.commit) == (LINKED, Layer.LOCAL, str(path),
                                                              None)
    assert done.linked_from == ((Layer.LOCAL, LINKER),)
    assert not path.exists() and (ws.local.root / f"{LINKER}.md").exists()
    assert head_of(repo) == head


def test_rm_of_a_local_note_with_signoff_is_refused_and_keeps_it(repo: Path) -> None:
    ws = open_workspace(repo)
    with pytest.raises(BadArguments, match="makes none; run it again without --signoff"):
        remove(ws, LINKED, signoff=True)
    assert (ws.local.root / f"{LINKED}.md").exists()


def test_rm_of_a_local_note_rewritten_meanwhile_removes_nothing(
    repo: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    ws = open_workspace(repo)
    path = ws.local.root / f"{LINKED}.md"
    rewritten = path.read_text(encoding="utf-8").replace("The port is taken.", "Taken.")

    def another_writer(name: str) -> None:  # a second omh writing between read and rm
        if name == "rm:local":
            path.write_text(rewritten, encoding="utf-8")

    monkeypatch.setattr(faults, "point", another_writer)
    with pytest.raises(ChangedMeanwhile, match=f"local/{LINKED} changed while rm ran"):
        remove(ws, LINKED)
    assert path.read_text(encoding="utf-8") == rewritten


def test_rm_of_a_team_note_commits_its_removal(repo: Path) -> None:
    head = head_of(repo)
    done = remove(open_workspace(repo), "other", signoff=True)
    assert (done.layer, done.path, done.linked_from) == (Layer.TEAM, ".omh/notes/other.md", ())
    assert done.commit == head_of(repo) != head
    assert not (repo / ".omh/notes/other.md").exists()
    message = git(repo, "log", "-1", "--format=%B")
    assert message.startswith("omh: remove other") and "Signed-off-by: " in message


def test_rm_of_a_team_note_other_team_notes_link_to_is_refused_unless_told(
    repo: Path,
) -> None:
    head = head_of(repo)
    with pytest.raises(NoteRefused) as err:
        remove(open_workspace(repo), "shared")
    assert str(err.value).startswith(
        "team/shared is linked from team/other: removing it would leave that link to "
        "[[shared]] dangling")
    assert "`omh memory edit other --layer team`" in str(err.value)
    assert head_of(repo) == head and (repo / ".omh/notes/shared.md").exists()
    done = remove(open_workspace(repo), "shared", leave_links=True)
    assert done.linked_from == ((Layer.TEAM, "other"),) and done.commit == head_of(repo)
    assert not (repo / ".omh/notes/shared.md").exists()


def test_rm_of_a_team_note_only_local_notes_link_to_goes_through(repo: Path) -> None:
    remember_linked(repo, "The shared note is linked locally.", "shared")
    # `other` links to `shared` too: drop that link first, committed
    commit_files(repo, {".omh/notes/other.md": note_text("other", body="no link\n")})
    done = remove(open_workspace(repo), "shared")
    assert done.linked_from == ((Layer.LOCAL, "surprise/the-shared-note-is-linked-locally"),)
    assert done.commit == head_of(repo)


def test_rm_of_a_key_both_layers_hold_asks_which(repo: Path) -> None:
    commit_files(repo, {f".omh/notes/{LINKED}.md": note_text(LINKED, body="x\n")})
    ws = open_workspace(repo)
    with pytest.raises(AmbiguousKey, match="say which with --layer team or --layer local"):
        remove(ws, LINKED)
    assert remove(ws, LINKED, Layer.LOCAL).layer is Layer.LOCAL
    assert (repo / f".omh/notes/{LINKED}.md").exists()


def test_rm_of_a_stub_says_how_to_drop_it_and_removes_nothing(repo: Path) -> None:
    ws = open_workspace(repo)
    for layer in (None, Layer.TEAM):
        with pytest.raises(NotUpdatable) as err:
            remove(ws, "readme", layer)
        assert str(err.value) == (
            "readme is a stub derived from README.md, not written; to drop it, add README.md "
            "to [stubs] exclude in .omh/memory.toml (or remove the document)")
    with pytest.raises(NoteNotFound, match="the team layer holds it"):
        remove(ws, "readme", Layer.LOCAL)


def test_rm_of_the_repository_topic_says_nothing_can_remove_it(repo: Path) -> None:
    with pytest.raises(NotUpdatable) as err:
        remove(open_workspace(repo), "widget")
    assert str(err.value).startswith("widget is the repository topic, derived from the "
                                     "repository itself")


def test_rm_of_a_note_written_under_a_stub_key_removes_the_written_note(repo: Path) -> None:
    commit_files(repo, {".omh/notes/readme.md": note_text("readme", body="written\n")})
    done = remove(open_workspace(repo), "readme")
    assert done.layer is Layer.TEAM and done.path == ".omh/notes/readme.md"
    assert not (repo / ".omh/notes/readme.md").exists()


def test_rm_first_finishes_a_team_commit_a_killed_omh_left(repo: Path) -> None:
    landed = note_text("landed", body="landed text\n").encode("utf-8")
    _, new = killed_after_landing(repo, {".omh/notes/landed.md": landed})
    remove(open_workspace(repo), LINKED)
    assert head_of(repo) == new
    assert (repo / ".omh/notes/landed.md").read_bytes() == landed
    assert git(repo, "status", "--porcelain") == ""
