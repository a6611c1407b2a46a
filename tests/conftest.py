from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from tests.attacks import CATEGORIES
from tests.helpers import make_repo


@pytest.fixture
def tmp_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh folder whose name holds nothing of the test's. pytest names its own
    after the test, so a message quoting a path holds the test's words, and a check
    for a word of the message (`"shallow" in run.err`) would pass on the path alone."""
    return tmp_path_factory.mktemp("t")


@pytest.fixture(autouse=True)
def isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """No test touches the real home directory or a real store, nor leaves files in
    the machine's temporary folder (an edit's kept copy, a crash log): each test has
    a temporary folder of its own, which pytest cleans up."""
    home = tmp_path_factory.mktemp("home")
    scratch = tmp_path_factory.mktemp("tmp")
    monkeypatch.setenv("TMPDIR", str(scratch))
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))  # gettempdir() caches it
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


ATTACKS = Path(__file__).parent / "attacks"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark each test under tests/attacks/ `reliability(<category>)` by its name's
    first word after `test_` ("other" when that is no category), unless it is marked
    already; the category also goes into a JUnit report (bench/reliability_report.py
    reads it there)."""
    for item in items:
        if item.path.is_relative_to(ATTACKS) and item.get_closest_marker("reliability") is None:
            name = item.name.removeprefix("test_")
            category = next((c for c in CATEGORIES if name.startswith(f"{c}_")), "other")
            item.add_marker(pytest.mark.reliability(category))
        marker = item.get_closest_marker("reliability")
        if marker is not None:
            item.user_properties.append(("reliability", marker.args[0]))
