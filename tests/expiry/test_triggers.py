"""What `invalidated_by` triggers say, stated at the module's edge (mutation pass
3): which arguments are refused and with which message, the verdict and reason
each kind gives against what HEAD holds, and what a writer's shorthand is pinned to.

The facts are a stand-in for HEAD (`Facts` is a protocol): these are the answers a
caller (lint, stale, recall, the write path) gets for each case, without a repo.

Found by mutation testing (docs/records/mutation-passes.md); was tests/test_mutants_triggers.py."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from omh_git_memory.expiry.triggers import PinError, State, Verdict, evaluate, pin, trigger_problem

BLOB = "0123456789abcdef0123456789abcdef01234567"
OTHER = "fedcba9876543210fedcba9876543210fedcba98"


@dataclass
class Head:
    files: dict[str, str] = field(default_factory=dict)
    digest: str | None = None
    recipes: tuple[str, ...] = ("Dockerfile", "docker/")
    base: str | None = None
    defined: dict[str, bool] | None = None  # None: no file of a known language

    def blob_at(self, path: str) -> str | None:
        return self.files.get(path)

    def recipe_digest(self) -> str | None:
        return self.digest

    def recipe_files(self) -> tuple[str, ...]:
        return self.recipes

    def base_month(self) -> str | None:
        return self.base

    def defines(self, symbol: str) -> bool | None:
        return None if self.defined is None else self.defined.get(symbol, False)


# --- which triggers are refused, and why -------------------------------------------


RELATIVE = "must be relative to the repository root, with `/` separators"


@pytest.mark.parametrize(("value", "message"), [
    (f"file:@{BLOB}", f"path '' {RELATIVE}"),
    (f"file:/etc/passwd@{BLOB}", f"path '/etc/passwd' {RELATIVE}"),
    (f"file:src\\app.py@{BLOB}", f"path 'src\\\\app.py' {RELATIVE}"),
    (f"file:/src\\app.py@{BLOB}", f"path '/src\\\\app.py' {RELATIVE}"),
    (f"file:src//app.py@{BLOB}", "path 'src//app.py' has an empty, `.` or `..` segment"),
    (f"file:./app.py@{BLOB}", "path './app.py' has an empty, `.` or `..` segment"),
    (f"file:src/..@{BLOB}", "path 'src/..' has an empty, `.` or `..` segment"),
    ("file:src/app.py", "it names no blob id; write file:<path> and omh pins the current one"),
    ("file:src/app.py@", "it names no blob id; write file:<path> and omh pins the current one"),
    ("file:src/app.py@xyz1234", "blob id 'xyz1234' is not a hexadecimal git object id"),
    ("file:src/app.py@abc12", "blob id 'abc12' is not a hexadecimal git object id"),
    ("image:current", "image:current is resolved when the note is written; it cannot be stored"),
    ("image:not-hex", "digest 'not-hex' is not hexadecimal"),
    ("base:2026-00", "'2026-00' is not a month written YYYY-MM"),
    ("base:2026-13", "'2026-13' is not a month written YYYY-MM"),
    ("base:26-01", "'26-01' is not a month written YYYY-MM"),
    ("base:next", "'next' is not a month written YYYY-MM"),
    ("symbol:a..b", "'a..b' is not an identifier"),
    ("symbol:1st", "'1st' is not an identifier"),
])
def test_an_unusable_trigger_is_refused_with_what_is_wrong(value: str, message: str) -> None:
    assert trigger_problem(value) == message
    # and evaluating it cannot tell, saying the same
    assert evaluate(value, Head(files={"src/app.py": BLOB}, digest=BLOB, base="2026-06",
                                    defined={})) == Verdict(State.UNKNOWN,
                                                            f"unevaluatable: {message}")


@pytest.mark.parametrize("value", [
    f"file:src/app.py@{BLOB}", f"file:a/b/c.txt@{BLOB[:7]}", "file:a@b@0123abc",
    f"image:{BLOB}", "base:2026-01", "base:2026-12", "base:1999-10",
    "symbol:parse", "symbol:A.parse", "symbol:A::parse", "symbol:$el", "symbol:_x9",
])
def test_a_well_formed_trigger_has_no_problem(value: str) -> None:
    assert trigger_problem(value) is None


@pytest.mark.parametrize("value", ["unknown:x", "file", "parse", "", ":x", "File:a@0123abc"])
def test_a_value_of_no_known_kind_names_the_shapes_omh_can_evaluate(value: str) -> None:
    shapes = "file:<path>@<blob id>, image:<digest>, base:<YYYY-MM>, symbol:<name>"
    message = f"{value!r} is not a trigger omh can evaluate; use one of {shapes}"
    assert trigger_problem(value) == message
    assert evaluate(value, Head()) == Verdict(State.UNKNOWN, f"unevaluatable: {message}")


# --- what each kind says against HEAD ----------------------------------------------


def test_a_file_trigger_is_fresh_while_heads_blob_starts_with_the_pinned_id() -> None:
    head = Head(files={"src/app.py": BLOB})
    fresh = Verdict(State.FRESH, "src/app.py unchanged")
    assert evaluate(f"file:src/app.py@{BLOB}", head) == fresh
    assert evaluate(f"file:src/app.py@{BLOB[:7]}", head) == fresh


def test_a_file_trigger_goes_stale_when_the_file_changes_or_goes() -> None:
    head = Head(files={"src/app.py": OTHER})
    assert evaluate(f"file:src/app.py@{BLOB}", head) == Verdict(
        State.STALE, f"src/app.py changed: {BLOB[:12]} → {OTHER[:12]}")
    assert evaluate(f"file:gone.py@{BLOB}", head) == Verdict(
        State.STALE, "gone.py is gone from HEAD")


def test_a_path_holding_an_at_sign_is_split_at_the_last_one() -> None:
    head = Head(files={"a@b": BLOB})
    assert evaluate(f"file:a@b@{BLOB}", head) == Verdict(State.FRESH, "a@b unchanged")


def test_an_image_trigger_follows_the_recipe_digest() -> None:
    assert evaluate(f"image:{BLOB}", Head(digest=BLOB)) == Verdict(
        State.FRESH, "the container recipe is unchanged")
    assert evaluate(f"image:{BLOB[:10]}", Head(digest=BLOB)).state is State.FRESH
    assert evaluate(f"image:{BLOB}", Head(digest=OTHER)) == Verdict(
        State.STALE, f"the container recipe changed: {BLOB[:12]} → {OTHER[:12]}")
    assert evaluate(f"image:{BLOB}", Head(digest=None, recipes=("Dockerfile", "ci/"))) == (
        Verdict(State.UNKNOWN, "no container recipe in HEAD (looked for Dockerfile, ci/)"))


def test_a_base_trigger_is_stale_only_once_the_base_is_a_later_month() -> None:
    assert evaluate("base:2026-03", Head(base="2026-03")) == Verdict(
        State.FRESH, "the base is still 2026-03")
    assert evaluate("base:2026-03", Head(base="2026-02")) == Verdict(
        State.FRESH, "the base is still 2026-02")
    assert evaluate("base:2026-03", Head(base="2026-04")) == Verdict(
        State.STALE, "the base moved from 2026-03 to 2026-04")
    assert evaluate("base:2026-03", Head(base=None)) == Verdict(
        State.UNKNOWN, "no base month is configured ([stale] base in .omh/memory.toml)")


def test_a_symbol_trigger_is_fresh_while_defined_and_cannot_tell_without_a_language() -> None:
    assert evaluate("symbol:parse", Head(defined={"parse": True})) == Verdict(
        State.FRESH, "parse is still defined")
    assert evaluate("symbol:parse", Head(defined={})) == Verdict(
        State.STALE, "no definition of parse is left in HEAD")
    unknown = evaluate("symbol:parse", Head(defined=None))
    assert unknown.state is State.UNKNOWN
    assert unknown.reason.startswith("no file of a language omh can read definitions in")


# --- what a writer's shorthand is pinned to ----------------------------------------


def test_file_shorthand_is_pinned_to_heads_blob() -> None:
    head = Head(files={"src/app.py": BLOB})
    assert pin("file:src/app.py", head) == f"file:src/app.py@{BLOB}"
    assert pin(f"  file:src/app.py@{BLOB[:7]}\n", head) == f"file:src/app.py@{BLOB}"


def test_file_shorthand_is_refused_when_heads_blob_is_another() -> None:
    head = Head(files={"src/app.py": OTHER})
    with pytest.raises(PinError) as err:
        pin(f"file:src/app.py@{BLOB[:7]}", head)
    assert str(err.value) == (f"src/app.py at HEAD is {OTHER[:12]}, not {BLOB[:7]}; "
                              "write file:src/app.py to pin HEAD's")


@pytest.mark.parametrize(("value", "message"), [
    ("file:/src/app.py", f"path '/src/app.py' {RELATIVE}"),
    ("file:src/../app.py", "path 'src/../app.py' has an empty, `.` or `..` segment"),
    ("file:missing.py", "missing.py is not a file in HEAD; commit it first, or name one that is"),
    ("image:latest", "image:latest is neither image:current nor a digest"),
    ("bogus:1", "'bogus:1' is not a trigger omh can evaluate; use one of file:<path>, "
                "image:current, base:<YYYY-MM>, symbol:<name>"),
])
def test_a_shorthand_that_cannot_be_pinned_says_why(value: str, message: str) -> None:
    with pytest.raises(PinError) as err:
        pin(f" {value} ", Head(files={"src/app.py": BLOB}, digest=BLOB))
    assert str(err.value) == message


def test_image_current_is_pinned_to_the_recipe_digest_and_a_digest_is_kept() -> None:
    assert pin("image:current", Head(digest=BLOB)) == f"image:{BLOB}"
    assert pin(f"image:{OTHER[:9]}", Head(digest=BLOB)) == f"image:{OTHER[:9]}"
    with pytest.raises(PinError) as err:
        pin("image:current", Head(digest=None, recipes=("Containerfile",)))
    assert str(err.value) == ("image:current needs a container recipe in HEAD; none of "
                              "Containerfile is there ([stale] image_recipe)")


def test_kinds_without_a_shorthand_are_kept_as_written() -> None:
    head = Head()
    assert pin(" base:2026-05 ", head) == "base:2026-05"
    assert pin("symbol:A::parse", head) == "symbol:A::parse"
    # even a malformed argument: refusing it is the problem check's job, not pin's
    assert pin("base:soon", head) == "base:soon"
