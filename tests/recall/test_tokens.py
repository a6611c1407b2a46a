from __future__ import annotations

import pytest

from omh_git_memory.recall.tokens import stem, without_links, words


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("caresses", "caress"), ("ponies", "poni"), ("cats", "cat"), ("feed", "feed"),
        ("agreed", "agre"), ("plastered", "plaster"), ("motoring", "motor"), ("sing", "sing"),
        ("conflated", "conflat"), ("hopping", "hop"), ("falling", "fall"), ("filing", "file"),
        ("happy", "happi"), ("probate", "probat"), ("rate", "rate"),
        ("mounted", "mount"), ("mounting", "mount"), ("mounts", "mount"),
    ],
)
def test_porter_step_1_and_5a(word: str, expected: str) -> None:
    assert stem(word) == expected


def test_identifiers_yield_their_parts_and_themselves() -> None:
    assert words("CURLOPT_SSL_VERIFYPEER") == ["curlopt_ssl_verifypeer", "curlopt", "ssl",
                                               "verifypeer"]
    assert words("parseHeaderLine")[1:] == ["pars", "header", "line"]
    assert words("HTTPServer http2") == ["httpserver", "http", "server", "http2", "http", "2"]


def test_whole_words_only_and_no_stopword_list() -> None:
    assert words("The mount of a file") == ["the", "mount", "of", "a", "file"]
    assert "mount" not in words("remount")


def test_links_are_not_words() -> None:
    assert words(without_links("see [[docs/deploy]] now")) == ["see", "now"]
