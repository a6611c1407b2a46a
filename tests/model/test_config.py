"""`.omh/memory.toml` (omh_git_memory/model/config.py): what each setting reads as,
what each wrong value is refused with, and the file `omh init` writes.

Real files in temp folders. Found by mutation testing: each case kills a mutant of
config.py that no test caught before.
"""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path

import pytest

from omh_git_memory.model.config import (
    DEFAULT_CONFIG,
    DEFAULT_RECIPE,
    Config,
    config_text,
    load_config,
    repo_name_in,
)
from omh_git_memory.model.errors import ConfigError
from omh_git_memory.model.keys import DEFAULT_KEY_TEMPLATES, DEFAULT_TEMPLATES


def _config(tmp_path: Path, text: str) -> Path:
    (tmp_path / ".omh").mkdir(exist_ok=True)
    path = tmp_path / ".omh" / "memory.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _refused(tmp_path: Path, text: str) -> str:
    path = _config(tmp_path, text)
    with pytest.raises(ConfigError) as raised:
        load_config(tmp_path)
    message = str(raised.value)
    assert message.startswith(f"{path}")
    return message[len(str(path)):]


def test_no_file_gives_the_shipped_defaults(tmp_path: Path) -> None:
    assert load_config(tmp_path) == Config(keys=DEFAULT_KEY_TEMPLATES, path=None)
    config = load_config(tmp_path)
    assert (config.stub_exclude, config.image_recipe, config.base, config.semantic,
            config.repo_name) == ((), DEFAULT_RECIPE, None, False, None)


def test_the_shipped_file_reads_as_the_defaults_naming_the_repository(tmp_path: Path) -> None:
    path = _config(tmp_path, config_text("my-project"))
    assert load_config(tmp_path) == Config(
        keys=DEFAULT_KEY_TEMPLATES, path=path, repo_name="my-project")


def test_an_empty_file_gives_the_defaults(tmp_path: Path) -> None:
    path = _config(tmp_path, "")
    config = load_config(tmp_path)
    assert config == Config(keys=DEFAULT_KEY_TEMPLATES, path=path)


def test_every_setting_is_read(tmp_path: Path) -> None:
    _config(tmp_path, """
[repo]
name = "tools"
[keys]
surprise = "gotcha/{{slug}}"
[stubs]
exclude = ["vendor/**", "CHANGELOG.md"]
[stale]
image_recipe = ["docker/"]
base = "2026-12"
[recall]
semantic = true
""")
    config = load_config(tmp_path)
    assert config.keys.templates == {**DEFAULT_TEMPLATES, "surprise": "gotcha/{{slug}}"}
    assert (config.stub_exclude, config.image_recipe, config.base, config.semantic,
            config.repo_name) == (("vendor/**", "CHANGELOG.md"), ("docker/",), "2026-12",
                                  True, "tools")


@pytest.mark.parametrize("text", ["keys = 1", "[keys]\nsurprise = 1"])
def test_keys_that_are_not_template_strings_are_refused(tmp_path: Path, text: str) -> None:
    assert _refused(tmp_path, text) == ": [keys] must map note types to template strings"


@pytest.mark.parametrize("text", ["stubs = 1", "[stubs]\nexclude = 'a'",
                                  "[stubs]\nexclude = [1]"])
def test_stub_exclusions_that_are_not_globs_are_refused(tmp_path: Path, text: str) -> None:
    assert _refused(tmp_path, text) == ": [stubs] exclude must be a list of glob strings"


def test_a_stale_setting_that_is_not_a_table_is_refused(tmp_path: Path) -> None:
    assert _refused(tmp_path, "stale = 1") == ": [stale] must be a table"


@pytest.mark.parametrize("text", ["[stale]\nimage_recipe = 'Dockerfile'",
                                  "[stale]\nimage_recipe = [1]",
                                  "[stale]\nimage_recipe = ['']"])
def test_an_image_recipe_that_is_not_paths_is_refused(tmp_path: Path, text: str) -> None:
    assert _refused(tmp_path, text) == ": [stale] image_recipe must be a list of paths"


def test_an_empty_image_recipe_is_read_as_none(tmp_path: Path) -> None:
    _config(tmp_path, "[stale]\nimage_recipe = []")
    assert load_config(tmp_path).image_recipe == ()


@pytest.mark.parametrize("base", ["2026-13", "2026-00", "2026-9", "26-09", "2026-09-01", 202609])
def test_a_base_that_is_not_a_month_is_refused(tmp_path: Path, base: object) -> None:
    value = f'"{base}"' if isinstance(base, str) else str(base)
    assert _refused(tmp_path, f"[stale]\nbase = {value}") == (
        ": [stale] base must be a month written YYYY-MM, like 2026-09")


@pytest.mark.parametrize("base", ["2026-01", "2026-10", "2026-12"])
def test_a_base_month_is_read(tmp_path: Path, base: str) -> None:
    _config(tmp_path, f'[stale]\nbase = "{base}"')
    assert load_config(tmp_path).base == base


@pytest.mark.parametrize("text", ["recall = 1", "[recall]\nsemantic = 'yes'",
                                  "[recall]\nsemantic = 1"])
def test_a_semantic_setting_that_is_not_a_boolean_is_refused(tmp_path: Path,
                                                             text: str) -> None:
    assert _refused(tmp_path, text) == ": [recall] semantic must be true or false"


