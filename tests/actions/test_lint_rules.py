"""Lint's rules, where the mutation pass showed defects no test would
notice: a list-only section after a free one, a list section with several
paragraphs, a file whose name is no key, one key held by two files, and the
findings about derived notes (stubs, the repo topic) whose key is held twice.

Found by mutation testing (docs/records/mutation-passes.md); was tests/test_mutants_lint.py.
"""

from __future__ import annotations

from pathlib import Path

from omh_git_memory.actions.lint import Report, lint
from omh_git_memory.actions.workspace import open_workspace
from omh_git_memory.model.layers import Layer
from omh_git_memory.stores.graph import Graph
from omh_git_memory.stores.store import LocalStore
from tests.helpers import make_repo, note_text


def _lint_files(root: Path, files: dict[str, str]) -> Report:
    root.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return lint(Graph.of(LocalStore(root).scan()))


def _found(report: Report, rule: str) -> list[tuple[str, int | None, str]]:
    return [(Path(f.path).name, f.line, f.message) for f in report.findings if f.rule == rule]


def test_prose_in_a_list_section_that_follows_a_free_section_is_refused(tmp_path: Path) -> None:
    body = "## Notes\n\nAny prose is fine here.\n\n## Related\n\nBut not here.\n"
    report = _lint_files(tmp_path, {"k.md": note_text("k", body=body)})
    found = _found(report, "ProseInListSection")
    assert [(name, message) for name, _, message in found] == [
        ("k.md", "`## Related` holds a list and nothing else")]
    assert report.refused


def test_a_list_section_with_several_paragraphs_is_one_finding_at_the_first(
        tmp_path: Path) -> None:
    body = "## Related\n\nFirst paragraph.\n\nSecond paragraph.\n\n- [[k]]\n\nThird.\n"
    text = note_text("k", body=body)
    report = _lint_files(tmp_path, {"k.md": text})
    first = text.splitlines().index("First paragraph.") + 1
    assert _found(report, "ProseInListSection") == [
        ("k.md", first, "`## Related` holds a list and nothing else")]


def test_a_file_whose_name_is_no_key_disagrees_with_its_key(tmp_path: Path) -> None:
    # `Bad Name.md` holds a space, so its path names no key at all.
    report = _lint_files(tmp_path, {"Bad Name.md": note_text("bad-name")})
    found = _found(report, "KeyDisagreesWithPath")
    assert [(name, message) for name, _, message in found] == [
        ("Bad Name.md",
         "key is bad-name but the file says Bad Name; rename one so they agree")]
    assert report.refused


def test_one_key_in_two_files_is_one_finding_on_the_second_naming_the_first(
        tmp_path: Path) -> None:
    report = _lint_files(tmp_path, {
        "dup.md": note_text("dup", body="See [[other]].\n"),
        "other.md": note_text("dup", body="See [[dup]].\n"),
    })
    found = _found(report, "DuplicateKey")
    assert len(found) == 1
    name, line, message = found[0]
    assert name == "other.md"
    assert line == note_text("dup").splitlines().index("key: dup") + 1
    assert message.startswith("key dup is also claimed by ") and message.endswith("dup.md")
    assert {f.severity.value for f in report.findings if f.rule == "DuplicateKey"} == {"warning"}


def test_one_note_per_key_is_no_duplicate(tmp_path: Path) -> None:
    report = _lint_files(tmp_path, {"a.md": note_text("a", body="See [[b]].\n"),
                                    "b.md": note_text("b", body="See [[a]].\n")})
    assert report.findings == ()


def _lint_repo(tmp_path: Path, files: dict[str, str]) -> Report:
    """Lint as `omh memory lint` reads a clone: the team layer at HEAD with its
    stubs and topic, and the (empty) local layer."""
    repo = tmp_path / "repo"
    make_repo(repo, {"README.md": "# Tiny\n", **files})
    return lint(open_workspace(repo).graph())


def test_a_stub_key_two_documents_slug_to_is_named_on_the_one_without_a_stub(
        tmp_path: Path) -> None:
    # Both paths slug to docs/deploy-notes; the one that sorts first keeps the stub.
    report = _lint_repo(tmp_path, {"docs/deploy-notes.md": "# A\n",
                                   "docs/Deploy Notes.md": "# B\n"})
    found = [(f.rule, f.layer, f.key, f.path, f.line, f.message) for f in report.findings]
    assert found == [(
        "DuplicateKey", Layer.TEAM, "docs/deploy-notes", "docs/deploy-notes.md", None,
        "the stub key docs/deploy-notes is also derived from docs/Deploy Notes.md, which "
        "keeps it, so this document has no stub; rename one of the two, or exclude one in "
        "[stubs] exclude")]
    assert report.counts["DuplicateKey"] == 1 and not report.refused


def test_a_derived_note_whose_key_is_held_says_how_to_fix_its_own_kind(tmp_path: Path) -> None:
    # A written team note holds the key of the topic (named by [repo] name) and the
    # key of a document's stub: each derived note is named with its own fix.
    report = _lint_repo(tmp_path, {
        "docs/deploy.md": "# Deploy\n",
        ".omh/memory.toml": '[repo]\nname = "myrepo"\n',
        ".omh/notes/myrepo.md": note_text("myrepo", body="See [[docs/deploy]].\n"),
        ".omh/notes/docs/deploy.md": note_text("docs/deploy", body="See [[myrepo]].\n"),
    })
    topic = "the repository topic, named by [repo] name in .omh/memory.toml"
    stub = "the stub of docs/deploy.md"
    found = sorted((f.key, f.rule, f.layer, f.path, f.message) for f in report.findings)
    assert found == [
        ("docs/deploy", "DuplicateKey", Layer.TEAM, stub,
         f"the key docs/deploy of {stub} is also held by .omh/notes/docs/deploy.md; "
         "rename the document or the note, or exclude the document in [stubs] exclude"),
        ("myrepo", "DuplicateKey", Layer.TEAM, topic,
         f"the key myrepo of {topic} is also held by .omh/notes/myrepo.md; "
         "change [repo] name in .omh/memory.toml and commit it"),
    ]


def test_a_note_whose_file_name_holds_a_colon_is_named_whole_as_the_holder(
        tmp_path: Path) -> None:
    # a key never holds a colon, but a committed file's name may: the note at
    # `x:deploy.md` says it is docs/deploy (its key disagrees with its path)
    report = _lint_repo(tmp_path, {
        "docs/deploy.md": "# Deploy\n",
        ".omh/notes/docs/x:deploy.md": note_text("docs/deploy"),
    })
    held = [f.message for f in report.findings if f.rule == "DuplicateKey"]
    assert held == ["the key docs/deploy of the stub of docs/deploy.md is also held by "
                    ".omh/notes/docs/x:deploy.md; rename the document or the note, or "
                    "exclude the document in [stubs] exclude"]
