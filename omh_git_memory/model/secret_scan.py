"""Content that looks like a secret, which must never reach the team layer.

A promoted note is pushed to everyone with access to the repository, and git
never forgets. A shape is a pattern with a fixed, recognisable form (a token
prefix, a header, a command-line flag, a config key); where a shape captures a
value, it counts only when the value is not an obvious placeholder. The shapes
and the placeholders are listed in docs/commands.md (promote); the choice of a
hand list over a maintained scanner, with its figures, is in docs/decisions.md
(bench/secret_scan.py measures both on fixtures/secrets/corpus.tsv).

Every pattern is bounded (no unbounded span meets another that matches the same
characters), so a scan stays linear in the size of a line whatever it holds.

A note's key is read too (find_secret_in_key): it becomes the team path and the
commit subject, and the slug hides a token's form (see the last section).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True)
class SecretHit:
    line: int
    kind: str


@dataclass(frozen=True)
class _Shape:
    kind: str
    pattern: re.Pattern[str]
    # Beyond the shape, is the match real? By default: group 1, when the pattern
    # has one, is not a placeholder.
    real: Callable[[re.Match[str]], bool] | None = None
    # A word the line must hold for the shape to count (looked for once a line):
    # a flag is only a password flag for the command that owns it.
    needs: re.Pattern[str] | None = None


def _decodes_to(marker: bytes) -> Callable[[re.Match[str]], bool]:
    """True when group 1, read as base64 (its first 96 characters), holds `marker`:
    `Basic dXNlcjpwYXNz` is `user:pass`, but `Basic authentication` is not."""
    def real(match: re.Match[str]) -> bool:
        text = match.group(1)
        head = text[: min(len(text), 96) // 4 * 4]
        try:
            return marker in base64.b64decode(head + "=" * (-len(head) % 4))
        except (binascii.Error, ValueError):
            return False
    return real


def _opaque(match: re.Match[str]) -> bool:
    """An opaque token mixes letters and digits (a word like `tokens` does not)."""
    value = match.group(1)
    return (not _placeholder(value) and any(c.isdigit() for c in value)
            and any(c.isalpha() for c in value))


_FILLER: Final = re.compile(r"(.)\1{7}")


def _not_filler(match: re.Match[str]) -> bool:
    """A token shape whose body is a run of one character (`AKIAXXXXXXXXXXXXXXXX`,
    `ghp_000…`) is a placeholder: a generated token never repeats a character eight
    times over."""
    return not _FILLER.search(match.group(0))


def _aws_key_id(match: re.Match[str]) -> bool:
    """An AWS key id, unless a placeholder: filler, or one ending in `EXAMPLE` (AWS's
    documentation uses `AKIAIOSFODNN7EXAMPLE`; a generated id never spells a word)."""
    return _not_filler(match) and not match.group(0).upper().endswith("EXAMPLE")


def _discord_bot_token(match: re.Match[str]) -> bool:
    """A Discord bot token's first part is base64 of the bot's numeric id."""
    head = match.group(1)
    try:
        decoded = base64.b64decode(head + "=" * (-len(head) % 4), altchars=b"-_")
    except (binascii.Error, ValueError):
        return False
    return decoded.isdigit() and _not_filler(match)


def _b64_decoded(text: str) -> bytes:
    """`text`, a pattern's run of the base64 alphabet (at most 4,002 characters),
    decoded in whole 4-character blocks; so it always decodes."""
    return base64.b64decode(text[: len(text) // 4 * 4])


def _der_contents(der: bytes) -> bytes:
    """A DER SEQUENCE's contents (after its tag and its length, short or long form),
    or nothing when `der` starts no SEQUENCE this scan reads."""
    if der[0] != 0x30:
        return b""
    width = der[1] & 0x7F if der[1] & 0x80 else 0
    return der[2 + width:] if width <= 4 else b""


def _private_key_body(match: re.Match[str]) -> bool:
    """A PEM body without its BEGIN line: base64 of a private key's DER (PKCS#8 or
    PKCS#1: a SEQUENCE whose first field is version 0 followed by an algorithm or
    the modulus; SEC1 EC: version 1 and the key octets; PKCS#12: version 3 and
    its content), or of an OpenSSH key file. A public key or a certificate starts
    its SEQUENCE with another SEQUENCE, so it passes."""
    der = _b64_decoded(match.group(1))
    if der.startswith(b"openssh-key-v1\0"):
        return True
    field = _der_contents(der)[:4]
    return ((field[:3] == b"\x02\x01\x00" and field[3:] in (b"\x30", b"\x02"))
            or field in (b"\x02\x01\x01\x04", b"\x02\x01\x03\x30"))


def _encoded_secret(match: re.Match[str]) -> bool:
    """A base64 run that decodes to text holding a secret (a credentials file, a
    .netrc, a .env) is that secret. Only text is read: a hash, an image or a key
    id decodes to bytes that are not."""
    raw = _b64_decoded(match.group(1))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    printable = sum(c.isprintable() or c in "\n\t\r" for c in text)
    return len(text) >= 12 and printable * 10 >= len(text) * 9 and bool(
        _find(text, _INNER))


def _credentials(match: re.Match[str]) -> bool:
    """An Authorization header's value: an opaque token or base64 `user:pass`
    (`Authorization: required for every call` is prose)."""
    return _opaque(match) or _decodes_to(b":")(match)


_B64: Final = r"[A-Za-z0-9+/]"
_VALUE: Final = r"[^\s\"'`]"  # an unquoted value's characters

_CURL: Final = re.compile(r"\bcurl\b")
_MYSQL: Final = re.compile(r"\bmysql(?:dump|admin)?\b")
_REDIS: Final = re.compile(r"\bredis-cli\b")
_DOCKER_LOGIN: Final = re.compile(r"\b(?:docker|podman|helm registry) login\b")
_COOKIE: Final = re.compile(r"(?i)\bcookie\b|(?:^|\s)(?:-b|--cookie)\s|\.sid=")
_CONNECTION_STRING: Final = re.compile(r"(?i)(?:server|data source|host|uid|user id)\s*=")
_ENCODED: Final = "base64 of text that holds a secret"


def _not_a_word(match: re.Match[str]) -> bool:
    """A flag's value that is a lowercase word is prose (`redis-cli -a takes the
    password`); one with a digit, a capital or a sign is a password."""
    value = match.group(1)
    return not (_placeholder(value) or (value.isalpha() and value.islower()))

_SHAPES: Final[tuple[_Shape, ...]] = (*(_Shape(k, re.compile(p), r) for k, p, r in (
    # Keys and key files.
    ("a private key block",
     r"-----BEGIN (?:[A-Z0-9]{1,20} ){0,4}PRIVATE KEY(?: BLOCK)?-----", None),
    ("a PuTTY private key", r"PuTTY-User-Key-File-\d", None),
    ("a base64 private key (kubeconfig client-key-data)",
     rf"\b(LS0tLS1CRUdJTi{_B64}{{20,96}})", _decodes_to(b"PRIVATE KEY")),
    ("a kubeconfig client key", rf"(?i)\bclient-key-data[\"']?\s*:\s*[\"']?({_B64}{{16,300}})",
     None),
    ("a service-account key file", r"\"type\"\s*:\s*\"service_account\"", None),
    ("a private key body (base64 of a key file without its BEGIN line)",
     rf"(?:^|[\s\"'>:=])(M{_B64}{{39,300}}|b3BlbnNzaC1rZXktdjE{_B64}{{0,300}})",
     _private_key_body),
    # Token shapes with a fixed prefix: a body of one repeated character is a
    # placeholder (_not_filler).
    ("an AWS access key id", r"\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[0-9A-Z]{16}\b", _aws_key_id),
    ("a GitHub token",
     r"\b(?:gh[pousr]_[A-Za-z0-9]{36,300}|github_pat_[A-Za-z0-9_]{40,300})", _not_filler),
    ("a GitLab token",
     r"\b(?:glpat|gldt|glrt|glrtr|glptt|glsoat|glcbt|gloas|glimt|glft|glagent|glwt|glffct)"
     r"-[A-Za-z0-9_-]{20,300}|\bGR1348941[A-Za-z0-9_-]{20,300}", _not_filler),
    ("a Slack token", r"\b(?:xox[abposre]|xoxe\.xox[bp]|xapp)-[A-Za-z0-9-]{10,300}",
     _not_filler),
    ("a Slack webhook URL",
     r"\bhooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/-]{0,80}?"
     r"([A-Za-z0-9_-]{16,80})\b", None),
    ("a Discord webhook URL",
     r"\bdiscord(?:app)?\.com/api/webhooks/\d{5,30}/([A-Za-z0-9_-]{20,100})", None),
    ("an API secret key", r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{32,300}", _not_filler),
    ("a Stripe live key", r"\b[sr]k_live_[A-Za-z0-9]{20,300}", _not_filler),
    ("a Stripe test key or webhook secret", r"\b(?:[sr]k_test|whsec)_[A-Za-z0-9]{20,300}",
     _not_filler),
    ("a Google API key", r"\bAIza[0-9A-Za-z_-]{35}\b", _not_filler),
    ("a Google OAuth client secret", r"\bGOCSPX-[A-Za-z0-9_-]{28}(?![A-Za-z0-9_-])",
     _not_filler),
    ("a Google OAuth access token", r"\bya29\.[A-Za-z0-9_-]{30,2000}", _not_filler),
    ("a Vault token", r"\bhv[sb]\.[A-Za-z0-9_-]{24,1000}", _not_filler),
    ("a Docker Hub token", r"\bdckr_(?:pat|oat)_[A-Za-z0-9_-]{27,300}", _not_filler),
    ("an age secret key", r"\bAGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}\b",
     _not_filler),
    ("an Atlassian or Bitbucket token",
     r"\bATATT3[A-Za-z0-9_=-]{100,400}|\bATBB[A-Za-z0-9]{32}\b", _not_filler),
    ("a New Relic key", r"\bNR(?:AK|AA|II|JS)-[A-Za-z0-9]{20,64}\b", _not_filler),
    ("a Tailscale key", r"\btskey-(?:[a-z]{3,10}-)?[A-Za-z0-9]{6,40}-[A-Za-z0-9]{16,100}",
     _not_filler),
    ("a Sentry token", r"\bsntry[su]_[A-Za-z0-9+/=_-]{40,600}", _not_filler),
    ("a SendGrid API key", r"\bSG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{30,50}", _not_filler),
    ("a Twilio API key", r"\bSK[0-9a-f]{32}\b", _not_filler),
    ("a Mailgun API key", r"\bkey-[0-9a-zA-Z]{32}\b", _not_filler),
    ("a Mailchimp API key", r"\b[0-9a-f]{32}-us\d{1,2}\b", _not_filler),
    ("an npm token", r"\bnpm_[A-Za-z0-9]{36}\b", _not_filler),
    ("a PyPI token", r"\bpypi-AgE[A-Za-z0-9_-]{50,300}", _not_filler),
    ("a Hugging Face token", r"\b(?:hf_|api_org_)[A-Za-z0-9]{34,40}\b", _not_filler),
    ("a DigitalOcean token", r"\bdo[opr]_v1_[a-f0-9]{64}\b", _not_filler),
    ("a Shopify token", r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b", _not_filler),
    # More providers' fixed forms (the gitleaks and Kingfisher rule sets have them).
    ("a provider API token", "|".join((
        r"\bdapi[a-f0-9]{32}\b",  # Databricks
        r"\blin_(?:api|oauth)_[A-Za-z0-9]{40}\b",  # Linear
        r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b",  # Postman
        r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,300}",  # Terraform Cloud
        # Doppler (a service token names its config: dp.st.dev.…, dp.st.prd_eu.…)
        r"\bdp\.(?:pt|st|sa|ct|scim|audit)\.(?:[a-z0-9_-]{1,40}\.)?[A-Za-z0-9]{40,44}\b",
        r"\bpul-[a-f0-9]{40}\b",  # Pulumi
        r"\bglc_[A-Za-z0-9+/]{32,400}|\bglsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}\b",  # Grafana
        r"\bsq[uap]_[a-f0-9]{40}\b",  # SonarQube
        r"\bHRKU-[A-Za-z0-9_-]{30,80}",  # Heroku (HRKU-AA…, or HRKU- and a UUID)
        r"\bfigd_[A-Za-z0-9_-]{40}\b",  # Figma
        r"\bntn_[A-Za-z0-9]{40,50}\b|\bsecret_[A-Za-z0-9]{43}\b",  # Notion
        r"\bsbp_[a-f0-9]{40}\b",  # Supabase
        r"\bpscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.-]{32,64}",  # PlanetScale
        r"\bops_eyJ[A-Za-z0-9+/=_-]{100,2000}",  # 1Password service account
        r"\bbkua_[a-f0-9]{40}\b",  # Buildkite
        r"\bCCIPAT_[A-Za-z0-9]{22}_[a-f0-9]{40}\b",  # CircleCI
        r"\brubygems_[a-f0-9]{48}\b",  # RubyGems
        r"\boy2[a-z0-9]{43}\b",  # NuGet
        r"\bcio[A-Za-z0-9]{32}\b",  # crates.io
        r"\b\d{8,10}:AA[A-Za-z0-9_-]{33}\b",  # Telegram bot
        r"\bgsk_[A-Za-z0-9]{48,60}\b",  # Groq
        r"\bxai-[A-Za-z0-9]{70,90}\b",  # xAI
        r"\bpplx-[A-Za-z0-9]{40,60}\b",  # Perplexity
        r"\br8_[A-Za-z0-9]{37}\b",  # Replicate
        r"\bsk\.eyJ[A-Za-z0-9_-]{20,300}\.[A-Za-z0-9_-]{20,100}",  # Mapbox secret
        r"\bsq0(?:atp|csp)-[A-Za-z0-9_-]{22,60}",  # Square
        r"\bLTAI[A-Za-z0-9]{12,20}\b",  # Alibaba Cloud
        r"\bAKCp[A-Za-z0-9]{69}\b",  # JFrog
        r"\bFlyV1\s+fm\d_[A-Za-z0-9+/=_-]{40,1000}|\bfo1_[A-Za-z0-9_-]{43}\b",  # Fly.io
        # An Azure AD (Entra) client secret: three characters, a digit, `Q~`.
        r"(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])",
    )), _not_filler),
    ("a Microsoft Teams webhook URL",
     r"\b(?:outlook\.office(?:365)?\.com/webhook|[a-z0-9-]{1,60}\.webhook\.office\.com/"
     r"webhookb2)/[A-Za-z0-9@-]{36,80}/IncomingWebhook/([A-Za-z0-9]{32})/", None),
    ("an htpasswd hash",
     r"\$apr1\$[./0-9A-Za-z]{1,8}\$([./0-9A-Za-z]{22})|"
     r"(?:^|\s)[^\s:]{1,64}:\$2[aby]?\$\d\d\$([./0-9A-Za-z]{53})", _not_filler),
    ("a Discord bot token",
     r"(?<![A-Za-z0-9_-])([MNO][A-Za-z0-9_-]{23,27})\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}"
     r"(?![A-Za-z0-9_-])", _discord_bot_token),
    ("a JSON web token",
     r"\beyJ[A-Za-z0-9_-]{8,300}\.eyJ[A-Za-z0-9_-]{8,300}\.[A-Za-z0-9_-]{8,300}", _not_filler),
    # Credentials in URLs, headers, connection strings and config files.
    # The user may be empty (`redis://:pass@host`); the password may hold `/` but is
    # not a port (`http://localhost:5173/@vite/client`).
    ("a password in a URL",
     r"\b[a-z][a-z0-9+.-]{0,30}://[^/\s:@]{0,200}:(?!\d{1,5}(?:[/?#@]|$))([^\s@/][^\s@]{2,200})@",
     None),
    ("an Authorization header",
     r"(?i)\bauthorization[\"']?\s*[:=]\s*[\"']?"
     r"(?:(?:bearer|token|basic|digest|apikey|sso-key|key)\s+)?"
     rf"({_VALUE}{{8,300}})", _credentials),
    ("a bearer token", r"(?i)\bbearer\s+([A-Za-z0-9._~+/-]{12,300}=*)", _opaque),
    ("basic auth credentials", rf"(?i)\bbasic\s+({_B64}{{8,300}}={{0,2}})", _decodes_to(b":")),
    ("an Azure storage or service-bus key",
     rf"(?i)\b(?:AccountKey|SharedAccessKey)\s*=\s*({_B64}{{20,200}}={{0,2}})", None),
    ("an Azure SAS signature", r"[?&]sig=([A-Za-z0-9%+/=]{20,200})", None),
    ("a registry auth (docker config)",
     rf"\"(?:auth|identitytoken)\"\s*:\s*\"({_B64}{{8,400}}={{0,2}})\"", _decodes_to(b":")),
    ("an npm auth setting", rf"(?i)(?<![A-Za-z0-9])_auth(?:Token)?\s*=\s*({_VALUE}{{6,300}})",
     None),
    ("a password environment variable",
     rf"(?<![A-Za-z0-9_])(?:PGPASSWORD|MYSQL_PWD|REDISCLI_AUTH|SSHPASS)\s*=\s*[\"']?"
     rf"({_VALUE}{{3,300}})", None),
    # Passwords on a command line.
    ("a password after sshpass -p", rf"\bsshpass\s+-p\s*[\"']?({_VALUE}{{1,200}})", None),
    ("a password flag",
     rf"(?i)(?:^|\s)--(?:http-|ftp-|proxy-)?passw(?:or)?d\s+[\"']?({_VALUE}{{3,200}})", None),
    ("a password flag",
     rf"(?i)(?:^|\s)--(?:http-|ftp-|proxy-)?passw(?:or)?d=[\"']?({_VALUE}{{1,200}})", None),
    ("a .netrc password",
     rf"(?i)\b(?:login|machine)\s+\S{{1,200}}\s+password\s+({_VALUE}{{1,200}})", None),
    ("a .netrc password", rf"(?i)^\s*password\s+({_VALUE}{{1,200}})\s*$", None),
)),
    _Shape("a password after curl -u",
           re.compile(rf"(?:^|\s)(?:-u|--user)(?:\s+|=)?[\"']?[^\s:\"']{{1,100}}:"
                      rf"({_VALUE}{{1,200}})"), needs=_CURL),
    _Shape("a password after mysql -p", re.compile(rf"(?:^|\s)-p({_VALUE}{{1,200}})"),
           needs=_MYSQL),
    _Shape("a session cookie",
           re.compile(r"(?i)(?<![A-Za-z0-9_.-])[A-Za-z0-9_.-]{0,40}(?:sess|sid|auth|jwt)"
                      r"[A-Za-z0-9_.-]{0,40}=[\"']?([^;\s\"'`]{16,400})"), _opaque,
           needs=_COOKIE),
    _Shape("a connection string password",
           re.compile(r"(?i)(?:^|;)\s*(?:password|pwd)\s*=\s*([^;\s\"']{1,200})"),
           needs=_CONNECTION_STRING),
    _Shape("a password after redis-cli -a",
           re.compile(rf"(?:^|\s)(?:-a|--pass)\s+[\"']?({_VALUE}{{1,200}})"), _not_a_word,
           needs=_REDIS),
    _Shape("a password after docker login -p",
           re.compile(rf"(?:^|\s)-p\s+[\"']?({_VALUE}{{1,200}})"), _not_a_word,
           needs=_DOCKER_LOGIN),
    # Base64 of text that holds a secret: read last, and only at the top level.
    _Shape(_ENCODED, re.compile(rf"(?<!{_B64})({_B64}{{24,4000}}={{0,2}})"), _encoded_secret),
)

