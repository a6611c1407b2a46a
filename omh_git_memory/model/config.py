"""`.omh/memory.toml`: the repository's committed settings for omh.

Written once by `omh init` and never refreshed, because a template changed
under an existing store would re-key every note written afterwards. With no
file, the shipped defaults apply.
"""

from __future__ import annotations

import os
import re
import stat
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from omh_git_memory.model.errors import ConfigError
from omh_git_memory.model.keys import DEFAULT_KEY_TEMPLATES, DEFAULT_TEMPLATES, KeyTemplates

OMH_DIR: Final = ".omh"
CONFIG_NAME: Final = "memory.toml"
RETIRED_NAME: Final = "keys.toml"

DEFAULT_CONFIG: Final = """\
# omh git memory: settings for this repository. Committed, so clones share them.

# The repository's name: what its topic note is called and keyed by, the same in
# every clone whatever its folder is called. `omh init` writes the folder's name.
[repo]
name = "repo"

# How a note's key is derived. A key is identity, not a title: it is derived,
# never picked, so one observation cannot be recorded twice under two spellings.
# Changing a template re-keys every note written afterwards.
[keys]
surprise = "surprise/{{slug}}"
topic    = "{{slug}}"
stub     = "{{path}}"

# Every Markdown file git tracks outside .omh/ becomes a stub: a pointer at the
# document, derived when the index is built and never written as a file.
# Exclude files by glob, matched against the path from the repository root.
[stubs]
exclude = []

# What `invalidated_by` triggers are checked against (omh memory stale).
# image:<digest> is a digest of these container recipe files (a trailing / takes
# a whole directory); base:<YYYY-MM> is stale once `base` names a later month.
[stale]
image_recipe = ["Dockerfile", "Containerfile", ".devcontainer/"]
# base = "2026-09"

# Semantic recall finds notes that share no word with the question. It needs
# `pip install 'omh-git-memory[semantic]'`; see docs/recall.md.
[recall]
semantic = false
"""

DEFAULT_REPO_NAME: Final = "repo"  # the topic's name when no committed file names one
# A settings file is a few hundred bytes; a commit's of megabytes (a pushed one, read
# by `lint --ref` in CI) would hold a command for a minute while it is parsed.
MAX_CONFIG_BYTES: Final = 1 << 20


def parse_committed_config(raw: bytes, where: str) -> Config:
    """The settings a commit holds (`--ref`): refused unparsed over MAX_CONFIG_BYTES."""
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{where} is {len(raw):,} bytes, more than settings take (at most "
                          f"{MAX_CONFIG_BYTES:,}); that commit holds it so, and a clone "
                          "checked out there refuses it too")
    return parse_config(raw, where)

DEFAULT_RECIPE: Final = ("Dockerfile", "Containerfile", ".devcontainer/")
_MONTH = re.compile(r"\d{4}-(0[1-9]|1[0-2])")

GITIGNORE: Final = """\
# Written by `omh init`. Team notes live in notes/ and are committed; the local
# layer lives outside the checkout. Ignore a local store mounted here by mistake
# and any temporary file a writer leaves behind after a crash.
/local/
.omh-tmp-*
"""


@dataclass(frozen=True)
class Config:
    keys: KeyTemplates
    path: Path | None  # the file read, or None when the defaults apply
    stub_exclude: tuple[str, ...] = ()  # globs of documents that get no stub
    image_recipe: tuple[str, ...] = DEFAULT_RECIPE  # files whose digest image: pins
    base: str | None = None  # the base month, YYYY-MM, that base: triggers compare with
    semantic: bool = False  # fuse embedding similarity into recall
    repo_name: str | None = None  # [repo] name: what the repository topic is called


def config_text(repo_name: str) -> str:
    """The file `omh init` writes: the shipped settings, naming the repository."""
    return DEFAULT_CONFIG.replace('name = "repo"', f"name = {_toml_string(repo_name)}", 1)


