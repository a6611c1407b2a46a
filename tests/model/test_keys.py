from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest

from omh_git_memory.model.config import DEFAULT_CONFIG, load_config
from omh_git_memory.model.errors import ConfigError, InvalidKey
from omh_git_memory.model.keys import DEFAULT_TEMPLATES, Key, KeyTemplates, path_slug, slug


@pytest.mark.parametrize(
    "variant",
    [
        "Mounting a credential file returns EBUSY",
        "mounting a credential file returns ebusy",
        "MOUNTING   A CREDENTIAL FILE RETURNS EBUSY",
        "  Mounting, a credential -- file returns: EBUSY!!  ",
        "Mounting\ta\ncredential_file returns EBUSY",
        "Ｍｏｕｎｔｉｎｇ a credential file returns ＥＢＵＳＹ",  # full-width forms
    ],
)
def test_slug_is_canonical_over_spelling_variants(variant: str) -> None:
    # Invariant: one input, one key.
    assert slug(variant) == "mounting-a-credential-file-returns-ebusy"


def test_slug_is_canonical_over_unicode_normal_forms_and_case() -> None:
    composed = "Café Überlauf"
    decomposed = unicodedata.normalize("NFD", composed)
    assert slug(composed) == slug(decomposed) == slug(composed.upper()) == "café-überlauf"
    assert slug("Straße") == slug("STRASSE") == "strasse"


def test_slug_of_punctuation_alone_is_empty() -> None:
    assert slug("?!…") == ""


def test_a_long_slug_is_cut_at_a_word_boundary_within_the_filename_limit() -> None:
    long = slug(" ".join(["word"] * 100))
    assert len(long.encode()) <= 200
    assert not long.endswith("-")
    Key(long)


def test_path_slug_puts_each_segment_through_the_slug_rule() -> None:
    assert path_slug("docs/Deploy Notes.md") == "docs/deploy-notes"
    assert path_slug("README.md") == "readme"


@pytest.mark.parametrize(
    "bad",
    ["", "/abs", "a//b", "a/", ".hidden", "a/../b", "..", "a/./b", "a\\b", "Upper",
     "has space", "nul\x00", "c:drive", "trailing.", "x/" + "y" * 300],
)
def test_keys_that_could_leave_the_store_or_collide_are_refused(bad: str) -> None:
    with pytest.raises(InvalidKey):
        Key(bad)


def test_a_valid_key_is_a_relative_path_inside_the_store(tmp_path: Path) -> None:
    key = Key("surprise/mount-returns-ebusy")
    target = (tmp_path / key.relpath()).resolve()
    assert target.is_relative_to(tmp_path.resolve())
    assert Key.from_relpath("surprise/mount-returns-ebusy.md") == key


def test_templates_expand_with_their_placeholders() -> None:
    templates = KeyTemplates(DEFAULT_TEMPLATES)
    assert templates.expand("surprise", slug="x-y").value == "surprise/x-y"
    assert templates.expand("stub", path="docs/deploy").value == "docs/deploy"


def test_an_unbound_placeholder_is_an_error_that_names_it() -> None:
    with pytest.raises(ConfigError, match=r"\{\{slugg\}\}"):
        KeyTemplates({"surprise": "surprise/{{slugg}}"})
    with pytest.raises(ConfigError, match=r"\{\{path\}\}"):
        KeyTemplates({"surprise": "s/{{path}}"})


def test_a_template_that_would_leave_the_store_is_refused() -> None:
    templates = KeyTemplates({"surprise": "../{{slug}}"})
    with pytest.raises(InvalidKey):
        templates.expand("surprise", slug="x")


def test_config_defaults_apply_without_a_file(tmp_path: Path) -> None:
    config = load_config(tmp_path)
    assert config.path is None
    assert config.keys.expand("surprise", slug="a").value == "surprise/a"


def test_config_is_read_from_memory_toml(tmp_path: Path) -> None:
    (tmp_path / ".omh").mkdir()
    (tmp_path / ".omh/memory.toml").write_text('[keys]\nsurprise = "gotcha/{{slug}}"\n')
    assert load_config(tmp_path).keys.expand("surprise", slug="a").value == "gotcha/a"


def test_the_shipped_config_matches_the_default_templates(tmp_path: Path) -> None:
    (tmp_path / ".omh").mkdir()
    (tmp_path / ".omh/memory.toml").write_text(DEFAULT_CONFIG)
    assert load_config(tmp_path).keys.templates == DEFAULT_TEMPLATES


def test_a_keys_toml_is_refused_by_name(tmp_path: Path) -> None:
    (tmp_path / ".omh").mkdir()
    (tmp_path / ".omh/keys.toml").write_text("[keys]\n")
    with pytest.raises(ConfigError, match=r"keys\.toml"):
        load_config(tmp_path)


def test_broken_toml_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / ".omh").mkdir()
    (tmp_path / ".omh/memory.toml").write_text("[keys\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(tmp_path)


def test_a_key_not_in_normal_form_is_refused() -> None:
    # Two spellings of one key would be two files: keys are NFC.
    with pytest.raises(InvalidKey, match="NFC"):
        Key(unicodedata.normalize("NFD", "café"))
    assert Key("café").value == "café"


def test_an_ascii_slug_is_the_one_folded_a_character_at_a_time() -> None:
    import random

    from omh_git_memory.model import keys

    rng = random.Random(3)
    for _ in range(20000):
        text = "".join(chr(rng.randrange(128)) for _ in range(rng.randint(0, 30)))
        text *= 20 if rng.random() < 0.01 else 1  # past the length a slug is cut at
        assert slug(text) == keys._unicode_slug(text), repr(text)


def test_an_ordinary_key_passes_every_check_it_is_spared() -> None:
    import random

    from omh_git_memory.model import keys

    rng = random.Random(4)
    alphabet = [*list("abz09._-/A \\:"), "é", "\u200b"]
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
             for _ in range(20000)]
    texts += ["a" * n for n in (199, 200, 201, 999, 1000, 1001)]
    texts += ["a/" * 500 + "b", "x" * 201 + "/y", "y/" + "x" * 201, ".a", "a.", "a/.b", "a./b"]
    for text in texts:
        assert keys.key_problem(text) == keys._key_problem(text), repr(text)