# `password = …`, `client_secret: …`, `DB_PASSWORD=…`: a key ending in a credential
# word and a value of eight or more characters, unquoted or quoted (spaces and all).
_ASSIGNMENT: Final = re.compile(
    r"(?i)(?:password|passwd|pwd|secret(?:[_-]?key(?:[_-]?base)?)?|api[_-]?key|"
    r"(?:access|signing|encryption|master)[_-]?key|auth[_-]?token|client[_-]?secret|"
    r"private[_-]?key|token)(?![A-Za-z0-9])"
    r"[\"']?\s*[:=]\s*(?:\"([^\"\n]{8,300})\"|'([^'\n]{8,300})'|[\"']?"
    rf"({_VALUE}{{8,300}}))"
)

# Obvious placeholders: `<…>`, `${…}`, `$(…)`, `%VAR%`, `{{…}}`, runs of x, * or .,
# and a few words. A bare `$NAME` is a shell variable only in upper case
# (`$DB_PASSWORD`): `$uperS3cret` or `$ecret` is a password that starts with `$`.
_PLACEHOLDER: Final = re.compile(
    r"(?i)^(?:<[^>]*>|\$\{[^}]*\}|\$\([^)]*\)|%[A-Za-z_][A-Za-z0-9_]*%|\{\{.*\}\}|x{3,}|"
    r"\*{3,}|\.{3,}|…|example\w*|dummy\w*|placeholder|redacted|none|"
    r"null|true|false|\[[^\]]*\]|password|passw0rd|passwd|pass|secret|token|foo|bar|baz|"
    # Code that reads the value: `os.environ["X"]`, `os.getenv(`, `ENV.fetch(`.
    # A dotted name is code too (`settings.API_KEY`, `args.password`).
    r"(?:[A-Za-z_]\w*\.)+[A-Za-z_]\w*(?:[\[(].*)?|(?:getenv|environ|env|ENV)[\[(].*)$"
)
_SHELL_VARIABLE: Final = re.compile(r"^\$[A-Z_][A-Z0-9_]*$")


