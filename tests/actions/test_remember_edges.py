"""remember's refusals and its edges as the action sees them (actions/remember.py):
which keys the team layer holds, what a taken key says in either layer and under
each `--if-exists`, the strict links checked again under the store's lock, what
`--strict` says of a repeat, and what build_surprise refuses before anything is
written.

Found by mutation testing (docs/records/mutation-s15-remember.md): each test holds
a line of remember.py that a survived mutant changed."""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
from pathlib import Path

import pytest

from omh_git_memory.actions.near_duplicate import Compared, Pair
from omh_git_memory.actions.remember import (
    TOPIC_WHERE,
    Observation,
    TeamKeys,
    build_surprise,
    first_sentence,
    remember,
    single_trigger,
    write_local,
)
from omh_git_memory.actions.workspace import open_workspace
from omh_git_memory.model.errors import KeyTaken, NoteRefused, RepeatsANote
from omh_git_memory.model.keys import DEFAULT_TEMPLATES, Key, KeyTemplates
from omh_git_memory.model.layers import Layer
from omh_git_memory.stores.store import IfExists, LocalStore
from tests.helpers import git, make_repo, note_text

TEMPLATES = KeyTemplates(DEFAULT_TEMPLATES)
PORT = Observation(expected="a free port", observed="The port 8080 is taken by CI.",
                   evidence="bind: address in use", answers=("who holds port 8080?",))
KEY = "surprise/the-port-8080-is-taken-by-ci"
NO_TEAM = TeamKeys({}, {})
TODAY = dt.date.today()


def _obs(**changes: object) -> Observation:
    return dataclasses.replace(PORT, **changes)  # type: ignore[arg-type]


def _refusal(**changes: object) -> str:
    with pytest.raises(NoteRefused) as err:
        build_surprise(_obs(**changes), TEMPLATES, TODAY)
    return str(err.value)


def _files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*.md"))


# --- the team layer's keys ----------------------------------------------------------


def test_team_keys_are_a_written_notes_key_and_path_and_each_derived_documents(
        tmp_path: Path) -> None:
    repo_dir = tmp_path / "repo"
    make_repo(repo_dir, {"docs/guide.md": "# Guide\n\nHow to.\n"})
    notes = repo_dir / ".omh/notes/team"
    notes.mkdir(parents=True)
    # A hand-written key that differs from its file's path: both are taken.
    (notes / "deploy.md").write_text(note_text("other/name", body="How we ship.\n"))
    git(repo_dir, "add", "-A")
    git(repo_dir, "commit", "-qm", "team note")
    docs = list(open_workspace(repo_dir).searcher().snapshot.docs)
    team_doc = next(d for d in docs if d is not None and d.key == "other/name")
    local_doc = team_doc._replace(layer="local", key="local/only")
    # A removed slot (None) and a local document first: neither stops nor joins.
    team = TeamKeys.of([None, local_doc, *docs])
    path = ".omh/notes/team/deploy.md"
    assert team.written == {"other/name": path, "team/deploy": path}
    assert team.derived["docs/guide"] == "docs/guide.md"
    assert team.derived[repo_dir.name] == TOPIC_WHERE
    assert "local/only" not in team.derived
    assert team.holds(Key("team/deploy")) and team.holds(Key("docs/guide"))
    assert not team.holds(Key("local/only"))


# --- a key the team layer holds -----------------------------------------------------

WRITTEN = TeamKeys({KEY: ".omh/notes/surprise/port.md"}, {})
STUB = TeamKeys({}, {KEY: "docs/port.md"})
TOPIC = TeamKeys({}, {KEY: TOPIC_WHERE})


def _taken(tmp_path: Path, team: TeamKeys, if_exists: IfExists = IfExists.ERROR) -> KeyTaken:
    store = LocalStore(tmp_path / "store")
    with pytest.raises(KeyTaken) as err:
        remember(store, PORT, TEMPLATES, if_exists, team=team)
    assert not (tmp_path / "store").exists() or _files(tmp_path / "store") == []
    assert err.value.layer is Layer.TEAM
    return err.value


