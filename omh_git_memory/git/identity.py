"""Who a commit is by and how it is signed, decided as `git commit` decides it.

The identity comes from the environment first (`GIT_AUTHOR_NAME`, `…_EMAIL`,
`…_DATE` and the `GIT_COMMITTER_*` three), then from configuration
(`author.*` / `committer.*` before `user.*`), then, for the e-mail only, from
`$EMAIL` (unless `user.useConfigOnly`); git's last resort — the account's name
and host — is refused instead of guessed. A commit is signed when
`commit.gpgSign` says so, with the program and key `gpg.format`,
`gpg.<format>.program` and `user.signingKey` name, as git runs them.

No pygit2 here: commit.py reads the configuration (config.py) and hands a lookup in.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import os
import re
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from omh_git_memory.model.errors import GitFailure

Lookup = Callable[[str], str | None]  # a configuration value by name, or None

_WHO_ARE_YOU = (
    "git does not know who you are: set it with git config user.name 'Your Name' "
    "and git config user.email you@example.com"
)


@dataclass(frozen=True)
class Person:
    """A commit's author or committer; `when` is (seconds, offset in minutes), or None
    for now."""

    name: str
    email: str
    when: tuple[int, int] | None = None


def person(role: str, config: Lookup, environ: Mapping[str, str]) -> Person:
    """The author (`role` "author") or committer ("committer") git would record."""
    upper = role.upper()
    name = environ.get(f"GIT_{upper}_NAME")
    if name is None:
        name = config(f"{role}.name") or config("user.name")
    mail = environ.get(f"GIT_{upper}_EMAIL")
    if mail is None:
        mail = config(f"{role}.email") or config("user.email")
    if mail is None and not _true(config("user.useConfigOnly")):
        mail = environ.get("EMAIL") or None
    if name is None or mail is None:
        raise GitFailure(_WHO_ARE_YOU)
    # git strips what cannot stand in an ident line and refuses an empty name
    name, mail = _crud(name), _crud(mail).strip("<>")
    if not name:
        raise GitFailure(f"the {role} name is empty ({_source(role, 'NAME')}); git refuses "
                         "an empty name: set a real one")
    when = environ.get(f"GIT_{upper}_DATE")
    return Person(name, mail, None if when is None else parse_date(when, f"GIT_{upper}_DATE"))


def _source(role: str, what: str) -> str:
    return f"GIT_{role.upper()}_{what} or {role}.{what.lower()} / user.{what.lower()}"


def _crud(text: str) -> str:
    # git drops leading and trailing "crud" (spaces, `.,:;<>"\`) and never keeps
    # a newline or angle bracket inside an ident (ident.c strbuf_addstr_without_crud)
    text = re.sub(r"[\n<>]", "", text)
    return text.strip(" \t.,:;<>\"\\'")


def _true(value: str | None) -> bool:
    return value is not None and value.strip().lower() in ("true", "yes", "on", "1", "")


LATEST: Final = 2**63 - 1  # the latest time, in seconds, a commit can hold


def _unreadable(name: str, value: str) -> GitFailure:
    return GitFailure(
        f"{name}={value!r} is not a date omh can read; use git's own form "
        "(`1700000000 +0100`), RFC 2822 (`Tue, 14 Nov 2023 22:13:20 +0100`) or ISO "
        "8601 (`2023-11-14T22:13:20+01:00`)")


def parse_date(value: str, name: str) -> tuple[int, int]:
    """A date as git reads `GIT_AUTHOR_DATE`: its internal form (`1700000000 +0100`,
    also with `@`), RFC 2822 or ISO 8601. (seconds since the epoch, offset in minutes)."""
    text = value.strip()
    internal = re.fullmatch(r"@?(\d+)(?:\s+([+-])(\d\d)(\d\d))?", text)
    if internal:
        seconds, sign, hours, minutes = internal.groups()
        if int(seconds) > LATEST:  # a commit records at most a signed 64-bit time
            raise _unreadable(name, value)
        if sign is None:  # no zone: git records the local offset at that moment
            try:
                return int(seconds), time.localtime(int(seconds)).tm_gmtoff // 60
            except (OverflowError, OSError, ValueError):  # past the platform's calendar
                raise _unreadable(name, value) from None
        return int(seconds), (int(hours) * 60 + int(minutes)) * (-1 if sign == "-" else 1)
    parsed: dt.datetime | None = None
    try:
        parsed = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        parsed = None
    if parsed is None:
        try:
            if ":" not in text:  # a day without its time: git refuses it too
                raise ValueError(text)
            parsed = dt.datetime.fromisoformat(text.replace(" ", "T", 1))
        except ValueError:
            raise _unreadable(name, value) from None
    if parsed.tzinfo is None:  # git takes a date without a zone as local time
        parsed = parsed.astimezone()
    offset_delta = parsed.utcoffset() or dt.timedelta(0)
    return int(parsed.timestamp()), int(offset_delta.total_seconds() // 60)


# --- signing ------------------------------------------------------------------

_PROGRAMS = {"openpgp": "gpg", "x509": "gpgsm", "ssh": "ssh-keygen"}


@dataclass(frozen=True)
class Signer:
    """How git would sign a commit here: `gpg.format`, its program, the key."""

    format: str
    program: str
    key: str


# The other way on, in every signing refusal: not every user wants signed commits.
_SIGNING_OFF: Final = "or turn signing off for this repository (git config commit.gpgSign false)"


def signer(config: Lookup, committer: Person) -> Signer | None:
    """The signer `commit.gpgSign` asks for, or None when commits are not signed.
    A setting omh cannot follow is refused, never ignored."""
    if not _true(config("commit.gpgSign")):
        return None
    fmt = (config("gpg.format") or "openpgp").lower()
    if fmt not in _PROGRAMS:
        raise GitFailure(f"gpg.format is {fmt!r}, which git does not know either; set it to "
                         f"openpgp, x509 or ssh, {_SIGNING_OFF}")
    program = config(f"gpg.{fmt}.program") or (
        config("gpg.program") if fmt == "openpgp" else None) or _PROGRAMS[fmt]
    key = config("user.signingKey")
    if not key:
        if fmt == "ssh":
            raise GitFailure(
                "commit.gpgSign is on with gpg.format=ssh but user.signingKey is not set, so "
                "there is no key to sign with (omh does not run gpg.ssh.defaultKeyCommand); "
                f"set user.signingKey to your key file, {_SIGNING_OFF}")
        key = f"{committer.name} <{committer.email}>"  # git signs as the committer
    return Signer(fmt, program, key)


def sign(how: Signer, payload: bytes) -> str:
    """The signature git would put in the commit's `gpgsig` header."""
    if how.format == "ssh":
        return _sign_ssh(how, payload)
    argv = [how.program, "--status-fd=2", "-bsau", how.key]
    done = _run(how, argv, payload)
    # git trusts the signature only when the program says it made one
    if b"\n[GNUPG:] SIG_CREATED " not in b"\n" + done.stderr:
        raise _failed(how, done)
    return done.stdout.decode("utf-8", "replace")


