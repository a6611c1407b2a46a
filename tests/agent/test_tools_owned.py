"""tools._owned: whether a local note near-duplicating a new one is this session's
own. Anything that cannot be told (a file outside the store, a store that refuses
the question) is "not known to be yours", never an error out of `remember`."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from omh_git_memory.agent import tools
from omh_git_memory.model.errors import OmhError, StoreError


def _owned(store_root: Path, location: Path) -> bool:
    store: Any = SimpleNamespace(root=store_root)
    doc: Any = SimpleNamespace(location=str(location))
    return tools._owned(store, doc, note=None, source="agent")  # type: ignore[arg-type]


def test_a_file_outside_the_store_is_not_known_to_be_this_sessions(tmp_path: Path) -> None:
    assert _owned(tmp_path / "store", tmp_path / "elsewhere" / "a.md") is False


@pytest.mark.parametrize("error", [StoreError("the store is locked"), OmhError("refused")])
def test_a_store_that_cannot_say_whose_a_note_is_answers_not_yours(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: OmhError) -> None:
    def refusing(*args: object) -> str | None:
        raise error

    monkeypatch.setattr(tools, "agent_owned", refusing)
    assert _owned(tmp_path / "store", tmp_path / "store" / "surprise" / "a.md") is False
