"""`omh memory remember --type topic`: a person's topic note in the local layer."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from omh_git_memory.actions.lint import note_refusals
from omh_git_memory.actions.topic import TopicDraft, build_topic
from omh_git_memory.model.errors import NoteRefused
from omh_git_memory.model.keys import KeyTemplates
from omh_git_memory.model.note import parse, render
from tests.helpers import SEED_ARGS, omh
from tests.helpers.repo import init_committed

TOPIC = """\
---
key: credentials-in-the-sandbox
type: topic
source: cli
recorded: 2026-10-12
---

# Credentials in the sandbox

## Summary
Tokens live in a named volume, never in files mounted one by one.

## Resetting
Run `omh-sandbox reset`; it recreates the volume.

## Related

- [[surprise/mounting-a-credential-file-returns-ebusy]]
"""

TOPIC_ARGS = [
    "memory", "remember", "--type", "topic",
    "--title", "Credentials in the sandbox",
    "--section", "Summary=Tokens live in a named volume, never in files mounted one by one.",
    "--section", "Resetting=Run `omh-sandbox reset`; it recreates the volume.",
    "--relates-to", "surprise/mounting-a-credential-file-returns-ebusy",
    "--recorded", "2026-10-12",
]


@pytest.fixture
def ready(repo_dir: Path) -> Path:
    init_committed(repo_dir)
    return repo_dir


def _templates() -> KeyTemplates:
    from omh_git_memory.model.config import load_config

    return load_config(Path("/nonexistent")).keys


def test_remember_writes_the_topic_byte_for_byte(ready: Path) -> None:
    run = omh(ready, *TOPIC_ARGS, "--json")
    assert run.code == 0, run.err
    result = run.json()
    assert result["key"] == "credentials-in-the-sandbox" and result["layer"] == "local"
    text = Path(result["path"]).read_text(encoding="utf-8")
    assert text == TOPIC
    note = parse(text)
    assert render(note) == text and note_refusals(note) == []
    shown = omh(ready, "memory", "show", "credentials-in-the-sandbox")
    assert TOPIC in shown.out


def test_the_key_comes_from_the_topic_template(ready: Path) -> None:
    (ready / ".omh/memory.toml").write_text(
        '[keys]\nsurprise = "surprise/{{slug}}"\ntopic = "topics/{{slug}}"\nstub = "{{path}}"\n')
    run = omh(ready, "memory", "remember", "--type", "topic", "--title", "Ünïcode  Keys!",
              "--json")
    assert run.code == 0, run.err
    assert run.json()["key"] == "topics/ünïcode-keys"


def test_the_default_type_stays_surprise(ready: Path) -> None:
    run = omh(ready, *SEED_ARGS, "--json")
    assert run.code == 0, run.err
    assert run.json()["key"] == "surprise/mounting-a-credential-file-returns-ebusy"


def test_a_surprise_without_its_options_is_a_usage_error(ready: Path) -> None:
    run = omh(ready, "memory", "remember", "--observed", "x", "--evidence", "e")
    assert run.code == 2
    assert "--expected" in run.err and "--type topic" in run.err


@pytest.mark.parametrize(("args", "said"), [
    (["--type", "topic"], "Missing option '--title'"),
    (["--title", "T"], "add --type topic"),
    (["--type", "topic", "--title", "T", "--expected", "x"], "--expected belongs to a surprise"),
    (["--type", "topic", "--title", "T", "--section", "no equals sign"], "NAME=TEXT"),
    (["--type", "topic", "--title", "T", "--section-file", "A=-", "--section-file", "B=-"],
     "only one --section-file"),
])
def test_options_that_do_not_make_a_topic_are_usage_errors(
    ready: Path, args: list[str], said: str
) -> None:
    run = omh(ready, "memory", "remember", *args)
    assert run.code == 2 and said in run.err, run.err
    assert not any(Path(ready).glob("**/*.md.tmp"))


@pytest.mark.parametrize(("draft", "said"), [
    (TopicDraft(title="  "), "the title is empty"),
    (TopicDraft(title="!!!"), "no letter or digit"),
    (TopicDraft(title="T", sections=[("Related", "[[x]]")]), "--relates-to"),
    (TopicDraft(title="T", sections=[("answers", "q")]), "--answers"),
    (TopicDraft(title="T", sections=[("A", "x"), ("a", "y")]), "given twice"),
    (TopicDraft(title="T", sections=[("## A", "x")]), "starts with `#`"),
    (TopicDraft(title="T", sections=[("A", "  \n")]), "is empty"),
    (TopicDraft(title="T", sections=[("A", "text\n## Injected\nmore")]), "would not read back"),
    (TopicDraft(title="T", sections=[("A", "```\nunclosed")]), "UnclosedFence"),
    (TopicDraft(title="T", sections=[("A", "esc \x1b")]), "U+001B"),
    (TopicDraft(title="T", relates_to=["../x"]), "relates_to"),
    (TopicDraft(title="T", invalidated_by="whenever"), "invalidated_by"),
    (TopicDraft(title="T", source="a\nb"), "`source`"),
])
def test_build_topic_refuses_what_would_not_make_a_sound_note(
    draft: TopicDraft, said: str
) -> None:
    with pytest.raises(NoteRefused, match=None) as caught:
        build_topic(draft, _templates(), dt.date(2026, 10, 12))
    assert said in str(caught.value)


def test_line_ends_become_lf_and_answers_make_a_list(ready: Path) -> None:
    note = build_topic(TopicDraft(title="T", sections=[("Notes", "one\r\ntwo\rthree")],
                                  answers=["where is it?"]), _templates(), dt.date(2026, 1, 2))
    assert note.section("Notes") is not None
    assert note.section("Notes").text == "one\ntwo\nthree"  # type: ignore[union-attr]
    assert note.section("Answers").items == ("where is it?",)  # type: ignore[union-attr]


def test_strict_refuses_a_link_to_nothing(ready: Path) -> None:
    run = omh(ready, *TOPIC_ARGS, "--strict")
    assert run.code == 1
    assert "names no note in the store" in run.err
    assert omh(ready, "memory", "--json").json()["notes"] == [
        n for n in omh(ready, "memory", "--json").json()["notes"] if n["layer"] == "team"]


def test_strict_accepts_a_link_to_a_note_that_exists(ready: Path) -> None:
    assert omh(ready, *SEED_ARGS).code == 0
    run = omh(ready, *TOPIC_ARGS, "--strict")
    assert run.code == 0, run.err


def test_a_taken_key_is_a_conflict_in_either_layer(ready: Path) -> None:
    assert omh(ready, *TOPIC_ARGS).code == 0
    again = omh(ready, *TOPIC_ARGS)
    assert again.code == 1 and "already exists in the local layer" in again.err
    suffixed = omh(ready, *TOPIC_ARGS, "--if-exists", "suffix", "--json")
    assert suffixed.code == 0 and suffixed.json()["key"] == "credentials-in-the-sandbox-2"
    # The repository topic (derived, in the team layer) holds the repo's own key.
    repo_topic = omh(ready, "memory", "remember", "--type", "topic", "--title", ready.name)
    assert repo_topic.code == 1 and "derived team note" in repo_topic.err


def test_a_section_file_holds_the_section_text(ready: Path, tmp_path: Path) -> None:
    body = tmp_path / "how.md"
    body.write_text("Step one.\n\n- a list\n- inside\n", encoding="utf-8")
    run = omh(ready, "memory", "remember", "--type", "topic", "--title", "How to deploy",
              "--section-file", f"Steps={body}", "--json")
    assert run.code == 0, run.err
    note = parse(Path(run.json()["path"]).read_text(encoding="utf-8"))
    assert note.section("Steps").text == "Step one.\n\n- a list\n- inside"  # type: ignore


def test_a_section_file_that_is_no_text_is_refused(ready: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.md"
    bad.write_bytes(b"\xff\xfe")
    run = omh(ready, "memory", "remember", "--type", "topic", "--title", "T",
              "--section-file", f"A={bad}")
    assert run.code == 1 and "not valid UTF-8" in run.err
    missing = omh(ready, "memory", "remember", "--type", "topic", "--title", "T",
                  "--section-file", f"A={tmp_path / 'nope'}")
    assert missing.code == 1 and "cannot read" in missing.err


def test_a_topic_promotes_like_any_note(ready: Path) -> None:
    unlinked = [a for a in SEED_ARGS if a not in ("--relates-to",
                                                  "credentials-are-a-named-volume")]
    assert omh(ready, *unlinked).code == 0
    run = omh(ready, *TOPIC_ARGS)
    assert run.code == 0, run.err
    done = omh(ready, "memory", "promote", "credentials-in-the-sandbox",
               "surprise/mounting-a-credential-file-returns-ebusy")
    assert done.code == 0, done.err
    assert (ready / ".omh/notes/credentials-in-the-sandbox.md").read_text() == TOPIC


def test_a_topic_recorded_on_a_day_still_to_come_is_refused() -> None:
    tomorrow = dt.datetime.now(dt.UTC).date() + dt.timedelta(days=2)
    draft = TopicDraft(title="Credentials in the sandbox", sections=(("Summary", "x"),),
                       recorded=tomorrow)
    with pytest.raises(NoteRefused, match="after today"):
        build_topic(draft, _templates(), dt.date.today())
