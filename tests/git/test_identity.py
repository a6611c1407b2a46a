"""Who a commit is by and how it is signed (omh_git_memory/git/identity.py), decided
as `git commit` decides: the environment before configuration, `author.*` before
`user.*`, `$EMAIL` last unless `user.useConfigOnly`; a setting omh cannot follow
is refused in words, never guessed or ignored.

Found by mutation testing (docs/records/mutation-newer-stores.md)."""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from omh_git_memory.git.identity import Lookup, Person, Signer, parse_date, person, sign, signer
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


# --- boolean settings, dates in a time zone, signing run as git runs it -------------


@pytest.mark.parametrize(("raw", "on"), [("true", True), (" YES ", True), ("On", True),
                                         ("1", True), ("", True), ("false", False),
                                         ("0", False), ("no", False), (None, False)])
def test_a_boolean_setting_is_read_as_git_reads_it(raw: str | None, on: bool) -> None:
    """`commit.gpgSign` with no value (`[commit] gpgSign`) is true to git, as are
    yes, on and 1 in any case."""
    config = _config({} if raw is None else {"commit.gpgSign": raw})
    assert (signer(config, Person("Ann", "a@x.invalid")) is not None) is on


@pytest.fixture
def kolkata(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Local time five and a half hours ahead of UTC."""
    monkeypatch.setenv("TZ", "Asia/Kolkata")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.mark.parametrize(("text", "when"), [
    ("1700000000", (1700000000, 330)),  # no zone: the local offset at that moment
    ("@1700000000", (1700000000, 330)),
    ("2023-11-14T22:13:20", (1699980200, 330)),  # local time
    ("Tue, 14 Nov 2023 22:13:20 -0230", (1700009000, -150)),
    ("1700000000 +0000", (1700000000, 0)),
    ("Tue, 14 Nov 2023 22:13:20 +0000", (1700000000, 0)),  # UTC: an offset of none
    ("2023-11-14T22:13:20+00:00", (1700000000, 0)),
])
def test_dates_without_a_zone_are_local_time(kolkata: None, text: str,
                                             when: tuple[int, int]) -> None:
    assert parse_date(text, "GIT_COMMITTER_DATE") == when


def test_a_date_in_the_environment_is_the_person_s(kolkata: None) -> None:
    config = _config({"user.name": "U", "user.email": "u@x.invalid"})
    assert person("committer", config, {"GIT_COMMITTER_DATE": "@1700000000 +0100"}) == Person(
        "U", "u@x.invalid", (1700000000, 60))
    with pytest.raises(GitFailure, match=r"GIT_COMMITTER_DATE='soon' is not a date"):
        person("committer", config, {"GIT_COMMITTER_DATE": "soon"})


def _program(tmp_path: Path, name: str, script: str) -> str:
    """An executable shell script standing in for gpg or ssh-keygen."""
    path = tmp_path / name
    path.write_text(f"#!/bin/sh\n{script}\n")
    path.chmod(0o755)
    return str(path)


def test_a_gpg_signature_is_what_the_program_printed_when_it_says_it_made_one(
        tmp_path: Path) -> None:
    gpg = _program(tmp_path, "gpg", 'cat > "$0.in"; echo "$@" > "$0.args"\n'
                   'echo "[GNUPG:] SIG_CREATED D 22 8 00" >&2\necho SIGNATURE')
    signed = sign(Signer("openpgp", gpg, "Ann <a@x.invalid>"), b"the commit")
    assert signed == "SIGNATURE\n"
    assert Path(f"{gpg}.in").read_bytes() == b"the commit"
    assert Path(f"{gpg}.args").read_text() == "--status-fd=2 -bsau Ann <a@x.invalid>\n"


@pytest.mark.parametrize(("script", "reason"), [
    ('echo "gpg: signing failed: No secret key" >&2; echo "[GNUPG:] FAILURE" >&2; exit 2',
     "gpg: signing failed: No secret key"),
    ("exit 3", "exit status 3"),
    ('echo "[GNUPG:] SIG_CREATED_NOT D" >&2; echo "gpg: odd" >&2; echo SIG', "gpg: odd"),
])
def test_a_gpg_that_made_no_signature_is_refused_with_its_last_word(
        tmp_path: Path, script: str, reason: str) -> None:
    gpg = _program(tmp_path, "gpg", script)
    with pytest.raises(GitFailure) as caught:
        sign(Signer("openpgp", gpg, "K"), b"the commit")
    assert str(caught.value) == (
        f"commit.gpgSign asks for a signed commit, but {gpg} could not sign it with the key "
        f"'K' ({reason}); nothing was committed. Fix the signing setup so that `git commit "
        "-S` works, or turn signing off for this repository (git config commit.gpgSign "
        "false)")


def test_a_signing_program_that_is_missing_is_refused(tmp_path: Path) -> None:
    missing = str(tmp_path / "no-such-gpg")
    with pytest.raises(GitFailure, match=rf"but '{re.escape(missing)}' could not sign it "
                                         r"\(No such file or directory\); nothing was"):
        sign(Signer("openpgp", missing, "K"), b"x")


def test_a_signing_program_that_hangs_is_given_up_after_five_minutes(
        monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[object] = []

    def hangs(*args: object, **kwargs: object) -> None:
        asked.append(kwargs.get("timeout"))
        raise subprocess.TimeoutExpired("gpg", 300)

    monkeypatch.setattr(subprocess, "run", hangs)
    with pytest.raises(GitFailure, match=r"\(it did not answer within 5 minutes\)"):
        sign(Signer("openpgp", "gpg", "K"), b"x")
    assert asked == [300]


@pytest.mark.parametrize(("key", "argv_key"), [
    ("~/.ssh/id_ed25519", "{home}/.ssh/id_ed25519 -"),  # a key file, ~ expanded
    ("key::ssh-ed25519 AAAA me", "{folder}/key.pub -U"),  # a literal public key
    ("ssh-ed25519 AAAA me", "{folder}/key.pub -U"),
])
def test_an_ssh_signature_is_made_as_git_makes_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: str, argv_key: str) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    keygen = _program(tmp_path, "ssh-keygen",
                      'for last; do :; done\necho "$@" > "$0.args"\n'
                      'cp "$(dirname "$last")/key.pub" "$0.pub" 2>/dev/null\n'
                      'cat "$last" > "$0.in"; echo SSHSIG > "$last.sig"')
    signed = sign(Signer("ssh", keygen, key), b"the commit")
    assert signed == "SSHSIG\n"
    assert Path(f"{keygen}.in").read_bytes() == b"the commit"
    args = Path(f"{keygen}.args").read_text().split()
    assert args[:6] == ["-Y", "sign", "-n", "git", "-f",
                        argv_key.format(home=tmp_path / "home", folder=Path(args[-1]).parent)
                        .split()[0]]
    literal = argv_key.endswith("-U")
    assert ("-U" in args) is literal
    if literal:
        assert Path(f"{keygen}.pub").read_text() == key.removeprefix("key::") + "\n"


@pytest.mark.parametrize("script", ["exit 1", "exit 0"])
def test_an_ssh_signature_not_made_is_refused(tmp_path: Path, script: str) -> None:
    keygen = _program(tmp_path, "ssh-keygen", f'echo "no agent" >&2; {script}')
    with pytest.raises(GitFailure, match=r"could not sign it with the key '/k' \(no agent\)"):
        sign(Signer("ssh", keygen, "/k"), b"x")


def test_signing_takes_the_program_of_its_format_first() -> None:
    me = Person("Ann", "a@x.invalid")
    found = signer(_config({"commit.gpgSign": "true", "gpg.format": "ssh",
                            "gpg.program": "not-for-ssh", "user.signingKey": "/k"}), me)
    assert found == Signer("ssh", "ssh-keygen", "/k")
    found = signer(_config({"commit.gpgSign": "true", "gpg.openpgp.program": "mine",
                            "gpg.program": "older"}), me)
    assert found is not None and found.program == "mine"
    found = signer(_config({"commit.gpgSign": "true", "gpg.format": "x509",
                            "gpg.x509.program": "my-gpgsm"}), me)
    assert found is not None and found.program == "my-gpgsm"


@pytest.mark.parametrize("value", ["@9223372036854775808 +0000", "99999999999999999999 +0100",
                                   "@99999999999999999", "99999999999999999999"],
                         ids=["one past a commit's time", "far past it", "past the calendar, "
                              "no zone", "far past, no zone"])
def test_a_date_past_what_a_commit_can_hold_is_refused_in_one_line(value: str) -> None:
    with pytest.raises(GitFailure, match=r"^GIT_AUTHOR_DATE='.*' is not a date omh can read"):
        parse_date(value, "GIT_AUTHOR_DATE")


def test_the_latest_time_a_commit_can_hold_is_read() -> None:
    assert parse_date("@9223372036854775807 -0130", "GIT_AUTHOR_DATE") == (2**63 - 1, -90)
