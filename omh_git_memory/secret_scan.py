"""Content that looks like a secret, which must never reach the team layer.

A promoted note is pushed to everyone with access to the repository, and git
never forgets. The patterns are shapes with a fixed, recognisable form; a
generic assignment (`password = …`) counts only when its value is not an
obvious placeholder.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True)
class SecretHit:
    line: int
    kind: str


_PATTERNS: Final[tuple[tuple[str, re.Pattern[str]], ...]] = (
    ("a private key block",
     re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")),
    ("an AWS access key id", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("a GitHub token",
     re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})")),
    ("a GitLab token", re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}")),
    ("a Slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    ("an API secret key", re.compile(r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{32,}")),
    ("a Stripe live key", re.compile(r"\b[sr]k_live_[A-Za-z0-9]{20,}")),
    ("a Google API key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    ("a JSON web token",
     re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    ("a password in a URL", re.compile(r"[a-z][a-z0-9+.-]*://[^/\s:@]+:([^/\s@]{3,})@")),
)

_ASSIGNMENT: Final = re.compile(
    r"(?i)(?<![A-Za-z0-9])[A-Za-z0-9_-]*?(?:password|passwd|pwd|secret|api[_-]?key|"
    r"access[_-]?key|auth[_-]?token|client[_-]?secret|private[_-]?key|token)(?![A-Za-z0-9])"
    r"[\"']?\s*[:=]\s*[\"']?([^\s\"'`]{8,})"
)
_PLACEHOLDER: Final = re.compile(
    r"(?i)^(?:<[^>]*>|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\{\{.*\}\}|x{3,}|\*{3,}|\.{3,}|"
    r"changeme|example\w*|dummy\w*|placeholder|redacted|your[_-]\w+|none|null|true|false)$"
)


def find_secrets(text: str) -> list[SecretHit]:
    """Each line of `text` that holds something shaped like a secret."""
    hits: list[SecretHit] = []
    for number, line in enumerate(text.splitlines(), 1):
        for kind, pattern in _PATTERNS:
            match = pattern.search(line)
            if match and not (match.groups() and _PLACEHOLDER.match(match.group(1))):
                hits.append(SecretHit(number, kind))
                break
        else:
            assignment = _ASSIGNMENT.search(line)
            if assignment and not _PLACEHOLDER.match(assignment.group(1)):
                hits.append(SecretHit(number, "a credential assignment"))
    return hits
