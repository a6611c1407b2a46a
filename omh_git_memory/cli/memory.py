"""`omh memory …`: list, remember, show, remove and lint notes."""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

import typer

from omh_git_memory.cli.adopt import warn_left_behind
from omh_git_memory.cli.output import (
    all_notes,
    emit_json,
    find_notes,
    here,
    progress_bar,
    recorded_day,
    say,
    say_lines,
)
from omh_git_memory.cli.review import review as review_notes
from omh_git_memory.model.plural import agree
from omh_git_memory.model.plural import count as _count

if TYPE_CHECKING:
    from omh_git_memory.actions.update import Updated
    from omh_git_memory.actions.workspace import Workspace
    from omh_git_memory.recall.bm25 import Searcher
    from omh_git_memory.recall.semantic import SemanticView

app = typer.Typer(
    help="List, remember, show, remove and lint the notes of this repository.",
    invoke_without_command=True,
    rich_markup_mode=None,
)

JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")]


class LayerChoice(StrEnum):
    team = "team"
    local = "local"


class IfExistsChoice(StrEnum):
    error = "error"
    skip = "skip"
    suffix = "suffix"
    override = "override"


LayerOption = Annotated[
    LayerChoice | None, typer.Option("--layer", help="Which layer's note, when both hold the key.")
]


@app.callback()
def memory(ctx: typer.Context, as_json: JsonFlag = False) -> None:
    """With no command: list the notes by layer, with how many notes link to each."""
    if ctx.invoked_subcommand is None:
        list_notes(as_json)
    elif as_json:  # `omh memory --json CMD` means `omh memory CMD --json`
        ctx.default_map = {ctx.invoked_subcommand: {"as_json": True}}


@app.command("list")
def list_notes(as_json: JsonFlag = False) -> None:
    """List the notes by layer, with how many notes link to each."""
    from omh_git_memory.model.layers import Layer
    from omh_git_memory.recall.note_path import json_path
    from omh_git_memory.recall.render import date_of

    ws = here()
    warn_left_behind(ws)
    local = ws.local.scan()
    searcher = ws.searcher(progress=progress_bar(), local=local)
    inbound = searcher.inbound()
    rows = []
    unreadable: list[dict[str, str | None]] = []
    for slot, doc in enumerate(searcher.docs):
        if doc is None:
            continue
        if doc.problem:
            unreadable.append({"layer": doc.layer, "problem": doc.problem,
                               "path": json_path(doc.layer, doc.location, doc.source)})
            continue
        rows.append(
            {
                "key": doc.key,
                "layer": doc.layer,
                "type": doc.kind,
                "recorded": date_of(doc),
                "title": doc.title,
                "inbound": len(inbound.get(slot, [])),
                "path": json_path(doc.layer, doc.location, doc.source),
                "derived": doc.derived,
            }
        )
    unreadable += [
        {"layer": e.layer.value, "path": e.location, "problem": e.problem}
        for e in local
        if e.note is None
    ]
    rows.sort(key=lambda r: (str(r["layer"]), str(r["key"])))
    head = searcher.snapshot.commit
    counts = _layer_counts(rows)
    if as_json:
        emit_json({"notes": rows, "unreadable": unreadable, "local_store": str(ws.local.root),
                   "head": head, "counts": counts})
        return
    for layer in Layer:
        mine = [r for r in rows if r["layer"] == layer.value]
        if layer is Layer.LOCAL:
            say(f"{layer} · {_count(len(mine), 'note')} in {ws.local.root}")
        else:
            say(f"{layer} · {_team_census(counts['team'])} at HEAD "
                + (head[:12] if head else "(no commit yet)"))
        width = max((len(str(r["key"])) for r in mine), default=0)
        for r in mine:
            say(
                f"  {str(r['key']).ljust(width)}  {r['recorded']}  {r['type']:<8}  "
                f"← {_count(int(str(r['inbound'])), 'link')}"
            )
    for u in unreadable:
        say(f"unreadable: {u['path']}: {u['problem']} (omh memory lint says more)")


