"""Behaviour of secret_scan.py that the mutation pass showed no test
stated: which check decides a header is a credential, what counts as an opaque
token or a placeholder, which command a flag belongs to, and how a shape split
over a line break is found on its first line only.

Found by mutation testing (docs/records/mutation-passes.md);
was tests/test_mutants_secret_scan.py."""

from __future__ import annotations

import base64

import pytest

from omh_git_memory.model.secret_scan import SecretHit, find_secrets, shape_count
from tests.helpers import ROOT

FIXTURES = ROOT / "fixtures" / "secrets"


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


# --- the shapes added later, and what each helper decides -------------------------


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_a_token_body_of_one_character_eight_times_is_a_placeholder() -> None:
    assert kinds("AKIA" + "ABCDEFGH" + "X" * 7 + "J") == ["an AWS access key id"]
    assert kinds("AKIA" + "ABCDEFG" + "X" * 8 + "JK") == []
    assert kinds("token: ghp_" + "0" * 36) == []


def _der(head: bytes) -> str:
    return "    " + _b64(head + bytes(range(40, 88)))


@pytest.mark.parametrize("head", [
    bytes.fromhex("308204bd020100300d"),  # PKCS#8: version 0, then the algorithm
    bytes.fromhex("308204a40201000282"),  # PKCS#1: version 0, then the modulus
    bytes.fromhex("3077020101042000"),  # SEC1 EC: version 1, then the key octets
    bytes.fromhex("30820a1f0201033082"),  # PKCS#12: version 3, then its content
    bytes.fromhex("3081a0020100300d"),  # one length byte
    bytes.fromhex("3050020100300d"),  # the short form of the length
    bytes.fromhex("3051020100300d"),  # an odd one
    bytes.fromhex("30810a020100300d"),  # long form, one byte, its top bit clear
    bytes.fromhex("30840000010002010030"),  # four length bytes
])
def test_a_private_key_body_is_found_by_its_der_header(head: bytes) -> None:
    assert kinds(_der(head)) == [
        "a private key body (base64 of a key file without its BEGIN line)"]


@pytest.mark.parametrize("head", [
    bytes.fromhex("30820122300d06092a"),  # a public key: a SEQUENCE first
    bytes.fromhex("308203773082025fa0"),  # a certificate
    bytes.fromhex("308204bd0201000400"),  # version 0, then neither an algorithm nor a modulus
    bytes.fromhex("3077020101030000"),  # version 1 without key octets
    bytes.fromhex("30820a1f0201030400"),  # version 3 without content
    bytes.fromhex("30850000000001020100300d"),  # five length bytes: no DER this scan reads
    bytes.fromhex("308500000001020100300d"),  # five, with a key's field after four
    bytes.fromhex("31020100300d"),  # a key's field, but after no SEQUENCE's header
    bytes.fromhex("300201003000"),  # a SEQUENCE's header read as its contents
    bytes.fromhex("3182020102010030"),  # a SET, not a SEQUENCE
    bytes.fromhex("308204bd020102300d"),  # version 2
])
def test_der_that_is_no_private_key_passes(head: bytes) -> None:
    assert kinds(_der(head)) == []


def test_a_key_body_of_any_length_is_decoded_in_whole_blocks() -> None:
    body = _der(bytes.fromhex("308204bd020100300d"))
    for extra in ("", "A", "AB", "ABC"):
        assert kinds(body + extra), extra


def test_an_openssh_key_body_is_found_and_other_base64_is_not() -> None:
    body = _b64(b"openssh-key-v1\0\0\0\0\x04none" + bytes(40))
    assert kinds(body) == ["a private key body (base64 of a key file without its BEGIN line)"]
    assert kinds(_b64(b"openssh-key-v2\0\0\0\0\x04none" + bytes(40))) == []


def test_base64_of_text_holding_a_secret_is_found_and_of_other_text_is_not() -> None:
    secret = _b64(b"password = hunter2hunter2\n")
    assert kinds(f"CONFIG {secret}") == ["base64 of text that holds a secret"]
    assert kinds(f"CONFIG {_b64(b'the deploy copies the wheel to the store')}") == []


