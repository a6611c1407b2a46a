"""Content that looks like a secret, which must never reach the team layer.

A promoted note is pushed to everyone with access to the repository, and git
never forgets. A shape is a pattern with a fixed, recognisable form (a token
prefix, a header, a command-line flag, a config key); where a shape captures a
value, it counts only when the value is not an obvious placeholder. The shapes
and the placeholders are listed in docs/commands.md (promote).

Every pattern is bounded (no unbounded span meets another that matches the same
characters), so a scan stays linear in the size of a line whatever it holds.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable
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


def _credentials(match: re.Match[str]) -> bool:
    """An Authorization header's value: an opaque token or base64 `user:pass`
    (`Authorization: required for every call` is prose)."""
    return _opaque(match) or _decodes_to(b":")(match)


_B64: Final = r"[A-Za-z0-9+/]"
_VALUE: Final = r"[^\s\"'`]"  # an unquoted value's characters

_CURL: Final = re.compile(r"\bcurl\b")
_MYSQL: Final = re.compile(r"\bmysql(?:dump|admin)?\b")

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
    # Token shapes with a fixed prefix.
    ("an AWS access key id", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b", None),
    ("a GitHub token",
     r"\b(?:gh[pousr]_[A-Za-z0-9]{36,300}|github_pat_[A-Za-z0-9_]{40,300})", None),
    ("a GitLab token", r"\bglpat-[A-Za-z0-9_-]{20,300}", None),
    ("a Slack token", r"\bxox[abposr]-[A-Za-z0-9-]{10,300}", None),
    ("a Slack webhook URL",
     r"\bhooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/-]{0,80}?"
     r"([A-Za-z0-9_-]{16,80})\b", None),
    ("a Discord webhook URL",
     r"\bdiscord(?:app)?\.com/api/webhooks/\d{5,30}/([A-Za-z0-9_-]{20,100})", None),
    ("an API secret key", r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{32,300}", None),
    ("a Stripe live key", r"\b[sr]k_live_[A-Za-z0-9]{20,300}", None),
    ("a Google API key", r"\bAIza[0-9A-Za-z_-]{35}\b", None),
    ("a SendGrid API key", r"\bSG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{30,50}", None),
    ("a Twilio API key", r"\bSK[0-9a-f]{32}\b", None),
    ("a Mailgun API key", r"\bkey-[0-9a-zA-Z]{32}\b", None),
    ("a Mailchimp API key", r"\b[0-9a-f]{32}-us\d{1,2}\b", None),
    ("an npm token", r"\bnpm_[A-Za-z0-9]{36}\b", None),
    ("a PyPI token", r"\bpypi-AgE[A-Za-z0-9_-]{50,300}", None),
    ("a Hugging Face token", r"\bhf_[A-Za-z]{34}\b", None),
    ("a DigitalOcean token", r"\bdo[opr]_v1_[a-f0-9]{64}\b", None),
    ("a Shopify token", r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b", None),
    ("a JSON web token",
     r"\beyJ[A-Za-z0-9_-]{8,300}\.eyJ[A-Za-z0-9_-]{8,300}\.[A-Za-z0-9_-]{8,300}", None),
    # Credentials in URLs, headers, connection strings and config files.
    ("a password in a URL", r"\b[a-z][a-z0-9+.-]{0,30}://[^/\s:@]{1,200}:([^/\s@]{3,200})@",
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
    ("a password flag", rf"(?i)(?:^|\s)--(?:http-|ftp-)?password\s+[\"']?({_VALUE}{{3,200}})",
     None),
    ("a .netrc password",
     rf"(?i)\b(?:login|machine)\s+\S{{1,200}}\s+password\s+({_VALUE}{{1,200}})", None),
    ("a .netrc password", rf"(?i)^\s*password\s+({_VALUE}{{1,200}})\s*$", None),
)),
    _Shape("a password after curl -u",
           re.compile(rf"(?:^|\s)(?:-u|--user)(?:\s+|=)?[\"']?[^\s:\"']{{1,100}}:"
                      rf"({_VALUE}{{1,200}})"), needs=_CURL),
    _Shape("a password after mysql -p", re.compile(rf"(?:^|\s)-p({_VALUE}{{1,200}})"),
           needs=_MYSQL),
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
    r"\*{3,}|\.{3,}|…|changeme|example\w*|dummy\w*|placeholder|redacted|your[_-]\w+|none|"
    r"null|true|false)$"
)
_SHELL_VARIABLE: Final = re.compile(r"^\$[A-Z_][A-Z0-9_]*$")


def _placeholder(value: str) -> bool:
    value = value.strip().rstrip(",;")
    return bool(_PLACEHOLDER.match(value) or _SHELL_VARIABLE.match(value))


def _is_real(shape: _Shape, match: re.Match[str]) -> bool:
    if shape.real is not None:
        return shape.real(match)
    return not (match.groups() and _placeholder(match.group(1)))


def _scan_line(line: str) -> str | None:
    """The kind of secret `line` holds, or None."""
    for shape in _SHAPES:
        if shape.needs is not None and not shape.needs.search(line):
            continue
        if any(_is_real(shape, m) for m in shape.pattern.finditer(line)):
            return shape.kind
    if any(not _placeholder(next(g for g in m.groups() if g))
           for m in _ASSIGNMENT.finditer(line)):
        return "a credential assignment"
    return None


def find_secrets(text: str) -> list[SecretHit]:
    """Each line of `text` that holds something shaped like a secret. A shape split
    over a line break (`Authorization: Bearer` with the token on the next line, a
    `password:` whose value follows, a `\\` continuation) is found on its first
    line: each line that holds nothing is also read joined to the next."""
    lines = text.splitlines()
    kinds = [_scan_line(line) for line in lines]
    hits: list[SecretHit] = []
    for number, kind in enumerate(kinds, 1):
        if kind is None and number < len(lines) and kinds[number] is None:
            line, following = lines[number - 1].rstrip(), lines[number].strip()
            joined = (line[:-1] + following if line.endswith("\\")
                      else f"{line} {following}")
            kind = _scan_line(joined)
        if kind is not None:
            hits.append(SecretHit(number, kind))
    return hits


def shape_count() -> int:
    """How many shapes the scan knows (the credential assignment included)."""
    return len({shape.kind for shape in _SHAPES}) + 1
