"""Behaviour of secret_scan.py that the mutation pass (issue 14) showed no test
stated: which check decides a header is a credential, what counts as an opaque
token or a placeholder, which command a flag belongs to, and how a shape split
over a line break is found on its first line only."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from omh_git_memory.secret_scan import SecretHit, find_secrets, shape_count

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "secrets"


def kinds(text: str) -> list[str]:
    return [hit.kind for hit in find_secrets(text)]


def test_the_shape_count_is_the_number_of_kinds_the_fixtures_show() -> None:
    # Every shape has an example there (tests/test_reliability_caches.py), the
    # credential assignment too, so the count is that of the kinds found.
    found = {hit.kind for line in (FIXTURES / "secrets.txt").read_text().splitlines()
             for hit in find_secrets(line)}
    assert "a credential assignment" in found
    assert shape_count() == len(found)


# --- Authorization headers: an opaque token, or base64 user:pass -------------------


def test_a_header_holding_base64_user_pass_is_an_authorization_header() -> None:
    # dXNlcjpwYXNz is `user:pass`: no digit in it, so only its decoding tells.
    assert kinds("Authorization: Basic dXNlcjpwYXNz") == ["an Authorization header"]


def test_a_header_holding_an_opaque_token_is_an_authorization_header() -> None:
    assert b":" not in base64.b64decode("abc123def456")
    assert kinds("Authorization: token abc123def456") == ["an Authorization header"]


def test_a_header_of_prose_is_no_secret() -> None:
    assert kinds("Authorization: required for every call") == []


def test_base64_user_pass_whose_colon_is_in_its_last_block_is_found() -> None:
    value = base64.b64encode(b"abcdefgh:").decode()  # the colon is in the last 4 characters
    assert kinds(f"send it as Basic {value} to the proxy") == ["basic auth credentials"]


def test_basic_followed_by_a_word_is_prose() -> None:
    assert kinds("we use Basic authentication here") == []


# --- bearer tokens: letters and digits, and not a placeholder ----------------------


@pytest.mark.parametrize(
    "line",
    ["Bearer abcdefghijklmnopq", "Bearer 12345678901234567", "Bearer example1234567890ab"],
)
def test_a_bearer_word_of_one_kind_of_character_or_a_placeholder_is_prose(line: str) -> None:
    assert kinds(line) == []


def test_a_bearer_token_mixing_letters_and_digits_is_found() -> None:
    assert kinds("Bearer abc123def456ghi789") == ["a bearer token"]


# --- placeholders ------------------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    ["password=$DB_PASSWORD", "password = <your-password>", "password: changeme,",
     "password: 'xxxxxxxxxx'", "PGPASSWORD=${SECRET}"],
)
def test_a_placeholder_value_is_no_secret(line: str) -> None:
    assert kinds(line) == []


@pytest.mark.parametrize("line", ["password=$uperS3cret!", "password=hunter2hunter2"])
def test_a_real_value_is_a_credential_assignment(line: str) -> None:
    assert kinds(line) == ["a credential assignment"]


# --- a flag is a password flag only for the command that owns it --------------------


def test_dash_u_user_pass_is_a_password_only_on_a_curl_line() -> None:
    assert kinds("curl -u bob:hunter22 https://example.org") == ["a password after curl -u"]
    assert kinds("ssh -u bob:hunter22 host") == []


def test_dash_p_is_a_password_only_on_a_mysql_line() -> None:
    assert kinds("mysql -u root -phunter22 db") == ["a password after mysql -p"]
    assert kinds("mkdir -phunter22") == []


# --- shapes split over a line break ------------------------------------------------


def test_a_token_on_the_line_after_its_header_is_found_on_the_header_line() -> None:
    hits = find_secrets("intro\nAuthorization: Bearer\n  abc123def456ghi789\nend\n")
    assert hits == [SecretHit(2, "an Authorization header")]


def test_a_token_cut_by_a_backslash_continuation_is_found_whole() -> None:
    token = "ghp_" + "a1" * 18
    text = f"export GH={token[:20]}\\\n{token[20:]}\n"
    assert kinds(token) == ["a GitHub token"]
    assert find_secrets(text) == [SecretHit(1, "a GitHub token")]


def test_a_line_before_a_secret_is_not_reported_with_it() -> None:
    text = "see below\nAKIAABCDEFGHIJKLMNOP\nafter\n"
    assert find_secrets(text) == [SecretHit(2, "an AWS access key id")]


def test_a_secret_on_the_last_line_is_found_with_its_line_number() -> None:
    assert find_secrets("one\ntwo\nAKIAABCDEFGHIJKLMNOP") == [SecretHit(3, "an AWS access key id")]
    assert find_secrets("AKIAABCDEFGHIJKLMNOP") == [SecretHit(1, "an AWS access key id")]


def test_base64_user_pass_with_a_stray_character_after_it_is_still_found() -> None:
    # 16 characters decode to `abcdefghijk:`; the 17th cannot be decoded alone, so the
    # scan reads the longest run of whole 4-character blocks.
    value = base64.b64encode(b"abcdefghijk:").decode() + "A"
    assert len(value) == 17
    assert kinds(f"Basic {value}") == ["basic auth credentials"]


def test_a_long_base64_value_is_judged_by_its_first_96_characters() -> None:
    head = base64.b64encode(b"u" * 70 + b":p").decode()  # 96 characters, the colon at the end
    assert len(head) == 96
    assert kinds(f"Basic {head}") == ["basic auth credentials"]
    late = base64.b64encode(b"u" * 80 + b":p").decode()  # the colon past character 96
    assert kinds(f"Basic {late}") == []
