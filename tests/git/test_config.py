"""Reading git's configuration as git does (omh_git_memory/git/config.py): what
`git -c` passes on in GIT_CONFIG_PARAMETERS wins over the files, and an environment
git itself refuses (a GIT_CONFIG_COUNT pair missing a half, parameters that cannot
be split) is refused by name.

In-process against a real repository, the environment given to config_value.

Found by mutation testing (docs/records/mutation-passes.md): each case kills a
mutant of config.py that no test caught before.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from omh_git_memory.git.config import config_value
from omh_git_memory.git.repository import GitRepo, open_repo
from omh_git_memory.model.errors import GitFailure
from tests.helpers import IDENTITY, make_repo


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    make_repo(tmp_path / "repo")  # user.name is set in its configuration
    return open_repo(tmp_path / "repo", environ={})


def test_git_c_settings_come_before_the_files(repo: GitRepo) -> None:
    assert config_value(repo, "user.name", {}) == IDENTITY[0]
    given = {"GIT_CONFIG_PARAMETERS": "'user.name=Someone Else' 'commit.gpgSign'"}
    assert config_value(repo, "user.name", given) == "Someone Else"
    assert config_value(repo, "User.Name", given) == "Someone Else"
    assert config_value(repo, "commit.gpgsign", given) == ""  # a key alone reads as true
    assert config_value(repo, "user.email", given) == IDENTITY[1]


def test_parameters_that_cannot_be_split_are_refused(repo: GitRepo) -> None:
    with pytest.raises(GitFailure, match=r"^GIT_CONFIG_PARAMETERS cannot be read"):
        config_value(repo, "user.name", {"GIT_CONFIG_PARAMETERS": "'user.name=unclosed"})


@pytest.mark.parametrize("pair", [
    {"GIT_CONFIG_VALUE_0": "Someone"},  # no key
    {"GIT_CONFIG_KEY_0": "", "GIT_CONFIG_VALUE_0": "Someone"},  # an empty key
    {"GIT_CONFIG_KEY_0": "user.name"},  # no value
])
def test_a_counted_pair_missing_a_half_is_refused(pair: dict[str, str], repo: GitRepo) -> None:
    with pytest.raises(GitFailure, match=(
            r"^GIT_CONFIG_COUNT is 1 but GIT_CONFIG_KEY_0 or GIT_CONFIG_VALUE_0 is missing")):
        config_value(repo, "user.name", {"GIT_CONFIG_COUNT": "1", **pair})
