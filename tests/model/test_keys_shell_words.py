"""A command a message quotes names the key as one shell word: a hand-written
note's key may hold `$(...)` or `;`, and pasted bare the command would run it."""

from __future__ import annotations

from pathlib import Path

from omh_git_memory.model.keys import shell_word
from tests.helpers import git, local_store, note_text, omh, remember_linked
from tests.helpers.near_duplicate import as_the_shell_reads_it

KEY = "topic/x$(pwd);y"


def test_shell_word_leaves_a_plain_key_and_quotes_any_other() -> None:
    plain = "surprise/the-cache-is-kept_2.0@home"
    assert shell_word(plain) == plain
    assert shell_word(KEY) == "'topic/x$(pwd);y'"
    assert shell_word("it's") == "'it'\"'\"'s'"
    assert shell_word("") == "''"


def test_a_refused_update_of_a_topic_quotes_its_key_as_one_word(repo_dir: Path) -> None:
    path = repo_dir / f".omh/notes/{KEY}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(note_text(KEY, body="## Facts\n\n- the cache is kept\n"))
    git(repo_dir, "add", "-A")
    git(repo_dir, "commit", "-qm", "a hand-written topic")
    run = omh(repo_dir, "memory", "update", KEY, "--layer", "team", "--evidence", "more")
    assert run.code != 0
    argvs = as_the_shell_reads_it(repo_dir, run.err)
    assert ["omh", "memory", "edit", KEY] in argvs, (run.err, argvs)


def test_promote_s_advice_to_promote_a_linked_note_quotes_its_key(repo_dir: Path) -> None:
    target = local_store(repo_dir) / f"{KEY}.md"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(note_text(KEY, body="## Facts\n\n- the cache is kept\n"))
    linker = remember_linked(repo_dir, "The cache outlives a logout.", KEY)
    run = omh(repo_dir, "memory", "promote", linker)
    assert run.code != 0
    assert f"omh memory promote {linker} {shell_word(KEY)}" in run.err, run.err
