"""Where `encode` cuts a text (recall/wordpiece.py): never more ids than the model
is given, and no word read past the cut."""

from __future__ import annotations

from omh_git_memory.recall.wordpiece import encode, vocabulary, word_pieces


def test_a_word_of_many_pieces_is_cut_to_the_length_asked() -> None:
    vocab = vocabulary()
    pieces = word_pieces("a" * 100, vocab)
    assert len(pieces) > 2  # "aaa", then "##aa" and "##a": more than fit
    assert encode("a" * 100, 4) == [vocab["[CLS]"], *pieces[:2], vocab["[SEP]"]]


def test_no_word_after_the_cut_is_read() -> None:
    # A section of thousands of words costs only the words the model reads: the
    # caller's memo shows which were split into pieces.
    vocab = vocabulary()
    words = ["one", "two", "three", "four", "five", "six", "seven", "eight"]
    assert all(word in vocab for word in words)  # one piece each
    memo: dict[str, list[int]] = {}
    ids = encode(" ".join(words), 5, memo)
    assert ids == [vocab["[CLS]"], *(vocab[w] for w in words[:3]), vocab["[SEP]"]]
    assert list(memo) == words[:3]
