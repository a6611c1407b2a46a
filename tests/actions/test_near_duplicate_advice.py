"""NearDuplicate as a newcomer meets it: do what remember's warning says, on each
surface, and the store must be left with one note, not a pair lint still names.
The real CLI (tests.helpers.omh), the real MCP server through the SDK's client.

Found by a newcomer doing what the warnings say; was tests/test_newcomer_near_duplicate.py."""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path
from typing import Any

from mcp import ClientSession
from mcp.client.stdio import stdio_client
from mcp.types import Implementation

from tests.helpers import ROOT, omh
from tests.helpers.mcp import mcp_args, remember_over_mcp, server_params
from tests.helpers.near_duplicate import (
    AGAIN,
    FIRST,
    NEW,
    OLD,
    UNRELATED,
    UNRELATED_KEY,
    commands,
    do_what_it_says,
    near_duplicates,
)

# The same surprise again, as an agent records it: a reworded title, a typo, another
# evidence line.


def _local_keys(repo: Path) -> list[str]:
    return sorted(n["key"] for n in omh(repo, "memory", "--json").json()["notes"]
                  if n["layer"] == "local")


# --- the command line -------------------------------------------------------------

def test_doing_what_remember_s_warning_says_leaves_one_note(repo_dir: Path) -> None:
    assert omh(repo_dir, "memory", "remember", *FIRST).code == 0
    run = omh(repo_dir, "memory", "remember", *AGAIN)
    assert run.code == 0, run.err
    (warning,) = [line for line in run.out.splitlines() if line.startswith("warning:")]
    assert f"looks like {OLD} (local · " in warning
    assert do_what_it_says(repo_dir, warning) == ["update", "rm"]
    assert near_duplicates(repo_dir) == []
    assert _local_keys(repo_dir) == [OLD]


def test_the_warning_about_a_team_note_says_how_to_fold_into_it(repo_dir: Path) -> None:
    assert omh(repo_dir, "memory", "remember", *FIRST).code == 0
    assert omh(repo_dir, "memory", "promote", OLD).code == 0
    run = omh(repo_dir, "memory", "remember", *AGAIN)
    (warning,) = [line for line in run.out.splitlines() if line.startswith("warning:")]
    assert f"looks like {OLD} (team · " in warning
    assert do_what_it_says(repo_dir, warning) == ["update", "rm"]
    assert near_duplicates(repo_dir) == []
    assert _local_keys(repo_dir) == []


def test_doing_what_lint_s_finding_says_leaves_one_note(repo_dir: Path) -> None:
    assert omh(repo_dir, "memory", "remember", *FIRST).code == 0
    assert omh(repo_dir, "memory", "remember", *AGAIN).code == 0
    (finding,) = near_duplicates(repo_dir)
    # Written on one day, the pair is reported on the key that sorts last (NEW < OLD).
    assert f"reads like local/{NEW} (" in finding["message"]
    assert do_what_it_says(repo_dir, finding["message"]) == ["update", "rm"]
    assert near_duplicates(repo_dir) == []
    assert _local_keys(repo_dir) == [NEW]


def test_lint_s_finding_against_a_team_note_names_both_layers(repo_dir: Path) -> None:
    # A team note and a local one: each command says which layer it acts on.
    assert omh(repo_dir, "memory", "remember", *FIRST).code == 0
    assert omh(repo_dir, "memory", "promote", OLD).code == 0
    assert omh(repo_dir, "memory", "remember", *AGAIN).code == 0
    (finding,) = near_duplicates(repo_dir)
    assert f"reads like team/{OLD} (" in finding["message"]
    assert do_what_it_says(repo_dir, finding["message"]) == ["update", "rm"]
    assert near_duplicates(repo_dir) == []
    assert _local_keys(repo_dir) == []
    shown = omh(repo_dir, "memory", "show", OLD, "--layer", "team")
    assert shown.code == 0 and "pytest --durations=3" in shown.out


# --- the MCP server ---------------------------------------------------------------


def _agent(repo: Path, session: str, first: dict[str, Any] | None,
           again: dict[str, Any], follow: bool = True) -> str:
    """One agent session: remember `first` (if given), then `again`; then do what the
    answer to `again` says over the tool (a `replaces=KEY` it offers is called with
    `again`'s text). Returns that answer."""
    async def run() -> str:
        async with stdio_client(server_params(repo, session)) as (read, write), ClientSession(
            read, write, client_info=Implementation(name="claude-code", version="2.1")
        ) as client:
            await client.initialize()
            if first is not None:
                assert not (await client.call_tool("remember", first)).is_error
            result = await client.call_tool("remember", again)
            assert not result.is_error, result
            text = "".join(getattr(c, "text", "") for c in result.content)
            for key in re.findall(r"replaces=(\S+?)[ ,.;)]", text) if follow else []:
                fold = await client.call_tool("remember", {**again, "replaces": key})
                assert not fold.is_error, fold
            return text

    return asyncio.run(run())