def test_base64_that_is_not_text_is_not_read() -> None:
    # `password=hunter2hunter2` after a byte that is no UTF-8, or among control bytes.
    assert kinds(_b64(b"\xff" + b"password=hunter2hunter2")) == []
    noisy = b"\x01\x02\x03" + b"password=hunter2hunter2"  # 3 of 26 not printable: > 10%
    assert kinds(_b64(noisy)) == []
    clean = b"\x01\x02" + b"password=hunter2hunter2ab"  # 2 of 27: under 10%
    assert kinds(_b64(clean)) == ["base64 of text that holds a secret"]


def test_base64_of_text_is_read_from_twelve_characters() -> None:
    # The pattern needs 24 characters (18 bytes); the text must hold 12 or more.
    assert kinds(_b64(b"AKIAABCDEFGHIJKLMNOP")) == ["base64 of text that holds a secret"]


def test_base64_wrapped_over_lines_is_read_whole_and_reported_on_its_first_line() -> None:
    blob = _b64(b"[default]\naws_secret_access_key = " + b"k9" * 20 + b"\n" + b"x" * 60)
    lines = [blob[i:i + 40] for i in range(0, len(blob), 40)]
    assert len(lines) >= 3 and not any(find_secrets(line) for line in lines[1:])
    hits = find_secrets("intro\n" + "\n".join(lines) + "\nend\n")
    assert hits[0] == SecretHit(2, "base64 of text that holds a secret")
    # One base64 line alone is read as a line, not as a run of several.
    assert find_secrets(f"intro\n{lines[1]}\nend\n") == []


def test_a_run_that_already_holds_a_secret_is_not_read_again() -> None:
    key = "AKIAABCDEFGHIJKLMNOP"
    text = f"{key}\n{_b64(b'hello there, general')}\n"
    assert find_secrets(text) == [SecretHit(1, "an AWS access key id")]


def test_a_token_wrapped_is_joined_but_a_value_is_not() -> None:
    token = "ghp_" + "a1B2c3D4e5" * 3 + "f6G7h8"
    assert find_secrets(f"{token[:20]}\n{token[20:]}\n") == [SecretHit(1, "a GitHub token")]
    assert find_secrets(f"{token[:20]}\n> {token[20:]}\n") == [SecretHit(1, "a GitHub token")]
    # `$GITHUB_TOKEN` joined to the next word is no value: only tokens are joined bare.
    assert find_secrets("export GH_TOKEN=$GITHUB_TOKEN\nthen run it\n") == []
    # The next line's indentation is dropped; a break after a word is no wrap.
    assert find_secrets(f"{token[:20]}\n    {token[20:]}\n") == [SecretHit(1, "a GitHub token")]
    assert find_secrets(f"{token[:20]} and\n{token[20:]}\n") == []


def test_a_token_inside_base64_is_not_joined_when_decoded() -> None:
    # Decoded text is read with every shape but the decoding itself, lines joined too.
    inner = _b64(b"token wrapped: ghp_" + b"a1" * 9 + b"\n" + b"b2" * 9 + b"\n")
    assert kinds(inner) == ["base64 of text that holds a secret"]


def test_a_flag_value_that_is_a_lowercase_word_is_prose() -> None:
    assert kinds("redis-cli -a takes the password") == []
    assert kinds("redis-cli -a Takes ping") == ["a password after redis-cli -a"]
    assert kinds("redis-cli -a hunter2 ping") == ["a password after redis-cli -a"]
    assert kinds('redis-cli -a "$REDIS_PASSWORD" ping') == []
    assert kinds("git commit -a hunter2") == []


def test_docker_login_p_counts_only_on_a_login_line() -> None:
    assert kinds("docker login -u ci -p S3cret registry") == ["a password after docker login -p"]
    assert kinds("docker run -p 8080:80 nginx") == []


def test_a_connection_string_password_counts_only_in_a_connection_string() -> None:
    assert kinds("Server=db;User Id=sa;Password=Xk9!;") == ["a connection string password"]
    assert kinds("Password=Xk9!;") == []


def test_a_session_cookie_counts_only_on_a_cookie_line() -> None:
    value = "a1b2c3d4e5f6a7b8c9d0"
    assert kinds(f"Cookie: sessionid={value}") == ["a session cookie"]
    assert kinds(f"curl -b sessionid={value} https://x") == ["a session cookie"]
    assert kinds(f"sessionid={value}") == []
    assert kinds("Cookie: sessionid=abcdefghijklmnopqrst") == []  # letters only: a word