def test_a_written_team_note_says_how_to_change_it(tmp_path: Path) -> None:
    err = _taken(tmp_path, WRITTEN)
    assert str(err) == (
        f"note {KEY} already exists in the team layer (.omh/notes/surprise/port.md); to "
        f"change it, `omh memory update {KEY}` commits the change (or edit "
        ".omh/notes/surprise/port.md and commit it); to record something new beside it, "
        "choose --if-exists suffix")
    assert not err.derived and err.where == ".omh/notes/surprise/port.md"


def test_a_stub_says_which_file_its_text_comes_from(tmp_path: Path) -> None:
    err = _taken(tmp_path, STUB)
    assert str(err) == (
        f"{KEY} is a derived team note (the stub of docs/port.md); its text comes from "
        "docs/port.md: edit that to change it; to record something new beside it, choose "
        "--if-exists suffix")
    assert err.derived and err.where == "docs/port.md"


def test_the_repository_topic_is_named_as_such(tmp_path: Path) -> None:
    err = _taken(tmp_path, TOPIC)
    assert str(err).startswith(f"{KEY} is the repository topic, a derived team note; its "
                               f"text comes from {TOPIC_WHERE}: edit that")
    assert err.derived


def test_skip_over_a_team_key_writes_nothing_and_says_where_the_note_is(
        tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "store")
    for team, where in ((STUB, "derived from docs/port.md"),
                        (TOPIC, f"derived from {TOPIC_WHERE}"),
                        (WRITTEN, ".omh/notes/surprise/port.md")):
        done = remember(store, PORT, TEMPLATES, IfExists.SKIP, team=team)
        assert (done.written, done.layer, done.path, done.key) == (False, Layer.TEAM, where,
                                                                    Key(KEY))
    assert not (tmp_path / "store").exists() or _files(tmp_path / "store") == []


# --- a key the local layer holds ----------------------------------------------------


def test_a_taken_local_key_is_refused_with_the_commands_to_run(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "store")
    first = remember(store, PORT, TEMPLATES, team=NO_TEAM)
    before = Path(first.path).read_bytes()
    with pytest.raises(KeyTaken) as err:
        remember(store, _obs(expected="something else"), TEMPLATES, team=NO_TEAM)
    assert err.value.layer is Layer.LOCAL and not err.value.derived
    assert str(err.value).startswith(
        f"note {KEY} already exists in the local layer; update it instead: "
        f"`omh memory update {KEY}` changes the sections you give")
    assert Path(first.path).read_bytes() == before


def test_suffix_writes_the_key_it_lands_at_into_the_file_and_the_result(
        tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "store")
    remember(store, PORT, TEMPLATES, team=NO_TEAM)
    done = remember(store, _obs(expected="a second"), TEMPLATES, IfExists.SUFFIX,
                    team=NO_TEAM)
    assert done.written and done.key == Key(f"{KEY}-2")
    assert done.note.key == done.key
    text = Path(done.path).read_text(encoding="utf-8")
    assert f"key: {KEY}-2\n" in text and f"key: {KEY}\n" not in text
    # The first note keeps its own key.
    assert f"key: {KEY}\n" in (tmp_path / "store" / f"{KEY}.md").read_text(encoding="utf-8")


# --- strict links, checked again under the lock -------------------------------------


def _strict(tmp_path: Path, links: tuple[str, ...], team: TeamKeys = NO_TEAM,
            evidence: str = "bind: address in use") -> Path:
    """remember in strict mode with `links` (all known), in a store of its own."""
    store = LocalStore(tmp_path / "store")
    remember(store, _obs(relates_to=links, evidence=evidence), TEMPLATES,
             known_keys={*links, "Bad Key!"}, team=team)
    return tmp_path / "store"


