from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from omh_git_memory.actions.workspace import open_workspace
from omh_git_memory.recall.floor import recall
from omh_git_memory.recall.tokens import is_function_word, stem, without_links, words
from tests.helpers import make_repo, note_text


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("caresses", "caress"), ("ponies", "poni"), ("cats", "cat"), ("feed", "feed"),
        ("agreed", "agre"), ("plastered", "plaster"), ("motoring", "motor"), ("sing", "sing"),
        ("conflated", "conflat"), ("hopping", "hop"), ("falling", "fall"), ("filing", "file"),
        ("happy", "happi"), ("probate", "probat"), ("rate", "rate"),
        ("mounted", "mount"), ("mounting", "mount"), ("mounts", "mount"),
        # two letters are kept, three are stemmed (is and as are function words, stemmed
        # when the module is imported: us and os are stemmed in the test)
        ("is", "is"), ("as", "as"), ("us", "us"), ("os", "os"), ("ids", "id"),
        # a y after a consonant is a vowel, after a vowel (or first) a consonant
        ("synced", "sync"), ("typed", "type"), ("crying", "cry"), ("eye", "ey"),
        ("ayyed", "ayi"),
        # a final y becomes i once a vowel comes before it, so a word meets its inflections
        ("say", "sai"), ("key", "kei"), ("keyed", "kei"), ("playing", "plai"), ("play", "plai"),
        # consonant-vowel-consonant (not w, x, y) at the end gets its e back, no other end
        ("boating", "boat"), ("aimed", "aim"), ("fixing", "fix"), ("fixed", "fix"),
        ("snowing", "snow"),
        # eed loses its d only after a vowel-consonant sequence
        ("proceed", "proce"),
    ],
)
def test_porter_step_1_and_5a(word: str, expected: str) -> None:
    assert stem(word) == expected


def test_identifiers_yield_their_parts_and_themselves() -> None:
    assert words("CURLOPT_SSL_VERIFYPEER") == ["curlopt_ssl_verifypeer", "curlopt", "ssl",
                                               "verifypeer"]
    assert words("parseHeaderLine")[1:] == ["pars", "header", "line"]
    assert words("HTTPServer http2") == ["httpserver", "http", "server", "http2", "http", "2"]


def test_identifier_parts_split_at_the_first_and_last_letters_too() -> None:
    assert words("x86") == ["x86", "x", "86"]
    assert words("HTTPOk") == ["httpok", "http", "ok"]


def test_function_words_are_known_by_their_stems() -> None:
    said = words("why does the mount fail having failed")
    assert [w for w in said if is_function_word(w)] == ["why", "doe", "the", "have"]


def test_whole_words_only_and_no_stopword_list() -> None:
    assert words("The mount of a file") == ["the", "mount", "of", "a", "file"]
    assert "mount" not in words("remount")


def test_links_are_not_words() -> None:
    assert words(without_links("see [[docs/deploy]] now")) == ["see", "now"]


def test_a_run_of_underscores_yields_no_empty_word() -> None:
    # `MAX__SIZE` once yielded "", a word every such identifier shares.
    assert words("MAX__SIZE retry___count") == ["max__size", "max", "size",
                                                "retry___count", "retri", "count"]


def test_two_identifiers_with_double_underscores_share_no_word(tmp_path: Path) -> None:
    make_repo(tmp_path / "r", {
        ".omh/notes/limits.md": note_text("limits", body="Set MAX__SIZE before the run.\n"),
        ".omh/notes/sky.md": note_text("sky", body="The sky is blue today.\n"),
    })
    answer = recall(open_workspace(tmp_path / "r").searcher(), "retry__count")
    assert [h.doc.key for h in answer.results] == []


def test_a_word_with_no_case_change_is_one_part_as_the_character_walk_finds() -> None:
    import random

    from omh_git_memory.recall import tokens

    rng = random.Random(1)
    letters = "aAbBzZ09ǅǄǆßẞΣσςİıﬁ日本Ⅻⅻ²"
    pieces = {"".join(rng.choice(letters) for _ in range(rng.randint(1, 8)))
              for _ in range(30000)}
    pieces |= {"word", "Word", "WORD", "wORD", "WoRd", "parseHeaderLine", "HTTPServer", "http2"}
    for piece in pieces:
        assert tokens._parts(piece) == tokens._case_parts(piece), piece


def test_word_counts_are_the_words_counted_in_order() -> None:
    from omh_git_memory.recall.tokens import word_counts

    text = "parseHeaderLine mounts mounting __init__ CURLOPT_SSL x2 x2 ünï日本 ___ mounted"
    assert list(word_counts(text).items()) == list(Counter(words(text)).items())
