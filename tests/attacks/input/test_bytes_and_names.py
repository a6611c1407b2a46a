"""The first hostile review (docs/records/review-issue-11.md), the input edges: bytes
a note may hold, characters a key may hold, names printed from a tree or a disk,
command-line bytes that are not UTF-8, and JSON-RPC requests the MCP SDK cannot
read. Test names start with their class
(escape, wrong, hang, property) so `bench/reliability_report.py` can count them.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from omh_git_memory.actions.lint import lint
from omh_git_memory.actions.remember import Observation, TeamKeys, remember
from omh_git_memory.model.errors import InvalidKey, NoteParseError, OmhError
from omh_git_memory.model.keys import DEFAULT_KEY_TEMPLATES, Key, slug
from omh_git_memory.model.layers import Layer
from omh_git_memory.model.note import compose, render
from omh_git_memory.stores.graph import Graph
from omh_git_memory.stores.reading import read_note_bytes
from omh_git_memory.stores.store import CACHE_FILES, LocalStore
from tests.helpers import git, note_text, omh

SETTINGS = settings(max_examples=300, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])

# Characters no key may hold: bidi controls and isolates, zero widths, the BOM,
# a soft hyphen, line and paragraph separators, a C1 control, private use, a
# noncharacter, a variation selector, a Hangul filler, a tag, a lone surrogate.
INVISIBLE = ["\u202e", "\u202a", "\u2066", "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff",
             "\u00ad", "\u061c", "\u2028", "\u2029", "\u0085", "\ue000", "\ufdd0", "\uffff",
             "\ufe0f", "\u3164", "\U000e0041", "\ud800"]


def _store_files(root: Path) -> list[str]:
    """Every file under `root`, temporary ones included (not the store's own records:
    whose store it is, and which notes the MCP server wrote; nor the lock file every
    writer takes, nor the caches every reader keeps)."""
    if not root.exists():
        return []
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")
                  if p.is_file() and p.name not in (".omh-store", ".omh-lock", *CACHE_FILES)
                  and not (p.parent.name == ".omh-agent" and not p.name.startswith(".")))


def _local_root(repo: Path) -> Path:
    listed = omh(repo, "memory", "--json")
    assert listed.code == 0, listed.err
    return Path(listed.json()["local_store"])


# --- escape: look-alike keys (item 5) ----------------------------------------------

@pytest.mark.parametrize("char", INVISIBLE, ids=[f"U+{ord(c):04X}" for c in INVISIBLE])
def test_escape_no_key_holds_an_invisible_or_control_character(char: str) -> None:
    with pytest.raises(InvalidKey, match=f"U\\+{ord(char):04X}"):
        Key(f"surprise/pay{char}ment")


@pytest.mark.parametrize("char", [c for c in INVISIBLE if c not in "\u2028\u2029\u0085"])
def test_escape_a_slug_drops_what_draws_nothing(char: str) -> None:
    # Invisible characters vanish (as NFKC_Casefold drops default ignorables), so a
    # look-alike spelling derives the same key; whatever a slug keeps is a valid key.
    derived = slug(f"Pay{char}ment fails")
    assert all(c.isalnum() or c == "-" for c in derived)
    Key(derived)
    if char not in "\ue000\ufdd0\uffff\ud800\u202e\u202a\u2066":
        assert derived == "payment-fails"


def test_escape_a_look_alike_key_on_disk_is_a_lint_finding(repo_dir: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    (store / "surprise").mkdir(parents=True)
    sneaky = "surprise/pay\u202ement"
    (store / f"{sneaky}.md").write_text(note_text(sneaky))
    env = {"OMH_LOCAL_STORE": str(store)}
    run = omh(repo_dir, "memory", "lint", "--json", env=env)
    assert run.code == 1, run.out
    findings = run.json()["findings"]
    assert any(f["rule"] == "Unreadable" and "U+202E" in f["message"] for f in findings)


def test_escape_a_look_alike_key_in_a_committed_tree_fails_lint(repo_dir: Path) -> None:
    notes = repo_dir / ".omh/notes"
    notes.mkdir(parents=True)
    sneaky = "deploy\u200b"
    (notes / f"{sneaky}.md").write_text(note_text(sneaky))
    git(repo_dir, "add", "-A")
    git(repo_dir, "commit", "-qm", "a note with a zero width")
    run = omh(repo_dir, "memory", "lint", "--ref", "HEAD", "--json")
    assert run.code == 1, run.out
    assert any("U+200B" in f["message"] for f in run.json()["findings"])


def test_escape_relates_to_a_look_alike_key_is_refused(repo_dir: Path) -> None:
    run = omh(repo_dir, "memory", "remember", "--expected", "e", "--observed", "Odd thing.",
              "--evidence", "v", "--answers", "q", "--relates-to", "deploy\u2066x")
    assert run.code == 1 and "U+2066" in run.err, run.err
    assert _store_files(_local_root(repo_dir)) == []


def test_escape_a_template_with_a_bidi_control_is_refused(repo_dir: Path) -> None:
    (repo_dir / ".omh").mkdir()
    (repo_dir / ".omh/memory.toml").write_text('[keys]\nsurprise = "surprise/\u202e{{slug}}"\n')
    run = omh(repo_dir, "memory", "remember", "--expected", "e", "--observed", "Odd thing.",
              "--evidence", "v", "--answers", "q")
    assert run.code == 1 and "U+202E" in run.err, run.err
    assert _store_files(_local_root(repo_dir)) == []


# --- escape: names printed from a tree or a disk (item 13) -------------------------

FORGING = ["x\nok: nothing to see.md", "clear\x1b[2J\x1b[H.md", "rtl\u202edm.md", "cr\rfake.md"]


def _assert_no_forgery(text: str) -> None:
    for bad in ("\x1b", "\u202e", "\r"):
        assert bad not in text, repr(text)
    assert not any(line.startswith("ok: ") for line in text.splitlines()), text


def test_escape_lint_of_a_tree_prints_entry_names_escaped(repo_dir: Path) -> None:
    notes = repo_dir / ".omh/notes"
    notes.mkdir(parents=True)
    for name in FORGING:
        (notes / name).write_text("not a note\n")
    git(repo_dir, "add", "-A")
    git(repo_dir, "commit", "-qm", "names that forge a log")
    for args in (("--ref", "HEAD"), ("--worktree",), ()):
        run = omh(repo_dir, "memory", "lint", *args)
        assert run.code == 1
        _assert_no_forgery(run.out + run.err)
        assert "x\\nok: nothing to see.md" in run.out
        assert "clear\\x1b[2J" in run.out


def test_escape_list_recall_and_json_print_store_names_escaped(
    repo_dir: Path, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    store.mkdir()
    for name in FORGING:
        (store / name).write_text("not a note\n")
    env = {"OMH_LOCAL_STORE": str(store)}
    listed = omh(repo_dir, "memory", env=env)
    assert listed.code == 0, listed.err
    _assert_no_forgery(listed.out + listed.err)
    assert sum("unreadable:" in line for line in listed.out.splitlines()) == len(FORGING)
    as_json = omh(repo_dir, "memory", "lint", "--json", env=env)
    _assert_no_forgery(as_json.out)
    paths = {f["path"] for f in as_json.json()["findings"]}
    assert {str(store / name) for name in FORGING} <= paths  # the data stays exact
    found = omh(repo_dir, "memory", "recall", "nothing", env=env)
    _assert_no_forgery(found.out + found.err)


def test_escape_a_derived_note_never_holds_a_raw_tree_name(repo_dir: Path) -> None:
    (repo_dir / "docs").mkdir()
    (repo_dir / "docs/x\nok: forged\x1b[2J.md").write_text("# Forge title\n\n## Deploy steps\n")
    (repo_dir / "build\nok: forged.sh").write_text("true\n")
    git(repo_dir, "add", "-A")
    git(repo_dir, "commit", "-qm", "names that forge a note")
    topic = omh(repo_dir, "memory", "show", "repo")
    assert topic.code == 0, topic.err
    _assert_no_forgery(topic.out)
    assert "build\\nok: forged.sh" in topic.out
    stub = omh(repo_dir, "memory", "show", "docs/x-ok-forged-2j")  # derived, not dropped
    assert stub.code == 0, stub.err
    _assert_no_forgery(stub.out)


def test_escape_an_error_naming_a_key_stays_one_line(repo_dir: Path) -> None:
    run = omh(repo_dir, "memory", "show", "a\nomh: forged\x1b[31m")
    assert run.code == 1
    assert run.err.count("\n") == 1 and "\x1b" not in run.err, run.err


# --- wrong: remember writes only what omh reads back (item 10) ---------------------

def _remember(store: LocalStore, **values: object) -> object:
    base: dict[str, object] = {"expected": "e", "observed": "Something odd.", "evidence": "v",
                               "answers": ["q"]}
    obs = Observation(**{**base, **values})  # type: ignore[arg-type]
    return remember(store, obs, DEFAULT_KEY_TEMPLATES, today=dt.date(2026, 11, 1),
                    team=TeamKeys({}, {}))


def _assert_reads_back_clean(root: Path) -> None:
    entries = LocalStore(root).scan()
    assert entries and all(e.note is not None for e in entries), [e.problem for e in entries]
    report = lint(Graph.of(entries))
    assert not report.refused, report.findings
    assert not [f for f in _store_files(root) if "/." in "/" + f], _store_files(root)


@pytest.mark.parametrize("value", ["a\x00b", "a\x1bb", "a\x07b", "a\x7fb", "a\x85b",
                                   "a\ud800b", "\udcff"])
@pytest.mark.parametrize("field", ["expected", "observed", "evidence", "source", "answers"])
def test_wrong_remember_refuses_a_character_the_reader_refuses(
    tmp_path: Path, field: str, value: str
) -> None:
    store = LocalStore(tmp_path / "store")
    given_value: object = [value] if field == "answers" else value
    with pytest.raises(OmhError, match=f"`{field}`"):
        _remember(store, **{field: given_value})
    assert _store_files(tmp_path / "store") == []


@pytest.mark.parametrize("value", ["line one\r\nline two", "a\rb", "tab\there"])
def test_wrong_remember_writes_line_ends_as_lf_and_reads_back(tmp_path: Path, value: str) -> None:
    store = LocalStore(tmp_path / "store")
    _remember(store, evidence=value)
    _assert_reads_back_clean(tmp_path / "store")
    assert b"\r" not in next((tmp_path / "store").rglob("*.md")).read_bytes()


def test_wrong_a_note_over_the_read_limit_is_refused_and_leaves_nothing(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "store")
    with pytest.raises(OmhError, match="at most"):
        _remember(store, evidence="log line\n" * 130_000)
    with pytest.raises(OmhError, match="at most"):
        _remember(store, answers=[f"question {i} " + "x" * 100_000 for i in range(11)])
    assert _store_files(tmp_path / "store") == []


def test_wrong_remember_on_the_command_line_refuses_or_reads_back(repo_dir: Path) -> None:
    cases = {"a\x1b[31mred": 1, "a\x01b": 1, "crlf\r\nend": 0, "cr\rend": 0}
    for i, (value, code) in enumerate(cases.items()):
        run = omh(repo_dir, "memory", "remember", "--expected", "e", "--observed",
                  f"Case number {i}.", "--evidence", value, "--answers", "q")
        assert run.code == code, (value, run.err)
        assert "Traceback" not in run.err
    big = ["--answers", "y" * 120_000] * 9
    run = omh(repo_dir, "memory", "remember", "--expected", "e", "--observed", "Big one.",
              "--evidence", "v", *big)
    assert run.code == 1 and "at most" in run.err, run.err
    root = _local_root(repo_dir)
    assert sorted(_store_files(root)) == ["surprise/case-number-2.md", "surprise/case-number-3.md"]
    linted = omh(repo_dir, "memory", "lint")
    assert linted.code == 0, linted.out


# --- property: whatever remember accepts reads back and lints clean ----------------

anything = st.text(st.characters(codec=None), max_size=80) | st.text(
    st.sampled_from("ab .\n\r\t\x00\x01\x1b\x7f\x85\u2028\u202e\u200b\ud800#`-[]"), max_size=30)


@SETTINGS
@given(expected=anything, observed=anything, evidence=anything, source=anything,
       answers=st.lists(anything, max_size=3))
def test_property_remember_accepts_only_what_reads_back(
    tmp_path_factory: pytest.TempPathFactory, expected: str, observed: str, evidence: str,
    source: str, answers: list[str],
) -> None:
    root = tmp_path_factory.mktemp("store")
    try:
        _remember(LocalStore(root), expected=expected, observed=observed, evidence=evidence,
                  source=source, answers=answers)
    except OmhError:
        assert _store_files(root) == []  # a refusal leaves nothing behind
        return
    _assert_reads_back_clean(root)


@SETTINGS
@given(title=anything, prose=anything, field_value=anything,
       items=st.lists(anything, min_size=1, max_size=3))
def test_property_compose_makes_only_notes_the_reader_reads(
    title: str, prose: str, field_value: str, items: list[str]
) -> None:
    fields = [("key", "k"), ("type", "topic"), ("source", field_value or "s"),
              ("recorded", "2026-11-01")]
    try:
        note = compose(fields, title, [("Notes", prose), ("Related", items)])
    except NoteParseError:
        return
    text = render(note)
    stored = read_note_bytes(Layer.LOCAL, "k.md", "k.md", text.encode("utf-8"))
    assert stored.note == note, stored.problem


# --- hang: a command line that is not UTF-8 (item 17) ------------------------------

def _omh_bytes(cwd: Path, *args: bytes) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable.encode(), b"-m", b"omh_git_memory", *args], cwd=cwd,
                          capture_output=True, check=False, timeout=120)


REMEMBER = [b"memory", b"remember", b"--expected", b"e", b"--observed", b"Odd thing.",
            b"--evidence", b"v", b"--answers", b"q"]
NOT_UTF8 = {
    "remember-observed": [*REMEMBER, b"--observed", b"\xff bad title."],
    "remember-expected": [*REMEMBER, b"--expected", b"caf\xe9"],
    "remember-evidence": [*REMEMBER, b"--evidence", b"\xc3"],
    "remember-answers": [*REMEMBER, b"--answers", b"why \xfe?"],
    "remember-source": [*REMEMBER, b"--source", b"\x80"],
    "remember-relates-to": [*REMEMBER, b"--relates-to", b"a\xff"],
    "remember-invalidated-by": [*REMEMBER, b"--invalidated-by", b"symbol:\xff"],
    "remember-recorded": [*REMEMBER, b"--recorded", b"2026-\xff"],
    "recall": [b"memory", b"recall", b"\xff\xfe"],
    "recall-also": [b"memory", b"recall", b"x", b"--also", b"\xff"],
    "show": [b"memory", b"show", b"a\xff"],
    "rm": [b"memory", b"rm", b"a\xff"],
    "promote": [b"memory", b"promote", b"a\xff"],
    "lint-ref": [b"memory", b"lint", b"--ref", b"\xff"],
    "mcp-config": [b"mcp", b"config", b"\xff"],
}


@pytest.mark.parametrize("name", sorted(NOT_UTF8))
def test_hang_an_argument_that_is_not_utf8_is_one_line_and_leaves_nothing(
    repo_dir: Path, name: str
) -> None:
    root = _local_root(repo_dir)
    before = _store_files(root)
    done = _omh_bytes(repo_dir, *NOT_UTF8[name])
    err = done.stderr.decode("utf-8", "replace")
    assert done.returncode == 2, (done.returncode, err)
    assert err.startswith("omh: ") and err.count("\n") == 1 and "not valid UTF-8" in err, err
    assert _store_files(root) == before
    assert git(repo_dir, "status", "--porcelain") == ""


# --- hang: every MCP request gets an answer (item 18) ------------------------------

def _raw_session(repo: Path, lines: list[str], last_id: int,
                 env: dict[str, str] | None = None) -> list[dict[str, object]]:
    """Raw lines to a real `omh mcp serve`; the replies up to the one with `last_id`.
    The read is bounded: a server that never answers fails the test, not the suite."""
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}}
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    proc = subprocess.Popen([sys.executable, "-m", "omh_git_memory", "mcp", "serve"], cwd=repo,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env={**os.environ, **(env or {})})
    assert proc.stdin is not None and proc.stdout is not None
    replies: list[dict[str, object]] = []
    timer = threading.Timer(60, proc.kill)
    timer.start()
    try:
        for raw in [json.dumps(init), json.dumps(initialized), *lines]:
            proc.stdin.write(raw.encode("utf-8", "surrogatepass") + b"\n")
            proc.stdin.flush()
        for out in proc.stdout:
            reply = json.loads(out)
            replies.append(reply)
            if reply.get("id") == last_id:
                break
    finally:
        timer.cancel()
        proc.kill()
        proc.wait()
        proc.stdin.close()
        proc.stdout.close()
    return replies


def _call(request_id: object, name: str, arguments: str) -> str:
    return (f'{{"jsonrpc":"2.0","id":{json.dumps(request_id)},"method":"tools/call",'
            f'"params":{{"name":"{name}","arguments":{arguments}}}}}')


def test_hang_mcp_every_request_gets_an_answer(repo_dir: Path) -> None:
    huge = int("9" * 400)
    lines = [
        _call(1, "recall", '{"question":"\\ud800"}'),
        _call(2, "recall", '{"q\\udfff":"x"}'),
        _call("three", "remember", '{"expected":"e\\udc00","observed":"O.","evidence":"v",'
                                   '"answers":["q"]}'),
        _call(4, "recall\\ud800", '{"question":"x"}'),
        f'{{"jsonrpc":"2.0","id":{huge},"method":"tools/list"}}',
        '{"jsonrpc":"2.0","id":{"an":"object"},"method":"tools/list"}',
        '{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}',
        '{"jsonrpc":"2.0","id":' + "9" * 5000 + ',"method":"tools/list"}',
        "[1, 2, 3]",
        "{not json",
        _call(9, "recall", '{"question":"test repo"}'),
    ]
    replies = _raw_session(repo_dir, lines, last_id=9)
    by_id = {json.dumps(r.get("id")): r for r in replies}
    for request_id in (1, 2, "three", 4):
        assert "error" in by_id[json.dumps(request_id)], (request_id, replies)
    assert "result" in by_id[json.dumps(huge)]
    nulls = [r for r in replies if r.get("id") is None]
    assert len(nulls) == 5, replies  # object id, float id, unreadable number, array, not JSON
    assert all("error" in r for r in nulls)
    assert not by_id["9"]["result"]["isError"]  # type: ignore[index]
    assert _store_files(_local_root(repo_dir)) == []


def test_wrong_mcp_remember_with_a_control_character_is_refused(repo_dir: Path) -> None:
    replies = _raw_session(repo_dir, [
        _call(1, "remember", '{"expected":"e\\u001b[2J","observed":"Odd.","evidence":"v",'
                             '"answers":["q"]}'),
        _call(2, "remember", '{"expected":"e\\r\\nf","observed":"Fine.","evidence":"v",'
                             '"answers":["q"]}'),
    ], last_id=2)
    by_id = {r.get("id"): r for r in replies}
    assert by_id[1]["result"]["isError"], by_id[1]  # type: ignore[index]
    assert not by_id[2]["result"]["isError"], by_id[2]  # type: ignore[index]
    assert _store_files(_local_root(repo_dir)) == ["surprise/fine.md"]
    assert omh(repo_dir, "memory", "lint").code == 0


def test_wrong_mcp_a_megabyte_client_name_still_writes_a_readable_note(repo_dir: Path) -> None:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client
    from mcp.types import Implementation

    name = "evil\n\x1b[2J\u202e" + "n" * 1_000_000

    async def run() -> object:
        params = StdioServerParameters(command=sys.executable,
                                       args=["-m", "omh_git_memory", "mcp", "serve"],
                                       cwd=str(repo_dir),
                                       env={**os.environ, "OMH_SESSION": "s\x01\n1"})
        async with stdio_client(params) as (r, w), ClientSession(
            r, w, client_info=Implementation(name=name, version="1\r\n2")
        ) as session:
            await session.initialize()
            return await session.call_tool("remember", {
                "expected": "e", "observed": "Hostile client.", "evidence": "v",
                "answers": ["q"]})

    result = asyncio.run(asyncio.wait_for(run(), 120))
    assert not result.is_error, result  # type: ignore[attr-defined]
    root = _local_root(repo_dir)
    text = (root / "surprise/hostile-client.md").read_text()
    source = next(line for line in text.splitlines() if line.startswith("source:"))
    assert len(source) < 300 and source.startswith("source: session s??1, evil??[2J?nnn")
    assert source.endswith("… 1??2")
    assert omh(repo_dir, "memory", "lint").code == 0
    found = omh(repo_dir, "memory", "recall", "hostile client", "--json")
    assert found.json()["results"][0]["key"] == "surprise/hostile-client"
