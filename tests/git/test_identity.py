"""Who a commit is by and how it is signed (omh_git_memory/git/identity.py), decided
as `git commit` decides: the environment before configuration, `author.*` before
`user.*`, `$EMAIL` last unless `user.useConfigOnly`; a setting omh cannot follow
is refused in words, never guessed or ignored.

Found by mutation testing (docs/records/mutation-newer-stores.md)."""

from __future__ import annotations

import pytest

from omh_git_memory.git.identity import Lookup, Person, parse_date, person, signer
from omh_git_memory.model.errors import GitFailure


def _config(values: dict[str, str]) -> Lookup:
    return lambda name: values.get(name)


def test_the_environment_comes_before_configuration() -> None:
    config = _config({"user.name": "Config", "user.email": "c@example.invalid"})
    got = person("author", config, {"GIT_AUTHOR_NAME": "Env", "GIT_AUTHOR_EMAIL": "e@x.invalid",
                                    "GIT_AUTHOR_DATE": "1700000000 +0130"})
    assert got == Person("Env", "e@x.invalid", (1700000000, 90))
    assert person("committer", config, {"GIT_AUTHOR_NAME": "Env"}) == Person(
        "Config", "c@example.invalid")


def test_a_role_setting_comes_before_user() -> None:
    config = _config({"user.name": "U", "user.email": "u@x.invalid",
                      "committer.name": "C", "committer.email": "c@x.invalid"})
    assert person("committer", config, {}) == Person("C", "c@x.invalid")
    assert person("author", config, {}) == Person("U", "u@x.invalid")


def test_email_stands_in_unless_use_config_only() -> None:
    assert person("author", _config({"user.name": "U"}), {"EMAIL": "m@x.invalid"}).email == (
        "m@x.invalid")
    with pytest.raises(GitFailure, match=r"^git does not know who you are"):
        person("author", _config({"user.name": "U", "user.useConfigOnly": "true"}),
               {"EMAIL": "m@x.invalid"})
    with pytest.raises(GitFailure, match=r"^git does not know who you are"):
        person("author", _config({"user.email": "u@x.invalid"}), {})


def test_crud_is_stripped_and_an_empty_name_refused() -> None:
    config = _config({"user.name": ' "Ann <Lee>." ', "user.email": "<a@x.invalid>"})
    assert person("author", config, {}) == Person("Ann Lee", "a@x.invalid")
    with pytest.raises(GitFailure, match=r"the committer name is empty \(GIT_COMMITTER_NAME or"):
        person("committer", _config({"user.name": " .; ", "user.email": "a@x.invalid"}), {})


@pytest.mark.parametrize(("text", "when"), [
    ("@1700000000 -0230", (1700000000, -150)),
    ("Tue, 14 Nov 2023 22:13:20 +0100", (1699996400, 60)),
    ("2023-11-14T22:13:20+01:00", (1699996400, 60)),
    ("2023-11-14 22:13:20+01:00", (1699996400, 60)),
])
def test_dates_are_read_in_the_forms_git_reads(text: str, when: tuple[int, int]) -> None:
    assert parse_date(text, "GIT_AUTHOR_DATE") == when


@pytest.mark.parametrize("text", ["yesterday", "2023-11-14"])
def test_a_date_omh_cannot_read_is_refused(text: str) -> None:
    with pytest.raises(GitFailure, match=f"GIT_AUTHOR_DATE={text!r} is not a date"):
        parse_date(text, "GIT_AUTHOR_DATE")


def test_signing_follows_gpg_format_and_its_program() -> None:
    me = Person("Ann", "a@x.invalid")
    assert signer(_config({}), me) is None
    assert signer(_config({"commit.gpgSign": "false"}), me) is None
    found = signer(_config({"commit.gpgSign": "true"}), me)
    assert found is not None and (found.format, found.program, found.key) == (
        "openpgp", "gpg", "Ann <a@x.invalid>")
    found = signer(_config({"commit.gpgSign": "yes", "gpg.format": "X509",
                            "gpg.program": "not-for-x509", "user.signingKey": "K"}), me)
    assert found is not None and (found.format, found.program, found.key) == (
        "x509", "gpgsm", "K")
    found = signer(_config({"commit.gpgSign": "on", "gpg.program": "my-gpg"}), me)
    assert found is not None and found.program == "my-gpg"


def test_signing_omh_cannot_follow_is_refused() -> None:
    me = Person("Ann", "a@x.invalid")
    with pytest.raises(GitFailure, match=r"gpg\.format is 'pgp', which git does not know"):
        signer(_config({"commit.gpgSign": "true", "gpg.format": "pgp"}), me)
    with pytest.raises(GitFailure, match=r"gpg\.format=ssh but user\.signingKey is not set"):
        signer(_config({"commit.gpgSign": "true", "gpg.format": "ssh"}), me)