def _sign_ssh(how: Signer, payload: bytes) -> str:
    key = how.key.removeprefix("key::")
    literal = how.key.startswith("key::") or key.startswith("ssh-")
    import tempfile  # only to sign: recall must not pay for it

    with tempfile.TemporaryDirectory(prefix="omh-sign-") as folder:
        buffer = Path(folder) / "commit"
        buffer.write_bytes(payload)
        if literal:  # a public key: the agent holds its private half (ssh-keygen -U)
            key_file = Path(folder) / "key.pub"
            key_file.write_text(key + "\n", encoding="utf-8")
            argv = [how.program, "-Y", "sign", "-n", "git", "-f", str(key_file), "-U"]
        else:
            argv = [how.program, "-Y", "sign", "-n", "git", "-f",
                    os.path.expanduser(key)]
        done = _run(how, [*argv, str(buffer)], b"")
        signature = Path(f"{buffer}.sig")
        if done.returncode != 0 or not signature.is_file():
            raise _failed(how, done)
        return signature.read_text(encoding="utf-8")


def _run(how: Signer, argv: list[str], payload: bytes) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(argv, input=payload, capture_output=True, check=False,
                              timeout=300)
    except (OSError, subprocess.TimeoutExpired) as err:
        why = "it did not answer within 5 minutes" if isinstance(
            err, subprocess.TimeoutExpired) else (err.strerror or str(err))
        raise GitFailure(
            f"commit.gpgSign asks for a signed commit, but {how.program!r} could not sign "
            f"it ({why}); nothing was committed. Fix the signing setup (gpg.format, "
            f"gpg.program, user.signingKey) so that `git commit -S` works, {_SIGNING_OFF}"
        ) from None


def _failed(how: Signer, done: subprocess.CompletedProcess[bytes]) -> GitFailure:
    said = [line for line in done.stderr.decode("utf-8", "replace").splitlines()
            if line.strip() and not line.startswith("[GNUPG:]")]
    reason = said[-1].strip() if said else f"exit status {done.returncode}"
    return GitFailure(
        f"commit.gpgSign asks for a signed commit, but {how.program} could not sign it with "
        f"the key {how.key!r} ({reason}); nothing was committed. Fix the signing setup so that "
        f"`git commit -S` works, {_SIGNING_OFF}")