# The same words in any spelling (`CHANGE_ME`, `replace-me`, `your-secret-key-here`,
# `sk_test_your_key_here`, `myPassword`), read with case, `-` and `_` dropped.
_PLACEHOLDER_WORDS: Final = re.compile(
    r"^(?:[a-z0-9]{0,10}your\w*|\w*(?:goes)?here|(?:change|replace|fill|set)(?:me|this|it)"
    r"|(?:my|the|a|some|dummy|fake|test)?(?:secret|password|passwd|pass|token|key|apikey|"
    r"secretkey|accesskey)+)$")
_B64_VALUE: Final = re.compile(rf"^{_B64}{{4,64}}={{0,2}}$")


def _placeholder(value: str, decoded: bool = False) -> bool:
    value = value.strip().rstrip(",;")
    words = re.sub(r"[-_\s]", "", value.lower())
    return bool(_PLACEHOLDER.match(value) or _SHELL_VARIABLE.match(value)
                or _FILLER.search(value) or _PLACEHOLDER_WORDS.match(words)
                or (not decoded and _b64_placeholder(value)))


def _b64_placeholder(value: str) -> bool:
    """Base64 of a placeholder (`cGFzc3dvcmQ=` is `password`) is one."""
    if not _B64_VALUE.match(value) or len(value) % 4:
        return False
    try:
        text = base64.b64decode(value).decode("ascii")
    except (binascii.Error, ValueError):
        return False
    return text.isprintable() and _placeholder(text, decoded=True)


