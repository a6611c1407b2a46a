"""git's configuration as git itself reads it: what `git -c` passes on in the
environment first, then the configuration files (all libgit2 reads)."""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping

from omh_git_memory.git.repository import GitRepo
from omh_git_memory.model.errors import GitFailure


def config_value(repo: GitRepo, name: str, environ: Mapping[str, str] | None = None
                 ) -> str | None:
    """A git configuration value as git itself would read it, or None; a key given
    without a value (`[commit] gpgSign`, which git reads as true) is "". What
    `git -c` passes on to the commands it runs (`GIT_CONFIG_PARAMETERS`, and
    `GIT_CONFIG_COUNT` with `GIT_CONFIG_KEY_<n>` / `_VALUE_<n>`) comes first, as
    for git; libgit2 reads only the files."""
    given = _config_from_environment(os.environ if environ is None else environ)
    if _config_key(name) in given:
        return given[_config_key(name)]
    try:
        value = repo.repo.config[name]
    except KeyError:
        return None
    return "" if value is None else str(value)


def _config_key(name: str) -> str:
    # the section and the variable are case-insensitive, a subsection is not
    section, _, rest = name.partition(".")
    middle, _, variable = rest.rpartition(".")
    return ".".join(p for p in (section.lower(), middle, variable.lower()) if p)


def _config_from_environment(env: Mapping[str, str]) -> dict[str, str]:
    """The settings git's environment carries, the later one winning: the
    `GIT_CONFIG_COUNT` pairs, then `GIT_CONFIG_PARAMETERS` (git reads them so)."""
    found: dict[str, str] = {}
    count = env.get("GIT_CONFIG_COUNT", "").strip()
    if count:
        if not count.isdigit():
            raise GitFailure(f"GIT_CONFIG_COUNT={count!r} is not a number; git refuses it too")
        for n in range(int(count)):
            key = env.get(f"GIT_CONFIG_KEY_{n}")
            value = env.get(f"GIT_CONFIG_VALUE_{n}")
            if not key or value is None:
                raise GitFailure(f"GIT_CONFIG_COUNT is {count} but GIT_CONFIG_KEY_{n} or "
                                 f"GIT_CONFIG_VALUE_{n} is missing; git refuses it too")
            found[_config_key(key)] = value
    parameters = env.get("GIT_CONFIG_PARAMETERS", "").strip()
    if parameters:
        try:
            words = shlex.split(parameters)
        except ValueError:
            raise GitFailure("GIT_CONFIG_PARAMETERS cannot be read (it is what `git -c` "
                             "sets); unset it") from None
        for word in words:
            key, has_value, value = word.partition("=")
            found[_config_key(key)] = value if has_value else ""
    return found
