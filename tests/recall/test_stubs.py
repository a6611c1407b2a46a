"""Derived notes: the repository topic's name and stubs whose paths slug alike.

What is derived must be the same in every clone of the same commit, whatever the
folder the clone was made in (DESIGN: "no key or fact may depend on the
checkout's folder name or path").
"""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

from omh_git_memory.model.keys import DEFAULT_KEY_TEMPLATES, DEFAULT_TEMPLATES, KeyTemplates
from omh_git_memory.recall.stubs import RepoFacts, one_per_key, stub_note, topic_note, tree_facts
from tests.helpers import git, make_repo, note_text, omh

DAY = dt.date(2026, 11, 1)


def _commit_note(repo: Path, key: str, body: str) -> None:
    path = repo / ".omh/notes" / f"{key}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(note_text(key, body=body))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", f"add {key}")


def _topic_keys(repo: Path) -> list[str]:
    run = omh(repo, "memory", "--json")
    assert run.code == 0, run.err
    return [n["key"] for n in run.json()["notes"] if n["derived"] and n["type"] == "topic"]


def _lint(repo: Path) -> dict[str, object]:
    run = omh(repo, "memory", "lint", "--ref", "HEAD", "--json")
    out = run.json()
    out["code"] = run.code
    return out


def test_init_names_the_topic_in_memory_toml_and_every_clone_agrees(tmp_path: Path) -> None:
    origin = tmp_path / "tinyhttp"
    make_repo(origin, {"README.md": "# Tiny HTTP\n", "docs/guide.md": "# Guide\n"})
    assert omh(origin, "init").code == 0
    assert 'name = "tinyhttp"' in (origin / ".omh/memory.toml").read_text()
    git(origin, "add", "-A")
    git(origin, "commit", "-qm", "omh init")
    _commit_note(origin, "overview", "See [[tinyhttp]] and [[docs/guide]].\n")
    clone = tmp_path / "work" / "my-checkout"
    git(tmp_path, "clone", "-q", str(origin), str(clone))
    for repo in (origin, clone):
        assert _topic_keys(repo) == ["tinyhttp"]
    original, cloned = _lint(origin), _lint(clone)
    assert original == cloned
    assert original["code"] == 0 and original["counts"]["DanglingLink"] == 0  # type: ignore[index]
    recalled = omh(clone, "memory", "recall", "tiny http", "--json").json()
    assert "tinyhttp" in {r["key"] for r in recalled["results"]}


def test_without_a_committed_name_the_topic_is_repo_in_every_clone(tmp_path: Path) -> None:
    # A store made before init wrote a name (or with no memory.toml at all): the
    # topic's key may not come from the folder, so it is the fixed `repo`.
    origin = tmp_path / "alpha"
    make_repo(origin, {"README.md": "# Alpha\n"})
    _commit_note(origin, "overview", "See [[repo]].\n")
    clone = tmp_path / "beta"
    git(tmp_path, "clone", "-q", str(origin), str(clone))
    assert _topic_keys(origin) == _topic_keys(clone) == ["repo"]
    assert _lint(origin) == _lint(clone)
    assert _lint(clone)["code"] == 0
    # Unnamed, it reads as the repository's topic, not as the topic of a repo called "repo".
    text = omh(clone, "memory", "recall", "alpha").out
    assert "  the repository topic — " in text and "topic of repo" not in text, text


def test_a_copied_checkouts_cached_index_holds_what_a_rebuild_holds(tmp_path: Path) -> None:
    origin = tmp_path / "alpha"
    make_repo(origin, {"README.md": "# Alpha\n"})
    before = _topic_keys(origin)  # builds and caches the index under .git/omh
    copy = tmp_path / "gamma"
    shutil.copytree(origin, copy, symlinks=True)
    cached = _topic_keys(copy)
    assert omh(copy, "memory", "reindex", "--full").code == 0
    assert cached == _topic_keys(copy) == before


def test_the_topic_name_is_read_from_the_commit_not_the_folder(tmp_path: Path) -> None:
    origin = tmp_path / "somewhere"
    make_repo(origin, {"README.md": "# X\n",
                       ".omh/memory.toml": '[repo]\nname = "Api Server"\n'})
    assert _topic_keys(origin) == ["api-server"]
    shown = omh(origin, "memory", "show", "api-server")
    assert shown.code == 0 and "# Api Server\n" in shown.out