def test_a_strict_link_to_a_local_note_gone_meanwhile_is_refused(tmp_path: Path) -> None:
    # The keys were read with surprise/gone in them; its file is not there now.
    with pytest.raises(NoteRefused, match="relates_to: surprise/gone was renamed or removed "
                                          "while the note was being written"):
        _strict(tmp_path, ("surprise/gone",))
    assert _files(tmp_path / "store") == []


def test_a_strict_link_to_a_local_note_still_there_is_written(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "store")
    target = remember(store, _obs(observed="The target is here."), TEMPLATES, team=NO_TEAM)
    done = remember(store, _obs(relates_to=(target.key.value,)), TEMPLATES,
                    known_keys={target.key.value}, team=NO_TEAM)
    assert done.written and f"[[{target.key}]]" in Path(done.path).read_text(encoding="utf-8")


def test_strict_links_to_team_notes_need_no_local_file(tmp_path: Path) -> None:
    team = TeamKeys({"team/written": ".omh/notes/team/written.md"}, {"docs/guide": "docs/g.md"})
    store = _strict(tmp_path, ("team/written", "docs/guide"), team)
    assert _files(store) == [f"{KEY}.md"]


def test_a_team_link_before_a_gone_one_does_not_end_the_check(tmp_path: Path) -> None:
    team = TeamKeys({"team/written": ".omh/notes/team/written.md"}, {})
    with pytest.raises(NoteRefused, match="surprise/gone was renamed or removed"):
        _strict(tmp_path, ("team/written", "surprise/gone"), team)


def test_a_link_that_is_no_key_before_a_gone_one_does_not_end_the_check(
        tmp_path: Path) -> None:
    # `[[Bad Key!]]` in the evidence is a link but no key: passed over, not an error.
    with pytest.raises(NoteRefused, match="surprise/gone was renamed or removed"):
        _strict(tmp_path, ("surprise/gone",), evidence="see [[Bad Key!]]")
    store = _strict(tmp_path, (), evidence="see [[Bad Key!]]")
    assert _files(store) == [f"{KEY}.md"]


def test_a_link_through_a_symlinked_folder_is_passed_over_not_an_error(
        tmp_path: Path) -> None:
    store = tmp_path / "store"
    (tmp_path / "elsewhere").mkdir()
    store.mkdir(mode=0o700)
    os.symlink(tmp_path / "elsewhere", store / "linked")
    # path_for refuses the route through `linked/` (StoreError): that link is not
    # checked, and the check goes on to the next one.
    with pytest.raises(NoteRefused, match="surprise/gone was renamed or removed"):
        _strict(tmp_path, ("linked/x", "surprise/gone"))
    _strict(tmp_path, ("linked/x",))
    assert _files(store) == [f"{KEY}.md"]


# --- repeats ------------------------------------------------------------------------


def _compared(key: str, layer: Layer, day: int) -> Compared:
    return Compared(layer, key, dt.date(2026, 10, day), f"{key}.md", "the port is taken")


def _pairs() -> list[Pair]:
    new = _compared(KEY, Layer.LOCAL, 9)
    return [Pair(new, _compared("surprise/first", Layer.TEAM, 2), 91.0),
            Pair(new, _compared("surprise/second", Layer.LOCAL, 3), 80.0)]


def test_strict_refuses_a_repeat_naming_the_most_alike_first(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "store")
    with pytest.raises(RepeatsANote) as err:
        remember(store, PORT, TEMPLATES, team=NO_TEAM, repeats_of=lambda _n: _pairs(),
                 refuse_repeats=True)
    assert str(err.value) == (
        "the note looks like surprise/first (team · 2026-10-02, 91% alike), so nothing was "
        "written (--strict): `omh memory update surprise/first` changes the sections you "
        "give; run without --strict to write the new note anyway")
    assert [p.original.key for p in err.value.repeats] == ["surprise/first", "surprise/second"]
    assert not (tmp_path / "store").exists() or _files(tmp_path / "store") == []


