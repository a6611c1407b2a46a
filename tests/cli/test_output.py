"""What every command prints through cli/output.py: the progress bar on a terminal,
JSON that a terminal cannot be tricked by, lines printed as they are, usage errors
and `--recorded` days."""

from __future__ import annotations

import io
import json
import time

import pytest
import typer

from omh_git_memory.cli import output
from omh_git_memory.model.errors import NoteRefused


class _Terminal(io.StringIO):
    """stderr as a terminal: what a progress bar is drawn on."""

    def isatty(self) -> bool:
        return True


class _Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def _stderr(monkeypatch: pytest.MonkeyPatch, stream: io.StringIO) -> io.StringIO:
    """`stream` as stderr, set in the test itself (pytest sets its own capture
    again after the fixtures)."""
    monkeypatch.setattr("sys.stderr", stream)
    return stream


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> _Clock:
    ticking = _Clock(0.1)
    monkeypatch.setattr(time, "monotonic", ticking)
    return ticking


def _bar(done: int, total: int) -> str:
    filled = done * 30 // total
    return "█" * filled + "░" * (30 - filled)


def test_progress_draws_a_bar_of_thirty_cells_on_a_terminal(
    monkeypatch: pytest.MonkeyPatch, clock: _Clock
) -> None:
    terminal = _stderr(monkeypatch, _Terminal())
    report = output.progress_bar()
    report(1, 200)  # the first document: the clock starts
    clock.now += 1
    report(100, 200)
    assert terminal.getvalue() == f"\rindexing documents {'█' * 15}{'░' * 15} 100/200"
    clock.now += 1
    report(200, 200)  # the last one ends the line: what is left is writing the index
    assert terminal.getvalue().endswith(
        f"\rindexing documents {'█' * 30} 200/200; writing the index\n")


def test_progress_redraws_at_most_every_tenth_of_a_second_but_always_the_end(
    monkeypatch: pytest.MonkeyPatch, clock: _Clock
) -> None:
    terminal = _stderr(monkeypatch, _Terminal())
    report = output.progress_bar()
    report(1, 400)
    clock.now += 0.6
    report(10, 400)  # the first report past half a second is drawn
    clock.now += 0.05
    report(20, 400)  # too soon: skipped
    clock.now += 0.5
    report(30, 400)  # half a second on: drawn
    report(400, 400)  # the end, however soon: drawn
    assert terminal.getvalue() == "".join(
        f"\rindexing documents {_bar(done, 400)} {done}/400" for done in (10, 30, 400)
    ) + "; writing the index\n"


def test_progress_waits_no_longer_than_its_half_second_and_its_tenth(
    monkeypatch: pytest.MonkeyPatch, clock: _Clock
) -> None:
    # Both waits end at their mark: the bar is drawn once exactly half a second has
    # gone, and again exactly a tenth later (times a float states exactly).
    terminal = _stderr(monkeypatch, _Terminal())
    report = output.progress_bar()
    clock.now = -0.5
    report(1, 400)
    clock.now = 0.0
    report(10, 400)
    clock.now = 0.1
    report(20, 400)
    assert terminal.getvalue() == "".join(
        f"\rindexing documents {_bar(done, 400)} {done}/400" for done in (10, 20))


def test_progress_is_not_drawn_for_work_done_within_half_a_second(
    monkeypatch: pytest.MonkeyPatch, clock: _Clock
) -> None:
    terminal = _stderr(monkeypatch, _Terminal())
    report = output.progress_bar()
    for done in range(1, 5001):  # many documents, quickly: no bar, nor its end
        clock.now += 0.4 / 5000
        report(done, 5000)
    assert terminal.getvalue() == ""
    slow = output.progress_bar()
    clock.now += 5  # doctor's probe, before its build: not counted
    slow(1, 3)  # a few documents, slowly (large notes): a bar once half a second is gone
    clock.now += 0.3
    slow(2, 3)
    assert terminal.getvalue() == ""
    clock.now += 0.3
    slow(3, 3)
    assert terminal.getvalue() == f"\rindexing documents {_bar(3, 3)} 3/3; writing the index\n"


def test_progress_is_not_drawn_when_stderr_is_no_terminal(
    monkeypatch: pytest.MonkeyPatch, clock: _Clock
) -> None:
    piped = _stderr(monkeypatch, io.StringIO())
    report = output.progress_bar()
    report(100, 1000)
    report(1000, 1000)
    assert piped.getvalue() == ""


def test_json_is_indented_by_two_and_keeps_letters_beyond_ascii(
    capsys: pytest.CaptureFixture[str],
) -> None:
    output.emit_json({"title": "café ☕", "keys": ["a"]})
    assert capsys.readouterr().out == '{\n  "title": "café ☕",\n  "keys": [\n    "a"\n  ]\n}\n'


def test_json_escapes_what_could_act_on_a_terminal_and_reads_back_the_same(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # a bidi override, a language tag (beyond the BMP), a noncharacter, a Hangul
    # filler (printable, but renders as nothing), with ordinary words and spaces
    data = {"key": "evil\u202etxt. tag\U000e0001 non\uffff fill\u3164 é"}
    output.emit_json(data)
    printed = capsys.readouterr().out
    assert '"key": "evil\\u202etxt. tag\\udb40\\udc01 non\\uffff fill\\u3164 é"' in printed
    assert json.loads(printed) == data


def test_say_lines_prints_the_text_as_given_each_line_escaped(
    capsys: pytest.CaptureFixture[str],
) -> None:
    output.say_lines("first\nsecond \x1b[2J\n")
    assert capsys.readouterr().out == "first\nsecond \\x1b[2J\n"


def test_say_escapes_a_newline_so_one_line_stays_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    output.say("removed local/a\nremoved local/b")
    assert capsys.readouterr().out == "removed local/a\\nremoved local/b\n"


def test_a_usage_error_is_one_line_on_stderr_and_exit_status_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    raised = output.usage_error("--for needs\n--summary")
    assert isinstance(raised, typer.Exit) and raised.exit_code == 2
    assert capsys.readouterr() == ("", "omh: --for needs\\n--summary\n")


def test_recorded_reads_a_day_and_refuses_one_that_does_not_exist() -> None:
    import datetime as dt

    assert output.recorded_day(None) is None
    assert output.recorded_day("2024-02-29") == dt.date(2024, 2, 29)
    with pytest.raises(NoteRefused, match=r"--recorded '2023-02-29' is not a date that exists"):
        output.recorded_day("2023-02-29")
