"""NearDuplicate: the lint rule over real repositories, and remember's warning
(the CLI through tests.helpers.omh, the MCP server through a real client)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from omh_git_memory.actions.lint import lint
from omh_git_memory.actions.near_duplicate import THRESHOLD, compared, pairs, said
from omh_git_memory.actions.workspace import open_workspace
from omh_git_memory.model.layers import Layer
from omh_git_memory.model.note import parse
from tests.helpers import ROOT, note_text, omh
from tests.helpers.mcp import mcp_args, remember_over_mcp
from tests.helpers.near_duplicate import RETRIES, RETRIES_AGAIN, team_notes, topic_note

# The same observation recorded again: title reworded, a typo, another evidence line.
# Same topic, same rare words, another fact.
UPLOAD_LIMIT = ("The upload test sends a file of 12 MB because the runner's proxy refuses "
                "bodies over 16 MB; a larger fixture fails with 413 before the test starts.\n")


def _near(repo: Path) -> list[dict[str, Any]]:
    report = omh(repo, "memory", "lint", "--json").json()
    return [f for f in report["findings"] if f["rule"] == "NearDuplicate"]


def test_a_near_copy_of_a_team_note_is_reported_on_the_local_copy_only(repo_dir: Path) -> None:
    team_notes(repo_dir, {".omh/notes/upload-retries.md": topic_note(
        "upload-retries", "The upload test retries three times before it fails", RETRIES)})
    root = open_workspace(repo_dir).local.root
    root.mkdir(parents=True)
    (root / "retries-again.md").write_text(topic_note(
        "retries-again", "Upload test retries 3 times before failing", RETRIES_AGAIN,
        recorded="2026-10-01"))  # older than the team note: still the local one's finding
    found = _near(repo_dir)
    assert [(f["layer"], f["key"]) for f in found] == [("local", "retries-again")]
    assert "team/upload-retries (2026-11-01)" in found[0]["message"]
    assert "% alike" in found[0]["message"]
    report = omh(repo_dir, "memory", "lint", "--json").json()
    assert report["counts"]["NearDuplicate"] == 1 and not report["failed"]  # a warning
    # The CI check reads the team layer alone: nothing a teammate cannot see.
    assert [f for f in omh(repo_dir, "memory", "lint", "--ref", "HEAD", "--json").json()[
        "findings"] if f["rule"] == "NearDuplicate"] == []


def test_two_team_notes_alike_are_reported_on_the_later_one(repo_dir: Path) -> None:
    team_notes(repo_dir, {
        ".omh/notes/a.md": topic_note("a", "The upload test retries three times", RETRIES,
                                      recorded="2026-11-02"),
        ".omh/notes/b.md": topic_note("b", "Upload test retries 3 times", RETRIES_AGAIN,
                                      recorded="2026-11-05"),
        ".omh/notes/c.md": topic_note("c", "The upload test sends a 12 MB file", UPLOAD_LIMIT),
    })
    found = _near(repo_dir)
    assert [(f["layer"], f["key"]) for f in found] == [("team", "b")]
    assert "team/a (2026-11-02)" in found[0]["message"]
    ref = omh(repo_dir, "memory", "lint", "--ref", "HEAD", "--json").json()
    assert ref["counts"]["NearDuplicate"] == 1 and not ref["failed"]


def test_an_unrelated_note_on_the_same_topic_is_not_reported(repo_dir: Path) -> None:
    team_notes(repo_dir, {
        ".omh/notes/upload/retries.md": topic_note("upload/retries", "The upload test retries",
                                                   RETRIES),
        ".omh/notes/upload/limit.md": topic_note("upload/limit", "The upload test's size",
                                                 UPLOAD_LIMIT),
    })
    assert _near(repo_dir) == []


def test_a_stub_is_never_reported_against_its_document_or_a_copy(repo_dir: Path) -> None:
    page = "# Deploying\n\n## From the release branch\n\n" + RETRIES + "\n## Rolling back\n"
    team_notes(repo_dir, {
        "docs/deploy.md": page,
        "docs/deploy-copy.md": page,  # two identical documents: two stubs alike
        # A team note that says what the document says, word for word.
        ".omh/notes/deploying.md": topic_note("deploying", "Deploying", RETRIES),
    })
    assert _near(repo_dir) == []


def test_the_tool_s_boilerplate_and_links_are_not_what_a_note_says() -> None:
    def surprise(key: str, observed: str) -> str:
        return (f"---\nkey: {key}\ntype: surprise\nsource: cli\nrecorded: 2026-11-01\n---\n\n"
                f"# {observed}\n\n## Expected\n\nit works\n\n## Observed\n\n{observed}\n\n"
                "## Evidence\n\nthe log\n\n## Answers\n\n- why?\n\n## Related\n\n"
                "- [[deploy/the-release-branch-is-cut-on-fridays]]\n"
                "- [[ci/the-runner-image-is-rebuilt-nightly]]\n")

    a = parse(surprise("a", "The cache is keyed on the lockfile's digest."))
    b = parse(surprise("b", "Ports below 1024 need root on the runner."))
    assert "related" not in (said(a) or "") and "release" not in (said(a) or "")
    assert "expected" not in (said(a) or "")
    items = [c for n in (a, b) if (c := compared(Layer.LOCAL, n.key.value, n)) is not None]
    assert len(items) == 2 and pairs(items) == []


def test_a_pasted_log_is_compared_by_its_first_words_only() -> None:
    from omh_git_memory.actions.near_duplicate import MAX_WORDS

    # Two 300 KB notes: scoring them whole costs the product of their lengths
    # (seconds per pair, minutes for a few such notes), so only the start counts.
    log = " ".join(f"line{i} ok" for i in range(40000))
    note = parse(note_text("log", body=log + "\n"))
    assert len((said(note) or "").split(" ")) == MAX_WORDS


def test_the_graph_rule_compares_both_layers_in_process(repo_dir: Path) -> None:
    team_notes(repo_dir, {".omh/notes/r.md": topic_note("r", "The upload test retries", RETRIES)})
    ws = open_workspace(repo_dir)
    ws.local.root.mkdir(parents=True)
    (ws.local.root / "r2.md").write_text(topic_note("r2", "Upload test retries", RETRIES_AGAIN))
    (ws.local.root / "r3.md").write_text(topic_note("r3", "The upload test retries", RETRIES,
                                                    recorded="2026-11-09"))
    found = [f for f in lint(ws.graph()).findings if f.rule == "NearDuplicate"]
    # Every local copy is reported against the team note, and r3 against r2 too;
    # the team note itself never names a local note.
    assert {(f.layer, f.key) for f in found} == {(Layer.LOCAL, "r2"), (Layer.LOCAL, "r3")}
    assert all(f.layer is Layer.LOCAL for f in found)


def test_the_store_health_line_counts_it_like_the_other_rules(repo_dir: Path) -> None:
    from omh_git_memory.actions.lint_summary import lint_now

    team_notes(repo_dir, {
        ".omh/notes/a.md": topic_note("a", "The upload test retries three times", RETRIES),
        ".omh/notes/b.md": topic_note("b", "Upload test retries 3 times", RETRIES_AGAIN,
                                      recorded="2026-11-05"),
        ".omh/notes/index.md": note_text("index", body="- [[a]]\n- [[b]]\n"),
    })
    summary = lint_now(open_workspace(repo_dir))
    assert summary.counts == {"NearDuplicate": 1, "Orphan": 1}
    assert "1 NearDuplicate" in summary.line()


# --- remember ----------------------------------------------------------------------

FIRST = ["--expected", "the upload test fails on the first timeout", "--observed",
         "The upload test retries three times before it fails. A timeout on the first "
         "attempt is normal on a busy runner.", "--evidence", "tests/test_upload.py: retries=3",
         "--answers", "why does the upload test pass after a timeout?"]
AGAIN = ["--expected", "the upload test fails on the first timeout", "--observed",
         "The upload test retries 3 times before failing. A timeout on the first attempt "
         "is normal on a busy runner.", "--evidence", "CI log: attempt 2 of 3", "--answers",
         "why does the upload test pass after a timeout?"]
OTHER = ["--expected", "the upload test may send any file", "--observed",
         "The runner's proxy refuses upload bodies over 16 MB with a 413.", "--evidence",
         "curl -T big.bin: HTTP 413", "--answers", "why does a big upload fail on CI?"]


def _local_keys(repo: Path) -> list[str]:
    return sorted(n["key"] for n in omh(repo, "memory", "--json").json()["notes"]
                  if n["layer"] == "local")


def test_remember_names_the_note_it_repeats_and_still_writes(repo_dir: Path) -> None:
    assert omh(repo_dir, "memory", "remember", *FIRST).code == 0
    first = "surprise/the-upload-test-retries-three-times-before-it-fails"
    run = omh(repo_dir, "memory", "remember", *AGAIN)
    assert run.code == 0, run.err
    assert f"looks like {first} (local · " in run.out
    assert f"fold in what this one adds (`omh memory update {first}`" in run.out
    assert len(_local_keys(repo_dir)) == 2  # the write happened
    other = omh(repo_dir, "memory", "remember", *OTHER, "--json").json()
    assert other["written"] and other["near_duplicates"] == []


def test_remember_json_carries_the_near_duplicates(repo_dir: Path) -> None:
    omh(repo_dir, "memory", "remember", *FIRST)
    got = omh(repo_dir, "memory", "remember", *AGAIN, "--json").json()
    assert got["written"]
    (near,) = got["near_duplicates"]
    assert near["key"] == "surprise/the-upload-test-retries-three-times-before-it-fails"
    assert near["layer"] == "local" and near["recorded"] and near["similarity"] >= THRESHOLD


def test_remember_strict_refuses_a_repeat_and_writes_nothing(repo_dir: Path) -> None:
    omh(repo_dir, "memory", "remember", *FIRST)
    run = omh(repo_dir, "memory", "remember", *AGAIN, "--strict")
    assert run.code == 1
    assert "nothing was written (--strict)" in run.err and run.err.count("\n") == 1
    assert len(_local_keys(repo_dir)) == 1
    assert omh(repo_dir, "memory", "remember", *OTHER, "--strict").code == 0


def test_remember_sees_a_team_note_it_repeats(repo_dir: Path) -> None:
    omh(repo_dir, "memory", "remember", *FIRST)
    key = "surprise/the-upload-test-retries-three-times-before-it-fails"
    assert omh(repo_dir, "memory", "promote", key).code == 0
    run = omh(repo_dir, "memory", "remember", *AGAIN)
    assert run.code == 0
    assert f"looks like {key} (team · " in run.out


def test_a_topic_that_repeats_a_note_is_named_too(repo_dir: Path) -> None:
    topic = ["memory", "remember", "--type", "topic", "--title",
             "The upload test retries three times before it fails"]
    assert omh(repo_dir, *topic, "--section", f"Why={RETRIES}").code == 0
    again = ["memory", "remember", "--type", "topic", "--title",
             "Upload test retries 3 times before failing"]
    run = omh(repo_dir, *again, "--section", f"Why={RETRIES_AGAIN}", "--json")
    assert run.code == 0, run.err
    (near,) = run.json()["near_duplicates"]
    assert near["key"] == "the-upload-test-retries-three-times-before-it-fails"
    strict = omh(repo_dir, *again[:-1], "Upload test retries thrice before failing",
                 "--section", f"Why={RETRIES_AGAIN}", "--strict")
    assert strict.code == 1 and "nothing was written (--strict)" in strict.err
    assert len(_local_keys(repo_dir)) == 2


def test_mcp_remember_warns_and_offers_replaces_for_its_own_note(repo_dir: Path) -> None:
    first, again = remember_over_mcp(repo_dir, "s1", mcp_args(FIRST), mcp_args(AGAIN))
    key = "surprise/the-upload-test-retries-three-times-before-it-fails"
    assert "Warning" not in first
    assert "remembered local/" in again  # the write happened
    assert f"looks like {key} (local · " in again
    assert f"replaces={key}" in again


def test_mcp_remember_names_another_writer_s_note_without_replaces(repo_dir: Path) -> None:
    remember_over_mcp(repo_dir, "s1", mcp_args(FIRST))
    (theirs,) = remember_over_mcp(repo_dir, "s2", mcp_args(AGAIN))
    key = "surprise/the-upload-test-retries-three-times-before-it-fails"
    assert f"looks like {key} (local · " in theirs
    assert "replaces=" not in theirs
    assert "Warning: this note looks like" in theirs


DOCS = ROOT / "docs"


def _page_note(path: Path, key: str) -> str:
    """A documentation page recorded as a team note: its title, then its text."""
    lines = path.read_text(encoding="utf-8").splitlines()
    title = next((line[2:] for line in lines if line.startswith("# ")), path.stem)
    body = "\n".join(line for line in lines if not line.startswith("# ")).strip()
    return topic_note(key, title, body + "\n")


def test_two_long_unrelated_notes_are_not_reported(repo_dir: Path) -> None:
    # Two long pages share most of English's common words and many of the project's:
    # the character ratio of their sorted words called them 73% alike.
    team_notes(repo_dir, {f".omh/notes/page/{p}.md": _page_note(DOCS / f"{p}.md", f"page/{p}")
                          for p in ("mcp", "commands", "decisions")})
    assert _near(repo_dir) == []


def test_no_two_docs_pages_are_alike_when_every_pair_is_scored() -> None:
    from omh_git_memory.actions.near_duplicate import similarity

    items = [c for i, p in enumerate(sorted(DOCS.glob("*.md")))
             if (c := compared(Layer.TEAM, p.name, parse(_page_note(p, f"page/{i}"))))
             is not None]
    assert len(items) >= 10
    scores = sorted((similarity(a, b), a.key, b.key)
                    for i, a in enumerate(items) for b in items[i + 1:])
    assert scores[-1][0] < THRESHOLD, scores[-3:]


def test_the_similarity_is_the_dice_of_the_word_pairs_and_its_cutoff_drops_nothing() -> None:
    from itertools import pairwise

    from omh_git_memory.actions.near_duplicate import similarity

    texts = [RETRIES, RETRIES_AGAIN, UPLOAD_LIMIT, RETRIES + UPLOAD_LIMIT,
             "the the the the the the the", "a b c d e f g h i j k l"]
    items = [c for i, t in enumerate(texts)
             if (c := compared(Layer.TEAM, str(i), parse(topic_note(str(i), "Note", t))))]
    assert len(items) == len(texts)
    for a in items:
        for b in items:
            pa, pb = set(pairwise(a.text.split(" "))), set(pairwise(b.text.split(" ")))
            dice = 200 * len(pa & pb) / (len(pa) + len(pb))
            assert abs(similarity(a, b) - dice) < 1e-9
            # The length bound never drops a pair that reaches the cutoff.
            assert similarity(a, b, dice - 1e-6) >= dice - 1e-6
            assert similarity(a, b, dice + 1e-6) == 0.0