@pytest.mark.parametrize("text", ["[repo]\nname = ''", "[repo]\nname = '  '",
                                  "[repo]\nname = 1"])
def test_a_repository_name_that_is_empty_or_no_string_is_refused(tmp_path: Path,
                                                                 text: str) -> None:
    assert _refused(tmp_path, text) == ": [repo] name must be a string that is not empty"


def test_a_repo_setting_that_is_not_a_table_names_nothing(tmp_path: Path) -> None:
    _config(tmp_path, "repo = 1")
    assert load_config(tmp_path).repo_name is None


def test_a_file_that_is_not_toml_or_not_utf8_is_refused(tmp_path: Path) -> None:
    assert _refused(tmp_path, "[keys").startswith(" is not valid TOML: ")
    path = _config(tmp_path, "")
    path.write_bytes(b'[repo]\nname = "\xff"\n')
    with pytest.raises(ConfigError, match=r"is not valid TOML: .*; fix it or delete it"):
        load_config(tmp_path)


def test_a_commits_settings_file_over_the_size_limit_is_refused_unparsed(tmp_path: Path) -> None:
    from omh_git_memory.model.config import MAX_CONFIG_BYTES, parse_committed_config

    body = "# " + "x" * (MAX_CONFIG_BYTES - 3) + "\n"  # a comment: valid TOML
    assert len(body) == MAX_CONFIG_BYTES
    assert parse_committed_config(body.encode(), "f").path is None
    with pytest.raises(ConfigError) as raised:
        parse_committed_config((body + "\n").encode(), ".omh/memory.toml at 1a2b3c4d5e6f")
    assert str(raised.value) == (
        f".omh/memory.toml at 1a2b3c4d5e6f is {MAX_CONFIG_BYTES + 1:,} bytes, more than "
        f"settings take (at most {MAX_CONFIG_BYTES:,}); that commit holds it so, and a clone "
        "checked out there refuses it too")


def test_the_size_limit_of_a_commits_settings_is_the_mib_docs_name() -> None:
    # docs/lint.md: "A commit's settings file over 1 MiB ... is refused"
    from omh_git_memory.model.config import parse_committed_config

    body = ("# " + "x" * (1_048_576 - 3) + "\n").encode()
    assert parse_committed_config(body, "f").path is None
    with pytest.raises(ConfigError, match=r"^f is 1,048,577 bytes, more than settings take "
                                          r"\(at most 1,048,576\)"):
        parse_committed_config(body + b"\n", "f")


def test_the_retired_keys_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / ".omh").mkdir()
    (tmp_path / ".omh" / "keys.toml").write_text("")
    with pytest.raises(ConfigError) as raised:
        load_config(tmp_path)
    omh = tmp_path / ".omh"
    assert str(raised.value) == (f"{omh / 'keys.toml'} is no longer read: move its [keys] "
                                 f"table into {omh / 'memory.toml'} and delete it")


def test_a_fifo_at_the_settings_path_is_refused_without_blocking(tmp_path: Path) -> None:
    (tmp_path / ".omh").mkdir()
    path = tmp_path / ".omh" / "memory.toml"
    os.mkfifo(path)
    with pytest.raises(ConfigError) as raised:
        load_config(tmp_path)
    assert str(raised.value) == f"{path} is not a regular file; replace it with one, or delete it"


def test_a_directory_at_the_settings_path_is_refused(tmp_path: Path) -> None:
    path = tmp_path / ".omh" / "memory.toml"
    path.mkdir(parents=True)
    with pytest.raises(ConfigError, match="is not a regular file"):
        load_config(tmp_path)


# --- the file init writes, and the name a commit's copy gives -------------------------


@pytest.mark.parametrize("name", ['say "hi"', "back\\slash", "tab\there", "del\x7f",
                                  "caf\u00e9", "bad\udcffbyte", "low\ud800", "high\udfff",
                                  "below\ud7ff", "above\ue000", "unit\x1fsep"])
def test_config_text_names_any_folder_as_toml_reads_it(name: str) -> None:
    table = tomllib.loads(config_text(name))
    expected = re.sub("[\ud800-\udfff]", "\ufffd", name)
    assert table["repo"]["name"] == expected
    assert repo_name_in(config_text(name).encode()) == expected


@pytest.mark.parametrize("name", ["my project", "caf\u00e9", "tilde~", "\ue000"])
def test_config_text_writes_a_printable_name_as_it_is(name: str) -> None:
    # the file is committed and read by people: only what TOML needs escaping is escaped
    assert f'name = "{name}"' in config_text(name).splitlines()


def test_config_text_changes_only_the_name() -> None:
    assert config_text("repo") == DEFAULT_CONFIG
    assert config_text("x").replace('name = "x"', 'name = "repo"') == DEFAULT_CONFIG
    assert re.findall(r'^name = .*$', config_text("x"), flags=re.M) == ['name = "x"']


@pytest.mark.parametrize("data", [b"", b"[repo]\n", b"repo = 1", b'[repo]\nname = "  "',
                                  b"[repo]\nname = 1", b"[repo", b'[repo]\nname = "\xff"'])
def test_repo_name_in_a_file_naming_none_is_none(data: bytes) -> None:
    assert repo_name_in(data) is None


def test_repo_name_in_a_committed_file() -> None:
    assert repo_name_in(b'[repo]\nname = "tools"\n') == "tools"