def _layer_counts(rows: list[dict[str, object]]) -> dict[str, dict[str, int]]:
    """What each layer holds: notes someone wrote, and (team) the stubs and the
    repository topic omh derives from the tree, counted apart."""
    team = [r for r in rows if r["layer"] == "team"]
    derived = [r for r in team if r["derived"]]
    return {
        "team": {"notes": len(team) - len(derived),
                 "stubs": sum(1 for r in derived if r["type"] == "stub"),
                 "topic": sum(1 for r in derived if r["type"] != "stub")},
        "local": {"notes": sum(1 for r in rows if r["layer"] == "local")},
    }


def _team_census(counts: dict[str, int]) -> str:
    """`3 notes, 37 stubs, 1 repository topic`."""
    return ", ".join((_count(counts["notes"], "note"), _count(counts["stubs"], "stub"),
                      _count(counts["topic"], "repository topic")))


def _semantic_view(ws: Workspace, searcher: Searcher, asked: bool) -> SemanticView | None:
    """The semantic view; when only the settings turned it on and the extra is
    missing, one warning on stderr and None (recall by words). `--semantic` asked
    for it: then the missing extra is the error."""
    from omh_git_memory.recall.semantic import SemanticUnavailable

    try:
        return ws.semantic(searcher, progress=progress_bar())
    except SemanticUnavailable as err:
        if asked:
            raise
        typer.echo(f"omh: warning: {err.fallback()}", err=True)
        return None


