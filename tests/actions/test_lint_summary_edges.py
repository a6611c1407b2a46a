"""lint_summary at its edges: the store-health line word for word (singular and
plural, the three rules named, Orphan left out), the counts taken from a report,
what the fingerprint depends on, the cache read back only for its own fingerprint,
the start's limit of 500 notes, and the one background lint at a time."""

from __future__ import annotations

import errno
import threading
from pathlib import Path

import pytest

from omh_git_memory.actions import lint_summary
from omh_git_memory.actions.lint_summary import Summary
from omh_git_memory.actions.workspace import open_workspace
from omh_git_memory.recall.cache_files import index_dir, write_checked
from tests.helpers import git, note_text, omh

TAIL = "; run it to list them."


# --- the line --------------------------------------------------------------------------


def test_the_line_counts_refused_notes_and_warnings_in_the_singular_and_plural() -> None:
    one = Summary({"UnclosedFence": 1, "DanglingLink": 1}, refused=1, warnings=1)
    assert one.line() == ("`omh memory lint` finds 1 refused note and 1 warning in this store "
                          "(1 DanglingLink, 1 UnclosedFence)" + TAIL)
    many = Summary({"UnclosedFence": 2, "DanglingLink": 3}, refused=2, warnings=3)
    assert many.line() == ("`omh memory lint` finds 2 refused notes and 3 warnings in this "
                           "store (3 DanglingLink, 2 UnclosedFence)" + TAIL)
    warnings_only = Summary({"DanglingLink": 2}, refused=0, warnings=2)
    assert warnings_only.line() == ("`omh memory lint` finds 2 warnings in this store "
                                    "(2 DanglingLink)" + TAIL)
    refused_only = Summary({"UnclosedFence": 1}, refused=1, warnings=0)
    assert refused_only.line() == ("`omh memory lint` finds 1 refused note in this store "
                                   "(1 UnclosedFence)" + TAIL)


def test_the_line_names_the_three_commonest_rules_and_elides_the_rest() -> None:
    three = Summary({"C": 1, "A": 2, "B": 2}, refused=0, warnings=5)
    assert three.line() == "`omh memory lint` finds 5 warnings in this store (2 A, 2 B, 1 C)" + TAIL
    four = Summary({"D": 1, "C": 2, "B": 3, "A": 4}, refused=0, warnings=10)
    assert four.line() == ("`omh memory lint` finds 10 warnings in this store "
                           "(4 A, 3 B, 2 C, …)" + TAIL)


def test_orphans_alone_are_no_line_and_are_left_out_of_the_counts() -> None:
    assert Summary({"Orphan": 7}, refused=0, warnings=7).line() == ""
    assert Summary({}, refused=0, warnings=0).line() == ""
    mixed = Summary({"Orphan": 7, "DanglingLink": 1}, refused=0, warnings=8)
    assert mixed.line() == "`omh memory lint` finds 1 warning in this store (1 DanglingLink)" + TAIL


def test_the_counts_of_a_report_keep_only_the_rules_that_found_something(
        repo_dir: Path) -> None:
    from omh_git_memory.actions.lint import lint

    assert omh(repo_dir, "init").code == 0
    ws = open_workspace(repo_dir)
    (ws.local.root / "fence.md").write_text(note_text("fence", body="```\nopen\n"))
    (ws.local.root / "link.md").write_text(note_text("link", body="See [[no-such-note]].\n"))
    report = lint(ws.graph())
    summary = Summary.of(report)
    assert 0 in report.counts.values()  # rules that found nothing are counted too
    assert summary.refused == 1 and summary.warnings == len(report.findings) - 1
    assert summary.counts == {rule: n for rule, n in report.counts.items() if n}
    assert summary.counts["UnclosedFence"] == 1 and summary.counts["DanglingLink"] == 1


# --- the fingerprint and the cache -----------------------------------------------------


@pytest.fixture
def ws_dir(repo_dir: Path) -> Path:
    assert omh(repo_dir, "init").code == 0
    git(repo_dir, "add", "-A")
    git(repo_dir, "commit", "-qm", "omh init")
    return repo_dir


