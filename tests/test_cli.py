"""The real `omh` command, in subprocesses, in real repositories."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from tests.helpers import FIXTURES, SEED_ARGS, SEED_NOTE, git, omh

SEED_KEY = "surprise/mounting-a-credential-file-returns-ebusy"


def _store(repo: Path) -> Path:
    return Path(omh(repo, "memory", "--json").json()["local_store"])


def test_init_then_remember_writes_the_seed_example_byte_for_byte(repo_dir: Path) -> None:
    assert omh(repo_dir, "init").code == 0
    run = omh(repo_dir, *SEED_ARGS)
    assert run.code == 0, run.err
    written = _store(repo_dir) / f"{SEED_KEY}.md"
    assert written.read_bytes() == SEED_NOTE.encode()


def test_init_writes_its_files_once_and_is_safe_to_run_twice(repo_dir: Path) -> None:
    first = omh(repo_dir, "init", "--json").json()
    assert first["config_created"] and first["gitignore_created"] and first["store_created"]
    config = repo_dir / ".omh/memory.toml"
    config.write_text(config.read_text() + "# edited by a person\n")
    second = omh(repo_dir, "init", "--json").json()
    assert not (second["config_created"] or second["gitignore_created"] or second["store_created"])
    assert config.read_text().endswith("# edited by a person\n")
    assert "memory.toml" in omh(repo_dir, "init").out


def test_remember_writes_only_to_the_local_layer(repo_dir: Path) -> None:
    # Invariant 3: nothing lands in the checkout, so `git add -A` cannot publish it.
    omh(repo_dir, "init")
    git(repo_dir, "add", "-A")
    git(repo_dir, "commit", "-qm", "omh init")
    assert omh(repo_dir, *SEED_ARGS).code == 0
    assert git(repo_dir, "status", "--porcelain", "--untracked-files=all") == ""
    assert not _store(repo_dir).is_relative_to(repo_dir)
    listed = omh(repo_dir, "memory", "--json").json()["notes"]
    assert [(n["key"], n["layer"]) for n in listed if n["type"] == "surprise"] == [
        (SEED_KEY, "local")
    ]


def test_remembering_one_observation_twice_is_a_conflict(repo_dir: Path) -> None:
    # Invariant 5, at the command line, with another spelling of the same observation.
    assert omh(repo_dir, *SEED_ARGS).code == 0
    again = [a if a != "Mounting a credential file returns EBUSY." else "MOUNTING a credential"
             " file — returns ebusy." for a in SEED_ARGS]
    run = omh(repo_dir, *again)
    assert run.code == 1
    assert "already exists" in run.err and "update it instead" in run.err
    assert run.err.count("\n") == 1  # one line


def test_remember_refuses_empty_answers_with_the_published_message(repo_dir: Path) -> None:
    args = [*SEED_ARGS[: SEED_ARGS.index("--answers")], "--recorded", "2026-10-11"]
    run = omh(repo_dir, *args)
    assert run.code == 1
    assert run.err == "omh: `answers` is empty; a note nobody can find is a note nobody wrote\n"
    assert not (_store(repo_dir) / f"{SEED_KEY}.md").exists()


def test_remember_refuses_bad_input_and_writes_nothing(repo_dir: Path) -> None:
    for bad, message in [
        (["--recorded", "2026-13-45"], "not a date that exists"),
        (["--relates-to", "../etc/passwd"], "not a usable key"),
        (["--invalidated-by", "whenever"], "not a trigger omh can evaluate"),
        (["--evidence", "```\nunclosed"], "structure"),
    ]:
        run = omh(repo_dir, *SEED_ARGS, *bad)
        assert run.code == 1, bad
        assert message in run.err, (bad, run.err)
    assert [n for n in omh(repo_dir, "memory", "--json").json()["notes"]
            if n["layer"] == "local"] == []


def test_if_exists_suffix_writes_a_second_key_that_its_file_agrees_with(repo_dir: Path) -> None:
    omh(repo_dir, *SEED_ARGS)
    run = omh(repo_dir, *SEED_ARGS, "--if-exists", "suffix", "--json")
    assert run.json()["key"] == f"{SEED_KEY}-2"
    assert omh(repo_dir, "memory", "lint", "--json").json()["counts"]["KeyDisagreesWithPath"] == 0


def test_memory_lists_notes_by_layer_with_inbound_counts(repo_dir: Path) -> None:
    omh(repo_dir, *SEED_ARGS)
    omh(repo_dir, "memory", "remember", "--expected", "e", "--observed", "Credentials live apart.",
        "--evidence", "v", "--answers", "q", "--relates-to", SEED_KEY)
    notes = {n["key"]: n for n in omh(repo_dir, "memory", "--json").json()["notes"]}
    assert notes[SEED_KEY]["inbound"] == 1
    assert notes["surprise/credentials-live-apart"]["inbound"] == 0
    text = omh(repo_dir, "memory").out
    assert "local · 2 notes" in text and "← 1 link" in text


def test_show_prints_the_stored_note_and_suggests_near_keys(repo_dir: Path) -> None:
    omh(repo_dir, *SEED_ARGS)
    assert omh(repo_dir, "memory", "show", SEED_KEY).out == SEED_NOTE
    missing = omh(repo_dir, "memory", "show", "surprise/mounting-a-credential")
    assert missing.code == 1 and f"did you mean {SEED_KEY}" in missing.err


def test_rm_removes_one_note_reports_inbound_links_and_never_cascades(repo_dir: Path) -> None:
    # Invariant 7: rm never cascades.
    omh(repo_dir, *SEED_ARGS)
    omh(repo_dir, "memory", "remember", "--expected", "e", "--observed", "Links point here.",
        "--evidence", "v", "--answers", "q", "--relates-to", SEED_KEY)
    run = omh(repo_dir, "memory", "rm", SEED_KEY, "--json")
    assert run.code == 0, run.err
    assert run.json()["linked_from"] == [{"layer": "local", "key": "surprise/links-point-here"}]
    remaining = [n["key"] for n in omh(repo_dir, "memory", "--json").json()["notes"]
                 if n["layer"] == "local"]
    assert remaining == ["surprise/links-point-here"]
    lint = omh(repo_dir, "memory", "lint", "--json").json()
    assert lint["counts"]["DanglingLink"] == 1


def test_lint_over_one_violation_of_each_rule_fails_naming_each_once(repo_dir: Path) -> None:
    store = repo_dir.parent / "store"
    shutil.copytree(FIXTURES / "lint/store", store)
    env = {"OMH_LOCAL_STORE": str(store)}
    run = omh(repo_dir, "memory", "lint", env=env)
    assert run.code == 1
    for rule in ("Unreadable", "UnclosedFence", "MissingSection", "ProseInListSection",
                 "KeyDisagreesWithPath", "UnevaluatableTrigger", "DuplicateKey", "DanglingLink",
                 "Orphan"):
        assert run.out.count(f": {rule} (") == 1, rule
    counts = omh(repo_dir, "memory", "lint", "--json", env=env).json()["counts"]
    assert set(counts.values()) == {1}


def test_lint_passes_with_warnings_only(repo_dir: Path) -> None:
    omh(repo_dir, *SEED_ARGS)
    run = omh(repo_dir, "memory", "lint")
    assert run.code == 0
    assert "0 refusals, 2 warnings" in run.out


def test_outside_a_repository_the_error_says_what_to_do(tmp_path: Path) -> None:
    run = omh(tmp_path, "memory")
    assert run.code == 1
    assert "not inside a git repository" in run.err and "git init" in run.err


def test_a_broken_config_is_one_clear_line(repo_dir: Path) -> None:
    (repo_dir / ".omh").mkdir()
    (repo_dir / ".omh/memory.toml").write_text('[keys]\nsurprise = "s/{{slugg}}"\n')
    run = omh(repo_dir, *SEED_ARGS)
    assert run.code == 1
    assert "{{slugg}}" in run.err and run.err.count("\n") == 1


def test_usage_errors_exit_2(repo_dir: Path) -> None:
    assert omh(repo_dir, "memory", "remember").code == 2
    assert omh(repo_dir, "memory", "remember", *SEED_ARGS[2:], "--if-exists", "maybe").code == 2


def test_help_does_not_import_the_heavy_modules() -> None:
    probe = (
        "import sys; sys.argv=['omh','--help']\n"
        "from omh_git_memory.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "heavy = [m for m in ('mcp', 'pygit2', 'mistune', 'pydantic', 'rapidfuzz') "
        "if m in sys.modules]\n"
        "print(heavy, file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stderr.strip() == "[]"
    assert "memory" in done.stdout


def test_demo_walks_through_every_step(tmp_path: Path) -> None:
    run = omh(tmp_path, "demo")
    assert run.code == 0, run.err
    assert SEED_NOTE in run.out
    assert "already exists" in run.out
    assert "ProseInListSection (refused)" in run.out
    assert "removed local/half-finished" in run.out
    assert "would dangle for a teammate" in run.out
    assert "1 note now in team" in run.out
    recall_lines = [line for line in run.out.splitlines()
                    if line.startswith("surprise/ci-already-listens-on-port-8080 ")]
    assert recall_lines and "team · 2026-10-13" in recall_lines[0]
    assert "docs/deploy" in run.out  # a derived stub
    assert '"mcpServers"' in run.out
    renamed = run.out.split("$ omh memory mv ", 1)[1]
    assert "renamed local/surprise/credentials-are-a-named-volume to " in renamed
    assert "DanglingLink          warning  0" in renamed.split("$ omh memory lint", 1)[1]


# A newcomer's walk through the commands: what each message says.

def _remember(repo: Path, observed: str, evidence: str = "seen in the log") -> None:
    run = omh(repo, "memory", "remember", "--expected", "it works", "--observed", observed,
              "--evidence", evidence, "--answers", "why?")
    assert run.code == 0, run.err


def test_wrong_promote_lists_each_refusal_on_its_own_line(repo_dir: Path) -> None:
    # Escaping names in error messages turned the refusal list's own line breaks
    # into a literal `\n`, so every problem ran together on one line.
    _remember(repo_dir, "The first one.", evidence="DB_PASSWORD=$uperS3cretValue")
    _remember(repo_dir, "The second one.", evidence="DB_PASSWORD=$uperS3cretValue")
    run = omh(repo_dir, "memory", "promote", "surprise/the-first-one", "surprise/the-second-one")
    assert run.code == 1
    assert "\\n" not in run.err
    lines = run.err.splitlines()
    assert lines[0] == "omh: promote refused, nothing was committed:"
    assert [line.split(":")[0].strip() for line in lines[1:]] == [
        "surprise/the-first-one", "surprise/the-second-one"]


def test_wrong_refusal_list_still_escapes_a_name_with_a_newline(repo_dir: Path) -> None:
    # Each problem line is escaped on its own: a name read from disk cannot add a line.
    from omh_git_memory.errors import OmhError

    class Listed(OmhError):
        def lines(self) -> list[str]:
            return ["refused:", "  a\nforged: line"]

    from omh_git_memory.cli import _error_lines

    assert _error_lines(Listed("x")) == ["omh: refused:", "  a\\nforged: line"]
    assert _error_lines(OmhError("one\ntwo")) == ["omh: one\\ntwo"]


def test_wrong_unknown_key_with_layer_names_the_layer_that_holds_it(repo_dir: Path) -> None:
    # `show K --layer team` for a local-only K suggested K itself ("did you mean K?").
    _remember(repo_dir, "Only local.")
    for command in ("show", "rm"):
        run = omh(repo_dir, "memory", command, "surprise/only-local", "--layer", "team")
        assert run.code == 1
        assert "did you mean" not in run.err
        assert "the local layer holds it" in run.err and "--layer local" in run.err, run.err
    assert omh(repo_dir, "memory", "show", "surprise/only-local").code == 0


def test_wrong_unknown_key_suggests_only_a_close_key(repo_dir: Path) -> None:
    # "nope" was answered with "did you mean surprise/dirty-one?".
    _remember(repo_dir, "Dirty one.")
    far = omh(repo_dir, "memory", "show", "nope")
    assert far.code == 1 and "did you mean" not in far.err and "`omh memory` lists" in far.err
    near = omh(repo_dir, "memory", "show", "surprise/dirty-on")
    assert "did you mean surprise/dirty-one?" in near.err


def test_wrong_rm_of_a_team_note_reports_the_path_and_the_commit_apart(repo_dir: Path) -> None:
    # --json gave "path": ".omh/notes/K.md (commit abc…)", and the line nested parentheses.
    _remember(repo_dir, "Shared once.")
    assert omh(repo_dir, "memory", "promote", "surprise/shared-once").code == 0
    removed = omh(repo_dir, "memory", "rm", "surprise/shared-once", "--json").json()["removed"]
    head = git(repo_dir, "rev-parse", "HEAD").strip()
    assert removed == {"key": "surprise/shared-once", "layer": "team",
                       "path": ".omh/notes/surprise/shared-once.md", "commit": head}
    _remember(repo_dir, "Shared twice.")
    assert omh(repo_dir, "memory", "promote", "surprise/shared-twice").code == 0
    run = omh(repo_dir, "memory", "rm", "surprise/shared-twice")
    head = git(repo_dir, "rev-parse", "HEAD").strip()
    path = ".omh/notes/surprise/shared-twice.md"
    assert run.out.splitlines()[0] == (
        f"removed team/surprise/shared-twice: commit {head[:12]} deletes {path}; "
        f"`git show {head[:12]}~1:{path}` shows it; push the branch to share the removal")


def test_wrong_unknown_trigger_lists_the_shapes_a_writer_types(repo_dir: Path) -> None:
    # The refusal listed the stored shapes (file:<path>@<blob id>, image:<digest>), which
    # a writer never types; `file:<path>` and `image:current` are what remember takes.
    run = omh(repo_dir, "memory", "remember", "--expected", "a", "--observed", "b",
              "--evidence", "c", "--answers", "q", "--invalidated-by", "whenever")
    assert run.code == 1
    assert "file:<path>, image:current, base:<YYYY-MM>, symbol:<name>" in run.err, run.err
    assert "@<blob id>" not in run.err


def test_wrong_a_taken_local_key_says_which_option_replaces_it(repo_dir: Path) -> None:
    # "update it instead (`omh memory show K`)" pointed at a command that updates nothing.
    _remember(repo_dir, "Taken.")
    run = omh(repo_dir, "memory", "remember", "--expected", "a", "--observed", "Taken.",
              "--evidence", "c", "--answers", "q")
    assert run.code == 1
    assert "--if-exists override to replace it" in run.err, run.err
    assert "--if-exists suffix to keep both" in run.err


def test_wrong_rm_counts_one_linking_note_in_the_singular(repo_dir: Path) -> None:
    _remember(repo_dir, "Target.")
    run = omh(repo_dir, "memory", "remember", "--expected", "a", "--observed", "Linker.",
              "--evidence", "c", "--answers", "q", "--relates-to", "surprise/target")
    assert run.code == 0, run.err
    out = omh(repo_dir, "memory", "rm", "surprise/target").out
    assert "1 note still links to it; that link now dangles:" in out, out
