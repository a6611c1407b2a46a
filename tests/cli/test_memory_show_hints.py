"""A key that is not where it was asked for: the hint names where it is, derived keys too."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import omh


def test_a_stub_asked_for_in_the_local_layer_says_the_team_layer_holds_it(
    repo_dir: Path,
) -> None:
    run = omh(repo_dir, "memory", "show", "readme", "--layer", "local")
    assert run.code == 1
    assert run.err == ("omh: no note readme in the local layer; the team layer holds it: "
                       "use --layer team, or leave --layer out\n")


def test_a_typo_of_a_stub_key_is_offered_the_stub(repo_dir: Path) -> None:
    run = omh(repo_dir, "memory", "show", "readm")
    assert run.code == 1
    assert run.err == "omh: no note readm in any layer; did you mean readme?\n"
