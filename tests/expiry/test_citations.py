"""Citations: the files a note's Evidence names are recorded with
their blob ids at HEAD when the note is written (`cites`), and recall marks a result
whose cited files changed since — from blob ids alone, never a refusal."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pygit2
import pytest

from omh_git_memory.actions.workspace import open_workspace
from omh_git_memory.expiry import citations
from omh_git_memory.expiry.citations import Citation, cite, format_cites, parse_cites
from omh_git_memory.git.last_changed import changes_since, renamed_to
from omh_git_memory.model.note import parse, render
from tests.helpers import commit_files, git, local_store, make_repo, omh

SOURCES = {
    "src/app.py": "def parse_header(x):\n    return x\n",
    "src/util.py": "def helper():\n    return 1\n",
    "src/twice_a.py": "def shared():\n    pass\n",
    "src/twice_b.py": "def shared():\n    pass\n",
    "README.md": "# App\n",
}
KEY = "surprise/header-parsing-drops-tabs"
QUESTION = "why does header parsing drop tabs"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "app"
    make_repo(path, SOURCES)
    os.symlink("src", path / "lnk")  # a folder's symlink
    os.symlink("../outside.py", path / "out.py")  # a file's symlink, out of the repository
    (path / "outside.py").parent.mkdir(exist_ok=True)
    git(path, "add", "-A")
    git(path, "commit", "-qm", "links")
    assert omh(path, "init").code == 0
    return path


def _remember(repo: Path, evidence: str, *extra: str) -> str:
    run = omh(repo, "memory", "remember", "--expected", "tabs are kept",
              "--observed", "Header parsing drops tabs.", "--evidence", evidence,
              "--answers", "why does header parsing drop tabs?", *extra)
    assert run.code == 0, run.err
    return (local_store(repo) / f"{KEY}.md").read_text(encoding="utf-8")


def _cites(text: str) -> tuple[Citation, ...]:
    return parse_cites(parse(text).field("cites"))


def _blob(repo: Path, path: str) -> str:
    return git(repo, "rev-parse", f"HEAD:{path}").strip()


def _result(repo: Path, key: str = KEY) -> dict[str, Any]:
    run = omh(repo, "memory", "recall", QUESTION, "--json")
    assert run.code == 0, run.err
    return next(r for r in run.json()["results"] if r["key"] == key)


def _line(repo: Path, key: str = KEY) -> str:
    run = omh(repo, "memory", "recall", QUESTION)
    assert run.code == 0, run.err
    return next(ln for ln in run.out.splitlines() if ln.startswith(key))


# --- what is recorded ------------------------------------------------------------------


def test_remember_records_each_cited_files_blob_at_head(repo: Path) -> None:
    text = _remember(repo, "src/app.py:2 strips them; see ./src/util.py#L1-L2.")
    assert _cites(text) == (Citation("src/app.py", _blob(repo, "src/app.py")),
                            Citation("src/util.py", _blob(repo, "src/util.py")))
    assert (f"cites: src/app.py@{_blob(repo, 'src/app.py')}, "
            f"src/util.py@{_blob(repo, 'src/util.py')}\n---\n") in text


def test_the_note_with_citations_reads_back_to_the_same_bytes(repo: Path) -> None:
    text = _remember(repo, "src/app.py:2")
    assert render(parse(text)) == text


@pytest.mark.parametrize("evidence", [
    "lnk/app.py",  # through a folder's symlink: never followed
    "out.py",  # a symlink itself
    "src",  # a folder
    "../app/src/app.py",  # outside the repository, or back into it through `..`
    "/etc/passwd",
    "src/missing.py",  # not in HEAD
])
def test_a_path_that_is_no_regular_file_of_head_is_not_recorded(repo: Path,
                                                                 evidence: str) -> None:
    text = _remember(repo, f"see {evidence}")
    assert parse(text).field("cites") is None, text


def test_a_topic_cites_what_its_evidence_section_names_and_nothing_else(repo: Path) -> None:
    def topic(title: str, *sections: str) -> tuple[Citation, ...]:
        args = [a for section in sections for a in ("--section", section)]
        run = omh(repo, "memory", "remember", "--type", "topic", "--title", title, *args,
                  "--json")
        assert run.code == 0, run.err
        return _cites(Path(run.json()["path"]).read_text(encoding="utf-8"))

    # Evidence by any case; the files other sections name are not cited
    assert topic("Header parsing", "Summary=src/util.py is another story",
                 "EVIDENCE=src/app.py:2 strips them") == (
        Citation("src/app.py", _blob(repo, "src/app.py")),)
    assert topic("Helpers", "Summary=see src/util.py") == ()


def test_a_symbol_one_file_defines_cites_that_file_and_one_of_two_none(repo: Path) -> None:
    text = _remember(repo, "`parse_header()` and `shared` both")
    assert _cites(text) == (Citation("src/app.py", _blob(repo, "src/app.py")),)


def test_at_most_max_cites_files_are_recorded(tmp_path: Path) -> None:
    files = {f"f{i}.txt": f"{i}\n" for i in range(citations.MAX_CITES + 3)}
    make_repo(tmp_path / "r", files)
    ws = open_workspace(tmp_path / "r")
    found = cite(" ".join(files), ws.facts())
    assert [c.path for c in found] == list(files)[:citations.MAX_CITES]


def test_a_hand_written_entry_that_is_no_citation_is_skipped() -> None:
    value = "src/a.py@abc1234, nonsense, ../x.py@abc1234, b.py@XYZ, c d.py@0123456"
    assert parse_cites(value) == (Citation("src/a.py", "abc1234"), Citation("c d.py", "0123456"))
    assert format_cites(parse_cites(value)) == "src/a.py@abc1234, c d.py@0123456"


def test_a_note_citing_nothing_has_no_field(repo: Path) -> None:
    assert parse(_remember(repo, "EBUSY from the mount syscall")).field("cites") is None


def test_update_of_evidence_records_what_the_new_evidence_cites(repo: Path) -> None:
    _remember(repo, "src/app.py")
    assert omh(repo, "memory", "update", KEY, "--evidence", "src/util.py").code == 0
    text = (local_store(repo) / f"{KEY}.md").read_text()
    assert _cites(text) == (Citation("src/util.py", _blob(repo, "src/util.py")),)
    assert omh(repo, "memory", "update", KEY, "--evidence", "nothing cited").code == 0
    text = (local_store(repo) / f"{KEY}.md").read_text()
    assert "cites" not in text and render(parse(text)) == text


def test_update_says_when_new_evidence_takes_a_changed_files_mark_away(repo: Path) -> None:
    _remember(repo, "src/app.py and src/util.py")
    commit_files(repo, {"src/app.py": "def parse_header(x):\n    return x.strip()\n"})
    assert "changed since" in _line(repo)
    run = omh(repo, "memory", "update", KEY, "--evidence", "src/app.py and src/util.py, again")
    assert run.code == 0
    assert ("note: the note now cites src/app.py as it is now, which had changed since it "
            "was cited; the mark is gone, so check the note still holds") in run.out
    assert "cites" not in _line(repo)
    quiet = omh(repo, "memory", "update", KEY, "--evidence", "src/app.py and src/util.py!",
                "--json")
    assert quiet.json()["recited"] == []  # nothing had changed since: nothing to say


# --- what recall says ------------------------------------------------------------------


def test_an_unchanged_cited_file_is_not_marked(repo: Path) -> None:
    _remember(repo, "src/app.py:2")
    commit_files(repo, {"src/util.py": "def helper():\n    return 2\n"})  # another file
    assert "cites" not in _line(repo)
    assert _result(repo)["citations"] == [
        {"path": "src/app.py", "recorded": _blob(repo, "src/app.py"), "changed": False,
         "gone": False, "moved_to": None, "commits_since": 0}]


def test_a_changed_cited_file_is_marked_with_the_commits_since(repo: Path) -> None:
    _remember(repo, "src/app.py:2 and src/util.py")
    recorded = _blob(repo, "src/app.py")
    commit_files(repo, {"src/app.py": "def parse_header(x):\n    return x.strip()\n"})
    commit_files(repo, {"README.md": "# App, again\n"})
    commit_files(repo, {"src/app.py": "def parse_header(x):\n    return x.lstrip()\n"})
    assert _line(repo).endswith(" · cites src/app.py, changed since (2 commits)")
    assert _result(repo)["citations"][0] == {"path": "src/app.py", "recorded": recorded,
                                             "changed": True, "gone": False,
                                             "moved_to": None, "commits_since": 2}
    out = omh(repo, "memory", "recall", QUESTION).out
    assert "cites: a file the note's Evidence names changed since it was written" in out


def test_a_deleted_cited_file_is_marked_gone(repo: Path) -> None:
    _remember(repo, "src/util.py")
    commit_files(repo, {"src/util.py": None})
    assert _line(repo).endswith(" · cites src/util.py, gone since (1 commit)")
    (only,) = _result(repo)["citations"]
    assert only["changed"] is True and only["gone"] is True and only["commits_since"] == 1


def test_a_moved_cited_file_is_marked_with_where_it_went(repo: Path) -> None:
    _remember(repo, "src/util.py")
    commit_files(repo, {"README.md": "# App, again\n"})
    git(repo, "mv", "src/util.py", "lib_util.py")
    commit_files(repo, {"lib_util.py": "def helper():\n    return 1\n# moved\n"})  # and edited
    assert _line(repo).endswith(" · cites src/util.py, moved to lib_util.py since (1 commit)")
    (only,) = _result(repo)["citations"]
    assert only["gone"] is True and only["moved_to"] == "lib_util.py"
    assert only["changed"] is True and only["commits_since"] == 1


def test_show_marks_a_note_whose_cited_file_changed_as_recall_does(repo: Path) -> None:
    _remember(repo, "src/app.py:2 and src/util.py")
    assert "cites" not in omh(repo, "memory", "show", KEY).out.splitlines()[0]
    commit_files(repo, {"src/app.py": "def parse_header(x):\n    return x.strip()\n"})
    run = omh(repo, "memory", "show", KEY)
    assert run.code == 0, run.err
    assert run.out.splitlines()[0].endswith(" · cites src/app.py, changed since (1 commit)")
    (note,) = omh(repo, "memory", "show", KEY, "--json").json()["notes"]
    assert [(c["path"], c["changed"], c["commits_since"]) for c in note["citations"]] == [
        ("src/app.py", True, 1), ("src/util.py", False, 0)]
    # An edit not committed yet that puts the cited file back: not changed here.
    (repo / "src/app.py").write_text(SOURCES["src/app.py"], encoding="utf-8")
    assert "cites" not in omh(repo, "memory", "show", KEY).out.splitlines()[0]
    # A note that cites nothing has an empty list.
    assert omh(repo, "memory", "remember", "--expected", "x", "--observed", "Nothing cited.",
               "--evidence", "a hunch", "--answers", "what?").code == 0
    (plain,) = omh(repo, "memory", "show", "surprise/nothing-cited", "--json").json()["notes"]
    assert plain["citations"] == []


def test_show_as_of_a_commit_compares_with_that_commit(repo: Path) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "omh init")
    _remember(repo, "src/app.py:2")
    assert omh(repo, "memory", "promote", KEY).code == 0
    commit_files(repo, {"src/app.py": "def parse_header(x):\n    return x.strip()\n"})
    assert omh(repo, "memory", "show", KEY).out.splitlines()[0].endswith(
        " · cites src/app.py, changed since (1 commit)")
    before = omh(repo, "memory", "show", KEY, "--ref", "HEAD~1")
    assert before.code == 0, before.err
    assert "cites" not in before.out.splitlines()[1]  # after the line naming the commit


def _renamed(repo: Path, paths: set[str], limit: int = 50) -> dict[str, str]:
    head = git(repo, "rev-parse", "HEAD").strip()
    return renamed_to(open_workspace(repo).repo, head, paths, limit)


def test_a_file_deleted_outright_or_moved_on_again_is_not_said_to_be_moved(
        repo: Path) -> None:
    # Deleted while an unlike file was added: no move.
    commit_files(repo, {"src/util.py": None, "src/other.py": "x = [1, 2, 3]\n" * 5})
    git(repo, "mv", "src/app.py", "app.py")
    commit_files(repo, {})
    assert _renamed(repo, {"src/util.py", "src/app.py", "README.md"}) == {
        "src/app.py": "app.py"}  # and a path HEAD holds is not asked after
    git(repo, "mv", "app.py", "main.py")  # moved on: the first move's target is gone too
    commit_files(repo, {})
    assert _renamed(repo, {"src/app.py"}) == {}
    assert _renamed(repo, {"app.py"}) == {"app.py": "main.py"}
    commit_files(repo, {"main.py": None})
    assert _renamed(repo, {"app.py"}) == {}


def test_only_the_paths_asked_after_are_answered(repo: Path) -> None:
    git(repo, "mv", "src/util.py", "util.py")
    git(repo, "mv", "src/app.py", "app.py")
    commit_files(repo, {})
    assert _renamed(repo, {"src/util.py"}) == {"src/util.py": "util.py"}


def test_a_move_to_what_is_no_regular_file_now_is_no_move(repo: Path) -> None:
    git(repo, "mv", "src/util.py", "util.py")
    git(repo, "mv", "src/app.py", "app.py")
    commit_files(repo, {})
    (repo / "util.py").unlink()
    os.symlink("/etc/passwd", repo / "util.py")  # a symlink where it went
    (repo / "app.py").unlink()
    (repo / "app.py").mkdir()  # a folder where it went
    (repo / "app.py" / "x.txt").write_text("x\n")
    commit_files(repo, {})
    assert _renamed(repo, {"src/util.py", "src/app.py"}) == {}


def test_a_folder_now_at_the_old_path_still_finds_the_move(repo: Path) -> None:
    git(repo, "mv", "src/util.py", "util.py")
    commit_files(repo, {})
    commit_files(repo, {"src/util.py/inner.py": "y = 2\n"})  # the old name, a folder now
    assert _renamed(repo, {"src/util.py"}) == {"src/util.py": "util.py"}


def test_a_commit_changing_more_files_than_the_rename_limit_is_not_searched(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from omh_git_memory.git import last_changed

    git(repo, "mv", "src/util.py", "util.py")
    commit_files(repo, {"README.md": "# App, again\n", "src/new.py": "z = 3\n"})
    changed = len(git(repo, "show", "--name-only", "--no-renames", "--format=",
                      "HEAD").split())
    monkeypatch.setattr(last_changed, "RENAME_LIMIT", changed - 1)
    assert _renamed(repo, {"src/util.py"}) == {}
    monkeypatch.setattr(last_changed, "RENAME_LIMIT", changed)
    assert _renamed(repo, {"src/util.py"}) == {"src/util.py": "util.py"}


def test_the_latest_move_of_a_path_is_the_one_given(repo: Path) -> None:
    git(repo, "mv", "src/util.py", "first.py")
    commit_files(repo, {})
    commit_files(repo, {"src/util.py": "def again():\n    return 'a new file'\n"})
    git(repo, "mv", "src/util.py", "second.py")
    commit_files(repo, {})
    assert _renamed(repo, {"src/util.py"}) == {"src/util.py": "second.py"}


def test_a_move_older_than_the_walk_is_not_found(repo: Path) -> None:
    git(repo, "mv", "src/util.py", "util.py")
    commit_files(repo, {})
    for n in range(3):
        commit_files(repo, {"README.md": f"# App {n}\n"})
    assert _renamed(repo, {"src/util.py"}, limit=4) == {"src/util.py": "util.py"}
    assert _renamed(repo, {"src/util.py"}, limit=3) == {}


def test_without_the_blobs_only_a_move_that_kept_the_content_is_found(repo: Path) -> None:
    git(repo, "mv", "src/util.py", "util.py")
    git(repo, "mv", "src/app.py", "app.py")
    commit_files(repo, {"app.py": "def parse_header(x):\n    return x  # edited\n",
                        # an edited file that now holds a deleted one's content: no move
                        "src/twice_b.py": None, "README.md": SOURCES["src/twice_b.py"]})
    asked = {"src/util.py", "src/app.py", "src/twice_b.py"}
    assert _renamed(repo, asked) == {"src/util.py": "util.py", "src/app.py": "app.py"}
    # As a blobless clone: the two versions of app.py are not here to compare.
    for blob in (SOURCES["src/app.py"], "def parse_header(x):\n    return x  # edited\n"):
        oid = str(pygit2.hash(blob))
        (repo / ".git/objects" / oid[:2] / oid[2:]).unlink()
    assert _renamed(repo, asked) == {"src/util.py": "util.py"}


def test_a_file_replaced_by_a_symlink_is_marked(repo: Path) -> None:
    _remember(repo, "src/util.py")
    (repo / "src/util.py").unlink()
    os.symlink("app.py", repo / "src/util.py")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "util is a link now")
    assert "cites src/util.py, gone since" in _line(repo)


def test_promote_keeps_the_citations_and_recall_marks_the_team_note(repo: Path) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "omh init")
    local = _remember(repo, "src/app.py:2")
    assert omh(repo, "memory", "promote", KEY).code == 0
    team = git(repo, "show", f"HEAD:.omh/notes/{KEY}.md")
    assert team == local
    commit_files(repo, {"src/app.py": "def parse_header(x):\n    return x.strip()\n"})
    result = _result(repo)
    assert result["layer"] == "team" and result["citations"][0]["changed"] is True
    assert _line(repo).endswith(" · cites src/app.py, changed since (1 commit)")


# --- the walk that counts the commits since is bounded ---------------------------------


def test_the_count_is_unknown_past_the_walks_limit(repo: Path) -> None:
    recorded = _blob(repo, "src/app.py")
    for n in range(3):
        commit_files(repo, {"src/app.py": f"def parse_header(x):\n    return {n}\n"})
    ws = open_workspace(repo)
    head = git(repo, "rev-parse", "HEAD").strip()
    wanted = {("src/app.py", recorded)}
    assert changes_since(ws.repo, head, wanted, limit=10) == {("src/app.py", recorded): 3}
    assert changes_since(ws.repo, head, wanted, limit=3) == {}  # the blob not met: unknown
    assert changes_since(ws.repo, head, {("src/app.py", "0" * 40)}, limit=100) == {}


# --- a path recorded reads back as itself; a file that cannot be read is no refusal ---


def _commit_odd_file(repo: Path, name: str) -> None:
    """A file named `name` that alone defines `odd_one`: Evidence can name it only
    through the symbol (a path in Evidence is of the characters `_PATH` finds)."""
    (repo / os.path.dirname(name)).mkdir(parents=True, exist_ok=True)
    with open(os.fsencode(repo / name), "w", encoding="utf-8") as handle:
        handle.write("def odd_one():\n    pass\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "an odd name")


@pytest.mark.parametrize("name", [
    "src/a, b.py",  # `, ` separates entries: would read back as `b.py`
    " lead.py",  # a space at the start is taken off a field's value
    "src/n\nl.py",  # a second frontmatter line
    "src/c\rr.py",  # no note holds a CR
    "src/e\x1b[31m.py",  # nor a control character
    os.fsdecode(b"src/bad\xff.py"),  # nor a lone surrogate (a name that is not UTF-8)
])
def test_a_symbols_file_whose_path_would_not_read_back_is_not_recorded(
        repo: Path, name: str) -> None:
    # Left out, and the write goes through: a citation never refuses one.
    _commit_odd_file(repo, name)
    text = _remember(repo, "`odd_one` and src/app.py")
    assert _cites(text) == (Citation("src/app.py", _blob(repo, "src/app.py")),), text
    assert render(parse(text)) == text


@pytest.mark.parametrize("name", [
    "src/x@1234567.py",  # the last `@` of an entry ends its path
    "src/sp ace.py",
    "src/b`t.py",
    "app/[id]/(group)/page.py",  # a web framework's routes
])
def test_a_symbols_file_of_other_characters_is_recorded_and_reads_back(
        repo: Path, name: str) -> None:
    _commit_odd_file(repo, name)
    text = _remember(repo, "`odd_one`")
    assert _cites(text) == (Citation(name, _blob(repo, name)),), text
    assert render(parse(text)) == text
    assert [c["path"] for c in _result(repo)["citations"]] == [name]


def test_a_symbol_in_a_partial_clone_that_lacks_a_blob_refuses_no_write(
        tmp_path: Path) -> None:
    # A sparse, blobless clone lacks the blobs of src/: which file defines the symbol
    # cannot be told, so it names none, and the note is written.
    src = tmp_path / "src"
    make_repo(src, SOURCES)
    git(src, "config", "uploadpack.allowFilter", "true")
    git(tmp_path, "clone", "-q", "--filter=blob:none", "--sparse", f"file://{src}", "part")
    part = tmp_path / "part"
    assert not (part / "src").exists()
    assert omh(part, "init").code == 0
    text = _remember(part, "`parse_header` and README.md")
    assert _cites(text) == (Citation("README.md", _blob(part, "README.md")),)


def test_a_hand_written_field_is_read_to_max_cites_entries_each_path_once() -> None:
    many = ", ".join(f"f{i}.py@abc1234" for i in range(5000))
    found = parse_cites(f"a.py@1234567, a.py@7654321, {many}")
    assert len(found) == citations.MAX_CITES
    assert found[:2] == (Citation("a.py", "1234567"), Citation("f0.py", "abc1234"))


def test_a_recorded_id_longer_than_the_repositorys_is_no_citation(repo: Path) -> None:
    # It never matches a blob: read, it would mark the note forever.
    blob, util = _blob(repo, "src/app.py"), _blob(repo, "src/util.py")
    head = git(repo, "rev-parse", "HEAD").strip()
    where = ("local", KEY)
    checked = citations.check(open_workspace(repo).repo, head,
                              {where: f"src/app.py@{blob}0000, src/util.py@{util}"})
    assert checked == {where: (citations.Checked("src/util.py", util, util),)}


def test_a_teammates_field_of_thousands_of_entries_is_read_bounded(repo: Path) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "omh init")
    blob = _blob(repo, "src/app.py")
    entries = ", ".join([f"src/app.py@{blob}"] + [f"d{i % 50}/f{i}.py@abc1234"
                                                   for i in range(5000)])
    commit_files(repo, {f".omh/notes/{KEY}.md": (
        f"---\nkey: {KEY}\ntype: surprise\nsource: test\nrecorded: 2026-11-01\n"
        f"cites: {entries}\n---\n\n# Header parsing drops tabs.\n\n## Expected\ntabs\n\n"
        "## Observed\nHeader parsing drops tabs.\n\n## Evidence\nsrc/app.py\n")})
    result = _result(repo)
    assert len(result["citations"]) == citations.MAX_CITES
    assert result["citations"][0]["changed"] is False
    assert _line(repo).count("gone since") == citations.MAX_CITES - 1