def _is_real(shape: _Shape, match: re.Match[str]) -> bool:
    if shape.real is not None:
        return shape.real(match)
    return not (match.groups() and _placeholder(match.group(1)))


# The checks of a token shape with a fixed form (its prefix, its parts).
_TOKEN_CHECKS: Final = (_not_filler, _aws_key_id, _discord_bot_token)
# What a decoded base64 run is read with: every shape but the decoding itself.
_INNER: Final = tuple(shape for shape in _SHAPES if shape.kind != _ENCODED)
# What two lines joined with nothing between them are read with: the tokens of a
# fixed form, which a wrap cuts. Not a value after a key or a flag: `$GITHUB_TOKEN`
# joined to the next line's first word is no longer a variable's name.
_WRAPPABLE: Final = tuple(shape for shape in _SHAPES if shape.real in _TOKEN_CHECKS
                          or (shape.real is None and shape.pattern.groups == 0))
# Every token shape, a key body and a base64 run hold a run of 15 or more token
# characters: a line without one (most prose) is not searched for them.
_RUN: Final = re.compile(r"[A-Za-z0-9_+/=.~-]{15}")
_RUN_SHAPES: Final = (_not_filler, _aws_key_id, _private_key_body, _encoded_secret,
                      _discord_bot_token)
_TOKEN_END: Final = re.compile(r"[A-Za-z0-9_+/=.-]$")
_TOKEN_START: Final = re.compile(r"^[\s>]*[A-Za-z0-9_+/=.-]")
_QUOTE_MARKS: Final = re.compile(r"^[\s>]*")
# A line of nothing but base64, as `base64` wraps its output (76 columns).
_BASE64_LINE: Final = re.compile(rf"^\s*{_B64}{{16,200}}={{0,2}}\s*$")
_ENCODED_SHAPES: Final = tuple(shape for shape in _SHAPES if shape.real in
                               (_encoded_secret, _private_key_body))