def test_by_default_a_repeat_is_written_and_named(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "store")
    done = remember(store, PORT, TEMPLATES, team=NO_TEAM, repeats_of=lambda _n: _pairs())
    assert done.written and [p.original.key for p in done.repeats] == [
        "surprise/first", "surprise/second"]
    note = build_surprise(_obs(observed="Another one."), TEMPLATES, TODAY)
    again = write_local(store, note, team=NO_TEAM, repeats_of=lambda _n: _pairs())
    assert again.written and len(again.repeats) == 2


# --- one trigger --------------------------------------------------------------------


def test_single_trigger_takes_the_one_given_and_refuses_two() -> None:
    assert single_trigger(None) is None
    assert single_trigger([]) is None
    assert single_trigger(["file:a.py"]) == "file:a.py"
    assert single_trigger(["  ", "file:a.py"]) == "file:a.py"
    with pytest.raises(NoteRefused, match=r"given 2 times \(file:a\.py, file:b\.py\)"):
        single_trigger(["file:a.py", "file:b.py"])


# --- the title ----------------------------------------------------------------------


@pytest.mark.parametrize(("observed", "title"), [
    # `?` and `!` end a sentence whatever follows them.
    ("Really? yes it is. More.", "Really?"),
    ("Stop! then go on. More.", "Stop!"),
    # An abbreviation as the first word: no space before it.
    ("e.g. the build works. More.", "e.g. the build works."),
    # Only the one character after the space decides (a digit is no lower case).
    ("Upgrade to 2.0. 3rd party tools break.", "Upgrade to 2.0."),
])
def test_the_first_sentence_at_its_edges(observed: str, title: str) -> None:
    assert first_sentence(observed) == title


# --- what build_surprise refuses ----------------------------------------------------


@pytest.mark.parametrize(("name", "hint"), [
    ("expected", "say what you thought would happen"),
    ("observed", "say what happened instead"),
    ("evidence", "give the command, the error or the file that shows it"),
])
def test_an_empty_section_is_refused_by_name(name: str, hint: str) -> None:
    assert _refusal(**{name: " \n "}) == f"`{name}` is empty; {hint}"


def test_source_must_be_one_non_empty_line() -> None:
    for source in ("cli\nother", " ", "a\rb"):
        assert _refusal(source=source) == (
            "`source` must be one non-empty line saying who observed this")


def test_a_related_key_is_checked_for_bad_characters_then_as_a_key() -> None:
    assert _refusal(relates_to=("a\x00b",)).startswith("`relates_to` holds a NUL byte")
    assert _refusal(relates_to=("Not A Key",)).startswith(
        "relates_to: 'Not A Key' is not a usable key")


def test_a_trigger_omh_cannot_evaluate_is_refused_and_a_good_one_kept() -> None:
    assert _refusal(invalidated_by="nonsense").startswith(
        "invalidated_by: 'nonsense' is not a trigger omh can evaluate")
    note = build_surprise(_obs(invalidated_by=" base:2026-01 "), TEMPLATES, TODAY)
    assert note.field("invalidated_by") == "base:2026-01"


def test_today_may_be_recorded_and_tomorrow_may_not() -> None:
    today = max(TODAY, dt.datetime.now(dt.UTC).date())
    note = build_surprise(_obs(recorded=today), TEMPLATES, TODAY)
    assert note.field("recorded") == today.isoformat()
    assert "is after today" in _refusal(recorded=today + dt.timedelta(days=1))


def test_a_title_with_no_letter_says_whether_a_token_was_left_out() -> None:
    bare = "the first sentence of `observed` has no letter or digit to derive a key from"
    assert _refusal(observed="!!! ???") == bare
    token = "ghp_" + "abcdefghijklmnopqrstuvwxyz0123456789"  # the shape, not a real token
    assert _refusal(observed=token) == (
        f"{bare} once its token is left out (a key may not carry one)")