def _toml_string(text: str) -> str:
    """`text` as a TOML basic string: a folder name may hold quotes, backslashes,
    controls, or bytes that are not UTF-8 (read as surrogates; written as U+FFFD)."""
    out = []
    for char in text:
        code = ord(char)
        if char in '"\\':
            out.append("\\" + char)
        elif 0xD800 <= code <= 0xDFFF:
            out.append("\ufffd")
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\u{code:04x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def repo_name_in(data: bytes) -> str | None:
    """The `[repo] name` a memory.toml's bytes give (as committed), or None when it
    names none or cannot be read: the topic is then `repo`. The checkout's own file
    is checked strictly by :func:`load_config`, which says what is wrong."""
    try:
        table = tomllib.loads(data.decode("utf-8")).get("repo", {})
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return None
    name = table.get("name") if isinstance(table, dict) else None
    return name if isinstance(name, str) and name.strip() else None


def load_config(checkout: Path) -> Config:
    """Read `<checkout>/.omh/memory.toml`, or the shipped defaults when it is absent."""
    omh_dir = checkout / OMH_DIR
    retired = omh_dir / RETIRED_NAME
    if retired.exists():
        raise ConfigError(
            f"{retired} is no longer read: move its [keys] table into "
            f"{omh_dir / CONFIG_NAME} and delete it"
        )
    path = omh_dir / CONFIG_NAME
    if not path.exists():
        return Config(keys=DEFAULT_KEY_TEMPLATES, path=None)
    return parse_config(_read_regular(path), str(path), path)


def parse_config(raw: bytes, where: str, path: Path | None = None) -> Config:
    """The settings `raw` (a memory.toml's bytes) gives; `where` names the file in a
    refusal: the checkout's file, or one as a commit holds it (`--ref`), for which
    `path` is None."""
    advice = ("fix it or delete it" if path is not None
              else "that commit holds it so, and a clone checked out there refuses it too")
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise ConfigError(f"{where} is not valid TOML: {err}; {advice}") from None
    table = data.get("keys", {})
    if not isinstance(table, dict) or not all(isinstance(v, str) for v in table.values()):
        raise ConfigError(f"{where}: [keys] must map note types to template strings")
    stubs = data.get("stubs", {})
    exclude = stubs.get("exclude", []) if isinstance(stubs, dict) else None
    if not isinstance(exclude, list) or not all(isinstance(g, str) for g in exclude):
        raise ConfigError(f"{where}: [stubs] exclude must be a list of glob strings")
    stale = data.get("stale", {})
    if not isinstance(stale, dict):
        raise ConfigError(f"{where}: [stale] must be a table")
    recipe = stale.get("image_recipe", list(DEFAULT_RECIPE))
    if not isinstance(recipe, list) or not all(isinstance(r, str) and r for r in recipe):
        raise ConfigError(f"{where}: [stale] image_recipe must be a list of paths")
    base = stale.get("base")
    if base is not None and (not isinstance(base, str) or not _MONTH.fullmatch(base)):
        raise ConfigError(f"{where}: [stale] base must be a month written YYYY-MM, like 2026-09")
    recall = data.get("recall", {})
    semantic = recall.get("semantic", False) if isinstance(recall, dict) else None
    if not isinstance(semantic, bool):
        raise ConfigError(f"{where}: [recall] semantic must be true or false")
    repo = data.get("repo", {})
    repo_name = repo.get("name") if isinstance(repo, dict) else None
    if repo_name is not None and not (isinstance(repo_name, str) and repo_name.strip()):
        raise ConfigError(f"{where}: [repo] name must be a string that is not empty")
    return Config(
        keys=KeyTemplates({**DEFAULT_TEMPLATES, **table}), path=path, stub_exclude=tuple(exclude),
        image_recipe=tuple(recipe), base=base, semantic=semantic, repo_name=repo_name,
    )


def _read_regular(path: Path) -> bytes:
    """The bytes of `path`, opened only if it is a regular file: a FIFO or a device
    there would block every command forever (O_NONBLOCK covers a swap after the check)."""
    refusal = f"{path} is not a regular file; replace it with one, or delete it"
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise ConfigError(refusal)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError as err:
        raise ConfigError(f"cannot read {path}: {err.strerror}") from None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise ConfigError(refusal)
        try:
            return handle.read()
        except OSError as err:
            raise ConfigError(f"cannot read {path}: {err.strerror}") from None
