"""Holes the mutation pass found in the MCP server (pass 4).

Most tests here drive the real server object through the SDK's own client in
process (`mcp.Client(server)`: the same tool schemas, the same handshake, the same
`Context` with the client's name and version) — a tenth of a second a call instead
of a subprocess's start. What only the stdio transport does (a line the SDK drops)
is the pure function `unanswered`, tested as such. The limits are stated with the
numbers docs/mcp.md gives, never the server's constants.

Found by mutation testing (docs/records/mutation-passes.md); was tests/test_mutants_server.py."""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import re
import shlex
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import Implementation

from omh_git_memory.actions import ask, record
from omh_git_memory.actions.workspace import open_workspace
from omh_git_memory.agent import probe as probing
from omh_git_memory.agent import transport
from omh_git_memory.agent.probe import ProbeFailed, probe
from omh_git_memory.agent.sdk import build_server
from omh_git_memory.agent.tools import clean_source_part, written_notes
from omh_git_memory.agent.transport import unanswered
from tests.helpers import git, note_text, omh
from tests.helpers.mcp import mcp_args, text_of, with_deploy_note
from tests.helpers.near_duplicate import (
    AGAIN,
    FIRST,
    NEW,
    OLD,
    UNRELATED,
    UNRELATED_KEY,
    as_the_shell_reads_it,
)

GOOD = {"expected": "port 8080 would be free", "observed": "CI already listens on 8080.",
        "evidence": "bind: address already in use", "answers": ["why do tests fail on CI?"]}
OWN = "surprise/ci-already-listens-on-8080"
ODD = "surprise/x$(pwd);y"  # a hand-written key a shell would run pasted bare
TODAY = dt.date.today().isoformat()

Body = Callable[[Client], Awaitable[Any]]


