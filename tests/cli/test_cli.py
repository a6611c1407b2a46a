"""The `omh` command (in process, or in a subprocess where a run needs one), in real
repositories."""

from __future__ import annotations

import shutil
import subprocess
import sys
from functools import partial
from pathlib import Path

import pytest

from tests.helpers import FIXTURES, ROOT, SEED_ARGS, SEED_NOTE, demo_run, git, local_store, omh
from tests.helpers.notes import remembered

_remember = partial(remembered, expected="it works", evidence="seen in the log", answers="why?")

SEED_KEY = "surprise/mounting-a-credential-file-returns-ebusy"


def test_init_then_remember_writes_the_seed_example_byte_for_byte(repo_dir: Path) -> None:
    assert omh(repo_dir, "init").code == 0
    run = omh(repo_dir, *SEED_ARGS)
    assert run.code == 0, run.err
    written = local_store(repo_dir) / f"{SEED_KEY}.md"
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
    # Invariant: local notes never reach git. Nothing lands in the checkout, so
    # `git add -A` cannot publish it.
    omh(repo_dir, "init")
    git(repo_dir, "add", "-A")
    git(repo_dir, "commit", "-qm", "omh init")
    assert omh(repo_dir, *SEED_ARGS).code == 0
    assert git(repo_dir, "status", "--porcelain", "--untracked-files=all") == ""
    assert not local_store(repo_dir).is_relative_to(repo_dir)
    listed = omh(repo_dir, "memory", "--json").json()["notes"]
    assert [(n["key"], n["layer"]) for n in listed if n["type"] == "surprise"] == [
        (SEED_KEY, "local")
    ]


def test_remembering_one_observation_twice_is_a_conflict(repo_dir: Path) -> None:
    # Invariant: a taken key is refused, never copied; at the command line, with
    # another spelling of the same observation.
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
    assert not (local_store(repo_dir) / f"{SEED_KEY}.md").exists()


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
    assert omh(repo_dir, "memory", "show", SEED_KEY).out.split("\n", 1)[1] == SEED_NOTE
    missing = omh(repo_dir, "memory", "show", "surprise/mounting-a-credential")
    assert missing.code == 1 and f"did you mean {SEED_KEY}" in missing.err


def test_rm_removes_one_note_reports_inbound_links_and_never_cascades(repo_dir: Path) -> None:
    # Invariant: rm never cascades.
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
                 "Orphan", "NearDuplicate"):
        assert run.out.count(f": {rule} (") == 1, rule
    counts = omh(repo_dir, "memory", "lint", "--json", env=env).json()["counts"]
    # LooksLikeSecret reads team notes only (a local note may hold a secret): none here
    assert counts.pop("LooksLikeSecret") == 0
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
        "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
        "heavy = [m for m in ('mcp', 'pygit2', 'mistune', 'pydantic', 'rapidfuzz') "
        "if m in sys.modules]\n"
        "print(heavy, file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stderr.strip() == "[]"
    assert "memory" in done.stdout


def test_demo_walks_through_every_step() -> None:
    run = demo_run()  # one run of the demo for every test that reads it
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
    # init's two files are committed, as init asks, so the topic is named as in any clone
    assert "the repository topic of tinyhttp" in run.out and " topic of repo " not in run.out
    assert "on a terminal, review then asks about each: promote, edit, remove" in run.out.lower()


# A newcomer's walk through the commands: what each message says.


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
    from omh_git_memory.model.errors import OmhError

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


# Papercuts a newcomer hits (items 12 and 14 of docs/records/review-issue-13.md): each
# test failed before its fix.

def test_version_prints_the_installed_distribution_version(repo_dir: Path) -> None:
    from importlib.metadata import version

    run = omh(repo_dir, "--version")
    assert run.code == 0, run.err
    assert run.out == f"omh {version('omh-git-memory')}\n"