def test_an_agent_doing_what_the_warning_says_about_its_own_note_leaves_one(
    repo_dir: Path,
) -> None:
    answer = _agent(repo_dir, "s1", mcp_args(FIRST), mcp_args(AGAIN))
    assert f"looks like {OLD} (local · " in answer
    do_what_it_says(repo_dir, answer)  # what a person is asked to run
    assert near_duplicates(repo_dir) == []
    assert _local_keys(repo_dir) == [OLD]


def test_the_warning_about_another_writer_s_note_names_the_copy_to_remove(
    repo_dir: Path,
) -> None:
    _agent(repo_dir, "s1", None, mcp_args(FIRST))
    answer = _agent(repo_dir, "s2", None, mcp_args(AGAIN))
    assert f"looks like {OLD} (local · " in answer and "replaces=" not in answer
    assert do_what_it_says(repo_dir, answer) == ["update", "rm"]
    assert near_duplicates(repo_dir) == []
    assert _local_keys(repo_dir) == [OLD]


# --- the docs ---------------------------------------------------------------------

def _shape(text: str) -> str:
    """Output with its keys (numbered in order of appearance), store paths, dates and
    percentages made placeholders."""
    keys: dict[str, str] = {}
    text = re.sub(r"surprise/[a-z0-9-]+",
                  lambda m: keys.setdefault(m.group(0), f"KEY{len(keys)}"), text)
    text = re.sub(r"(?m)^  /\S*/(KEY\d)\.md$", r"  STORE/\1.md", text)
    text = re.sub(r"\((team|local) · ", "(LAYER · ", text)
    text = re.sub(r"\d{4}-\d{2}-\d{2}", "DATE", text)
    return re.sub(r"\d+% alike", "N% alike", text)


def _example(page: str, first: str) -> str:
    """The fenced example in docs/`page` whose first line starts with `first`."""
    blocks = re.findall(r"```text\n(.*?)```", (ROOT / "docs" / page).read_text(), re.S)
    (block,) = [b for b in blocks if b.startswith(first)]
    return block


def test_the_documented_warning_is_the_one_printed(repo_dir: Path) -> None:
    omh(repo_dir, "memory", "remember", *FIRST)
    out = omh(repo_dir, "memory", "remember", *AGAIN).out
    assert _shape(_example("commands.md", "remembered local/")) == _shape(out)


def test_the_documented_mcp_warning_is_the_one_answered(repo_dir: Path) -> None:
    answer = _agent(repo_dir, "s1", mcp_args(FIRST), mcp_args(AGAIN), follow=False)
    (warning,) = re.findall(r"Warning: .*", answer)
    assert _shape(_example("mcp.md", "Warning: this note looks like").strip()) == _shape(
        warning)


def test_the_docs_count_the_rules_lint_runs(repo_dir: Path) -> None:
    counts = omh(repo_dir, "memory", "lint", "--json").json()["counts"]
    words = {"eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    said = [(page.name, m.group(1)) for page in pages
            for m in re.finditer(r"\bthe (\w+) rules\b", page.read_text())
            if m.group(1) in words]
    assert said, "the docs no longer count the rules; drop this test"
    assert [(page, word) for page, word in said if words[word] != len(counts)] == []


# --- --if-exists suffix: a second note beside the first, with the same first sentence

SUFFIXED = ["--expected", "pytest -q passes offline", "--observed",
            "The upload test retries three times before it fails. It waits ten seconds "
            "between tries.", "--evidence", "tests/test_upload.py: RETRIES = 3",
            "--answers", "why is the test suite slow offline?", "--if-exists", "suffix"]


def test_suffix_names_the_note_whose_key_it_had_to_step_around(repo_dir: Path) -> None:
    assert omh(repo_dir, "memory", "remember", *FIRST).code == 0
    got = omh(repo_dir, "memory", "remember", *SUFFIXED, "--json").json()
    assert got["key"] == f"{OLD}-2" and got["written"]
    assert [n["key"] for n in got["near_duplicates"]] == [OLD]
    (finding,) = near_duplicates(repo_dir)  # what lint says of the same pair
    assert OLD in finding["message"] and f"{OLD}-2" in (finding["key"], finding["message"])


def test_strict_suffix_refuses_a_copy_of_the_note_at_its_key(repo_dir: Path) -> None:
    assert omh(repo_dir, "memory", "remember", *FIRST).code == 0
    run = omh(repo_dir, "memory", "remember", *SUFFIXED, "--strict")
    assert run.code == 1 and "nothing was written (--strict)" in run.err, run
    assert f"looks like {OLD} (local · " in run.err
    assert _local_keys(repo_dir) == [OLD]


