"""Expiry against real commits: each trigger fires when its fact changes, and only then."""

from __future__ import annotations

from pathlib import Path

import pytest

from omh_git_memory.actions.workspace import open_workspace
from omh_git_memory.expiry.stale import TreeFacts
from tests.helpers import git, make_repo, omh
from tests.helpers.notes import remembered

SOURCES = {
    "src/app.py": "def parse_header(x):\n    return x\n\nclass Reader:\n    pass\n",
    "Dockerfile": "FROM debian:12\n",
    "README.md": "# App\n",
}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "app"
    make_repo(path, {**SOURCES, ".omh/memory.toml": '[stale]\nbase = "2026-09"\n'})
    return path


def _stale(repo: Path) -> dict[str, str]:
    out = omh(repo, "memory", "stale", "--json").json()
    return {f["key"]: f["reason"] for f in out["stale"]}


def _unknown(repo: Path) -> dict[str, str]:
    out = omh(repo, "memory", "stale", "--json").json()
    return {f["key"]: f["reason"] for f in out["unknown"]}


def _commit(repo: Path, files: dict[str, str | None], message: str = "change") -> None:
    for name, text in files.items():
        path = repo / name
        if text is None:
            git(repo, "rm", "-q", name)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message)


def test_the_write_path_pins_file_and_image_shorthands(repo: Path) -> None:
    key = remembered(repo, "Headers parse lazily.", trigger="file:src/app.py")
    store = Path(omh(repo, "memory", "--json").json()["local_store"])
    blob = git(repo, "rev-parse", "HEAD:src/app.py").strip()
    assert f"invalidated_by: file:src/app.py@{blob}\n" in (store / f"{key}.md").read_text()
    key = remembered(repo, "The image has curl.", trigger="image:current")
    assert "invalidated_by: image:" in (store / f"{key}.md").read_text()
    assert "image:current" not in (store / f"{key}.md").read_text()


@pytest.mark.parametrize(
    ("trigger", "message"),
    [("file:src/missing.py", "not a file in HEAD"), ("file:../etc/passwd", "`..`"),
     ("image:latest", "neither image:current nor a digest"), ("commit:abc", "not a trigger"),
     ("base:2026-13", "not a month")],
)
def test_a_trigger_omh_cannot_evaluate_is_refused_at_write(
    repo: Path, trigger: str, message: str
) -> None:
    run = omh(repo, "memory", "remember", "--expected", "e", "--observed", "X.",
              "--evidence", "v", "--answers", "q", "--invalidated-by", trigger)
    assert run.code == 1 and message in run.err


def test_image_current_without_a_recipe_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "bare"
    make_repo(path, {"README.md": "# x\n"})
    run = omh(path, "memory", "remember", "--expected", "e", "--observed", "X.",
              "--evidence", "v", "--answers", "q", "--invalidated-by", "image:current")
    assert run.code == 1 and "needs a container recipe" in run.err


def test_file_trigger_fires_on_change_delete_and_rename_not_on_unrelated(repo: Path) -> None:
    changed = remembered(repo, "App parses.", trigger="file:src/app.py")
    readme = remembered(repo, "Readme says app.", trigger="file:README.md")
    _commit(repo, {"other.txt": "unrelated\n"})
    assert _stale(repo) == {}
    _commit(repo, {"src/app.py": SOURCES["src/app.py"] + "# more\n"})
    assert "src/app.py changed:" in _stale(repo)[changed] and "→" in _stale(repo)[changed]
    git(repo, "mv", "README.md", "READ.md")
    git(repo, "commit", "-qm", "rename")
    assert _stale(repo)[readme] == "README.md is gone from HEAD"


def test_image_trigger_fires_when_the_recipe_changes(repo: Path) -> None:
    key = remembered(repo, "The image has curl.", trigger="image:current")
    _commit(repo, {"src/app.py": SOURCES["src/app.py"] + "x = 1\n"})
    assert _stale(repo) == {}
    _commit(repo, {"Dockerfile": "FROM debian:13\n"})
    assert "container recipe changed" in _stale(repo)[key]


def test_the_recipe_files_are_configurable(repo: Path) -> None:
    (repo / ".omh/memory.toml").write_text('[stale]\nimage_recipe = ["ci/image/"]\n')
    _commit(repo, {"ci/image/build.sh": "apt-get install curl\n"})
    key = remembered(repo, "The image has curl.", trigger="image:current")
    _commit(repo, {"Dockerfile": "FROM debian:13\n"})
    assert _stale(repo) == {}
    _commit(repo, {"ci/image/build.sh": "apt-get install wget\n"})
    assert key in _stale(repo)


def test_base_trigger_fires_when_the_base_moves_later(repo: Path) -> None:
    key = remembered(repo, "Base is bookworm.", trigger="base:2026-09")
    assert _stale(repo) == {}
    (repo / ".omh/memory.toml").write_text('[stale]\nbase = "2026-08"\n')
    assert _stale(repo) == {}
    (repo / ".omh/memory.toml").write_text('[stale]\nbase = "2027-01"\n')
    assert _stale(repo)[key] == "the base moved from 2026-09 to 2027-01"
    (repo / ".omh/memory.toml").write_text("")
    assert "no base month is configured" in _unknown(repo)[key]