def _scan_line(line: str, shapes: tuple[_Shape, ...], assignments: bool = True) -> str | None:
    """The kind of secret `line` holds, or None."""
    run = _RUN.search(line) is not None
    for shape in shapes:
        if shape.needs is not None and not shape.needs.search(line):
            continue
        if not run and shape.real in _RUN_SHAPES:
            continue
        if any(_is_real(shape, m) for m in shape.pattern.finditer(line)):
            return shape.kind
    if assignments and any(not _placeholder(next(g for g in m.groups() if g))
                           for m in _ASSIGNMENT.finditer(line)):
        return "a credential assignment"
    return None


def _joined(line: str, following: str, shapes: tuple[_Shape, ...]) -> str | None:
    """The kind of secret `line` holds read with the next one: with a space (a value
    on the line below its key), without a trailing `\\` continuation, and, when the
    break falls between two token characters, the tokens of a fixed form with nothing
    between them (a token wrapped over two lines, the next one's indentation and `>`
    quote marks dropped)."""
    line = line.rstrip()
    if line.endswith("\\"):
        return _scan_line(line[:-1] + following.strip(), shapes)
    kind = _scan_line(f"{line} {following.strip()}", shapes)
    if kind is None and _TOKEN_END.search(line) and _TOKEN_START.match(following):
        kind = _scan_line(line + _QUOTE_MARKS.sub("", following).rstrip(), _WRAPPABLE, False)
    return kind


