"""What a cache was made by: the digest of the code that shapes an index.

Its cases came from a mutation pass over recall/shape.py (tools/mutation.py):
the digest must follow the source files of the modules it names, found without
importing them, and a module it cannot find must not break it. The list of modules
is replaced here by one module written in the test's folder, so that its source can
change.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from omh_git_memory.recall import shape as shape_module
from omh_git_memory.recall.shape import code_digest


@pytest.fixture
def shaping(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The digest made of one module, `omh_shape_probe`, whose file is yielded."""
    probe = tmp_path / "omh_shape_probe.py"
    probe.write_text("RULE = 1\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(shape_module, "_SHAPING", ("omh_shape_probe",))
    code_digest.cache_clear()
    yield probe
    code_digest.cache_clear()  # the next caller digests the real modules again


def _digest() -> str:
    code_digest.cache_clear()
    return code_digest()


def test_a_changed_source_file_is_a_new_digest(shaping: Path) -> None:
    before = _digest()
    shaping.write_text("RULE = 2\n", encoding="utf-8")
    changed = _digest()
    shaping.write_text("RULE = 1\n", encoding="utf-8")
    assert changed != before and _digest() == before


def test_the_digest_is_read_from_the_file_without_importing_it(shaping: Path) -> None:
    _digest()
    assert "omh_shape_probe" not in sys.modules


def test_a_module_that_cannot_be_found_counts_by_its_name(
        shaping: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    found = _digest()
    monkeypatch.setattr(shape_module, "_SHAPING", ("omh_shape_probe_missing",))
    missing = _digest()
    assert missing != found and _digest() == missing


def test_the_modules_that_read_a_note_or_a_document_for_the_index_are_named() -> None:
    # what decides a document's headings and a note's title and links without mistune
    # (model/plain_markdown.py) shapes the index as the parse does
    for module in ("omh_git_memory.model.note", "omh_git_memory.model.plain_markdown",
                   "omh_git_memory.recall.tokens", "omh_git_memory.recall.document"):
        assert module in shape_module._SHAPING