def test_a_bad_repo_name_is_refused_by_name(tmp_path: Path) -> None:
    origin = tmp_path / "somewhere"
    make_repo(origin, {"README.md": "# X\n", ".omh/memory.toml": "[repo]\nname = 3\n"})
    run = omh(origin, "memory", "lint")
    assert run.code == 1 and "[repo] name" in run.err


def _colliding(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    make_repo(repo, {"README.md": "# R\n",
                     "docs/deploy-notes.md": "# Lowercase\n\n## Second\n",
                     "docs/Deploy Notes.md": "# Deploying\n\n## First\n"})
    return repo


def test_two_documents_slugging_to_one_key_give_one_stub(tmp_path: Path) -> None:
    repo = _colliding(tmp_path)
    notes = [n for n in omh(repo, "memory", "--json").json()["notes"]
             if n["key"] == "docs/deploy-notes"]
    # The path that sorts first (byte order: "D" before "d") keeps the key.
    assert [n["path"] for n in notes] == ["docs/Deploy Notes.md"]
    shown = omh(repo, "memory", "show", "docs/deploy-notes").out
    assert shown.count("---\nkey:") == 1 and "source: docs/Deploy Notes.md" in shown
    topic = omh(repo, "memory", "show", "repo").out
    assert topic.count("[[docs/deploy-notes]]") == 1


def test_lint_names_the_document_that_lost_its_stub(tmp_path: Path) -> None:
    repo = _colliding(tmp_path)
    for args in (("memory", "lint", "--json"), ("memory", "lint", "--ref", "HEAD", "--json")):
        run = omh(repo, *args)
        assert run.code == 0, run.err  # a warning, as for two files claiming one key
        report = run.json()
        found = [f for f in report["findings"] if f["rule"] == "DuplicateKey"]
        assert [(f["key"], f["path"], f["severity"]) for f in found] == [
            ("docs/deploy-notes", "docs/deploy-notes.md", "warning")]
        assert "docs/Deploy Notes.md" in found[0]["message"]
    text = omh(repo, "memory", "lint").out
    assert "docs/deploy-notes.md: DuplicateKey (warning)" in text


# --- what the topic says of the tree, and which documents get a stub --------------------


def test_the_topic_lists_what_the_files_say_each_with_its_file(tmp_path: Path) -> None:
    repo = tmp_path / "tiny"
    make_repo(repo, {"README.md": "# Tiny\n", "pyproject.toml": "", "setup.py": "",
                     "Makefile": "", ".github/workflows/ci.yml": "on: push\n",
                     "LICENSES/MIT.txt": "MIT\n", "src/a.rs": ""})
    shown = omh(repo, "memory", "show", "repo")
    assert shown.code == 0, shown.err
    assert [line for line in shown.out.splitlines() if line.endswith("`)")] == [
        "- describes itself as “Tiny” (from `README.md`)",
        "- a Python project (from `pyproject.toml`)",  # once, though setup.py says it too
        "- built with make (from `Makefile`)",  # a marker after the one said twice
        "- runs GitHub Actions workflows (from `.github/workflows/ci.yml`)",  # a glob
        "- carries a licence file (from `LICENSES/MIT.txt`)",
        "- holds 1 Python file, among them this one (from `setup.py`)",
        "- holds 1 Rust file, among them this one (from `src/a.rs`)",
    ]


def test_languages_are_counted_commonest_first_then_by_name_five_at_most() -> None:
    def languages(paths: list[str]) -> list[str]:
        return [fact for fact, _ in tree_facts(paths)]

    assert languages(["a.rs", "b.py", "c.py"]) == [
        "holds 2 Python files, among them this one", "holds 1 Rust file, among them this one"]
    assert languages(["a.rs", "b.py"]) == [  # a tie: by the language's name, not the file's
        "holds 1 Python file, among them this one", "holds 1 Rust file, among them this one"]
    six = languages(["a.c", "b.go", "c.java", "d.py", "e.rb", "f.rs"])
    assert [fact.split()[2] for fact in six] == ["C", "Go", "Java", "Python", "Ruby"]


def test_a_plain_marker_is_found_only_by_its_own_name() -> None:
    assert tree_facts(["setup.py"])[0] == ("a Python project", "setup.py")
    assert [f for f, _ in tree_facts(["docs/Makefile", "Makefile.old", "LICENSE"])] == [
        "carries a licence file"]


def test_a_document_after_a_clash_still_gets_its_stub() -> None:
    kept, clashes = one_per_key(["docs/deploy-notes.md", "docs/zebra.md", "docs/Deploy Notes.md"],
                                DEFAULT_KEY_TEMPLATES)
    assert kept == ["docs/Deploy Notes.md", "docs/zebra.md"]
    assert [(c.key, c.path, c.kept_by) for c in clashes] == [
        ("docs/deploy-notes", "docs/deploy-notes.md", "docs/Deploy Notes.md")]


def test_a_document_whose_path_gives_no_key_gets_no_stub(tmp_path: Path) -> None:
    assert one_per_key(["!!!.md", "docs/a.md"], DEFAULT_KEY_TEMPLATES) == (
        ["!!!.md", "docs/a.md"], [])
    assert stub_note("!!!.md", "# Bangs\n", DEFAULT_KEY_TEMPLATES, DAY) is None
    make_repo(tmp_path / "r", {"!!!.md": "# Bangs\n", "docs/a.md": "# A\n"})
    listed = omh(tmp_path / "r", "memory", "--json")
    assert listed.code == 0, listed.err
    assert [n["key"] for n in listed.json()["notes"] if n["type"] == "stub"] == ["docs/a"]


def test_a_stub_is_titled_by_its_documents_title_else_its_path() -> None:
    titled = stub_note("docs/guide.md", "# The  Guide\n\n## Install\n", DEFAULT_KEY_TEMPLATES,
                       DAY)
    assert titled is not None and titled.title == "The Guide"
    untitled = stub_note("docs/guide.md", "Just text.\n", DEFAULT_KEY_TEMPLATES, DAY)
    assert untitled is not None and untitled.title == "docs/guide.md"


def test_a_document_that_opens_with_a_lower_heading_is_titled_by_it() -> None:
    """A chapter of the Rust book starts `## Recoverable Errors with Result`: that is
    its title, not its path; a `##` heading after other text is no title."""
    chapter = stub_note("src/ch09-02.md", "\n## Recoverable  Errors\n\nText.\n\n### Matching\n",
                        DEFAULT_KEY_TEMPLATES, DAY)
    assert chapter is not None and chapter.title == "Recoverable Errors"
    later = stub_note("README.md", "Some text first.\n\n## Install\n", DEFAULT_KEY_TEMPLATES, DAY)
    assert later is not None and later.title == "README.md"
    empty = stub_note("docs/x.md", "## \n\ntext\n", DEFAULT_KEY_TEMPLATES, DAY)
    assert empty is not None and empty.title == "docs/x.md"
    # a document's `# ` title anywhere still wins over a `##` it opens with
    both = stub_note("docs/y.md", "## Intro\n\n# Real Title\n", DEFAULT_KEY_TEMPLATES, DAY)
    assert both is not None and both.title == "Real Title"


def test_no_topic_when_the_template_cannot_key_it() -> None:
    unkeyable = KeyTemplates({**DEFAULT_TEMPLATES, "topic": "../{{slug}}"})
    assert topic_note(RepoFacts("tiny", ()), [], unkeyable, DAY) is None
    topic = topic_note(RepoFacts("tiny", ()), [], DEFAULT_KEY_TEMPLATES, DAY)
    assert topic is not None and topic.key.value == "tiny"


def test_a_document_with_an_upper_case_extension_gets_its_stub(tmp_path: Path) -> None:
    make_repo(tmp_path / "r", {"README.MD": "# Loud\n", "docs/Guide.Md": "# Guide\n",
                               "notes.txt": "not Markdown\n"})
    listed = omh(tmp_path / "r", "memory", "--json")
    assert listed.code == 0, listed.err
    stubs = {n["key"]: n["title"] for n in listed.json()["notes"] if n["type"] == "stub"}
    assert stubs == {"readme": "Loud", "docs/guide": "Guide"}