def _base64_runs(lines: list[str], kinds: list[str | None], shapes: tuple[_Shape, ...],
                 ) -> None:
    """Base64 wrapped over several lines (a key body, `base64` of a credentials
    file), read as one: reported, if it holds a secret, on its first line."""
    if shapes is not _SHAPES:
        return
    start = 0
    while start < len(lines):
        end = start
        while end < len(lines) and _BASE64_LINE.match(lines[end]):
            end += 1
        if end - start >= 2 and all(kind is None for kind in kinds[start:end]):
            run = "".join(line.strip() for line in lines[start:end])
            kinds[start] = _scan_line(run, _ENCODED_SHAPES, False)
        start = max(end, start + 1)


def _find(text: str, shapes: tuple[_Shape, ...]) -> list[SecretHit]:
    lines = text.splitlines()
    kinds = [_scan_line(line, shapes) for line in lines]
    _base64_runs(lines, kinds, shapes)
    hits: list[SecretHit] = []
    for number, kind in enumerate(kinds, 1):
        if kind is None and number < len(lines) and kinds[number] is None:
            kind = _joined(lines[number - 1], lines[number], shapes)
        if kind is not None:
            hits.append(SecretHit(number, kind))
    return hits


def find_secrets(text: str) -> list[SecretHit]:
    """Each line of `text` that holds something shaped like a secret. A shape split
    over a line break (`Authorization: Bearer` with the token on the next line, a
    `password:` whose value follows, a `\\` continuation, a token wrapped in two)
    is found on its first line: each line that holds nothing is also read joined
    to the next."""
    return _find(text, _SHAPES)