def test_a_url_password_may_hold_a_slash_but_a_port_is_none() -> None:
    assert kinds("postgres://app:ab/cd12@db/x") == ["a password in a URL"]
    assert kinds("redis://:s3cr3tpass@cache:6379") == ["a password in a URL"]
    assert kinds("http://localhost:5173/@vite/client") == []
    assert kinds("http://host:8080@x") == []
    assert kinds("http://host:123456/@x") == ["a password in a URL"]  # no port has 6 digits


def test_a_short_password_flag_with_equals_counts() -> None:
    assert kinds("--password=pw") == ["a password flag"]
    assert kinds("--password=$PW") == []
    assert kinds("--password-file=/run/x") == []


@pytest.mark.parametrize("line", [
    'token = os.environ["SLACK_APP_TOKEN"]', "api_key = os.getenv('OPENAI_API_KEY')",
    "api_key = settings.OPENAI_API_KEY", "token = self.session_token",
    "password: [REDACTED]", "postgres://user:password@localhost/app",
    "password = getenv('DB')", "secret = env['SECRET_KEY_BASE']",
])
def test_code_that_reads_a_value_and_placeholder_words_pass(line: str) -> None:
    assert kinds(line) == []


def test_a_fifteen_character_token_is_searched_for() -> None:
    assert kinds("xoxb-1234567890") == ["a Slack token"]


def test_decoded_text_of_twelve_characters_is_read() -> None:
    # 18 bytes (the fewest the pattern decodes: 24 characters) in 12 characters.
    text = "mysql -p€€€ "
    assert len(text) == 12 and len(text.encode()) == 18
    assert kinds(_b64(text.encode())) == ["base64 of text that holds a secret"]


def test_decoded_text_nine_tenths_printable_is_read() -> None:
    text = b"\x01\x02" + b"password=hunter2hu"  # 18 of 20 printable: the limit
    assert len(text) == 20
    assert kinds(_b64(text)) == ["base64 of text that holds a secret"]


def test_a_header_cut_between_token_characters_is_joined() -> None:
    assert find_secrets("PuTTY-User-\nKey-File-3: ssh-rsa\n") == [
        SecretHit(1, "a PuTTY private key")]


def test_a_variable_joined_to_the_next_word_is_no_password() -> None:
    assert find_secrets("PGPASSWORD=$DB_PASSWORD\nthen psql\n") == []


def _wrapped(lines: int) -> list[str]:
    """A base64 credentials file cut into `lines` lines of which no line alone (nor
    two joined with nothing between them) holds a secret."""
    blob = _b64(b"[default]\naws_secret_access_key = " + b"k9" * 13)  # no padding
    width = -(-len(blob) // lines)
    cut = [blob[i:i + width] for i in range(0, len(blob), width)]
    assert len(cut) == lines and all(len(c) >= 16 for c in cut)
    return cut


def test_base64_of_two_lines_is_read_at_the_start_of_a_note() -> None:
    cut = _wrapped(2)
    assert not find_secrets(cut[0]) and not find_secrets(cut[1])
    assert find_secrets("\n".join(cut) + "\n") == [
        SecretHit(1, "base64 of text that holds a secret")]


def test_base64_of_two_lines_is_read_after_prose() -> None:
    cut = _wrapped(2)
    assert find_secrets("intro\n" + "\n".join(cut) + "\nend\n") == [
        SecretHit(2, "base64 of text that holds a secret")]


def test_base64_of_three_lines_is_read_without_the_line_after_it() -> None:
    cut = _wrapped(3)
    # The next line is no base64 line (it has spaces); its first word, read with
    # the run, would decode to bytes that are not text.
    text = "\n".join(cut) + "\n//////////////////// and some prose\n"
    assert find_secrets(text)[:1] == [SecretHit(1, "base64 of text that holds a secret")]


def test_a_run_of_base64_lines_is_read_for_encoded_secrets_only() -> None:
    # `token=` ends a base64 line and a value starts the next: an assignment read
    # where the two lines join (line 2), not as the run's own (line 1).
    text = "QUFBQUFBQUFBQUFBQUFB\nQUFBQUFBQUFBQUFBtoken=\nabcdefgh12345678\n"
    assert find_secrets(text) == [SecretHit(2, "a credential assignment")]


def test_a_secret_on_a_later_line_that_is_no_base64_is_kept() -> None:
    assert find_secrets("one\ntwo\nhere: AKIAABCDEFGHIJKLMNOP\n") == [
        SecretHit(3, "an AWS access key id")]
