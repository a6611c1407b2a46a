"""The Stop hook's edges: what passes for omh's hook, the shapes of `hooks` taken
or refused, what removing leaves, and the checks made before anything is written
(agent/stop_hook.py)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from omh_git_memory.agent import stop_hook
from omh_git_memory.model.errors import ConfigError, OmhError

LINE = "omh memory review --summary --for claude"
OURS = {"type": "command", "command": LINE}
SETTINGS = ".claude/settings.json"


def _stop(*groups: object, **more: object) -> str:
    return json.dumps({"hooks": {"Stop": list(groups), **more}})


@pytest.mark.parametrize("hook", [
    {"type": "command", "command": LINE},
    {"type": "command", "command": "/opt/bin/omh memory review --summary --for claude"},
    {"type": "command", "command": "'omh'  memory review --summary --for claude"},
])
def test_a_hook_with_omhs_arguments_passes_for_ours(hook: object) -> None:
    assert stop_hook.installed(json.loads(_stop({"hooks": [hook]})))


@pytest.mark.parametrize("hook", [
    LINE,  # not an object
    {"type": "prompt", "command": LINE},
    {"command": LINE},
    {"type": "command", "command": ["omh", "memory"]},
    {"type": "command"},
    {"type": "command", "command": "omh memory review --summary --for 'claude"},  # unbalanced
    {"type": "command", "command": "memory review --summary --for claude"},
    {"type": "command", "command": "omh memory review --summary --for claude now"},
    {"type": "command", "command": "omh memory review --summary --for codex"},
])
def test_anything_else_is_not_ours(hook: object) -> None:
    assert not stop_hook.installed(json.loads(_stop({"hooks": [hook]})))
    text = _stop({"hooks": [hook]})
    assert stop_hook.remove(text) == text


def test_groups_of_another_shape_are_passed_over() -> None:
    assert not stop_hook.installed(json.loads(_stop("x", {"hooks": "x"}, {"matcher": ""})))
    assert stop_hook.installed(json.loads(_stop("x", {"hooks": 3}, {"hooks": [OURS]})))
    assert not stop_hook.installed({"hooks": None})
    assert not stop_hook.installed({"hooks": {"Stop": None}})
    assert not stop_hook.installed({})


def test_the_snippet_is_claude_codes_format() -> None:
    assert json.loads(stop_hook.snippet("/opt/omh")) == {"hooks": {"Stop": [{"hooks": [
        {"type": "command", "command": "/opt/omh memory review --summary --for claude"}]}]}}
    assert stop_hook.snippet() == (  # as `omh mcp config claude` prints it, two-space indents
        '{\n  "hooks": {\n    "Stop": [\n      {\n        "hooks": [\n          {\n'
        '            "type": "command",\n            "command": "omh memory review --summary '
        '--for claude"\n          }\n        ]\n      }\n    ]\n  }\n}\n')


@pytest.mark.parametrize(("text", "expected"), [
    ("", {"hooks": {"Stop": [{"hooks": [OURS]}]}}),
    ("{}", {"hooks": {"Stop": [{"hooks": [OURS]}]}}),
    ('{"hooks": null}', {"hooks": {"Stop": [{"hooks": [OURS]}]}}),
    ('{"hooks": {}}', {"hooks": {"Stop": [{"hooks": [OURS]}]}}),
    ('{"hooks": {"Stop": null}}', {"hooks": {"Stop": [{"hooks": [OURS]}]}}),
    ('{"hooks": {"Stop": []}}', {"hooks": {"Stop": [{"hooks": [OURS]}]}}),
    ('{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x"}]}]}}',
     {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x"}]},
                         {"hooks": [OURS]}]}}),
])
def test_add_puts_the_hook_into_every_shape_it_takes(text: str, expected: object) -> None:
    added = stop_hook.add(text)
    assert json.loads(added) == expected
    assert stop_hook.add(added) == added  # there already: unchanged


def test_add_refuses_a_stop_that_is_not_a_list() -> None:
    with pytest.raises(ConfigError, match=r"`hooks\.Stop` is not a list"):
        stop_hook.add('{"hooks": {"Stop": "omh"}}')
    with pytest.raises(ConfigError, match="`hooks` is not an object"):
        stop_hook.add('{"hooks": [1]}')


@pytest.mark.parametrize(("before", "after"), [
    # a group of ours alone, with or without a matcher, goes with the Stop list and hooks
    (_stop({"hooks": [OURS]}), ""),
    (_stop({"matcher": "", "hooks": [OURS]}), ""),
    (json.dumps({"model": "x", "hooks": {"Stop": [{"hooks": [OURS]}]}}), {"model": "x"}),
    # a group with more than hooks and a matcher keeps its other keys
    (_stop({"hooks": [OURS], "note": "mine"}),
     {"hooks": {"Stop": [{"hooks": [], "note": "mine"}]}}),
    # another event stays, and so does `hooks`
    (_stop({"hooks": [OURS]}, PreToolUse=[]), {"hooks": {"PreToolUse": []}}),
    # our hook twice in a group, beside another: both of ours go
    (_stop({"hooks": [OURS, {"type": "command", "command": "x"}, OURS]}),
     {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x"}]}]}}),
    # groups of another shape are passed over and kept
    (_stop("x", {"hooks": "y"}, {"hooks": [OURS]},
           {"hooks": [{"type": "command", "command": "z"}]}),
     {"hooks": {"Stop": ["x", {"hooks": "y"}, {"hooks": [{"type": "command", "command": "z"}]}]}}),
    # our hook in two groups: both go, whichever held it alone
    (_stop({"hooks": [OURS, {"type": "command", "command": "z"}]}, {"hooks": [OURS]}),
     {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "z"}]}]}}),
    # ... before it or after it (the groups are gone through from the last)
    (_stop({"hooks": [OURS]}, {"hooks": "y"}, {"matcher": "m"}),
     {"hooks": {"Stop": [{"hooks": "y"}, {"matcher": "m"}]}}),
    # a group without our hook before one with it: only ours is touched
    (_stop({"hooks": [{"type": "command", "command": "z"}]}, {"hooks": [OURS]}),
     {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "z"}]}]}}),
    (_stop({"hooks": [OURS]}, {"hooks": [{"type": "command", "command": "z"}]}),
     {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "z"}]}]}}),
])
def test_remove_leaves_what_held_something_else(before: str, after: object) -> None:
    removed = stop_hook.remove(before)
    assert (removed if after == "" else json.loads(removed)) == after


def test_the_check_refuses_a_change_that_would_change_something_else() -> None:
    with pytest.raises(ConfigError, match="without changing something else"):
        stop_hook._checked('{"a": 1}', '{"a": 2}')
    assert stop_hook._checked('{"a": 1}', '{"a": 1, "hooks": {"Stop": [{"hooks": ['
                              + json.dumps(OURS) + ']}]}}').startswith('{"a": 1')
    # `hooks: null`, `Stop: null` and no hooks at all are the same to Claude Code
    assert stop_hook._without_ours('{"hooks": {"Stop": null}}') == {}
    assert stop_hook._without_ours('{"hooks": {"Stop": null, "Pre": []}}') == {
        "hooks": {"Pre": []}}
    assert stop_hook._without_ours('{"hooks": null, "a": "b"}') == {"a": "b"}
    assert stop_hook._without_ours(_stop({"hooks": [OURS], "x": "y"})) == {
        "hooks": {"Stop": [{"hooks": [], "x": "y"}]}}
    assert stop_hook._without_ours(_stop("g")) == {"hooks": {"Stop": ["g"]}}


def _settings(repo: Path, text: str) -> Path:
    path = repo / SETTINGS
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    return path


@pytest.mark.parametrize("line", [
    "./omh memory review --summary --for claude",  # a file of the repository's choosing
    "'omh' memory review --summary --for claude",  # quoted: not the line omh writes
])
def test_a_hook_that_only_passes_for_ours_is_refused_before_anything_is_written(
    tmp_path: Path, line: str
) -> None:
    text = _stop({"hooks": [{"type": "command", "command": line}]})
    path = _settings(tmp_path, text)
    for call in (stop_hook.check, stop_hook.write):
        with pytest.raises(ConfigError, match="a command line omh does not write"):
            call(tmp_path)
    assert path.read_text() == text


def test_omhs_own_lines_pass_and_are_there_already(tmp_path: Path) -> None:
    outside = tmp_path / "bin" / "omh"
    repo = tmp_path / "repo"
    repo.mkdir()
    for program in ("omh", str(outside)):
        path = _settings(repo, stop_hook.snippet(program))
        stop_hook.check(repo, program)
        assert stop_hook.write(repo, program) == (path, False)
    stop_hook.refuse_foreign(repo, "  ")  # no file: nothing to refuse


def test_check_refuses_what_write_would_and_writes_nothing(tmp_path: Path) -> None:
    path = _settings(tmp_path, '{"hooks": 3}')
    with pytest.raises(ConfigError):
        stop_hook.check(tmp_path)
    assert path.read_text() == '{"hooks": 3}'
    path.unlink()
    path.parent.rmdir()
    stop_hook.check(tmp_path)  # no file: it can take the hook
    assert not path.parent.exists()  # and checking wrote nothing


def test_check_refuses_a_settings_file_that_is_a_link(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".claude").mkdir(parents=True)
    target = tmp_path / "elsewhere.json"
    target.write_text("{}")
    os.symlink(target, repo / SETTINGS)
    with pytest.raises(OmhError):
        stop_hook.check(repo)
    assert target.read_text() == "{}"


def test_write_then_remove_from(tmp_path: Path) -> None:
    path, changed = stop_hook.write(tmp_path)
    assert (path, changed) == (tmp_path / SETTINGS, True)
    assert json.loads(path.read_text()) == {"hooks": {"Stop": [{"hooks": [OURS]}]}}
    stop_hook.check_removal(tmp_path)
    assert stop_hook.remove_from(tmp_path) == path
    assert not path.exists() and not path.parent.exists()
    assert stop_hook.remove_from(tmp_path) is None  # nothing there
    stop_hook.check_removal(tmp_path)


def test_remove_from_keeps_a_file_with_more_in_it(tmp_path: Path) -> None:
    path = _settings(tmp_path, json.dumps({"model": "x", "hooks": {"Stop": [{"hooks": [OURS]}]}}))
    assert stop_hook.remove_from(tmp_path) == path
    assert json.loads(path.read_text()) == {"model": "x"}
    assert stop_hook.remove_from(tmp_path) is None  # no hook of ours: unchanged
    assert json.loads(path.read_text()) == {"model": "x"}


def test_check_removal_refuses_what_remove_from_would(tmp_path: Path) -> None:
    path = _settings(tmp_path, '{"hooks": {"Stop": 1}}')
    with pytest.raises(ConfigError):
        stop_hook.check_removal(tmp_path)
    assert path.read_text() == '{"hooks": {"Stop": 1}}'