def shape_count() -> int:
    """How many shapes the scan knows (the credential assignment included)."""
    return len({shape.kind for shape in _SHAPES}) + 1


# --- a note's key --------------------------------------------------------------------
# A key is a slug (keys.slug): lower case, every run of other characters made one
# `-`. A token in a title reaches the key in that form (`ghp_Ab12…` is `ghp-ab12…`),
# where no shape above matches, and the key is the team path and promote's commit
# subject. So a key is read word by word: a run of consecutive words is a token when,
# joined again (the first two words with `_`, `-` or `.`, the rest with `-` or `_`),
# it is a token shape in any case. A long word mixing letters and digits alone is not
# refused: measured on the corpus, that refused 24 of its 190 look-alikes (base64 of
# prose, public key bodies, lockfile hashes) in key form.

_KEY_SHAPES: Final = tuple((shape.kind, re.compile(shape.pattern.pattern, re.IGNORECASE))
                           for shape in _WRAPPABLE if shape.real in _TOKEN_CHECKS)
_KEY_ANY: Final = re.compile("|".join(f"(?:{p.pattern})" for _, p in _KEY_SHAPES),
                             re.IGNORECASE)
_KEY_SPAN: Final = 8  # words: `xoxb-1-2-abc`, `age-secret-key-1…`, `tskey-auth-…-…`


