"""`edit` (actions/edit.py) called as the CLI calls it: the editor's copy never inside
a checkout, an editor that cannot start, and the checks a saved text passes by default."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import pytest

from omh_git_memory.actions.edit import edit
from omh_git_memory.actions.workspace import open_workspace
from omh_git_memory.model.errors import EditorFailed, UnsafePath
from tests.helpers import omh, remember_linked

# An editor that adds a Related link to a key no note holds yet.
ADD_LINK = """\
import sys
from pathlib import Path
path = Path(sys.argv[1])
path.write_text(path.read_text() + "\\n## Related\\n\\n- [[later/x]]\\n")
"""


@pytest.fixture
def note(repo_dir: Path) -> tuple[Path, str, Path]:
    """omh set up in `repo_dir` and one local note: the repository, its key, its file."""
    assert omh(repo_dir, "init").code == 0
    key = remember_linked(repo_dir, "The port is taken.")
    return repo_dir, key, open_workspace(repo_dir).local.root / f"{key}.md"


def test_edit_refuses_a_temporary_folder_inside_the_checkout_and_runs_no_editor(
    note: tuple[Path, str, Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:
    repo, key, path = note
    before = path.read_bytes()
    (repo / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(repo / "tmp"))
    ran = tmp_path / "ran"
    with pytest.raises(UnsafePath) as err:
        edit(open_workspace(repo), key, environ={"EDITOR": f"touch {ran}"})
    assert f"is inside the checkout ({repo.resolve()})" in str(err.value)
    assert not ran.exists() and list((repo / "tmp").iterdir()) == []
    assert path.read_bytes() == before


def test_edit_with_an_editor_that_cannot_start_says_so_and_leaves_no_copy(
    note: tuple[Path, str, Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:
    repo, key, path = note
    before = path.read_bytes()
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    missing = str(tmp_path / "no-such-editor")
    with pytest.raises(EditorFailed) as err:
        edit(open_workspace(repo), key, environ={"EDITOR": missing})
    assert str(err.value).startswith(f"cannot start the editor {missing!r}: ")
    assert str(err.value).endswith("; nothing changed")
    assert list((tmp_path / "tmp").iterdir()) == [] and path.read_bytes() == before


def test_edit_by_default_keeps_a_new_link_to_a_note_not_written_yet(
    note: tuple[Path, str, Path], tmp_path: Path,
) -> None:
    repo, key, path = note
    script = tmp_path / "editor.py"
    script.write_text(ADD_LINK, encoding="utf-8")
    done = edit(open_workspace(repo), key, environ={"EDITOR": f"{sys.executable} {script}"})
    assert done.updated is not None and done.updated.changed
    assert "[[later/x]]" in path.read_text(encoding="utf-8")


@pytest.mark.parametrize("editor", ["rm", "replace with a link"])
def test_edit_whose_copy_is_gone_or_a_link_after_the_editor_changes_nothing(
    note: tuple[Path, str, Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
    editor: str,
) -> None:
    repo, key, path = note
    before = path.read_bytes()
    outside = tmp_path / "outside.md"
    outside.write_bytes(before.replace(b"The port is taken.", b"Read through a link."))
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    command = "rm" if editor == "rm" else f"ln -sf {outside}"
    with pytest.raises(EditorFailed, match=r"^the edited copy .* is gone or not a regular "
                                           r"file; nothing changed$"):
        edit(open_workspace(repo), key, environ={"EDITOR": command})
    assert path.read_bytes() == before
    assert list((tmp_path / "tmp").iterdir()) == []