@app.command()
def recall(
    question: Annotated[str, typer.Argument(help="What you want to know, in your words.")],
    also: Annotated[
        list[str] | None,
        typer.Option("--also", help="The same question in other words (repeat for more)."),
    ] = None,
    semantic: Annotated[
        bool | None,
        typer.Option("--semantic/--no-semantic",
                     help="Fuse in semantic similarity (default: [recall] semantic)."),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """The notes that best answer a question, each with the notes linked to it."""
    from omh_git_memory.expiry.stale import stale_marks
    from omh_git_memory.recall.answer import shown_docs
    from omh_git_memory.recall.floor import recall as do_recall
    from omh_git_memory.recall.note_path import json_path
    from omh_git_memory.recall.render import date_of, render_tree

    if not question.strip():  # as the MCP recall refuses it
        from omh_git_memory.model.errors import OmhError

        raise OmhError("`question` is empty; ask what you want to know")
    ws = here()
    warn_left_behind(ws)
    searcher = ws.searcher(progress=progress_bar())
    use_semantic = ws.config().semantic if semantic is None else semantic
    view = _semantic_view(ws, searcher, asked=semantic is not None) if use_semantic else None
    answer = do_recall(searcher, question, also or [], semantic=view)
    fired = stale_marks(shown_docs(answer), ws.facts())
    if as_json:
        emit_json(
            {
                "results": [
                    {
                        "key": h.doc.key,
                        "layer": h.doc.layer,
                        "recorded": date_of(h.doc),
                        "title": h.doc.title,
                        "path": json_path(h.doc.layer, h.doc.location, h.doc.source),
                        "score": round(h.score, 4),
                        "stale": fired.get((h.doc.layer, h.doc.key)),
                        "neighbours": [
                            {"key": n.key, "layer": n.layer, "recorded": date_of(n),
                             "title": n.title,
                             "path": json_path(n.layer, n.location, n.source),
                             "stale": fired.get((n.layer, n.key))}
                            for n in h.neighbours
                        ],
                        "more_neighbours": h.more_neighbours,
                    }
                    for h in answer.results
                ],
                "left_out": answer.left_out,
            }
        )
        return
    say_lines(render_tree(answer, fired))


@app.command()
def stale(
    check: Annotated[
        bool, typer.Option("--check", help="Exit 1 when any note is stale (for CI).")
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """The notes whose invalidated_by has fired at HEAD, and those omh cannot tell about."""
    from omh_git_memory.expiry.stale import Finding
    from omh_git_memory.expiry.stale import check as run_check
    from omh_git_memory.recall.render import date_of

    ws = here()
    report = run_check(ws.searcher(progress=progress_bar()).docs, ws.facts())

    def row(f: Finding) -> dict[str, str]:
        return {"key": f.doc.key, "layer": f.doc.layer, "recorded": date_of(f.doc),
                "trigger": f.trigger, "reason": f.verdict.reason}

    if as_json:
        emit_json({"checked": report.checked, "stale": [row(f) for f in report.stale],
                   "unknown": [row(f) for f in report.unknown]})
    else:
        for title, findings in (("stale", report.stale), ("cannot tell", report.unknown)):
            if not findings:
                continue
            typer.echo(f"{title} ({len(findings)}):")
            width = max(len(f.doc.key) for f in findings)
            for f in findings:
                say(f"  {f.doc.key.ljust(width)}  {f.doc.layer} · {date_of(f.doc)}  "
                           f"{f.trigger}: {f.verdict.reason}")
        fresh = report.checked - len(report.stale) - len(report.unknown)
        typer.echo(f"{_count(report.checked, 'note')} with a trigger checked at HEAD: "
                   f"{len(report.stale)} stale, {len(report.unknown)} cannot tell, {fresh} fresh")
    if check and report.stale:
        raise typer.Exit(1)


@app.command("agents-md")
def agents_md(as_json: JsonFlag = False) -> None:
    """Write or refresh the omh block in AGENTS.md; text outside its markers is kept."""
    from omh_git_memory.agent.agents_md import refresh
    from omh_git_memory.agent.census import own_prefixes, take_census

    ws = here()
    path = ws.checkout / "AGENTS.md"
    census = take_census(ws.searcher().docs, own_prefixes(ws.config().keys.templates))
    existed, changed = refresh(ws.checkout, census)
    if as_json:
        emit_json({"path": str(path), "changed": changed})
    else:
        say(f"{('refreshed' if existed else 'created') if changed else 'already current:'} "
            f"{path}")


@app.command()
def reindex(
    full: Annotated[
        bool, typer.Option("--full", help="Rebuild from scratch instead of from the last index.")
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Build the recall index of HEAD now (recall builds it on demand anyway)."""
    import time

    ws = here()
    started = time.perf_counter()
    snap = ws.snapshot(progress=progress_bar(), rebuild=full)
    if ws.config().semantic:  # the vectors too, embedding only what is new
        _semantic_view(ws, ws.searcher(), asked=False)
    took = time.perf_counter() - started
    live = sum(1 for _ in snap.live())
    if as_json:
        emit_json({"commit": snap.commit, "documents": live, "analysed": snap.analysed,
                   "reused": snap.reused, "seconds": round(took, 3)})
        return
    if snap.commit is None:
        typer.echo("nothing to index: HEAD has no commit yet")
        return
    if live and not snap.analysed and not snap.reused:  # loaded, not built
        typer.echo(f"the index of {snap.commit[:12]} is built already: "
                   f"{_count(live, 'document')} (--full builds it again)")
        return
    typer.echo(
        f"indexed {snap.commit[:12]}: {_count(live, 'document')} "
        f"({snap.analysed} analysed, {snap.reused} reused) in {took:.2f} s"
    )


class NoteTypeChoice(StrEnum):
    surprise = "surprise"
    topic = "topic"


@app.command()
def remember(
    expected: Annotated[
        str | None, typer.Option(help="What you thought would happen (a surprise: required).")
    ] = None,
    observed: Annotated[
        str | None,
        typer.Option(help="What happened; its first sentence is the title (a surprise: "
                     "required)."),
    ] = None,
    evidence: Annotated[
        str | None,
        typer.Option(help="The command, the error, the file that shows it (a surprise: "
                     "required)."),
    ] = None,
    note_type: Annotated[
        NoteTypeChoice,
        typer.Option("--type", help="surprise (the default) or topic: one subject, with a "
                     "--title, free --section NAME=TEXT and --relates-to links."),
    ] = NoteTypeChoice.surprise,
    title: Annotated[
        str | None, typer.Option("--title", help="A topic's title; its key is derived from it.")
    ] = None,
    sections: Annotated[
        list[str] | None,
        typer.Option("--section", metavar="NAME=TEXT",
                     help="A topic's section: `## NAME` holding TEXT (repeat for more)."),
    ] = None,
    section_files: Annotated[
        list[str] | None,
        typer.Option("--section-file", metavar="NAME=PATH",
                     help="A topic's section whose text is the file PATH (- reads stdin)."),
    ] = None,
    answers: Annotated[
        list[str] | None,
        typer.Option("--answers", help="A question this note answers, in the words "
                     "someone would ask it (repeat for more; a surprise: required, at least "
                     "once)."),
    ] = None,
    relates_to: Annotated[
        list[str] | None,
        typer.Option("--relates-to", help="Key of a related note (repeat for more)."),
    ] = None,
    invalidated_by: Annotated[
        list[str] | None,
        typer.Option(help="What makes the note stale: file:<path> (pinned to HEAD's blob), "
                     "image:current, base:YYYY-MM or symbol:NAME (see docs/stale.md); "
                     "one per note."),
    ] = None,
    source: Annotated[str, typer.Option(help="Who observed it.")] = "cli",
    recorded: Annotated[
        str | None,
        typer.Option(help="The day it happened, YYYY-MM-DD, not after today (default: today)."),
    ] = None,
    if_exists: Annotated[
        IfExistsChoice, typer.Option(help="When the key is taken: error, skip, suffix, override.")
    ] = IfExistsChoice.error,
    strict: Annotated[
        bool, typer.Option("--strict", help="Refuse links to notes that do not exist, and a "
                           "note that looks like one the store holds.")
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Record what surprised you (or, with --type topic, a topic) as a local note."""
    from omh_git_memory.actions.remember import Observation, TeamKeys, single_trigger
    from omh_git_memory.actions.remember import remember as do_remember
    from omh_git_memory.stores.store import IfExists

    if note_type is NoteTypeChoice.topic or title is not None or sections or section_files:
        from omh_git_memory.cli.topic import remember_topic

        remember_topic(
            note_type=note_type.value, title=title, sections=sections or [],
            section_files=section_files or [], surprise_options=[
                name for name, value in (("--expected", expected), ("--observed", observed),
                                         ("--evidence", evidence)) if value is not None],
            answers=answers or [], relates_to=relates_to or [],
            invalidated_by=single_trigger(invalidated_by), source=source, recorded=recorded,
            if_exists=if_exists.value, strict=strict, as_json=as_json,
        )
        return
    missing = [name for name, value in (("--expected", expected), ("--observed", observed),
                                        ("--evidence", evidence)) if value is None]
    if missing:
        from omh_git_memory.cli.output import usage_error

        raise usage_error(
            f"Missing option '{missing[0]}': a surprise note needs --expected, --observed, "
            "--evidence and at least one --answers (or give --type topic)")
    assert expected is not None and observed is not None and evidence is not None
    day = recorded_day(recorded)
    from omh_git_memory.expiry.stale import pin_trigger

    ws = here()
    obs = Observation(
        expected=expected,
        observed=observed,
        evidence=evidence,
        answers=answers or [],
        relates_to=relates_to or [],
        invalidated_by=pin_trigger(single_trigger(invalidated_by), ws.facts()),
        source=source,
        recorded=day,
    )
    from omh_git_memory.cli.repeats import as_json as repeats_json
    from omh_git_memory.cli.repeats import repeats_of, say_repeats

    searcher = ws.searcher(progress=progress_bar())
    known = None
    if strict:
        known = {d.key for d in searcher.docs if d is not None and not d.problem}
    team = TeamKeys.of(searcher.snapshot.docs)  # a taken team key conflicts
    result = do_remember(ws.local, obs, ws.config().keys, IfExists(if_exists.value),
                         known_keys=known, team=team, repeats_of=repeats_of(ws, searcher),
                         refuse_repeats=strict)
    if as_json:
        emit_json(
            {
                "key": result.key.value,
                "layer": result.layer.value,
                "path": result.path,
                "written": result.written,
                "near_duplicates": repeats_json(result.repeats),
            }
        )
        return
    if result.written:
        say(f"remembered {result.layer}/{result.key}")
        say(f"  {result.path}")
    else:
        say(f"kept the existing {result.layer}/{result.key} (--if-exists skip)")
    say_repeats(result.repeats, result.key.value if result.written else None)


@app.command()
def show(
    key: Annotated[str, typer.Argument(help="The note's key.")],
    layer: Annotated[
        LayerChoice | None, typer.Option("--layer", help="Only this layer (default: both).")
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Print a note as it is stored, after a line with its layer, date and file (both
    layers' notes when both hold the key)."""
    from omh_git_memory.model.layers import Layer
    from omh_git_memory.model.note import render
    from omh_git_memory.recall.note_path import json_path
    from omh_git_memory.recall.reread import derived_note

    ws = here()
    graph = all_notes(ws)
    wanted = Layer(layer.value) if layer else None
    # (layer, date, location as the text line says it, path as --json gives it, text)
    shown: list[tuple[str, str, str, str | None, str]] = []
    if wanted in (None, Layer.TEAM) and key in graph.derived:
        for _, doc in ws.snapshot().live():
            if doc.key == key and doc.derived:
                note = derived_note(ws.repo, ws.config(), doc)
                if note is not None:
                    # the topic's location already says "derived from the repository"
                    where = doc.location if doc.is_topic else (
                        f"derived from {doc.location}")
                    shown.append(("team", note.recorded.isoformat(), where,
                                  json_path("team", doc.location, doc.source), render(note)))
    written = [e for lay in Layer for e in graph.claimants(lay, key) if wanted in (None, lay)]
    if not shown or written:
        shown += [(e.layer.value, e.note.recorded.isoformat(), e.location,
                   json_path(e.layer.value, e.location), render(e.note))
                  for e in find_notes(graph, key, wanted) if e.note is not None]
    if as_json:
        emit_json({"notes": [{"key": key, "layer": lay, "recorded": day, "path": path,
                              "text": text} for lay, day, _, path, text in shown]})
        return
    for index, (lay, day, where, _, text) in enumerate(shown):
        if index:
            typer.echo("")
        say(f"{key}  {lay} · {day}  {where}")  # invariant 1: layer and date on every answer
        typer.echo(text, nl=False)


@app.command()
def rm(
    key: Annotated[str, typer.Argument(help="The note's key.")],
    layer: LayerOption = None,
    signoff: Annotated[
        bool,
        typer.Option("--signoff", help="For a team note: end the removing commit's message "
                     "with a Signed-off-by trailer, as promote --signoff."),
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Remove one note and say what linked to it. Never removes anything else."""
    from omh_git_memory.actions.promote import finish_team_commit
    from omh_git_memory.model.errors import OmhError
    from omh_git_memory.model.keys import Key, shell_word
    from omh_git_memory.model.layers import Layer

    ws = here()
    finish_team_commit(ws)  # a team verb killed mid-way: finished before anything is read
    graph = all_notes(ws)
    wanted = Layer(layer.value) if layer else None
    written = [e for lay in Layer for e in graph.claimants(lay, key) if wanted in (None, lay)]
    if not written and key in graph.derived and wanted in (None, Layer.TEAM):
        raise OmhError(_why_derived_stays(ws, key))
    found = find_notes(graph, key, wanted)
    if len(found) > 1:
        raise OmhError(f"{key} is in both layers; say which with --layer team or --layer local")
    entry = found[0]
    linkers = sorted(graph.inbound().get((entry.layer, key), []))
    if entry.layer is Layer.TEAM:
        from omh_git_memory.actions.promote import remove_team_note

        commit: str | None = remove_team_note(ws, Key(entry.relpath.removesuffix(".md")),
                                              signoff=signoff)
        path = entry.location.split(":", 1)[1]
    else:
        from omh_git_memory.model import faults
        from omh_git_memory.model.note import render

        if signoff:
            raise OmhError(f"--signoff signs a commit, and removing local/{key} makes none; "
                           "run it again without --signoff")
        assert entry.note is not None
        faults.point("rm:local")
        # Remove only what was read: a note rewritten since is not the one meant.
        removed = ws.local.remove_if(Key(entry.relpath.removesuffix(".md")),
                                     render(entry.note).encode("utf-8"))
        if removed is None:
            raise OmhError(f"local/{key} changed while rm ran, so nothing was removed; "
                           f"look at it (omh memory show {shell_word(key)} --layer local) and "
                           "run rm again")
        path, commit = str(removed), None
    if as_json:
        emit_json(
            {
                "removed": {"key": key, "layer": entry.layer.value, "path": path,
                            **({"commit": commit} if commit is not None else {})},
                "linked_from": [{"layer": lay.value, "key": k} for lay, k in linkers],
            }
        )
        return
    if commit is None:
        say(f"removed {entry.layer}/{key} ({path})")
    else:
        say(f"removed {entry.layer}/{key}: commit {commit[:12]} deletes {path}; "
            f"`git show {commit[:12]}~1:{path}` shows it; push the branch to share the removal")
    if linkers:
        many = len(linkers)
        typer.echo(f"{_count(many, 'note')} still {agree(many, 'links', 'link')} to it; "
                   f"{agree(many, 'that link now dangles', 'those links now dangle')}:")
        for lay, k in linkers:
            say(f"  {lay}/{k}")
    else:
        typer.echo("no note linked to it")


def _why_derived_stays(ws: Workspace, key: str) -> str:
    """Why `rm` cannot remove the derived note `key`, and what can drop it if anything."""
    doc = next((d for _, d in ws.snapshot().live() if d.key == key and d.derived), None)
    if doc is not None and doc.is_topic:
        return (f"{key} is the repository topic, derived from the repository itself (its "
                "name and files) and written nowhere: rm cannot remove it and no setting "
                "excludes it")
    document = doc.location if doc is not None else "its document"
    return (f"{key} is a stub derived from {document}, not written; to drop it, add "
            f"{document} to [stubs] exclude in .omh/memory.toml (or remove the document)")


@app.command()
def mv(
    old: Annotated[str, typer.Argument(help="The note's key now.")],
    new: Annotated[str, typer.Argument(help="Its new key (the file moves with it).")],
    layer: LayerOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Rename a note and rewrite every [[OLD]] link in its layer, all at once."""
    from omh_git_memory.actions.rename import rename
    from omh_git_memory.model.layers import Layer

    wanted = Layer(layer.value) if layer else None
    done = rename(here(), old, new, wanted)
    if as_json:
        emit_json({
            "renamed": {"layer": done.layer.value, "old": done.old.value, "new": done.new.value,
                        "path": done.path,
                        **({"commit": done.commit} if done.commit is not None else {})},
            "relinked": list(done.relinked),
            "untouched": [{"layer": lay.value, "key": k} for lay, k in done.untouched],
        })
        return
    if done.commit is None:
        say(f"renamed {done.layer}/{done.old} to {done.new} ({done.path})")
    else:
        say(f"renamed {done.layer}/{done.old} to {done.new}: commit {done.commit[:12]} moves "
            f"it to {done.path}; push the branch to share the rename")
    if done.relinked:
        say(f"rewrote [[{done.old}]] to [[{done.new}]] in {_count(len(done.relinked), 'note')}:"
            f" {', '.join(done.relinked)}")
    if done.untouched:
        one = len(done.untouched) == 1
        say(f"{_count(len(done.untouched), 'note')} of another layer still link"
            f"{'s' if one else ''} to [[{done.old}]], which omh leaves as "
            f"{'it is' if one else 'they are'}; change {'it' if one else 'them'} yourself:")
        for lay, k in done.untouched:
            say(f"  {lay}/{k}")


SignoffFlag = Annotated[
    bool,
    typer.Option("--signoff", help="End the commit message with a Signed-off-by trailer "
                 "(user.name and user.email from git config), as git commit --signoff."),
]


@app.command()
def promote(
    keys: Annotated[list[str], typer.Argument(help="Keys of local notes to share.")],
    signoff: SignoffFlag = False,
    as_json: JsonFlag = False,
) -> None:
    """Share local notes with the team: one commit adding them under .omh/notes/.

    The commit is built with libgit2, not by `git commit`, so the repository's
    pre-commit and commit-msg hooks do not run; CI's `omh memory lint --ref`
    checks what was pushed. --signoff adds the trailer a commit-msg hook or DCO
    check may ask for."""
    from omh_git_memory.actions.promote import promote as do_promote
    from omh_git_memory.cli.repeats import as_json as repeats_json
    from omh_git_memory.cli.repeats import say_team_repeats, team_repeats_of
    from omh_git_memory.model.keys import shell_word

    ws = here()
    repeats = team_repeats_of(ws, keys, together=True)  # asked before: then both are team
    result = do_promote(ws, keys, signoff=signoff)
    promoted = [k.value for k in result.keys]
    if as_json:
        emit_json(
            {
                "commit": result.commit,
                "promoted": promoted,
                "paths": list(result.paths),
                "left_in_local": [k.value for k in result.left_in_local],
                "finished": [k.value for k in result.finished],
                "changed_in_local": [k.value for k in result.changed_in_local],
                "already_in_team": [k.value for k in result.already_in_team],
                "near_duplicates": {k: repeats_json(repeats[k]) for k in promoted
                                    if k in repeats},
            }
        )
        return
    if result.finished:
        typer.echo(f"finished an interrupted promote of {_count(len(result.finished), 'note')}")
    typer.echo(f"committed {result.commit[:12]}: {_count(len(result.keys), 'note')} now in team")
    for path in result.paths:
        say(f"  {path}")
    for key in result.left_in_local:
        say(f"warning: the local copy of {key} could not be removed; remove it by hand")
    for key in result.changed_in_local:
        say(f"warning: local/{key} was rewritten while promote ran: the text it held "
            "before is what was committed, the new text stays in the local layer "
            f"(omh memory show {shell_word(key)} shows both)")
    for key in result.already_in_team:
        say(f"left out {key}: it is in the team layer already and not in the local one")
    say_team_repeats(repeats, promoted)
    typer.echo("push the branch to share " + agree(len(result.keys), "it", "them"))


@app.command()
def lint(
    ref: Annotated[
        str | None,
        typer.Option(
            "--ref",
            help="Lint the team notes committed at this revision only (for CI); team "
            "links that reach no team note then fail too.",
        ),
    ] = None,
    worktree: Annotated[
        bool,
        typer.Option(
            "--worktree",
            help="Lint the team notes as they are in the working tree (for a pre-commit "
            "hook); team links that reach no team note then fail too.",
        ),
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Check every note: seven rules refuse a note (one, a team note shaped like a
    secret), four warn. Fails on a refusal, and with --ref or --worktree on a team
    link no team note answers."""
    from omh_git_memory.actions.lint import RULES, Severity
    from omh_git_memory.actions.lint import lint as run_lint
    from omh_git_memory.model.errors import OmhError

    if ref is not None and worktree:
        raise OmhError("--ref and --worktree name two different sets of notes; give one")
    ws = here()
    if worktree:
        graph, read = ws.worktree_team_graph(), "the team notes in the working tree"
    elif ref is not None:
        graph, read = ws.graph(ref, local=False), f"the team notes at {ref}"
    else:
        from omh_git_memory.agent.lint_summary import fingerprint

        mark = fingerprint(ws)  # before reading, so a change meanwhile is linted again
        graph, read = ws.graph(), f"team notes at HEAD and {ws.local.root}"
    report = run_lint(graph)
    if ref is None and not worktree:  # the whole store: the counts recall's description shows
        from omh_git_memory.agent.lint_summary import remember_report

        remember_report(ws, report, mark)
    team_only = worktree or ref is not None
    failed = report.refused or (
        team_only and any(f.rule == "DanglingLink" for f in report.findings)
    )
    if as_json:
        emit_json(
            {
                "read": read,
                "notes": report.notes,
                "counts": report.counts,
                "refused": report.refused,
                "failed": failed,
                "findings": [f.as_dict() for f in report.findings],
            }
        )
    else:
        for f in report.findings:
            where = f"{f.path}:{f.line}" if f.line else f.path
            say(f"{where}: {f.rule} ({f.severity}): {f.message}")
        if report.findings:
            typer.echo("")
        width = max(len(rule.name) for rule in RULES)
        for rule in RULES:
            count = report.counts[rule.name]
            typer.echo(f"  {rule.name.ljust(width)}  {rule.severity:<7}  {count}")
        refusals = sum(1 for f in report.findings if f.severity is Severity.REFUSED)
        warnings = len(report.findings) - refusals
        say(
            f"{_count(report.notes, 'note')} read from {read}: "
            f"{_count(refusals, 'refusal')}, {_count(warnings, 'warning')}"
        )
        if failed and not report.refused:
            typer.echo("failed: a team note links to a key no team note has")
    if failed:
        raise typer.Exit(1)


app.command("review")(review_notes)


WhichLayer = Annotated[
    LayerChoice | None,
    typer.Option("--layer", help="Which layer's note, when both hold the key."),
]


@app.command()
def update(
    key: Annotated[str, typer.Argument(help="The note's key (it does not change).")],
    expected: Annotated[
        str | None, typer.Option(help="New text of `## Expected`.")
    ] = None,
    observed: Annotated[
        str | None,
        typer.Option(help="New text of `## Observed` (the key and title stay: see --title)."),
    ] = None,
    evidence: Annotated[str | None, typer.Option(help="New text of `## Evidence`.")] = None,
    answers: Annotated[
        list[str] | None,
        typer.Option("--answers", help="The questions it answers; replaces the whole list "
                     "(repeat for more)."),
    ] = None,
    relates_to: Annotated[
        list[str] | None,
        typer.Option("--relates-to", help="Keys of related notes; replaces the whole "
                     "`## Related` list (repeat for more)."),
    ] = None,
    invalidated_by: Annotated[
        list[str] | None,
        typer.Option(help="What makes the note stale, e.g. base:2026-09 (one per note)."),
    ] = None,
    title: Annotated[str | None, typer.Option(help="A new `# Title` line.")] = None,
    source: Annotated[str | None, typer.Option(help="Who observed it.")] = None,
    recorded: Annotated[
        str | None, typer.Option(help="The day it happened, YYYY-MM-DD.")
    ] = None,
    layer: WhichLayer = None,
    strict: Annotated[
        bool, typer.Option("--strict", help="Refuse new links to notes that do not exist.")
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Change the given sections of a note; every other byte of it is kept."""
    from omh_git_memory.actions.remember import single_trigger
    from omh_git_memory.actions.update import Changes
    from omh_git_memory.actions.update import update as do_update
    from omh_git_memory.expiry.stale import pin_trigger
    from omh_git_memory.model.layers import Layer

    day = recorded_day(recorded)
    trigger = single_trigger(invalidated_by)
    ws = here()
    changes = Changes(
        expected=expected, observed=observed, evidence=evidence, answers=answers,
        relates_to=relates_to,
        invalidated_by=pin_trigger(trigger, ws.facts()) if trigger is not None else None,
        source=source, recorded=day, title=title,
    )
    done = do_update(ws, key, changes, Layer(layer.value) if layer else None, strict)
    _report_change(done, "update", as_json)


@app.command()
def edit(
    key: Annotated[str, typer.Argument(help="The note's key.")],
    layer: WhichLayer = None,
    strict: Annotated[
        bool, typer.Option("--strict", help="Refuse new links to notes that do not exist.")
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Open a note in $VISUAL or $EDITOR; what you save is checked, then written."""
    from omh_git_memory.actions.edit import edit as do_edit
    from omh_git_memory.model.layers import Layer

    done = do_edit(here(), key, Layer(layer.value) if layer else None, strict)
    if done.updated is None:
        if as_json:
            emit_json({"key": key, "changed": False})
        else:
            say(f"no change: {key} was saved as it was")
        return
    _report_change(done.updated, "edit", as_json)


def _report_change(done: Updated, verb: str, as_json: bool) -> None:
    if as_json:
        emit_json({"key": done.key.value, "layer": done.layer.value, "path": done.path,
                   "changed": done.changed, "title_differs": done.title_differs,
                   **({"commit": done.commit} if done.commit is not None else {})})
        return
    past = {"update": "updated", "edit": "edited"}[verb]
    if not done.changed:
        say(f"no change: {done.layer}/{done.key} already holds that")
    elif done.commit is None:
        say(f"{past} {done.layer}/{done.key}")
        say(f"  {done.path}")
    else:
        say(f"{past} {done.layer}/{done.key}: commit {done.commit[:12]} changes {done.path}; "
            "push the branch to share it")
    if done.title_differs:
        from omh_git_memory.model.keys import shell_word

        say(f"note: the title still reads {done.note.title!r}, no longer the first sentence "
            f"of Observed; --title changes it, and `omh memory mv {shell_word(done.key)} NEW` "
            "renames the key")