def _rejoined(words: list[str]) -> Iterator[str]:
    for first in "_-.":
        for rest in "-_.":
            yield first.join(words[:2]) + "".join(rest + w for w in words[2:])


def _key_spans(words: list[str]) -> list[tuple[int, int, str]]:
    """(first, end, kind) of each run of `words` that is a token."""
    spans: list[tuple[int, int, str]] = []
    for first in range(len(words)):
        for end in range(first + 1, min(len(words), first + _KEY_SPAN) + 1):
            if max(len(w) for w in words[first:end]) < 10:
                continue
            kind = next((kind for text in _rejoined(words[first:end])
                         if _KEY_ANY.fullmatch(text) and not _FILLER.search(text)
                         for kind, pattern in _KEY_SHAPES if pattern.fullmatch(text)
                         and not (kind.startswith("an AWS") and text.endswith("example"))),
                        None)
            if kind is not None:
                spans.append((first, end, kind))
                break
    return spans


def find_secret_in_key(key: str) -> str | None:
    """The kind of secret a note's key carries in its slugged form, or None."""
    for segment in key.split("/"):
        spans = _key_spans(segment.split("-"))
        if spans:
            return spans[0][2]
    return None


def without_secret_words(segment: str) -> str:
    """A slug with the words that carry a token dropped (remember derives a key from
    the title: the token stays in the note, to be refused at promote, and out of
    the key, which would be its team path and commit subject)."""
    words = segment.split("-")
    drop = {n for first, end, _ in _key_spans(words) for n in range(first, end)}
    return "-".join(w for n, w in enumerate(words) if n not in drop)