@pytest.fixture(autouse=True)
def session(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OMH_SESSION", "s03")


@pytest.fixture
def served(repo_dir: Path) -> Path:
    return with_deploy_note(repo_dir)


def _serve(repo: Path, body: Body, name: str = "claude-code", version: str = "2.1") -> Any:
    async def run() -> Any:
        server = build_server(open_workspace(repo))
        async with Client(server, client_info=Implementation(name=name, version=version)) as c:
            return await body(c)

    return asyncio.run(run())


def _calls(repo: Path, *calls: tuple[str, dict[str, Any]], **client: str) -> list[Any]:
    async def body(c: Client) -> list[Any]:
        return [await c.call_tool(tool, args) for tool, args in calls]

    return list(_serve(repo, body, **client))


def _local(repo: Path) -> Path:
    return open_workspace(repo).local.root


def _source_line(repo: Path, key: str = OWN) -> str:
    text = (_local(repo) / f"{key}.md").read_text()
    (line,) = [ln for ln in text.splitlines() if ln.startswith("source: ")]
    return line


def _remember(args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return ("remember", args)


def _recall(question: str, *also: str) -> tuple[str, dict[str, Any]]:
    return ("recall", {"question": question, "also_phrased_as": list(also)})


# --- `source`: from the handshake and OMH_SESSION, cut to its documented size --------


def test_the_source_names_the_session_and_the_client(served: Path) -> None:
    (done,) = _calls(served, _remember(GOOD))
    assert not done.is_error, text_of(done)
    assert _source_line(served) == "source: session s03, claude-code 2.1"


def test_without_a_session_the_source_says_mcp(served: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OMH_SESSION")
    _calls(served, _remember(GOOD))
    assert _source_line(served) == "source: mcp, claude-code 2.1"


def test_a_client_without_a_version_or_a_name(served: Path) -> None:
    _calls(served, _remember(GOOD), version="")
    assert _source_line(served) == "source: session s03, claude-code"
    (_local(served) / f"{OWN}.md").unlink()
    _calls(served, _remember(GOOD), name="", version="")
    assert _source_line(served) == "source: session s03, unknown client"


def test_a_client_name_of_64_characters_is_kept_and_one_more_is_cut() -> None:
    # docs/mcp.md: the client's name and version are each cut to 64 characters.
    assert clean_source_part("n" * 64) == "n" * 64
    assert clean_source_part("n" * 65) == "n" * 63 + "…"
    assert len(clean_source_part("n" * 1000)) == 64


def test_a_client_name_loses_what_a_line_cannot_carry() -> None:
    assert clean_source_part("claude\ncode") == "claude?code"
    assert clean_source_part("a\u200bb\x00c") == "a?b?c"
    assert clean_source_part("  two   words  ") == "two words"
    assert clean_source_part("") == ""


def test_a_long_client_name_in_the_written_note(served: Path) -> None:
    _calls(served, _remember(GOOD), name="c" * 65, version="9")
    assert _source_line(served) == f"source: session s03, {'c' * 63}… 9"


# --- the key in the way: whose note it is -------------------------------------------


def test_a_key_taken_by_this_session_offers_replaces(served: Path) -> None:
    first, again = _calls(served, _remember(GOOD), _remember(GOOD))
    assert not first.is_error
    assert again.is_error and f"it is your own note: pass replaces={OWN}" in text_of(again)


def test_a_key_taken_by_another_session_or_client_does_not(
    served: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OMH_SESSION", "s01")
    _calls(served, _remember(GOOD))
    monkeypatch.setenv("OMH_SESSION", "s02")
    (again,) = _calls(served, _remember(GOOD))
    assert again.is_error and "another writer recorded it" in text_of(again)
    assert "replaces=" not in text_of(again)
    monkeypatch.setenv("OMH_SESSION", "s01")  # the same session, another client
    (other,) = _calls(served, _remember(GOOD), name="codex")
    assert "another writer recorded it" in text_of(other)


def test_a_key_taken_in_the_team_layer_is_said_so(served: Path) -> None:
    (served / ".omh/notes/surprise").mkdir()
    (served / f".omh/notes/{OWN}.md").write_text(note_text(OWN, body="It does.\n"))
    git(served, "add", "-A")
    git(served, "commit", "-qm", "the team knows")
    (taken,) = _calls(served, _remember(GOOD))
    assert taken.is_error and "already exists in the team layer" in text_of(taken), text_of(taken)


# --- replaces: what an agent may correct, and the answers -----------------------------


def test_replaces_refusals_name_why(served: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OMH_SESSION", "s01")
    _calls(served, _remember(GOOD))
    monkeypatch.setenv("OMH_SESSION", "s03")
    theirs, team, derived, missing = (text_of(r) for r in _calls(
        served, *(_remember({**GOOD, "replaces": key})
                  for key in (OWN, "deploy", "readme", "no/such"))))
    assert theirs.endswith(f"local/{OWN} was recorded by 'session s01, claude-code 2.1', not "
                           "by this session, so you cannot replace it; call remember without "
                           "`replaces` to record your own note"), theirs
    assert "deploy is a team note (HEAD:.omh/notes/deploy.md); an agent corrects only" in team, team
    assert "readme is derived from README.md, not written: it cannot be replaced" in derived
    assert "no local note no/such to replace; `replaces` takes the key" in missing


def test_a_correction_says_what_it_did_and_a_no_change_says_so(served: Path) -> None:
    fixed = {**GOOD, "evidence": "ss -ltnp: 8080 LISTEN", "replaces": OWN}
    _first, same, changed = (text_of(r) for r in _calls(
        served, _remember(GOOD), _remember({**GOOD, "replaces": OWN}), _remember(fixed)))
    assert same == f"local/{OWN} already says exactly that; nothing changed."
    # The note it was is in the searcher, and alike: it is not called a repeat of itself.
    assert changed == (f"replaced local/{OWN} ({TODAY}); it keeps its key. A person can share "
                       f"it with `omh memory promote {OWN}`."), changed


def test_a_note_changed_while_it_is_replaced_is_said_and_nothing_written(
    served: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from omh_git_memory.model.errors import ChangedMeanwhile

    def raced(*_: Any) -> Any:
        raise ChangedMeanwhile("changed meanwhile")

    _calls(served, _remember(GOOD))
    monkeypatch.setattr(record, "replace_own", raced)
    (result,) = _calls(served, _remember({**GOOD, "replaces": OWN}))
    assert result.is_error and (f"local/{OWN} changed while it was being replaced, so nothing "
                                "was written") in text_of(result), text_of(result)


# --- the repeat warnings and the commands they quote -----------------------------------


def _commands(text: str) -> list[list[str]]:
    """Every `omh …` command a message quotes, as the shell reads it."""
    return [shlex.split(c) for c in re.findall(r"`(omh [^`]+)`", text)]


def test_remember_of_a_repeat_of_its_own_note_offers_replaces(repo_dir: Path) -> None:
    first, again = (text_of(r) for r in _calls(repo_dir, _remember(mcp_args(FIRST)),
                                               _remember(mcp_args(AGAIN))))
    assert "Warning" not in first
    assert f"Warning: this note looks like {OLD} (local · {TODAY}, " in again
    assert f"It is your own note: if both record the same thing, keep that one: call " \
           f"remember again with replaces={OLD} " in again, again
    assert ["omh", "memory", "rm", NEW] in _commands(again)


def test_remember_of_a_repeat_of_another_writer_s_note_does_not(
    repo_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OMH_SESSION", "s01")
    _calls(repo_dir, _remember(mcp_args(FIRST)))
    monkeypatch.setenv("OMH_SESSION", "s02")
    (again,) = (text_of(r) for r in _calls(repo_dir, _remember(mcp_args(AGAIN))))
    assert f"looks like {OLD} (local · " in again and "replaces=" not in again
    assert f"recall {OLD} and make sure the two agree" in again


def _odd_local_note(repo: Path) -> None:
    """FIRST's note, hand-written into the local store under a key with `$(...)` and `;`."""
    _calls(repo, _remember(mcp_args(FIRST)))
    store = _local(repo)
    text = (store / f"{OLD}.md").read_text().replace(f"key: {OLD}\n", f"key: {ODD}\n")
    (store / f"{OLD}.md").unlink()
    (store / f"{ODD}.md").write_text(text)


def test_a_correction_names_an_odd_key_to_remove_as_one_shell_word(repo_dir: Path) -> None:
    _odd_local_note(repo_dir)
    _unrelated, corrected = (text_of(r) for r in _calls(
        repo_dir, _remember(UNRELATED), _remember({**mcp_args(AGAIN), "replaces": UNRELATED_KEY})))
    assert corrected.startswith(f"replaced local/{UNRELATED_KEY}"), corrected
    assert f"Warning: it now looks like {ODD} (local · " in corrected, corrected
    assert "keep this one: the other is a copy a person removes" in corrected
    pasted = as_the_shell_reads_it(repo_dir, corrected)  # bash, not shlex: `;` ends a command
    assert pasted[-1] == ["omh", "memory", "rm", ODD], (pasted, corrected)
    rm = omh(repo_dir, *pasted[-1][1:])  # and doing it removes that note, no other
    assert rm.code == 0, rm.err
    assert not (_local(repo_dir) / f"{ODD}.md").exists()
    assert (_local(repo_dir) / f"{UNRELATED_KEY}.md").exists()


def test_a_correction_that_repeats_a_team_note_says_how_to_fold_into_it(repo_dir: Path) -> None:
    assert omh(repo_dir, "memory", "remember", *FIRST).code == 0
    (_local(repo_dir) / f"{OLD}.md").rename(repo_dir / "first.md")
    notes = repo_dir / ".omh/notes/surprise"
    notes.mkdir(parents=True)
    (repo_dir / "first.md").rename(notes / f"{OLD.split('/')[1]}.md")
    git(repo_dir, "add", "-A")
    git(repo_dir, "commit", "-qm", "the team has it")
    _unrelated, corrected = (text_of(r) for r in _calls(
        repo_dir, _remember(UNRELATED), _remember({**mcp_args(AGAIN), "replaces": UNRELATED_KEY})))
    assert f"Warning: it now looks like {OLD} (team · " in corrected, corrected
    assert "a person can merge them: fold in what this one adds" in corrected
    assert _commands(corrected)[-1] == ["omh", "memory", "rm", UNRELATED_KEY], corrected


# --- recall's answer ---------------------------------------------------------------------


def test_a_blank_question_is_refused(served: Path) -> None:
    (blank,) = _calls(served, _recall("  \t "))
    assert blank.is_error and "`question` is empty" in text_of(blank)


def test_the_excerpt_heading_counts_at_most_three(served: Path) -> None:
    notes = served / ".omh/notes"
    for i in range(4):
        (notes / f"cache-{i}.md").write_text(note_text(f"cache-{i}", body="The cache is kept.\n"))
    git(served, "add", "-A")
    git(served, "commit", "-qm", "four cache notes")
    two, many, none = (text_of(r) for r in _calls(
        served, _recall("cache-0 cache-1"), _recall("the cache is kept"), _recall("zzzqqq")))
    assert "\nWhat the best 3 say:\n" in many, many
    assert many.endswith("and for a team note or document who last changed it in which "
                         "commit.\n")
    assert "\nEach line: key, layer · date, title" in many
    assert "Each line" not in none and "What the best" not in none, none
    assert re.search(r"\nWhat the best [23] say:\n", two), two


def test_recall_sees_a_local_note_and_a_commit_made_while_it_runs(served: Path) -> None:
    async def body(c: Client) -> list[str]:
        said = [text_of(await c.call_tool("recall", {"question": "listens on 8080"}))]
        await c.call_tool("remember", GOOD)
        said.append(text_of(await c.call_tool("recall", {"question": "listens on 8080"})))
        (served / ".omh/notes/ports.md").write_text(
            note_text("ports", body="The staging box listens on 9090.\n"))
        git(served, "add", "-A")
        git(served, "commit", "-qm", "ports")
        said.append(text_of(await c.call_tool("recall", {"question": "staging box 9090"})))
        return said

    before, local, committed = _serve(served, body)
    assert OWN not in before
    assert local.startswith(f"{OWN} "), local
    assert committed.startswith("ports "), committed


def test_the_written_notes_are_files_not_stubs_or_the_topic(served: Path) -> None:
    from omh_git_memory.recall.bm25 import Searcher
    from omh_git_memory.recall.local_notes import local_docs

    (served / ".omh/notes/ports.md").write_text(note_text("ports", body="CI uses 8080.\n"))
    git(served, "add", "-A")
    git(served, "commit", "-qm", "ports")
    _calls(served, _remember(GOOD))
    ws = open_workspace(served)
    docs = Searcher(ws.snapshot(), local_docs(ws.local.scan())).docs
    # deploy, ports and the local note; README's stub and the topic are derived
    assert sorted(d.key for d in docs if d is not None) == sorted(
        ["deploy", "ports", "readme", "repo", OWN])
    assert written_notes([*docs, None]) == 3


# --- semantic recall on, its extra missing --------------------------------------------


def test_semantic_without_its_extra_warns_once_and_recalls_by_words(
    served: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from omh_git_memory.recall import semantic

    tries = []

    def missing(*_: Any, **__: Any) -> Any:
        tries.append(1)
        raise semantic.SemanticUnavailable("semantic recall needs its extra")

    monkeypatch.setattr(semantic, "Embedder", missing)
    config = served / ".omh/memory.toml"
    assert omh(served, "init").code == 0
    config.write_text(config.read_text().replace("semantic = false", "semantic = true"))
    with caplog.at_level(logging.WARNING, logger="omh.mcp"):
        answers = _calls(served, _recall("release branch"), _recall("deploy"))
    assert [a.is_error for a in answers] == [False, False]
    assert all(text_of(a).startswith("deploy ") for a in answers), [text_of(a) for a in answers]
    warned = [r for r in caplog.records if r.name == "omh.mcp"]
    assert len(warned) == 1 and "extra" in warned[0].getMessage(), warned
    assert tries == [1]


def test_semantic_off_never_loads_the_model(served: Path, monkeypatch: pytest.MonkeyPatch,
                                            caplog: pytest.LogCaptureFixture) -> None:
    from omh_git_memory.recall import semantic

    def never(*_: Any, **__: Any) -> Any:
        raise AssertionError("the model was loaded with semantic recall off")

    monkeypatch.setattr(semantic, "Embedder", never)
    with caplog.at_level(logging.WARNING, logger="omh.mcp"):
        (answer,) = _calls(served, _recall("release branch"))
    assert not answer.is_error and text_of(answer).startswith("deploy ")
    assert not [r for r in caplog.records if r.name == "omh.mcp"]


# --- lines the SDK would drop, answered here -------------------------------------------

PARSE_ERROR, INVALID_REQUEST = -32700, -32600  # JSON-RPC 2.0's codes
CALL = '{"jsonrpc": "2.0", "id": %s, "method": "tools/list"%s}'


def test_a_line_the_sdk_answers_itself_is_left_to_it() -> None:
    assert unanswered(CALL % ("1", "")) is None
    assert unanswered(CALL % ('"abc"', "")) is None
    assert unanswered('{"jsonrpc": "2.0", "method": "notifications/initialized"}') is None
    assert unanswered('{"jsonrpc": "2.0", "id": 1, "result": {}}') is None


def test_a_line_that_is_not_json_is_a_parse_error() -> None:
    refusal = unanswered("this is not json")
    assert refusal is not None
    assert refusal[:2] == (None, PARSE_ERROR)
    assert refusal[2].startswith("parse error: the line is not JSON omh can read (")
    deep = unanswered("[" * 100_000 + "]" * 100_000)
    assert deep is not None and deep[:2] == (None, PARSE_ERROR)


def test_json_that_is_not_an_object_is_an_invalid_request() -> None:
    assert unanswered("[1, 2]") == (
        None, INVALID_REQUEST, "invalid request: send one JSON-RPC object per line")
    assert unanswered('"text"') == (
        None, INVALID_REQUEST, "invalid request: send one JSON-RPC object per line")


@pytest.mark.parametrize("bad_id", ["1.5", "true", "false", "null", '{"a": 1}', "[1]"],
                         ids=["float", "true", "false", "null", "object", "list"])
def test_a_request_whose_id_is_not_a_string_or_an_integer(bad_id: str) -> None:
    refusal = unanswered(CALL % (bad_id, ""))
    assert refusal is not None and refusal[:2] == (None, INVALID_REQUEST), refusal
    assert "id must be a string or an integer" in refusal[2] or "not a JSON-RPC" in refusal[2]


@pytest.mark.parametrize("bad_id", ["1.5", "true", "null"], ids=["float", "true", "null"])
def test_a_request_the_sdk_reads_with_an_unusable_id_names_the_id(bad_id: str) -> None:
    assert unanswered(CALL % (bad_id, "")) == (
        None, INVALID_REQUEST, "invalid request: its id must be a string or an integer")


@pytest.mark.parametrize("where", [', "params": {"cursor": "\\ud800"}',
                                   ', "params": {"\\udfff": 1}',
                                   ', "params": {"list": ["ok", "\\udc00"]}'],
                         ids=["value", "key", "list"])
def test_a_lone_surrogate_anywhere_is_answered_with_the_request_s_id(where: str) -> None:
    refusal = unanswered(CALL % ("7", where))
    assert refusal is not None and refusal[:2] == (7, INVALID_REQUEST), refusal
    assert "lone surrogate" in refusal[2]
    by_name = unanswered(CALL % ('"q"', where))
    assert by_name is not None and by_name[0] == "q"
    unusable = unanswered(CALL % ("true", where))
    assert unusable is not None and unusable[0] is None


def test_a_paired_surrogate_or_one_just_outside_the_range_is_text() -> None:
    for text in ("\\ud7ff", "\\ue000", "\\ud83d\\ude00"):
        assert unanswered(CALL % ("7", f', "params": {{"cursor": "{text}"}}')) is None, text


def test_a_surrogate_in_a_notification_or_a_response_gets_no_reply() -> None:
    assert unanswered('{"jsonrpc": "2.0", "method": "x", "params": {"a": "\\ud800"}}') is None
    assert unanswered('{"jsonrpc": "2.0", "id": 1, "result": {"a": "\\ud800"}}') is None


def test_an_object_that_is_not_json_rpc_is_an_invalid_request_with_its_id() -> None:
    assert unanswered('{"jsonrpc": "1.0", "id": 4, "method": "tools/list"}') == (
        4, INVALID_REQUEST, "invalid request: not a JSON-RPC 2.0 message")
    assert unanswered('{"id": 4, "method": "tools/list"}') == (
        4, INVALID_REQUEST, "invalid request: not a JSON-RPC 2.0 message")


def test_the_surrogate_check_looks_into_every_kind_of_value() -> None:
    check = transport._has_lone_surrogate
    assert check("\ud800") and check("\udfff") and check("a\udc00b")
    assert not check("\ud7ff") and not check("\ue000") and not check("plain")
    assert check({"\ud800": 1}) and check({"a": "\ud800"}) and check([1, "\ud800"])
    assert check({"a": [{"b": "\udfff"}]})
    assert not check({"a": ["b", 1, None, 2.5]}) and not check(3) and not check(None)


# --- the doctor's probe ------------------------------------------------------------------


def test_the_first_cause_inside_exception_groups() -> None:
    inner = ValueError("the real one")
    nested = BaseExceptionGroup("outer", [ExceptionGroup("inner", [inner, KeyError("b")])])
    assert probing._first_cause(nested) is inner
    plain = OSError("plain")
    assert probing._first_cause(plain) is plain


def test_probe_sees_the_tools_the_name_and_one_answer(served: Path) -> None:
    import os

    seen = probe(sys.executable, ["-m", "omh_git_memory", "mcp", "serve"], served,
                 dict(os.environ))
    assert sorted(seen.tools) == ["recall", "remember"]
    assert seen.server_name == "omh"
    # "how do I build and test": the README ("# Test repo") holds one of the two words,
    # too little for a document on its own; the topic answers, the README beside it
    assert seen.recall_text.startswith("repo ") and "└─ readme" in seen.recall_text
    assert "notes" in seen.tools["recall"]
    # the seconds from the start to tools/list, then to the answer (doctor's start line)
    assert 0 < seen.listed_after <= seen.answered_after < 60


def test_probe_of_a_server_that_dies_says_why_with_its_log(tmp_path: Path) -> None:
    import os

    with pytest.raises(ProbeFailed) as failed:
        probe(sys.executable, ["-c", "import sys; sys.stderr.write('no store here\\n')"],
              tmp_path, dict(os.environ), timeout=30)
    assert "no store here" in failed.value.log
    assert str(failed.value)


# --- the argument limits, by the numbers docs/mcp.md gives --------------------------------


def test_every_argument_limit_is_taken_at_its_number_and_refused_one_over(served: Path) -> None:
    # docs/mcp.md: text at most 16,384 characters, a list at most 32 items,
    # `invalidated_by` at most 200 characters, `replaces` at most 512.
    def note(n: int, **more: Any) -> tuple[str, dict[str, Any]]:
        return _remember({**GOOD, "observed": f"Limit case {n} holds.", **more})

    at, over = "x" * 16384, "x" * 16385
    questions = [f"question {i}?" for i in range(33)]
    symbol = "s" * (200 - len("symbol:"))
    results = _calls(
        served,
        note(1, evidence=at), note(2, evidence=over),
        note(3, answers=questions[:32]), note(4, answers=questions),
        note(5, answers=[at]), note(6, answers=[over]),
        note(7, invalidated_by=f"symbol:{symbol}"), note(8, invalidated_by=f"symbol:{symbol}s"),
        note(9, replaces="k" * 512), note(10, replaces="k" * 513),
        ("recall", {"question": at}), ("recall", {"question": over}),
        ("recall", {"question": "q", "also_phrased_as": questions[:32]}),
        ("recall", {"question": "q", "also_phrased_as": questions}),
    )
    texts = [text_of(r)[:120] for r in results]
    assert [r.is_error for r in results] == [False, True] * 4 + [True, True, False, True] + [
        False, True], texts
    assert "no local note" in texts[8] and "no local note" not in texts[9]


# --- a big store's lint counts: refreshed after a remember, in the background -----------


@pytest.mark.parametrize(("limit", "refreshed"), [(2, True), (3, False)],
                         ids=["over", "at"])
def test_remember_refreshes_the_counts_only_over_the_start_limit(
    served: Path, monkeypatch: pytest.MonkeyPatch, limit: int, refreshed: bool
) -> None:
    """Over LINT_AT_START written notes the start does not lint; each remember then
    asks for a background lint so the next session starts with fresh counts. The
    store holds three written notes (deploy, ports, cache; README's stub and the topic
    are not)."""
    from omh_git_memory.actions import lint_summary

    (served / ".omh/notes/ports.md").write_text(note_text("ports", body="CI uses 8080.\n"))
    (served / ".omh/notes/cache.md").write_text(note_text("cache", body="Kept a day.\n"))
    git(served, "add", "-A")
    git(served, "commit", "-qm", "ports and cache")
    asked: list[str] = []
    monkeypatch.setattr(lint_summary, "LINT_AT_START", limit)
    monkeypatch.setattr(lint_summary, "refresh_later", lambda ws: asked.append("refresh"))

    async def body(c: Client) -> list[str]:
        before = list(asked)
        done = await c.call_tool("remember", GOOD)
        assert not done.is_error, text_of(done)
        return asked[len(before):]

    assert _serve(served, body) == (["refresh"] if refreshed else [])


# --- pass 4, after the first run: what survived it ---------------------------------------


def test_a_character_a_line_cannot_show_is_cut_even_when_it_is_not_unsafe() -> None:
    assert clean_source_part("a\u00a0b") == "a?b"  # a no-break space prints as nothing
    assert clean_source_part("a\u202eb") == "a?b"  # a bidi control


def test_an_unchanged_store_is_not_read_again_between_calls(
    served: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from omh_git_memory.recall.bm25 import Searcher

    built: list[int] = []

    class Counting(Searcher):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            built.append(1)
            super().__init__(*args, **kwargs)

    import omh_git_memory.actions.workspace as workspace

    monkeypatch.setattr(workspace, "Searcher", Counting)  # the server builds it through ws
    answers = _calls(served, _recall("release branch"), _recall("deploy"), _recall("deploy"))
    assert [a.is_error for a in answers] == [False] * 3
    assert len(built) == 1  # at the start, then kept: HEAD and the local store unchanged


def test_the_description_carries_lint_s_counts_only_when_it_finds_something(
    repo_dir: Path,
) -> None:
    async def described(c: Client) -> str:
        tools = {t.name: t for t in (await c.list_tools()).tools}
        return tools["recall"].description or ""

    assert omh(repo_dir, "init").code == 0
    clean = _serve(repo_dir, described)
    assert clean.endswith("or the conflict blocks the task."), clean  # nothing after it
    (_local(repo_dir) / "fence.md").write_text(note_text("fence", body="```\nnever closed\n"))
    found = _serve(repo_dir, described)
    assert found.endswith(" `omh memory lint` finds 1 refused note in this "
                          "store (1 UnclosedFence); run it to list them."), found


def test_both_tools_answer_text_not_structured_output(served: Path) -> None:
    async def body(c: Client) -> Any:
        tools = (await c.list_tools()).tools
        return tools, await c.call_tool("recall", {"question": "deploy"})

    tools, answer = _serve(served, body)
    assert [t.output_schema for t in tools] == [None, None]
    assert answer.structured_content is None


def test_relates_to_takes_a_note_and_keeps_a_link_to_a_note_not_yet_written(
    served: Path,
) -> None:
    """A key can be worked out before its note exists, so a link to no note (or to a
    file that is not one) is kept, and the answer says it waits;
    before, the tool refused it while the command line took it."""
    (served / ".omh/notes/broken.md").write_text("no frontmatter at all\n")
    git(served, "add", "-A")
    git(served, "commit", "-qm", "a broken note")
    linked, waiting, two = _calls(
        served, _remember({**GOOD, "relates_to": ["deploy"]}),
        _remember({**GOOD, "observed": "Another.", "relates_to": ["broken"]}),
        _remember({**GOOD, "observed": "A third.", "relates_to": ["deploy", "later/a", "b"]}))
    assert not linked.is_error and "no note yet" not in text_of(linked), text_of(linked)
    assert not waiting.is_error, text_of(waiting)
    assert (" Its link to broken names no note yet: kept, to reach the note once one is "
            "written under that key (`omh memory lint` warns DanglingLink until then)."
            ) in text_of(waiting), text_of(waiting)
    assert " Its links to later/a, b name no note yet" in text_of(two), text_of(two)
    note = (open_workspace(served).local.root / "surprise/another.md").read_text()
    assert "[[broken]]" in note


def test_more_repeats_than_named_are_counted(repo_dir: Path) -> None:
    base = mcp_args(FIRST)
    copies = [{**base, "observed": base["observed"].replace("three times", f"{n} times")}
              for n in ("two", "four", "five", "six")]
    answers = [text_of(r) for r in _calls(repo_dir, *(_remember(c) for c in [base, *copies]))]
    assert "more" not in answers[3], answers[3]  # three alike: each named
    assert answers[4].count("Warning: this note looks like") == 3, answers[4]
    assert answers[4].endswith(" Warning: and 1 more note looks like it."), answers[4]


def test_a_store_that_breaks_while_serving_is_a_refusal_in_its_own_words(
    served: Path,
) -> None:
    assert omh(served, "init").code == 0

    async def body(c: Client) -> Any:
        (served / ".omh/memory.toml").write_text("[recall]\nsemantic = 3\n")
        return await c.call_tool("recall", {"question": "deploy"})

    answer = _serve(served, body)
    assert answer.is_error and "semantic must be true or false" in text_of(answer), text_of(answer)


def test_probe_of_a_server_that_never_answers_names_the_timeout(tmp_path: Path) -> None:
    import os

    with pytest.raises(ProbeFailed) as failed:
        probe(sys.executable, ["-c", "import time; time.sleep(30)"], tmp_path,
              dict(os.environ), timeout=2)
    assert str(failed.value) == "TimeoutError"


def test_probe_keeps_what_the_server_logged_from_its_first_character(
    served: Path, tmp_path: Path
) -> None:
    import os

    shim = tmp_path / "shim" / "onnxruntime"  # the semantic extra made unimportable
    shim.mkdir(parents=True)
    (shim / "__init__.py").write_text("raise ImportError('onnxruntime is not installed')\n")
    assert omh(served, "init").code == 0
    config = served / ".omh/memory.toml"
    config.write_text(config.read_text().replace("semantic = false", "semantic = true"))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(shim.parent), os.environ.get("PYTHONPATH")) if p)}
    seen = probe(sys.executable, ["-m", "omh_git_memory", "mcp", "serve"], served, env)
    assert seen.log.startswith("omh mcp: WARNING semantic recall is on"), seen.log


def test_semantic_on_loads_the_model_once_and_its_view_once_per_store_state(
    served: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The model is loaded at the start and kept; the view over the store's vectors
    is made again only when HEAD or the local store changed. Stand-ins for the
    model and the view count the work; recall itself goes on by words."""
    from omh_git_memory.actions.workspace import Workspace
    from omh_git_memory.recall import semantic

    loaded: list[int] = []
    views: list[object] = []
    asked_with: list[object] = []

    class Model:
        def __init__(self, *_: Any, **__: Any) -> None:
            loaded.append(1)

    def view(self: Workspace, searcher: Any, embedder: Any = None, progress: Any = None) -> Any:
        assert isinstance(embedder, Model)
        views.append(object())
        return views[-1]

    from omh_git_memory.recall.floor import recall as real_recall

    def by_words(searcher: Any, question: str, also: Any = (), semantic: Any = None,
                 places: Any = None) -> Any:
        asked_with.append(semantic)
        return real_recall(searcher, question, also, places=places)

    monkeypatch.setattr(semantic, "Embedder", Model)
    monkeypatch.setattr(Workspace, "semantic", view)
    monkeypatch.setattr(ask, "recall", by_words)
    assert omh(served, "init").code == 0
    config = served / ".omh/memory.toml"
    config.write_text(config.read_text().replace("semantic = false", "semantic = true"))
    answers = _calls(served, _recall("deploy"), _recall("release branch"), _remember(GOOD),
                     _recall("deploy"))
    assert not any(a.is_error for a in answers), [text_of(a) for a in answers]
    assert loaded == [1]
    assert len(views) == 2  # at the start, and after remember changed the local store
    assert asked_with == [views[0], views[0], views[1]]


def test_a_request_nested_too_deep_to_search_for_surrogates_is_still_answered() -> None:
    # 600 levels: Python's parser reads it, the SDK's refuses it, and looking for a
    # lone surrogate that deep overflows the stack: it is answered all the same.
    deep = CALL % ("1", ', "params": {"a": ' + "[" * 600 + "]" * 600 + "}")
    assert unanswered(deep) == (1, INVALID_REQUEST, "invalid request: not a JSON-RPC 2.0 message")
    deeper = CALL % ("1", ', "params": {"a": ' + "[" * 5000 + "]" * 5000 + "}")
    refused = unanswered(deeper)  # too deep for Python's parser too
    assert refused is not None and refused[:2] == (None, PARSE_ERROR)


def test_the_reader_passes_what_the_sdk_reads_and_answers_what_it_would_drop(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`Requests`, the line reader in front of the SDK's: a blank line or one the SDK
    reads goes through as it is; one it would drop is answered with an error, and
    not passed on."""
    # no SDK here answers the request passed on: the end of input need not wait for it
    monkeypatch.setattr(transport, "DRAIN_SECONDS", 0.0)
    good = CALL % ("1", "") + "\n"
    lines = ["\n", good, "not json\n", CALL % ("true", "") + "\n", "  \n"]

    async def run() -> tuple[list[str], list[Any]]:
        async def source() -> Any:
            for line in lines:
                yield line

        sent: list[Any] = []

        class Replies:
            async def send(self, message: Any) -> None:
                sent.append(message.message)

        requests = transport.Requests(source())
        requests.replies = Replies()
        requests.ready.set()
        return [line async for line in requests], sent

    passed, answered = asyncio.run(run())
    assert passed == ["\n", good, "  \n"]
    assert [(a.id, a.error.code) for a in answered] == [(None, PARSE_ERROR),
                                                         (None, INVALID_REQUEST)]