def test_version_does_not_import_the_heavy_modules() -> None:
    probe = (
        "import sys; sys.argv=['omh','--version']\n"
        "from omh_git_memory.cli import main\n"
        "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
        "heavy = [m for m in ('mcp', 'pygit2', 'mistune', 'pydantic', 'rapidfuzz') "
        "if m in sys.modules]\n"
        "print(heavy, file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stderr.strip() == "[]"
    assert done.stdout.startswith("omh ")


def test_json_given_to_the_memory_group_applies_to_every_subcommand(repo_dir: Path) -> None:
    # `omh memory --json recall …` printed the text tree: the group's --json was dropped.
    import json

    calls = [
        ["remember", "--expected", "a", "--observed", "Group json.", "--evidence", "c",
         "--answers", "why group json?"],
        ["list"],
        ["recall", "group json"],
        ["show", "surprise/group-json"],
        ["stale"],
        ["reindex"],
        ["lint"],
        ["agents-md"],
        ["promote", "surprise/group-json"],
        ["rm", "surprise/group-json"],
        [],
    ]
    for args in calls:
        run = omh(repo_dir, "memory", "--json", *args)
        assert run.code == 0, (args, run.err)
        json.loads(run.out)  # JSON, not text


def test_every_memory_subcommand_takes_the_groups_json() -> None:
    # The group hands its --json down by parameter name; a subcommand whose JSON flag is
    # named otherwise would silently print text.
    import typer as typer_

    from omh_git_memory.cli import app

    group = typer_.main.get_command(app).commands["memory"]  # type: ignore[attr-defined]
    for name, command in group.commands.items():
        names = {p.name for p in command.params if "--json" in getattr(p, "opts", [])}
        assert names == {"as_json"}, name


def test_counts_agree_with_their_noun() -> None:
    # "1 more notes matched well enough", "… and 1 more linked notes".
    from omh_git_memory.recall.answer import Answer, Hit
    from omh_git_memory.recall.document import Doc
    from omh_git_memory.recall.render import render_tree

    a, b = (Doc("team", k, "topic", 739000, k, (), "x", 1, k) for k in ("a", "b"))
    text = render_tree(Answer((Hit(a, 1.0, (b,), 1),), left_out=1))
    assert "… and 1 more linked note (" in text, text
    assert "\n1 more note matched well enough but was left out;" in text, text
    text = render_tree(Answer((Hit(a, 1.0, (b,), 2),), left_out=2))
    assert "… and 2 more linked notes (" in text and "\n2 more notes matched" in text


def test_init_says_what_to_do_next(repo_dir: Path) -> None:
    run = omh(repo_dir, "init")
    assert run.code == 0, run.err
    text = run.out.split("next:", 1)[1]
    for command in ("omh memory remember", "omh memory recall", "omh mcp config",
                    "omh hooks install"):
        assert command in text, command
    fields = omh(repo_dir, "init", "--json").json()
    assert set(fields) == {"config", "config_created", "gitignore", "gitignore_created",
                           "store", "store_created"}


def test_memory_counts_written_notes_apart_from_derived_ones(repo_dir: Path) -> None:
    # "team · 3 notes at HEAD" counted two stubs and the repository topic as notes.
    (repo_dir / "docs").mkdir()
    (repo_dir / "docs/deploy.md").write_text("# Deploy\n")
    git(repo_dir, "add", "docs/deploy.md")
    git(repo_dir, "commit", "-qm", "a document")
    _remember(repo_dir, "Shared.")
    assert omh(repo_dir, "memory", "promote", "surprise/shared").code == 0
    head = git(repo_dir, "rev-parse", "HEAD").strip()
    out = omh(repo_dir, "memory").out
    assert f"team · 1 note, 2 stubs, 1 repository topic at HEAD {head[:12]}\n" in out, out
    assert "local · 0 notes in " in out
    listed = omh(repo_dir, "memory", "--json").json()
    assert listed["head"] == head
    assert listed["counts"] == {"team": {"notes": 1, "stubs": 2, "topic": 1},
                                "local": {"notes": 0}}
    derived = {n["key"]: n["derived"] for n in listed["notes"]}
    assert derived["surprise/shared"] is False and derived["docs/deploy"] is True


def test_rm_of_a_derived_note_says_what_it_derives_from(repo_dir: Path) -> None:
    # rm of the repository topic told the user to exclude "the document's path".
    listed = omh(repo_dir, "memory", "--json").json()["notes"]
    (topic,) = [n["key"] for n in listed if n["type"] == "topic" and n["derived"]]
    run = omh(repo_dir, "memory", "rm", topic)
    assert run.code == 1
    assert "[stubs] exclude" not in run.err and "the document's" not in run.err, run.err
    assert "repository topic" in run.err and "derived from the repository" in run.err
    stub = omh(repo_dir, "memory", "rm", "readme")
    assert stub.code == 1
    assert "README.md" in stub.err and "[stubs] exclude" in stub.err, stub.err


def test_remember_refuses_a_recorded_day_still_to_come(repo_dir: Path) -> None:
    import datetime as dt

    today = dt.datetime.now(dt.UTC).date()
    later = today + dt.timedelta(days=2)
    for day in (later, dt.date(2999, 1, 1)):
        run = omh(repo_dir, *SEED_ARGS[:-1], day.isoformat())
        assert run.code == 1, run.out
        assert day.isoformat() in run.err and today.isoformat() in run.err, run.err
    assert omh(repo_dir, "memory", "--json").json()["notes"] == [
        n for n in omh(repo_dir, "memory", "--json").json()["notes"] if n["layer"] == "team"]
    assert omh(repo_dir, *SEED_ARGS[:-1], today.isoformat()).code == 0


def test_show_names_the_layer_and_date_of_every_note_it_prints(repo_dir: Path) -> None:
    # Invariant: every answer shows its layer and date. `show` printed the bare
    # file, without the layer beside it.
    omh(repo_dir, *SEED_ARGS)
    store = local_store(repo_dir)
    run = omh(repo_dir, "memory", "show", SEED_KEY)
    first, rest = run.out.split("\n", 1)
    assert first == f"{SEED_KEY}  local · 2026-10-11  {store / SEED_KEY}.md"
    assert rest == SEED_NOTE
    (shown,) = omh(repo_dir, "memory", "show", SEED_KEY, "--json").json()["notes"]
    assert shown["layer"] == "local" and shown["recorded"] == "2026-10-11"
    assert shown["text"] == SEED_NOTE
    today = omh(repo_dir, "memory", "--json").json()["notes"]
    derived = {n["key"]: n for n in today if n["derived"]}
    for key, where in (("readme", "derived from README.md"),
                       (next(k for k, n in derived.items() if n["type"] == "topic"),
                        "derived from the repository")):
        line = omh(repo_dir, "memory", "show", key).out.split("\n", 1)[0]
        assert line == f"{key}  team · {derived[key]['recorded']}  {where}", line
        (note,) = omh(repo_dir, "memory", "show", key, "--json").json()["notes"]
        assert note["path"] == derived[key]["path"], note  # README.md; null for the topic
        assert note["recorded"] == derived[key]["recorded"]


def test_show_of_a_key_both_layers_hold_names_each_layer(repo_dir: Path) -> None:
    from tests.helpers import note_text

    store = local_store(repo_dir)
    store.mkdir(parents=True, exist_ok=True)
    (store / "readme.md").write_text(note_text("readme", body="Mine.\n"))
    out = omh(repo_dir, "memory", "show", "readme").out
    heads = [line for line in out.splitlines() if line.startswith("readme  ")]
    assert heads == [f"readme  team · {heads[0].split()[3]}  derived from README.md",
                     f"readme  local · 2026-11-01  {store / 'readme.md'}"], out


def test_remember_help_says_answers_is_required_and_shows_the_trigger_kinds() -> None:
    # The help left out that --answers is required and showed one trigger kind only.
    done = omh(ROOT, "memory", "remember", "--help")
    assert done.code == 0, done.err
    text = " ".join(done.out.split())
    answers = text.split("--answers", 1)[1].split("--relates-to", 1)[0]
    assert "required" in answers.lower(), answers
    trigger = text.split("--invalidated-by", 1)[1].split("--source", 1)[0]
    for kind in ("file:<path>", "image:current", "base:YYYY-MM", "symbol:NAME"):
        assert kind in trigger, (kind, trigger)


def test_version_from_a_tree_nobody_installed_is_a_line_not_a_crash(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import importlib.metadata

    import typer as typer_

    from omh_git_memory.cli import _print_version

    def missing(name: str) -> str:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", missing)
    with pytest.raises(typer_.Exit):
        _print_version(True)
    assert "version unknown" in capsys.readouterr().out


def test_a_memory_command_given_at_the_top_says_where_it_is(tmp_path: Path) -> None:
    for name in ("recall", "remember", "agents-md"):
        run = omh(tmp_path, name, "anything")
        assert run.code == 2, run.out
        assert run.err == (f"omh: there is no `omh {name}`: it is `omh memory {name}` "
                           "(`omh memory --help` lists the memory commands)\n")
    assert "No such command 'nonsense'" in omh(tmp_path, "nonsense").err  # typer's own
    assert omh(tmp_path, "doctor", "--help").code == 0  # a top-level command runs


def test_no_top_level_command_shares_a_name_with_a_memory_command() -> None:
    from omh_git_memory.cli import app, memory_command_names

    top = {c.name or c.callback.__name__ for c in app.registered_commands if c.callback}
    top |= {g.name for g in app.registered_groups if g.name}
    assert "init" in top and "recall" in memory_command_names()
    assert not top & memory_command_names()


def test_recall_joins_the_words_of_an_unquoted_question(tmp_path: Path) -> None:
    from tests.helpers import make_repo

    make_repo(tmp_path / "r", {"docs/deploy.md": "# Deploy\n\n## Rollback\n\nSwitch back.\n"})
    quoted = omh(tmp_path / "r", "memory", "recall", "--json", "how do I rollback a deploy")
    unquoted = omh(tmp_path / "r", "memory", "recall", "how", "do", "--json", "I", "rollback",
                   "a", "deploy")
    assert quoted.code == unquoted.code == 0, unquoted.err
    assert unquoted.json() == quoted.json() and quoted.json()["results"]
