from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import make_repo


@pytest.fixture(autouse=True)
def isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """No test touches the real home directory or a real store."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("OMH_HOME", str(home / ".omh"))
    monkeypatch.delenv("OMH_LOCAL_STORE", raising=False)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / "gitconfig"))
    return home


@pytest.fixture
def repo_dir(tmp_path: Path) -> Path:
    """A fresh repository with one commit."""
    path = tmp_path / "repo"
    make_repo(path)
    return path
