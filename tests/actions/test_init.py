"""`omh init` (actions/init.py): its files written once, a refusal that writes nothing,
the repository's name in the settings, and the stores a gone clone left as hints."""

from __future__ import annotations

import os
import shutil
import tomllib
from pathlib import Path

from tests.helpers import git, make_repo, omh
from tests.helpers.notes import remember_seed


def test_init_names_the_repository_by_its_folder_without_a_git_suffix(tmp_path: Path) -> None:
    repo = tmp_path / "widget.git"
    make_repo(repo)
    assert omh(repo, "init").code == 0
    settings = tomllib.loads((repo / ".omh/memory.toml").read_text(encoding="utf-8"))
    assert settings["repo"]["name"] == "widget"


def test_init_keeps_a_settings_file_a_person_changed(repo_dir: Path) -> None:
    assert omh(repo_dir, "init").code == 0
    config = repo_dir / ".omh/memory.toml"
    ignore = repo_dir / ".omh/.gitignore"
    config.write_text(config.read_text(encoding="utf-8") + "# mine\n", encoding="utf-8")
    ignore.write_text("mine\n", encoding="utf-8")
    again = omh(repo_dir, "init", "--json")
    assert again.code == 0, again.err
    assert not again.json()["config_created"] and not again.json()["gitignore_created"]
    assert config.read_text(encoding="utf-8").endswith("# mine\n")
    assert ignore.read_text(encoding="utf-8") == "mine\n"


def test_init_refused_at_its_second_file_writes_neither_file_nor_the_store(
    repo_dir: Path, tmp_path: Path
) -> None:
    (repo_dir / ".omh").mkdir()
    (repo_dir / ".omh/.gitignore").symlink_to(tmp_path / "elsewhere")
    run = omh(repo_dir, "init")
    assert run.code == 1 and ".gitignore" in run.err, run.err
    assert sorted(p.name for p in (repo_dir / ".omh").iterdir()) == [".gitignore"]
    assert not (tmp_path / "elsewhere").exists()
    assert not (Path(os.environ["OMH_HOME"]) / "memory").exists()
    (repo_dir / ".omh/.gitignore").unlink()  # the link gone, init writes all three
    fixed = omh(repo_dir, "init", "--json")
    assert fixed.code == 0 and fixed.json()["store_created"], fixed.err


def test_init_run_again_still_names_the_store_a_gone_clone_left(tmp_path: Path) -> None:
    first = tmp_path / "a" / "api"
    make_repo(first)
    assert omh(first, "init").code == 0
    remember_seed(first)
    second = tmp_path / "b" / "api"
    git(tmp_path, "clone", "-q", str(first), str(second))
    shutil.rmtree(first)
    made = omh(second, "init", "--json")
    assert made.code == 0 and made.json()["store_created"], made.err
    again = omh(second, "init", "--json")  # its own store exists now, and holds no note
    assert again.code == 0 and not again.json()["store_created"], again.err
    assert "if this clone was moved from there" in again.err and str(first) in again.err


def test_init_over_a_settings_file_that_does_not_load_says_so(repo_dir: Path) -> None:
    (repo_dir / ".omh").mkdir()
    (repo_dir / ".omh/memory.toml").write_text("[repo\nname = 1\n", encoding="utf-8")
    run = omh(repo_dir, "init")
    assert run.code == 1 and "memory.toml" in run.err, run.err
    assert (repo_dir / ".omh/memory.toml").read_text(encoding="utf-8") == "[repo\nname = 1\n"