def test_the_fingerprint_changes_with_the_store_head_and_settings(ws_dir: Path) -> None:
    ws = open_workspace(ws_dir)
    first = lint_summary.fingerprint(ws)
    assert lint_summary.fingerprint(open_workspace(ws_dir)) == first  # nothing changed
    (ws.local.root / "n.md").write_text(note_text("n", body="A note.\n"))
    stored = lint_summary.fingerprint(open_workspace(ws_dir))
    assert stored != first
    (ws_dir / "README.md").write_text("a commit\n")
    git(ws_dir, "add", "-A")
    git(ws_dir, "commit", "-qm", "another commit")
    committed = lint_summary.fingerprint(open_workspace(ws_dir))
    assert committed != stored
    settings = ws_dir / ".omh" / "memory.toml"
    settings.write_text(settings.read_text().replace('name = "repo"', 'name = "renamed"'))
    assert lint_summary.fingerprint(open_workspace(ws_dir)) != committed


def test_the_fingerprint_takes_the_store_s_signature_the_caller_read(ws_dir: Path) -> None:
    """The server passes the signature it holds; `omh memory lint` and the background
    lint read it afresh: one store, one fingerprint. (It was hashed as marshal wrote
    it, and marshal marks an object something else refers to, so a signature the
    caller held hashed otherwise than the same signature read afresh.)"""
    ws = open_workspace(ws_dir)
    (ws.local.root / "n.md").write_text(note_text("n", body="A note.\n"))
    now = ws.local.signature()
    assert lint_summary.fingerprint(ws, now) == lint_summary.fingerprint(ws)
    assert lint_summary.fingerprint(ws, ()) != lint_summary.fingerprint(ws)


