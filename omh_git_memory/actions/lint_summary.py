"""Lint's counts in one line, so warnings re-fire every session (recall's description).

`omh memory lint` over the whole store reads and parses every note (3.6 s at
10,000 notes, measured), too slow for the MCP server's start. So the counts are
kept in a cache beside the recall index, one file per checkout, valid for one
fingerprint: the HEAD commit, the local store's signature (each file's path, mtime
and size), the settings file and the rules. A hit costs one small read. A miss is
linted at once when the store is small, and otherwise in a background thread that
saves the counts for the next start (five seconds after the start, and after a
`remember`); `omh memory lint` over the whole store saves them too.
"""

from __future__ import annotations

import hashlib
import json
import marshal
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

from omh_git_memory.model.errors import OmhError
from omh_git_memory.recall.cache_files import index_dir, read_checked, write_checked

if TYPE_CHECKING:
    from omh_git_memory.actions.lint import Report
    from omh_git_memory.actions.workspace import Workspace
    from omh_git_memory.stores.store import Signature

FORMAT: Final = 3  # bump when a rule changes what it finds
# A store this small (written notes, both layers) is linted at start on a miss.
# Measured on 2 busy cores (load 10): 0.18 s at 500 notes, 1.6 s at 2,000.
LINT_AT_START: Final = 500
SHOWN_RULES: Final = 3  # rules named in the line; the rest are in the totals
# Warnings about the store's shape rather than a note's fault: `Orphan` fires on
# every note nothing links to yet (each new surprise), so it asks for no lint run.
SHAPE_RULES: Final = frozenset({"Orphan"})


@dataclass(frozen=True)
class Summary:
    counts: dict[str, int]  # rule name -> findings, only the rules that found some
    refused: int
    warnings: int

    @classmethod
    def of(cls, report: Report) -> Summary:
        from omh_git_memory.actions.lint import Severity

        refused = sum(1 for f in report.findings if f.severity is Severity.REFUSED)
        counts = {rule: n for rule, n in report.counts.items() if n}
        return cls(counts, refused, len(report.findings) - refused)

    def line(self) -> str:
        """`omh memory lint finds 2 refused notes and 14 warnings (12 DanglingLink,
        …): …`, or "" when lint finds nothing but the store's shape (SHAPE_RULES)."""
        counts = {rule: n for rule, n in self.counts.items() if rule not in SHAPE_RULES}
        if not counts:
            return ""
        warnings = self.warnings - sum(self.counts.get(rule, 0) for rule in SHAPE_RULES)
        parts = []
        if self.refused:
            parts.append(f"{self.refused} refused {'note' if self.refused == 1 else 'notes'}")
        if warnings:
            parts.append(f"{warnings} {'warning' if warnings == 1 else 'warnings'}")
        ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
        rules = ", ".join(f"{n} {rule}" for rule, n in ranked[:SHOWN_RULES])
        more = ", …" if len(ranked) > SHOWN_RULES else ""
        return (f"`omh memory lint` finds {' and '.join(parts)} in this store ({rules}{more}); "
                "run it to list them.")


def fingerprint(ws: Workspace, local: Signature | None = None) -> str:
    """What the counts depend on; any change means lint again. `local`: the local
    store's signature, when the caller has just read it."""
    from omh_git_memory.actions.lint import RULES
    from omh_git_memory.git.history import head_id

    # The store's signature marshalled, not written out: 5,000 notes' identities
    # cost milliseconds as text, at every server start. Format 2, which writes no
    # back-references: from 3 on marshal marks an object something else refers to,
    # so the signature the server holds would hash otherwise than the same signature
    # read afresh by `omh memory lint`, and the counts it kept would never be found.
    files = hashlib.sha256(marshal.dumps(ws.local.signature() if local is None else local, 2))
    parts = (FORMAT, [r.name for r in RULES], head_id(ws.repo), str(ws.local.root),
             files.hexdigest(), repr(ws.config()))
    return hashlib.sha256(repr(parts).encode("utf-8")).hexdigest()


def _cache_path(ws: Workspace) -> Path:
    name = hashlib.sha256(str(ws.checkout).encode("utf-8")).hexdigest()[:16]
    return index_dir(ws.repo) / f"lint-{name}.json"


def cached(ws: Workspace, mark: str) -> Summary | None:
    raw = read_checked(_cache_path(ws))
    if raw is None:
        return None
    try:
        data = json.loads(raw)
        if data["fingerprint"] != mark:
            return None
        counts = {str(k): int(v) for k, v in data["counts"].items()}
        return Summary(counts, int(data["refused"]), int(data["warnings"]))
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def save(ws: Workspace, mark: str, summary: Summary) -> None:
    payload = json.dumps({"fingerprint": mark, "counts": summary.counts,
                          "refused": summary.refused, "warnings": summary.warnings})
    path = _cache_path(ws)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_checked(path, payload.encode("utf-8"))
    except OSError:
        pass  # a cache that cannot be written is linted again next time


def remember_report(ws: Workspace, report: Report, mark: str | None = None) -> None:
    """Keep the counts of a full lint (HEAD and the local layer) just run."""
    save(ws, mark or fingerprint(ws), Summary.of(report))


def lint_now(ws: Workspace) -> Summary:
    """Lint the whole store (HEAD and the local layer) and keep the counts."""
    from omh_git_memory.actions.lint import lint

    mark = fingerprint(ws)
    summary = Summary.of(lint(ws.graph()))
    save(ws, mark, summary)
    return summary


_refreshing = threading.Lock()
# The background lint waits this long, so it never competes with the server's
# start-up or a session's first questions (a harness that only lists the tools
# and leaves never pays for it).
REFRESH_DELAY: Final = 5.0


def refresh_later(ws: Workspace, delay: float = REFRESH_DELAY) -> None:
    """Lint in a background thread (one at a time) so the next start finds the counts.
    The thread opens its own repository handle: a pygit2 object is not shared."""
    if not _refreshing.acquire(blocking=False):
        return
    checkout = ws.checkout

    def run() -> None:
        from omh_git_memory.actions.workspace import open_workspace

        try:
            lint_now(open_workspace(checkout))
        except (OmhError, OSError):  # a cache: a failure here is linted again next time
            pass
        finally:
            _refreshing.release()

    timer = threading.Timer(delay, run)
    timer.daemon = True
    timer.name = "omh-lint"
    timer.start()


def summary_at_start(ws: Workspace, notes: int, local: Signature | None = None
                     ) -> Summary | None:
    """The counts for the server's start: cached, linted now when the store holds
    at most LINT_AT_START written notes (`notes`, both layers), else None (and
    linted in the background for the next start). `local`: the local store's
    signature as the server read it."""
    mark = fingerprint(ws, local)
    found = cached(ws, mark)
    if found is not None:
        return found
    if notes <= LINT_AT_START:
        try:
            return lint_now(ws)
        except (OmhError, OSError):  # advice: the server starts without it
            return None
    refresh_later(ws)
    return None

