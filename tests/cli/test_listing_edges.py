"""`omh memory` (cli/listing.py): the warning for a moved clone given only where the
local layer is listed, the files that do not read back as notes, and the count of
derived notes when no repository topic can be keyed."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import git, make_repo, omh
from tests.helpers.notes import moved_clone


def test_listing_tells_a_moved_clone_where_its_notes_went_but_not_under_ref(
        tmp_path: Path) -> None:
    old, new = moved_clone(tmp_path)
    now = omh(new, "memory")
    assert now.code == 0 and "omh adopt" in now.err and str(old) in now.err, now.err
    pinned = omh(new, "memory", "list", "--ref", "HEAD")
    assert pinned.code == 0 and pinned.err == "", pinned.err  # a commit holds no local note
    assert "local · left out" in pinned.out


def test_listing_names_each_file_that_does_not_read_back_as_a_note(repo_dir: Path) -> None:
    assert omh(repo_dir, "init").code == 0
    store = Path(omh(repo_dir, "memory", "--json").json()["local_store"])
    (store / "broken.md").write_text("no front matter\n", encoding="utf-8")
    notes = repo_dir / ".omh/notes"
    notes.mkdir()
    (notes / "bad.md").write_text("---\nkey: bad\n---\n", encoding="utf-8")
    git(repo_dir, "add", "-A")
    git(repo_dir, "commit", "-qm", "a note missing its fields")
    run = omh(repo_dir, "memory")
    assert run.code == 0, run.err
    assert run.out.splitlines()[-2:] == [
        "unreadable: .omh/notes/bad.md: frontmatter fields `type`, `source` and `recorded` "
        "are missing (omh memory lint says more)",
        f"unreadable: {store}/broken.md: does not start with a `---` frontmatter line "
        "(omh memory lint says more)",
    ]


def test_with_no_repository_topic_only_the_stubs_are_counted(tmp_path: Path) -> None:
    # A topic template that gives an unusable key: the tree derives no repository topic.
    repo = tmp_path / "repo"
    make_repo(repo, {"README.md": "# T\n\nhello\n", "a.md": "# A\n\ntext\n",
                     ".omh/memory.toml": '[keys]\ntopic = "{{slug}}/"\n'})
    run = omh(repo, "memory")
    assert run.code == 0, run.err
    lines = run.out.splitlines()
    assert lines[0].startswith("team · 0 notes, 2 stubs, 0 repository topics at HEAD ")
    assert lines[1] == ("  (not listed, derived from the tree: 2 stubs; --all "
                        "lists them, --type stub the stubs alone)")