def test_the_counts_lint_kept_are_found_at_the_server_s_start(
        ws_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A store over the start's limit is never linted at the start: the counts come
    from the cache `omh memory lint` (or the background lint) saved, looked up with
    the signature the server read."""
    from omh_git_memory.actions.lint import lint_workspace

    ws = open_workspace(ws_dir)
    (ws.local.root / "fence.md").write_text(note_text("fence", body="```\nopen\n"))
    assert lint_workspace(ws).report.refused == 1  # saves the counts
    later: list[object] = []
    monkeypatch.setattr(lint_summary, "refresh_later", lambda w: later.append(w))
    served = open_workspace(ws_dir)
    held = served.local.signature()
    found = lint_summary.summary_at_start(served, lint_summary.LINT_AT_START + 1, held)
    assert found is not None and found.refused == 1 and later == []


def test_the_cache_is_read_back_for_its_fingerprint_only(ws_dir: Path) -> None:
    ws = open_workspace(ws_dir)
    kept = Summary({"DanglingLink": 2, "UnclosedFence": 1}, refused=1, warnings=2)
    lint_summary.save(ws, "mark", kept)
    assert lint_summary.cached(ws, "mark") == kept
    assert lint_summary.cached(ws, "another mark") is None
    path = lint_summary._cache_path(ws)
    for broken in (b"not json", b"[]", b'{"fingerprint": "mark"}', b'{"fingerprint": "mark", '
                   b'"counts": [], "refused": 0, "warnings": 0}',
                   b'{"fingerprint": "mark", "counts": {}, "refused": "x", "warnings": 0}'):
        write_checked(path, broken)
        assert lint_summary.cached(ws, "mark") is None, broken


def test_a_cache_that_cannot_be_written_is_no_failure(ws_dir: Path) -> None:
    ws = open_workspace(ws_dir)
    path = lint_summary._cache_path(ws)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.mkdir()  # a folder where the file goes
    lint_summary.save(ws, "mark", Summary({}, 0, 0))
    assert lint_summary.cached(ws, "mark") is None


def test_remember_report_keeps_the_counts_under_the_mark_given_or_the_store_s_own(
        ws_dir: Path) -> None:
    from omh_git_memory.actions.lint import lint

    ws = open_workspace(ws_dir)
    (ws.local.root / "fence.md").write_text(note_text("fence", body="```\nopen\n"))
    report = lint(ws.graph())
    lint_summary.remember_report(ws, report, "earlier")
    assert lint_summary.cached(ws, "earlier") == Summary.of(report)
    lint_summary.remember_report(ws, report)
    found = lint_summary.cached(ws, lint_summary.fingerprint(ws))
    assert found is not None and found.refused == 1


# --- at the server's start -------------------------------------------------------------


def test_at_most_500_notes_are_linted_at_the_start_and_more_in_the_background(
        ws_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = open_workspace(ws_dir)
    (ws.local.root / "fence.md").write_text(note_text("fence", body="```\nopen\n"))
    later: list[object] = []
    monkeypatch.setattr(lint_summary, "refresh_later", lambda w: later.append(w))
    assert lint_summary.LINT_AT_START == 500
    assert lint_summary.summary_at_start(ws, 501) is None and later == [ws]
    now = lint_summary.summary_at_start(ws, 500)
    assert now is not None and now.refused == 1 and later == [ws]
    # Then the cache answers, whatever the count.
    assert lint_summary.summary_at_start(ws, 10_000) == now and later == [ws]


def test_a_lint_that_fails_at_the_start_is_no_summary(
        ws_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from omh_git_memory.model.errors import OmhError

    def failing(ws: object) -> Summary:
        raise OmhError("the store cannot be read")

    monkeypatch.setattr(lint_summary, "lint_now", failing)
    assert lint_summary.summary_at_start(open_workspace(ws_dir), 1) is None

    def unreadable(ws: object) -> Summary:
        raise PermissionError("denied")

    monkeypatch.setattr(lint_summary, "lint_now", unreadable)
    assert lint_summary.summary_at_start(open_workspace(ws_dir), 1) is None


def _join_refresh() -> None:
    for thread in threading.enumerate():
        if thread.name == "omh-lint":
            thread.join(30)


def test_one_background_lint_at_a_time_and_a_failed_one_frees_the_next(
        ws_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from omh_git_memory.model.errors import OmhError

    ws = open_workspace(ws_dir)
    gate = threading.Event()
    ran: list[str] = []

    def slow(w: object) -> Summary:
        ran.append(threading.current_thread().name)
        gate.wait(10)
        raise OmhError("failed")

    real = lint_summary.lint_now
    monkeypatch.setattr(lint_summary, "lint_now", slow)
    lint_summary.refresh_later(ws, 0.0)
    lint_summary.refresh_later(ws, 0.0)  # one is running: this one is dropped
    for _ in range(200):
        if ran:
            break
        threading.Event().wait(0.01)
    (thread,) = [t for t in threading.enumerate() if t.name == "omh-lint"]
    assert thread.daemon
    gate.set()
    _join_refresh()
    assert ran == ["omh-lint"]
    # The failure let go of the lock: the next refresh runs, and saves the counts.
    monkeypatch.setattr(lint_summary, "lint_now", real)
    (ws.local.root / "fence.md").write_text(note_text("fence", body="```\nopen\n"))
    lint_summary.refresh_later(ws, 0.0)
    _join_refresh()
    found = lint_summary.cached(ws, lint_summary.fingerprint(ws))
    assert found is not None and found.refused == 1


def test_a_background_lint_that_meets_a_full_disk_ends_quietly_and_lets_go(
        ws_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = open_workspace(ws_dir)
    escaped: list[object] = []
    monkeypatch.setattr(threading, "excepthook", escaped.append)

    def full(w: object) -> Summary:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(lint_summary, "lint_now", full)
    lint_summary.refresh_later(ws, 0.0)
    _join_refresh()
    assert escaped == []
    assert lint_summary._refreshing.acquire(blocking=False)  # let go: the next one runs
    lint_summary._refreshing.release()

def test_a_background_lint_waits_before_it_starts(
        ws_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert lint_summary.REFRESH_DELAY == 5.0
    started: list[float] = []

    class Timer:
        def __init__(self, delay: float, run: object) -> None:
            started.append(delay)
            self.daemon = False
            self.name = ""

        def start(self) -> None:
            pass

    monkeypatch.setattr(threading, "Timer", Timer)
    lint_summary.refresh_later(open_workspace(ws_dir))
    assert started == [5.0]
    lint_summary._refreshing.release()  # the timer never ran to let it go


def test_the_cache_s_folders_are_made_when_none_is_there_yet(ws_dir: Path) -> None:
    import shutil

    ws = open_workspace(ws_dir)
    omh_dir = index_dir(ws.repo).parent
    shutil.rmtree(omh_dir, ignore_errors=True)  # a clone that never built an index
    kept = Summary({"DanglingLink": 1}, refused=0, warnings=1)
    lint_summary.save(ws, "mark", kept)
    assert lint_summary.cached(ws, "mark") == kept
