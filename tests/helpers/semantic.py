"""Builders for the tests of semantic recall."""

from __future__ import annotations

import pytest

from omh_git_memory.recall.semantic import Embedder


def count_embeddings(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A list that gets, for each call to Embedder.embed from now on, how many texts
    it was given (the real model still embeds them)."""
    embedded: list[int] = []
    real = Embedder.embed

    def count(self, texts, progress=None):  # type: ignore[no-untyped-def]
        embedded.append(len(texts))
        return real(self, texts, progress)

    monkeypatch.setattr(Embedder, "embed", count)
    return embedded
