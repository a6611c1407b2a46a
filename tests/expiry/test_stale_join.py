"""What `omh memory stale`'s join answers, stated at the module's edge (mutation
pass 3): which definitions the symbol scan finds (C's typedefs above all),
which files the image digest covers, which notes a report holds, what recall marks,
and how a writer's trigger is pinned or refused. Real repositories, no CLI.

Found by mutation testing (docs/records/mutation-passes.md); was tests/test_mutants_stale.py."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pygit2
import pytest

from omh_git_memory.actions.workspace import open_workspace
from omh_git_memory.expiry.stale import TreeFacts, check, pin_trigger, stale_marks
from omh_git_memory.expiry.triggers import State
from omh_git_memory.git.repository import open_repo
from omh_git_memory.model.errors import GitFailure, NoteRefused
from omh_git_memory.recall.document import Doc
from tests.helpers import make_repo


def _facts(tmp_path: Path, files: dict[str, str], **config: object) -> TreeFacts:
    repo = tmp_path / "r"
    make_repo(repo, files)
    ws = open_workspace(repo)
    return TreeFacts(ws.repo, dataclasses.replace(ws.config(), **config))


def _defined(tmp_path: Path, files: dict[str, str], *names: str) -> dict[str, bool | None]:
    facts = _facts(tmp_path, files)
    return {name: facts.defines(name) for name in names}


# --- C's typedef … NAME; -----------------------------------------------------------


def test_a_typedef_defines_the_name_right_before_its_semicolon(tmp_path: Path) -> None:
    header = "typedef unsigned long my_count;\n"  # the file's only statement, then a line feed
    assert _defined(tmp_path, {"a.h": header}, "my_count", "unsigned", "long") == {
        "my_count": True, "unsigned": False, "long": False}


def test_every_typedef_of_a_file_is_found_not_only_the_first(tmp_path: Path) -> None:
    header = "int x;\nstatic int y;\ntypedef int first_t;\nint z;\ntypedef long second_t;"
    assert _defined(tmp_path, {"a.h": header + "\n"}, "first_t", "second_t") == {
        "first_t": True, "second_t": True}


def test_typedef_of_an_anonymous_struct_defines_the_name_after_the_braces(
        tmp_path: Path) -> None:
    # The commonest C typedef: the `;` inside the braces ends a member, not the typedef.
    header = ("typedef struct {\n    int x;\n    char *name;\n} Point;\n"
              "typedef enum { RED, GREEN } Colour;\n")
    assert _defined(tmp_path, {"a.h": header}, "Point", "Colour", "x", "name") == {
        "Point": True, "Colour": True, "x": False, "name": False}


def test_a_typedef_inside_a_function_body_is_found_and_the_next_statement_is_not(
        tmp_path: Path) -> None:
    source = ("int f(void) {\n    typedef int local_t;\n    return 0;\n}\nint after;\n"
              "void g(void) { return; }\ntypedef long later_t;\n")
    assert _defined(tmp_path, {"a.c": source}, "local_t", "after", "later_t") == {
        "local_t": True, "after": False, "later_t": True}


def test_a_name_that_merely_holds_the_word_typedef_is_no_typedef(tmp_path: Path) -> None:
    header = "int my_typedef_count;\nint typedefs;\n"
    assert _defined(tmp_path, {"a.h": header}, "my_typedef_count", "typedefs") == {
        "my_typedef_count": False, "typedefs": False}


def test_a_typedef_name_is_read_whole(tmp_path: Path) -> None:
    header = ("typedef int a_b_c;\ntypedef int _lead;\ntypedef int x9;\ntypedef int Q;\n"
              "typedef int (*handler_fn)(int);\ntypedef char pad_t [ 4 ] ;\n")
    found = _defined(tmp_path, {"a.h": header}, "a_b_c", "_lead", "x9", "Q", "b_c", "c",
                     "lead", "9")
    assert found == {"a_b_c": True, "_lead": True, "x9": True, "Q": True, "b_c": False,
                     "c": False, "lead": False, "9": False}


def test_a_typedef_ending_in_no_name_defines_nothing(tmp_path: Path) -> None:
    facts = _facts(tmp_path, {"a.h": "typedef int 9lives;\n"})
    assert facts.defines("lives") is False and facts.defines("9lives") is False


# --- the symbol scan ---------------------------------------------------------------


def test_the_scan_reads_every_source_file_past_others(tmp_path: Path) -> None:
    files = {"A_notes.txt": "parse\n", "README.md": "# parse\n", "b.py": "def first(): pass\n",
             "docs/x.txt": "x\n", "src/z.py": "def parse(): pass\n"}
    assert _defined(tmp_path, files, "parse", "first", "absent") == {
        "parse": True, "first": True, "absent": False}


def test_symbols_are_answered_in_every_language_of_a_mixed_tree(tmp_path: Path) -> None:
    files = {"a.c": "typedef int c_type;\n", "b.go": "func GoThing() {}\n",
             "c.py": "def py_thing(): pass\n", "d.rs": "fn rust_thing() {}\n"}
    facts = _facts(tmp_path, files)
    facts.scan_symbols(["c_type", "GoThing", "py_thing", "rust_thing", "nowhere"])
    assert [facts.defines(s) for s in ("c_type", "GoThing", "py_thing", "rust_thing",
                                       "nowhere")] == [True, True, True, True, False]


def test_a_qualified_symbol_is_answered_by_its_last_name(tmp_path: Path) -> None:
    files = {"a.rs": "struct Reader;\nfn parse() {}\n"}
    facts = _facts(tmp_path, files)
    facts.scan_symbols(["Reader::parse", "Writer.parse", "Reader::missing", "Reader.x.parse"])
    assert facts.defines("Reader::parse") is True
    assert facts.defines("Writer.parse") is True
    assert facts.defines("Reader::missing") is False
    assert facts.defines("Reader.x.parse") is True


def test_a_symbol_asked_later_is_scanned_then(tmp_path: Path) -> None:
    facts = _facts(tmp_path, {"a.py": "def one(): pass\ndef two(): pass\n"})
    facts.scan_symbols(["one"])
    assert facts.defines("one") is True
    assert facts.defines("two") is True  # not scanned for above: a second pass finds it
    assert facts.defines("three") is False


def test_without_a_file_of_a_known_language_a_symbol_cannot_be_told(tmp_path: Path) -> None:
    facts = _facts(tmp_path, {"README.md": "def parse(): pass\n", "x.txt": "fn parse() {}\n"})
    assert facts.defines("parse") is None


def test_a_repository_without_a_commit_has_no_files(tmp_path: Path) -> None:
    path = tmp_path / "empty"
    pygit2.init_repository(str(path), initial_head="main")
    ws = open_workspace(path)
    facts = TreeFacts(open_repo(path), ws.config())
    assert facts.blob_at("README.md") is None
    assert facts.defines("anything") is None
    assert facts.recipe_digest() is None


def test_blob_at_answers_files_only(tmp_path: Path) -> None:
    facts = _facts(tmp_path, {"src/app.py": "x = 1\n", "README.md": "# r\n"})
    blob = str(pygit2.Repository(str(tmp_path / "r")).revparse_single("HEAD:src/app.py").id)
    assert facts.blob_at("src/app.py") == blob
    assert facts.blob_at("src") is None


# --- the image digest --------------------------------------------------------------


def _digest(tmp_path: Path, name: str, files: dict[str, str], recipe: tuple[str, ...]) -> (
        str | None):
    return _facts(tmp_path / name, files, image_recipe=recipe).recipe_digest()


def test_the_recipe_digest_covers_the_named_files_and_folders_only(tmp_path: Path) -> None:
    recipe = ("Dockerfile", "docker/")
    base = {"Dockerfile": "FROM a\n", "docker/entry.sh": "run\n", "app.py": "x = 1\n"}
    first = _digest(tmp_path, "a", base, recipe)
    assert first is not None and len(first) == 64
    assert _digest(tmp_path, "b", base, recipe) == first  # the same files, the same digest
    # files beside the recipe, or whose name merely starts like it, do not count
    assert _digest(tmp_path, "c", {**base, "app.py": "x = 2\n", "Dockerfile.old": "FROM b\n",
                                   "dockerfiles/x": "y\n"}, recipe) == first
    # a recipe file, or one under a recipe folder, does
    assert _digest(tmp_path, "d", {**base, "Dockerfile": "FROM b\n"}, recipe) != first
    assert _digest(tmp_path, "e", {**base, "docker/entry.sh": "other\n"}, recipe) != first
    assert _digest(tmp_path, "f", {**base, "docker/more.sh": "new\n"}, recipe) != first


def test_without_a_recipe_file_there_is_no_digest(tmp_path: Path) -> None:
    facts = _facts(tmp_path, {"app.py": "x = 1\n", "docker.txt": "x\n"},
                   image_recipe=("Dockerfile", "docker/"))
    assert facts.recipe_digest() is None
    assert facts.recipe_digest() is None  # asked twice, the same answer
    assert facts.recipe_files() == ("Dockerfile", "docker/")


def test_the_recipe_digest_is_the_same_when_asked_again(tmp_path: Path) -> None:
    facts = _facts(tmp_path, {"Dockerfile": "FROM a\n"}, image_recipe=("Dockerfile",))
    first = facts.recipe_digest()
    assert first is not None and facts.recipe_digest() == first


# --- check, stale_marks, pin_trigger -----------------------------------------------


def _doc(key: str, trigger: str | None, layer: str = "local",
         problem: str | None = None) -> Doc:
    return Doc(layer=layer, key=key, kind="topic", recorded=1, title=key, links=(),
               source="src", length=1, location=f"{key}.md", problem=problem,
               trigger=trigger)


@pytest.fixture
def facts(tmp_path: Path) -> TreeFacts:
    return _facts(tmp_path, {"src/app.py": "def parse(): pass\n"}, base="2026-06")


def test_a_report_holds_the_notes_with_a_usable_trigger_sorted_by_layer_and_key(
        facts: TreeFacts) -> None:
    blob = facts.blob_at("src/app.py")
    docs = [
        _doc("z-gone", "symbol:vanished"),
        None,  # a file that is no note
        _doc("b-fresh", f"file:src/app.py@{blob}"),
        _doc("a-moved", "base:2026-01", layer="team"),
        _doc("c-bad", "nonsense"),
        _doc("d-none", None),
        _doc("e-empty", ""),
        _doc("f-broken", "symbol:vanished", problem="no front matter"),
        _doc("g-defined", "symbol:parse"),
        _doc("a-unknown", "image:abcdef0"),
    ]
    report = check(docs, facts)
    assert report.checked == 6
    assert [(f.doc.layer, f.doc.key, f.trigger, f.verdict.state) for f in report.stale] == [
        ("local", "z-gone", "symbol:vanished", State.STALE),
        ("team", "a-moved", "base:2026-01", State.STALE),
    ]
    assert [(f.doc.key, f.trigger) for f in report.unknown] == [
        ("a-unknown", "image:abcdef0"), ("c-bad", "nonsense")]
    assert report.stale[1].verdict.reason == "the base moved from 2026-01 to 2026-06"


def test_stale_marks_name_only_fired_triggers(facts: TreeFacts) -> None:
    docs = [_doc("gone", "symbol:vanished"), _doc("here", "symbol:parse"),
            _doc("odd", "image:abcdef0"), _doc("plain", None),
            _doc("broken", "symbol:vanished", problem="bad")]
    assert stale_marks(docs, facts) == {
        ("local", "gone"): "no definition of vanished is left in HEAD"}
    assert stale_marks([_doc("plain", None), _doc("broken", "base:2026-01", problem="x")],
                       facts) == {}
    assert stale_marks([], facts) == {}


def test_a_report_without_symbol_triggers_reads_no_source_file(tmp_path: Path) -> None:
    # The clone lacks the source file's contents (a partial or damaged clone): a
    # check that needs no symbol answers all the same, one that does cannot.
    facts = _facts(tmp_path, {"src/app.py": "def parse(): pass\n"}, base="2026-06")
    blob = facts.blob_at("src/app.py")
    assert blob is not None
    (tmp_path / "r" / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    report = check([_doc("f", f"file:src/app.py@{blob}"), _doc("b", "base:2026-07")], facts)
    assert report.checked == 2 and report.stale == () and report.unknown == ()
    with pytest.raises(GitFailure, match=r"^src/app\.py \(blob [0-9a-f]{12}\) is missing"):
        check([_doc("s", "symbol:parse")], facts)


def test_pin_trigger_resolves_a_shorthand_and_refuses_what_cannot_be_pinned(
        facts: TreeFacts) -> None:
    blob = facts.blob_at("src/app.py")
    assert pin_trigger(" file:src/app.py ", facts) == f"file:src/app.py@{blob}"
    assert pin_trigger("symbol:parse", facts) == "symbol:parse"
    assert pin_trigger(None, facts) is None
    assert pin_trigger("", facts) is None
    assert pin_trigger("  \n", facts) is None
    with pytest.raises(NoteRefused) as err:
        pin_trigger("file:missing.py", facts)
    assert str(err.value) == ("invalidated_by: missing.py is not a file in HEAD; "
                              "commit it first, or name one that is")