def test_symbol_trigger_fires_when_the_definition_goes(repo: Path) -> None:
    func = remembered(repo, "Parse header exists.", trigger="symbol:parse_header")
    klass = remembered(repo, "Reader exists.", trigger="symbol:Reader")
    _commit(repo, {"src/use.py": "from app import parse_header\nparse_header(1)\n"})
    assert _stale(repo) == {}
    _commit(repo, {"src/app.py": "class Reader:\n    pass\n"})
    stale = _stale(repo)
    assert stale == {func: "no definition of parse_header is left in HEAD"}
    assert klass not in stale


def test_symbol_cannot_tell_without_a_known_language(tmp_path: Path) -> None:
    path = tmp_path / "docs-only"
    make_repo(path, {"README.md": "# Only docs\n"})
    key = remembered(path, "A symbol.", trigger="symbol:anything")
    assert "no file of a language" in _unknown(path)[key]


@pytest.mark.parametrize(
    ("path", "text", "name"),
    [
        ("a.py", "async def fetch_all():\n    pass\n", "fetch_all"),
        ("a.py", "MAX_RETRIES = 3\n", "MAX_RETRIES"),
        ("a.rs", "pub fn open_store() {}\n", "open_store"),
        ("a.rs", "pub struct Store {}\n", "Store"),
        ("a.go", "func (s *Store) Open() error {\n", "Open"),
        ("a.go", "type Store struct{}\n", "Store"),
        ("a.ts", "export interface Options {}\n", "Options"),
        ("a.js", "export function render(x) {\n", "render"),
        ("a.js", "class Widget {\n  draw(ctx) {\n  }\n}\n", "draw"),
        ("a.c", "static int open_store(const char *p)\n{\n", "open_store"),
        ("a.h", "#define MAX_KEYS 8\n", "MAX_KEYS"),
        ("a.cpp", "namespace omh {\nclass Store {};\n}\n", "Store"),
        ("A.java", "public class Store {\n  public void open(String p) {\n", "open"),
        ("A.java", "record Point(int x, int y) {}\n", "Point"),
    ],
)
def test_definitions_are_found_per_language(tmp_path: Path, path: str, text: str,
                                            name: str) -> None:
    repo = tmp_path / "r"
    make_repo(repo, {path: text})
    facts = TreeFacts(open_workspace(repo).repo, open_workspace(repo).config())
    assert facts.defines(name) is True
    assert TreeFacts(open_workspace(repo).repo, open_workspace(repo).config()).defines(
        "not_defined_anywhere") is False


def test_a_call_is_not_a_definition(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    make_repo(repo, {"a.py": "import x\nx.open_store()\nprint(open_store)\n"})
    facts = TreeFacts(open_workspace(repo).repo, open_workspace(repo).config())
    assert facts.defines("open_store") is False


def test_check_exits_non_zero_only_when_something_is_stale(repo: Path) -> None:
    remembered(repo, "App parses.", trigger="file:src/app.py")
    assert omh(repo, "memory", "stale", "--check").code == 0
    _commit(repo, {"src/app.py": "pass\n"})
    run = omh(repo, "memory", "stale", "--check")
    assert run.code == 1 and "1 stale" in run.out


def test_recall_marks_stale_notes(repo: Path) -> None:
    key = remembered(repo, "Headers parse lazily.", trigger="file:src/app.py")
    assert "stale" not in omh(repo, "memory", "recall", "headers parse").out
    _commit(repo, {"src/app.py": "pass\n"})
    out = omh(repo, "memory", "recall", "headers parse").out
    line = next(x for x in out.splitlines() if x.startswith(key))
    assert " · stale  " in line  # after the date, before the title
    result = omh(repo, "memory", "recall", "headers parse", "--json").json()["results"][0]
    assert result["stale"].startswith("src/app.py changed")


def test_lint_refuses_an_unevaluatable_trigger_in_a_hand_written_note(repo: Path) -> None:
    notes = repo / ".omh/notes"
    notes.mkdir(parents=True)
    (notes / "a.md").write_text("---\nkey: a\ntype: topic\nsource: t\nrecorded: 2026-11-01\n"
                                "invalidated_by: file:src/app.py\n---\n\n# A\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a note with an unpinned trigger")
    run = omh(repo, "memory", "lint", "--ref", "HEAD")
    assert run.code == 1 and "UnevaluatableTrigger" in run.out


def test_one_tree_walk_per_run_whatever_the_number_of_notes(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import omh_git_memory.expiry.stale as stale_module
    from omh_git_memory.expiry.stale import check

    for i in range(12):
        remembered(repo, f"Note {i} about app.",
                   trigger="file:src/app.py" if i % 3 else "image:current")
        remembered(repo, f"Symbol note {i}.", trigger=f"symbol:name_{i}")
    ws = open_workspace(repo)
    docs = ws.searcher().docs
    walks: list[int] = []
    reads: list[str] = []
    real_walk, real_read = stale_module.list_tree, stale_module.read_blob
    monkeypatch.setattr(stale_module, "list_tree",
                        lambda *a: walks.append(1) or real_walk(*a))
    monkeypatch.setattr(stale_module, "read_blob",
                        lambda r, b, *rest: reads.append(b) or real_read(r, b, *rest))
    report = check(docs, ws.facts())
    assert report.checked == 24
    assert len(walks) == 1
    assert len(reads) == 1  # src/app.py, read once for all twelve symbols
