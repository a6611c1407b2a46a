"""The standing adversarial suite: bad input, races and crashes lose nothing and
let nothing escape. Test names start with their category (property, badinput,
race, crash, mcp, secret) so `bench/reliability_report.py` can count them.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import shutil
import signal
import subprocess
import sys
import threading
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from omh_git_memory.actions.workspace import open_workspace
from omh_git_memory.model.errors import InvalidKey, NoteParseError, OmhError
from omh_git_memory.model.faults import POINTS
from omh_git_memory.model.keys import Key, KeyTemplates, slug
from omh_git_memory.model.note import compose, parse, render
from omh_git_memory.model.secret_scan import find_secrets
from omh_git_memory.recall.floor import recall
from omh_git_memory.stores.store import IfExists, LocalStore
from tests.helpers import FIXTURES, git, note_text, omh

EXAMPLES = settings(max_examples=300, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])

# --- property ----------------------------------------------------------------

line = st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=60)
paragraph = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\x00"),
                    min_size=1, max_size=300)


@EXAMPLES
@given(
    title=line,
    source=line,
    extra=st.lists(st.tuples(st.from_regex(r"[a-z][a-z0-9_-]{0,10}", fullmatch=True), line),
                   max_size=3, unique_by=lambda t: t[0]),
    prose=paragraph,
    items=st.lists(line, min_size=1, max_size=5),
)
def test_property_compose_render_parse_round_trips(title, source, extra, prose, items) -> None:
    fields = [("key", "k"), ("type", "topic"), ("source", source), ("recorded", "2026-11-01"),
              *[(n, v) for n, v in extra if n not in ("key", "type", "source", "recorded")]]
    try:
        note = compose(fields, title, [("Notes", prose), ("Related", items)])
    except NoteParseError:
        return  # refused by name: a value that would change the structure
    text = render(note)
    assert render(parse(text)) == text
    assert parse(text) == note


words_st = st.lists(st.from_regex(r"[A-Za-zÀ-ÿ0-9]{1,8}", fullmatch=True), min_size=1,
                    max_size=6)
separators = st.sampled_from([" ", "  ", "\t", "-", " -- ", ", ", "_", ". ", " / ", "…"])


@EXAMPLES
@given(words=words_st, sep=separators, form=st.sampled_from(["NFC", "NFD", "NFKC", "NFKD"]),
       case=st.sampled_from([str.lower, str.upper, str.title, lambda s: s]))
def test_property_slug_is_canonical_over_spelling_variants(words, sep, form, case) -> None:
    plain = " ".join(words)
    variant = unicodedata.normalize(form, case(sep.join(words)))
    assert slug(variant) == slug(plain)


@EXAMPLES
@given(st.text(max_size=80))
def test_property_no_key_resolves_outside_the_store(raw: str) -> None:
    root = Path("/store/root")
    try:
        key = Key(raw)
    except InvalidKey:
        return
    target = Path(os.path.normpath(root / key.relpath()))
    assert target.is_relative_to(root)
    assert ".." not in key.segments


@EXAMPLES
@given(prefix=st.text(max_size=20), suffix=st.text(max_size=20), value=st.text(max_size=40))
def test_property_no_template_output_resolves_outside_the_store(prefix, suffix, value) -> None:
    try:
        key = KeyTemplates({"surprise": prefix + "{{slug}}" + suffix}).expand(
            "surprise", slug=slug(value) or "x")
    except OmhError:
        return
    target = Path(os.path.normpath(Path("/store") / key.relpath()))
    assert target.is_relative_to(Path("/store"))


# --- badinput ----------------------------------------------------------------

BAD = {
    "invalid-utf8.md": ("Unreadable", "not valid UTF-8"),
    "bom.md": ("Unreadable", "byte-order mark"),
    "crlf.md": ("Unreadable", "CR line endings"),
    "nul.md": ("Unreadable", "NUL"),
    "never-closes.md": ("Unreadable", "never closes"),
    "unclosed-fence.md": ("UnclosedFence", "never closes"),
    "dotdot-key.md": ("Unreadable", "not a usable key"),
}


def _store_with(repo: Path, name: str, data: bytes | None) -> Path:
    store = repo.parent / "store"
    store.mkdir(exist_ok=True)
    (store / "good.md").write_text(note_text("good", body="Sockets and ports.\n"))
    if data is not None:
        (store / name).write_bytes(data)
    return store


def _assert_good_note_unaffected(repo: Path, env: dict[str, str]) -> None:
    listed = omh(repo, "memory", "--json", env=env)
    assert listed.code == 0, listed.err
    assert "good" in {n["key"] for n in listed.json()["notes"]}
    found = omh(repo, "memory", "recall", "sockets", "--json", env=env)
    assert found.code == 0 and found.json()["results"][0]["key"] == "good"


@pytest.mark.parametrize("name", sorted(BAD))
def test_badinput_corpus_is_refused_by_name(repo_dir: Path, name: str) -> None:
    rule, words = BAD[name]
    store = _store_with(repo_dir, name, (FIXTURES / "bad-input" / name).read_bytes())
    env = {"OMH_LOCAL_STORE": str(store)}
    run = omh(repo_dir, "memory", "lint", "--json", env=env)
    assert run.code == 1, run.err  # refused, not crashed (a crash exits 3)
    findings = [f for f in run.json()["findings"] if f["path"].endswith(name)]
    assert any(f["rule"] == rule and words in f["message"] for f in findings), findings
    _assert_good_note_unaffected(repo_dir, env)


def test_badinput_a_20_mb_note_is_refused_and_nothing_else_suffers(repo_dir: Path) -> None:
    big = note_text("big", body="x" * (20 * 1024 * 1024)).encode()
    store = _store_with(repo_dir, "big.md", big)
    env = {"OMH_LOCAL_STORE": str(store)}
    run = omh(repo_dir, "memory", "lint", "--json", env=env)
    assert run.code == 1
    assert any(f["rule"] == "Unreadable" and "at most" in f["message"]
               for f in run.json()["findings"])
    _assert_good_note_unaffected(repo_dir, env)


def test_badinput_a_symlink_out_of_the_store_is_never_followed(repo_dir: Path) -> None:
    outside = repo_dir.parent / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text(note_text("secret", body="do not read me\n"))
    store = _store_with(repo_dir, "x", None)
    (store / "secret.md").symlink_to(outside / "secret.md")
    (store / "linked").symlink_to(outside, target_is_directory=True)
    env = {"OMH_LOCAL_STORE": str(store)}
    run = omh(repo_dir, "memory", "lint", "--json", env=env)
    assert any(f["rule"] == "Unreadable" and "symlink" in f["message"]
               for f in run.json()["findings"])
    assert "do not read me" not in omh(repo_dir, "memory", "show", "secret", env=env).out
    write = omh(repo_dir, "memory", "remember", "--expected", "e", "--observed", "X.",
                "--evidence", "v", "--answers", "q", env={**env})
    assert write.code == 0
    assert sorted(p.name for p in outside.iterdir()) == ["secret.md"]  # nothing written there
    assert LocalStore(store).path_for(Key("surprise/x")).is_relative_to(store)
    with pytest.raises(OmhError, match="symlink"):
        LocalStore(store).write(Key("linked/n"), lambda k: "x")
    _assert_good_note_unaffected(repo_dir, env)


def test_badinput_a_directory_where_a_note_should_be(repo_dir: Path) -> None:
    store = _store_with(repo_dir, "x", None)
    (store / "surprise" / "x.md").mkdir(parents=True)
    env = {"OMH_LOCAL_STORE": str(store)}
    run = omh(repo_dir, "memory", "remember", "--expected", "e", "--observed", "X.",
              "--evidence", "v", "--answers", "q", env=env)
    assert run.code == 1 and "directory where a note should be" in run.err
    _assert_good_note_unaffected(repo_dir, env)


# --- race --------------------------------------------------------------------

def _remember_proc(repo: str, observed: str, barrier, out) -> None:  # type: ignore[no-untyped-def]
    barrier.wait()
    run = subprocess.run([sys.executable, "-m", "omh_git_memory", "memory", "remember",
                          "--expected", "e", "--observed", observed, "--evidence", "v",
                          "--answers", "q"], cwd=repo, capture_output=True, text=True,
                         check=False)
    out.put((observed, run.returncode, run.stderr))


def _race(repo: Path, observations: list[str]) -> list[tuple[str, int, str]]:
    ctx = multiprocessing.get_context("fork")
    barrier, out = ctx.Barrier(len(observations)), ctx.Queue()
    procs = [ctx.Process(target=_remember_proc, args=(str(repo), o, barrier, out))
             for o in observations]
    for p in procs:
        p.start()
    results = [out.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(30)
    return results


def test_race_eight_processes_remember_one_key(repo_dir: Path) -> None:
    results = _race(repo_dir, ["Ports collide."] * 8)
    assert sorted(code for _, code, _ in results) == [0] + [1] * 7
    assert all("already exists" in err for _, code, err in results if code)
    store = Path(omh(repo_dir, "memory", "--json").json()["local_store"])
    assert parse((store / "surprise/ports-collide.md").read_text()).title == "Ports collide."
    assert [p.name for p in (store / "surprise").iterdir()] == ["ports-collide.md"]


def test_race_eight_processes_remember_eight_keys(repo_dir: Path) -> None:
    results = _race(repo_dir, [f"Race note {i}." for i in range(8)])
    assert [code for _, code, _ in results] == [0] * 8
    keys = {n["key"] for n in omh(repo_dir, "memory", "--json").json()["notes"]
            if n["layer"] == "local"}
    assert keys == {f"surprise/race-note-{i}" for i in range(8)}


def test_race_promote_against_a_commit_made_by_git(repo_dir: Path) -> None:
    for i in range(6):
        omh(repo_dir, "memory", "remember", "--expected", "e", "--observed", f"Note {i}.",
            "--evidence", "v", "--answers", "q")
    stop = threading.Event()

    def committer() -> None:
        n = 0
        while not stop.is_set():
            (repo_dir / f"work{n}.txt").write_text(str(n))
            try:
                git(repo_dir, "add", f"work{n}.txt")
                git(repo_dir, "commit", "-qm", f"work {n}")
            except subprocess.CalledProcessError:
                pass  # the index was locked by promote: git refuses, as it should
            n += 1

    thread = threading.Thread(target=committer)
    thread.start()
    outcomes = []
    try:
        for i in range(6):
            done = omh(repo_dir, "memory", "promote", f"surprise/note-{i}")
            outcomes.append(done.code)
            crash_log = Path(done.err.split()[-1]) if "traceback is in" in done.err else None
            assert done.code in (0, 1), done.err + (crash_log.read_text() if crash_log else "")
    finally:
        stop.set()
        thread.join()
    assert set(outcomes) <= {0, 1}  # promoted, or refused cleanly
    layers = {(n["layer"], n["key"]) for n in omh(repo_dir, "memory", "--json").json()["notes"]}
    for i in range(6):
        key = f"surprise/note-{i}"
        assert ("team", key) in layers or ("local", key) in layers
    assert subprocess.run(["git", "fsck", "--strict"], cwd=repo_dir, capture_output=True,
                          check=False).returncode == 0


def test_race_recall_while_notes_are_written(repo_dir: Path) -> None:
    ws = open_workspace(repo_dir)
    errors: list[BaseException] = []
    stop = threading.Event()

    def reader() -> None:
        while not stop.is_set():
            try:
                recall(open_workspace(repo_dir).searcher(), "busy socket")
            except BaseException as err:
                errors.append(err)

    threads = [threading.Thread(target=reader) for _ in range(2)]
    for t in threads:
        t.start()
    for i in range(40):
        ws.local.write(Key(f"n{i}"), lambda k, i=i: note_text(k.value, body=f"busy socket {i}\n"))
        ws.local.write(Key("n0"), lambda k: note_text("n0", body="busy socket again\n"),
                       IfExists.OVERRIDE)
    stop.set()
    for t in threads:
        t.join()
    assert errors == []
    assert len(recall(ws.searcher(), "busy socket").results) == 8


def test_race_no_stale_index_after_a_commit(repo_dir: Path) -> None:
    notes = repo_dir / ".omh/notes"
    notes.mkdir(parents=True)
    for i in range(5):
        (notes / f"v{i}.md").write_text(note_text(f"v{i}", body=f"version{i} marker\n"))
        git(repo_dir, "add", "-A")
        git(repo_dir, "commit", "-qm", f"v{i}")
        out = omh(repo_dir, "memory", "recall", f"version{i}", "--json").json()
        assert out["results"][0]["key"] == f"v{i}"


# --- crash -------------------------------------------------------------------

@pytest.mark.parametrize("point", POINTS)
def test_crash_kill_at_each_step_of_promote_loses_nothing(repo_dir: Path, point: str) -> None:
    omh(repo_dir, "init")
    git(repo_dir, "add", "-A")
    git(repo_dir, "commit", "-qm", "init")
    keys = []
    for i in range(3):
        run = omh(repo_dir, "memory", "remember", "--expected", "e", "--observed",
                  f"Crash note {i}.", "--evidence", "v", "--answers", "q", "--json")
        keys.append(run.json()["key"])
    killed = omh(repo_dir, "memory", "promote", *keys, env={"OMH_FAULT": point})
    assert killed.code == -signal.SIGKILL
    layers = {(n["layer"], n["key"]) for n in omh(repo_dir, "memory", "--json").json()["notes"]}
    for key in keys:  # every note is in at least one layer
        assert ("team", key) in layers or ("local", key) in layers, (point, key)
    fsck = subprocess.run(["git", "fsck", "--strict"], cwd=repo_dir, capture_output=True,
                          text=True, check=False)
    assert fsck.returncode == 0, fsck.stdout + fsck.stderr
    lock = repo_dir / ".git/index.lock"
    # a lock may be left only by omh itself, recorded as such, to be taken over
    assert not lock.exists() or (repo_dir / ".git/omh-index.lock.pid").exists()
    local_left = [k for k in keys if ("local", k) in layers]
    if local_left:
        again = omh(repo_dir, "memory", "promote", *local_left)
        assert again.code == 0, (point, again.err)
    final = {(n["layer"], n["key"]) for n in omh(repo_dir, "memory", "--json").json()["notes"]}
    assert {("team", k) for k in keys} <= final
    assert not any(("local", k) in final for k in keys)
    assert git(repo_dir, "status", "--porcelain") == ""
    assert not lock.exists()


# --- mcp ---------------------------------------------------------------------

def _raw_session(repo: Path, lines: list[str], last_id: int) -> list[dict[str, object]]:
    """Send raw lines to a real server; read replies until the one with `last_id`."""
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}}
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    proc = subprocess.Popen([sys.executable, "-m", "omh_git_memory", "mcp", "serve"], cwd=repo,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    assert proc.stdin is not None and proc.stdout is not None
    replies: list[dict[str, object]] = []
    try:
        for raw in [json.dumps(init), json.dumps(initialized), *lines]:
            proc.stdin.write(raw + "\n")
            proc.stdin.flush()
        timer = threading.Timer(120, proc.kill)
        timer.start()
        for out in proc.stdout:
            reply = json.loads(out)  # stdout holds nothing but protocol
            replies.append(reply)
            if reply.get("id") == last_id:
                break
        timer.cancel()
    finally:
        proc.kill()
        proc.wait()
        proc.stdin.close()
        proc.stdout.close()
    return replies


def test_mcp_malformed_json_rpc_gets_errors_and_the_server_keeps_answering(
    repo_dir: Path,
) -> None:
    call = {"jsonrpc": "2.0", "id": 9, "method": "tools/call",
            "params": {"name": "recall", "arguments": {"question": "test repo"}}}
    replies = _raw_session(repo_dir, [
        "{not json at all",
        json.dumps({"jsonrpc": "2.0", "id": 2, "method": "no/such/method"}),
        json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                    "params": {"name": "drop_tables", "arguments": {}}}),
        json.dumps({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                    "params": {"name": "remember", "arguments": {"expected": 5}}}),
        json.dumps({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                    "params": {"name": "recall", "arguments": {"question": "x" * 100_000}}}),
        json.dumps(call),
    ], last_id=9)
    by_id = {r.get("id"): r for r in replies}
    assert "error" in by_id[2]
    for i in (3, 4, 5):
        reply = by_id[i]
        assert "error" in reply or reply["result"]["isError"], reply  # type: ignore[index]
    assert not by_id[9]["result"]["isError"]  # type: ignore[index]


def test_mcp_a_flood_of_remember_calls_writes_each_note_once(repo_dir: Path) -> None:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    async def run() -> list[object]:
        params = StdioServerParameters(command=sys.executable,
                                       args=["-m", "omh_git_memory", "mcp", "serve"],
                                       cwd=str(repo_dir), env=dict(os.environ))
        async with stdio_client(params) as (r, w), ClientSession(r, w) as session:
            await session.initialize()
            calls = [session.call_tool("remember", {
                "expected": "e", "observed": f"Flood {i % 10}.", "evidence": "v",
                "answers": ["q"]}) for i in range(50)]
            return list(await asyncio.gather(*calls))

    results = asyncio.run(run())
    assert sum(not r.is_error for r in results) == 10  # type: ignore[attr-defined]
    keys = {n["key"] for n in omh(repo_dir, "memory", "--json").json()["notes"]
            if n["layer"] == "local"}
    assert keys == {f"surprise/flood-{i}" for i in range(10)}


# --- secret ------------------------------------------------------------------

SECRETS = (FIXTURES / "secrets/secrets.txt").read_text().splitlines()
LOOKALIKES = (FIXTURES / "secrets/lookalikes.txt").read_text().splitlines()


@pytest.mark.parametrize("text", SECRETS)
def test_secret_every_shape_is_found_with_its_line(text: str) -> None:
    hits = find_secrets(f"first line\n{text}\nlast line\n")
    assert [h.line for h in hits] == [2], text


@pytest.mark.parametrize("text", LOOKALIKES)
def test_secret_lookalikes_pass(text: str) -> None:
    assert find_secrets(text) == [], text


def test_secret_promote_refuses_naming_the_line_and_passes_lookalikes(repo_dir: Path) -> None:
    evidence = "\n".join(LOOKALIKES)
    ok = omh(repo_dir, "memory", "remember", "--expected", "e", "--observed", "Lookalikes.",
             "--evidence", evidence, "--answers", "q", "--json")
    assert omh(repo_dir, "memory", "promote", ok.json()["key"]).code == 0
    for i, secret in enumerate(SECRETS[:6]):
        run = omh(repo_dir, "memory", "remember", "--expected", "e", "--observed",
                  f"Secret {i}.", "--evidence", f"before\n{secret}", "--answers", "q", "--json")
        refused = omh(repo_dir, "memory", "promote", run.json()["key"])
        assert refused.code == 1 and "line 18 looks like" in refused.err, refused.err
    assert shutil.which("git")