def test_override_does_not_call_the_note_it_replaces_a_repeat(repo_dir: Path) -> None:
    assert omh(repo_dir, "memory", "remember", *FIRST).code == 0
    override = [*SUFFIXED[:-1], "override", "--json"]
    got = omh(repo_dir, "memory", "remember", *override).json()
    assert got["key"] == OLD and got["near_duplicates"] == []
    assert _local_keys(repo_dir) == [OLD]


# --- remember(replaces=KEY): a correction can repeat another note too ---------------


_session = remember_over_mcp  # one MCP client session calling remember


def test_a_correction_that_repeats_another_note_says_so(repo_dir: Path) -> None:
    first, unrelated, corrected = _session(
        repo_dir, "s1", mcp_args(FIRST), UNRELATED,
        {**mcp_args(AGAIN), "replaces": UNRELATED_KEY})
    # No repeat is said (the unrelated note's `token: vault://…` line is warned of as
    # a secret's shape, a warning of another kind).
    assert "this note looks like" not in first + unrelated
    assert corrected.startswith(f"replaced local/{UNRELATED_KEY}")
    assert f"looks like {OLD} (local · " in corrected, corrected
    do_what_it_says(repo_dir, corrected)
    assert near_duplicates(repo_dir) == []
    assert len(_local_keys(repo_dir)) == 1


def test_the_fold_the_warning_asks_for_agrees_with_itself(repo_dir: Path) -> None:
    """remember NEW, then replaces=OLD as the warning says: the correction's answer
    must not ask to undo it (remove OLD), only to remove NEW, as the first did."""
    again, fold = _session(repo_dir, "s1", mcp_args(FIRST), mcp_args(AGAIN),
                           {**mcp_args(AGAIN), "replaces": OLD})[1:]
    assert f"`omh memory rm {NEW}`" in again
    assert f"omh memory rm {OLD}" not in fold and f"replaces={NEW}" not in fold
    do_what_it_says(repo_dir, fold + again)
    assert _local_keys(repo_dir) == [OLD] and near_duplicates(repo_dir) == []


# --- a topic repeated: `update` cannot change a topic's sections -------------------

TOPIC = ["memory", "remember", "--type", "topic", "--title", "Running the tests offline",
         "--section", "Summary=The upload test retries three times and waits ten seconds "
         "each time, so offline runs take thirty seconds longer."]
TOPIC_AGAIN = ["memory", "remember", "--type", "topic", "--title", "Tests when offline",
               "--section", "Summary=Offline runs take thirty seconds longer: the upload "
               "test retries three times and waits ten seconds each time."]


def _editor(tmp_path: Path) -> dict[str, str]:
    """An editor that adds a sentence to the end of the note it is given."""
    script = tmp_path / "editor.py"
    script.write_text("import sys\nwith open(sys.argv[1], 'a') as f:\n"
                      "    f.write('A proxy makes it worse.\\n')\n")
    return {"VISUAL": f"{sys.executable} {script}", "EDITOR": ""}


def test_the_warning_about_a_topic_names_a_command_that_changes_it(
    repo_dir: Path, tmp_path: Path,
) -> None:
    assert omh(repo_dir, *TOPIC).code == 0
    run = omh(repo_dir, *TOPIC_AGAIN)
    (warning,) = [line for line in run.out.splitlines() if line.startswith("warning:")]
    assert "looks like running-the-tests-offline (local · " in warning
    for argv in commands(warning):  # what a newcomer would run, as it stands
        if argv[:2] == ["memory", "update"]:  # (`update` has no --section)
            argv = [*argv, "--section", "Summary=A proxy makes it worse."]
        done = omh(repo_dir, *argv, env=_editor(tmp_path))
        assert done.code == 0, (argv, done.err)
    assert near_duplicates(repo_dir) == []
    assert _local_keys(repo_dir) == ["running-the-tests-offline"]
    shown = omh(repo_dir, "memory", "show", "running-the-tests-offline").out
    assert "A proxy makes it worse." in shown


def test_strict_names_the_command_that_changes_a_topic(repo_dir: Path) -> None:
    assert omh(repo_dir, *TOPIC).code == 0
    run = omh(repo_dir, *TOPIC_AGAIN, "--strict")
    assert run.code == 1 and "nothing was written (--strict)" in run.err
    assert "`omh memory edit running-the-tests-offline`" in run.err
    assert "omh memory update" not in run.err


def test_the_documented_strict_refusal_is_the_one_printed(repo_dir: Path) -> None:
    omh(repo_dir, "memory", "remember", *FIRST)
    err = omh(repo_dir, "memory", "remember", *AGAIN, "--strict").err
    assert _shape(_example("commands.md", "omh: the note looks like")) == _shape(err)
