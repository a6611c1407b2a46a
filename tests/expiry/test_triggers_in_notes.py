"""Holes the mutation pass found in `invalidated_by` triggers: the shapes
lint refuses, what the write path pins, qualified symbols, and that a trigger omh
cannot tell about is never shown as stale.

Found by mutation testing (the holes docs/records/mutation-holes.md lists);
was tests/test_holes_triggers.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers import git, make_repo, omh
from tests.helpers.notes import remember

SOURCES = {
    "src/app.py": "def parse_header(x):\n    return x\n",
    "src/lib.rs": "struct Reader;\nimpl Reader {\n    fn parse(&self) {}\n}\n",
    "README.md": "# App\n",
}
HEX = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "app"
    make_repo(path, SOURCES)
    assert omh(path, "init").code == 0
    return path


def _store(repo: Path) -> Path:
    return Path(omh(repo, "memory", "--json").json()["local_store"])


def _hand_note(repo: Path, key: str, trigger: str) -> None:
    text = (f"---\nkey: {key}\ntype: topic\nsource: t\nrecorded: 2026-11-01\n"
            f"invalidated_by: {trigger}\n---\n\n# {key}\n\nAbout parse headers.\n")
    (_store(repo) / f"{key}.md").write_text(text, encoding="utf-8")


def _lint_triggers(repo: Path) -> list[tuple[str, str, str]]:
    run = omh(repo, "memory", "lint", "--json")
    rows = [(f["key"], f["severity"], f["message"]) for f in run.json()["findings"]
            if f["rule"] == "UnevaluatableTrigger"]
    assert run.code == (1 if rows else 0), run.out
    return rows


def _stale(repo: Path) -> dict[str, Any]:
    data: dict[str, Any] = omh(repo, "memory", "stale", "--json").json()
    return data


def _local_keys(repo: Path) -> set[str]:
    return {n["key"] for n in omh(repo, "memory", "--json").json()["notes"]
            if n["layer"] == "local"}


# --- file: paths are relative, with `/` ------------------------------------------


@pytest.mark.parametrize("path", ["/etc/passwd", "/src/app.py", "src\\app.py", "C:\\app.py",
                                  "./src/app.py", "src//app.py", "src/../src/app.py"])
def test_a_file_trigger_outside_the_tree_shape_is_refused_by_lint(repo: Path, path: str) -> None:
    _hand_note(repo, "odd-path", f"file:{path}@{HEX}")
    [(key, severity, message)] = _lint_triggers(repo)
    assert (key, severity) == ("odd-path", "refused")
    assert "path" in message
    # and `stale` cannot tell about it: never "stale", never "fresh"
    report = _stale(repo)
    assert [f["key"] for f in report["unknown"]] == ["odd-path"] and report["stale"] == []


def test_a_backslash_path_is_refused_even_when_git_holds_such_a_file(repo: Path) -> None:
    # Git on Linux can hold a file named `src\app.py`; a trigger names paths with `/`.
    (repo / "src\\app.py").write_text("x = 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a file whose name holds a backslash")
    run = remember(repo, "Backslashes are odd.", "--json", trigger="file:src\\app.py")
    assert run.code == 1 and "relative to the repository root" in run.err, run.err
    assert _local_keys(repo) == set()


@pytest.mark.parametrize("trigger", ["file:/etc/passwd", "file:/src/app.py"])
def test_an_absolute_file_trigger_is_refused_at_write(repo: Path, trigger: str) -> None:
    run = remember(repo, "Absolute paths are odd.", "--json", trigger=trigger)
    assert run.code == 1 and "relative to the repository root" in run.err, run.err
    assert _local_keys(repo) == set()


# --- file:<path> without a blob id is a writer's shorthand, not a stored trigger --


@pytest.mark.parametrize("trigger", ["file:src/app.py", "file:src/app.py@"])
def test_a_stored_file_trigger_without_a_blob_id_fails_lint(repo: Path, trigger: str) -> None:
    _hand_note(repo, "unpinned", trigger)
    [(key, severity, message)] = _lint_triggers(repo)
    assert (key, severity) == ("unpinned", "refused")
    assert "names no blob id" in message
    report = _stale(repo)  # neither fresh nor stale: cannot tell
    assert [f["key"] for f in report["unknown"]] == ["unpinned"] and report["stale"] == []


def test_a_pinned_file_trigger_passes_lint(repo: Path) -> None:
    blob = git(repo, "rev-parse", "HEAD:src/app.py").strip()
    _hand_note(repo, "pinned", f"file:src/app.py@{blob}")
    assert _lint_triggers(repo) == []
    assert _stale(repo)["checked"] == 1 and _stale(repo)["stale"] == []


# --- an explicit blob id is checked, never re-pinned -------------------------------


def test_a_blob_id_that_is_not_heads_is_refused_not_re_pinned(repo: Path) -> None:
    blob = git(repo, "rev-parse", "HEAD:src/app.py").strip()
    wrong = "0000000" if not blob.startswith("0000000") else "1111111"
    run = remember(repo, "Headers parse lazily.", "--json", trigger=f"file:src/app.py@{wrong}")
    assert run.code == 1, run.out
    assert f"not {wrong}" in run.err and "write file:src/app.py to pin HEAD's" in run.err
    assert _local_keys(repo) == set()


def test_a_blob_id_prefix_that_is_heads_is_pinned_in_full(repo: Path) -> None:
    blob = git(repo, "rev-parse", "HEAD:src/app.py").strip()
    run = remember(repo, "Headers parse lazily.", "--json", trigger=f"file:src/app.py@{blob[:9]}")
    assert run.code == 0, run.err
    written = (_store(repo) / f"{run.json()['key']}.md").read_text()
    assert f"invalidated_by: file:src/app.py@{blob}\n" in written


def test_update_refuses_a_blob_id_that_is_not_heads(repo: Path) -> None:
    key = remember(repo, "Headers parse lazily.", "--json", trigger="base:2026-09").json()["key"]
    path = _store(repo) / f"{key}.md"
    before = path.read_bytes()
    run = omh(repo, "memory", "update", key, "--invalidated-by", "file:src/app.py@abcdef0")
    assert run.code == 1 and "not abcdef0" in run.err, run.err
    assert path.read_bytes() == before


# --- qualified symbols -------------------------------------------------------------


@pytest.mark.parametrize("symbol", ["app.parse_header", "src.app.parse_header",
                                    "Reader::parse", "crate::Reader::parse", "parse_header"])
def test_a_qualified_symbol_is_fresh_while_its_last_name_is_defined(
    repo: Path, symbol: str
) -> None:
    assert remember(repo, "Symbols are found.", "--json", trigger=f"symbol:{symbol}").code == 0
    report = _stale(repo)
    assert (report["checked"], report["stale"], report["unknown"]) == (1, [], [])


def test_qualified_symbols_go_stale_when_their_definition_goes(repo: Path) -> None:
    for observed, symbol in (("Dotted.", "app.parse_header"), ("Colons.", "Reader::parse")):
        assert remember(repo, observed, "--json", trigger=f"symbol:{symbol}").code == 0
    (repo / "src/app.py").write_text("def other(x):\n    return parse_header(x)\n")
    (repo / "src/lib.rs").write_text("struct Reader;\nfn main() { Reader.parse(); }\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "definitions gone, calls left")
    reasons = {f["trigger"]: f["reason"] for f in _stale(repo)["stale"]}
    assert reasons == {"symbol:app.parse_header": "no definition of app.parse_header is left "
                       "in HEAD", "symbol:Reader::parse": "no definition of Reader::parse is "
                       "left in HEAD"}


def test_two_symbols_with_one_last_name_are_each_fresh(repo: Path) -> None:
    # `a.parse` and `b::parse` both look for `parse`; neither may hide the other.
    for observed, symbol in (("Plain.", "parse"), ("Dotted.", "Reader.parse"),
                             ("Colons.", "Reader::parse")):
        assert remember(repo, observed, "--json", trigger=f"symbol:{symbol}").code == 0
    report = _stale(repo)
    assert (report["checked"], report["stale"], report["unknown"]) == (3, [], [])


@pytest.mark.parametrize("symbol", ["a.", "a::", "a..b", "::a", ".a", "a:::b", "a:b", "a.1b"])
def test_a_symbol_with_an_empty_or_bad_segment_is_refused(repo: Path, symbol: str) -> None:
    run = remember(repo, "Odd symbols.", "--json", trigger=f"symbol:{symbol}")
    assert run.code == 1 and "not an identifier" in run.err, run.err
    _hand_note(repo, "odd-symbol", f"symbol:{symbol}")
    [(key, severity, _)] = _lint_triggers(repo)
    assert (key, severity) == ("odd-symbol", "refused")


# --- "cannot tell" is not "stale" ------------------------------------------------


def _recall(repo: Path, question: str) -> tuple[str, list[dict[str, Any]]]:
    text = omh(repo, "memory", "recall", question)
    data = omh(repo, "memory", "recall", question, "--json")
    assert text.code == 0 and data.code == 0, text.err + data.err
    return text.out, [d for r in data.json()["results"] for d in (r, *r["neighbours"])]


def test_recall_does_not_mark_a_note_omh_cannot_tell_about(repo: Path) -> None:
    # No base month configured: base: cannot tell. A hand-written unpinned file
    # trigger: cannot tell. Neither is stale, so recall marks neither.
    assert remember(repo, "Headers parse on base images.", "--json",
                    trigger="base:2026-09").code == 0
    _hand_note(repo, "unpinned", "file:src/app.py")
    assert {f["key"] for f in _stale(repo)["unknown"]} == {
        "surprise/headers-parse-on-base-images", "unpinned"}
    text, shown = _recall(repo, "parse headers")
    assert {d["key"] for d in shown} >= {"surprise/headers-parse-on-base-images", "unpinned"}
    assert all(d["stale"] is None for d in shown), shown
    assert "· stale" not in text and "stale:" not in text


def test_recall_without_a_known_language_cannot_tell_a_symbol(tmp_path: Path) -> None:
    bare = tmp_path / "bare"
    make_repo(bare, {"README.md": "# Notes only\n"})
    assert omh(bare, "init").code == 0
    assert remember(bare, "Parse headers lazily.", "--json",
                    trigger="symbol:parse_header").code == 0
    assert [f["key"] for f in _stale(bare)["unknown"]] == ["surprise/parse-headers-lazily"]
    text, shown = _recall(bare, "parse headers")
    assert [d["stale"] for d in shown if d["layer"] == "local"] == [None]
    assert "· stale" not in text


def test_recall_marks_a_fired_trigger_beside_one_it_cannot_tell(repo: Path) -> None:
    assert remember(repo, "Headers parse on base images.", "--json",
                    trigger="base:2026-09").code == 0
    fired = remember(repo, "Headers parse lazily.", "--json",
                     trigger="symbol:parse_header").json()["key"]
    (repo / "src/app.py").write_text("x = 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "parse_header gone")
    text, shown = _recall(repo, "headers parse")
    marks = {d["key"]: d["stale"] for d in shown if d["layer"] == "local"}
    assert marks == {fired: "no definition of parse_header is left in HEAD",
                     "surprise/headers-parse-on-base-images": None}
    stale_lines = [line for line in text.splitlines() if "· stale" in line]
    assert len(stale_lines) == 1 and stale_lines[0].startswith(fired)


def test_symbols_sharing_a_last_name_are_answered_in_one_pass(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import omh_git_memory.expiry.stale as stale_module
    from omh_git_memory.actions.workspace import open_workspace
    from omh_git_memory.expiry.stale import check

    for observed, symbol in (("Plain.", "parse"), ("Dotted.", "Reader.parse"),
                             ("Colons.", "Reader::parse"), ("Gone.", "Reader::unparse")):
        assert remember(repo, observed, "--json", trigger=f"symbol:{symbol}").code == 0
    ws = open_workspace(repo)
    reads: list[str] = []
    real_read = stale_module.read_blob
    monkeypatch.setattr(stale_module, "read_blob",
                        lambda r, b, *rest: reads.append(b) or real_read(r, b, *rest))
    report = check(ws.searcher().docs, ws.facts())
    assert report.checked == 4
    assert [f.trigger for f in report.stale] == ["symbol:Reader::unparse"]
    assert sorted(reads) == sorted(set(reads)) and len(reads) == 2  # app.py and lib.rs, once
