"""`omh memory …`: list, remember, show, remove and lint notes."""

from __future__ import annotations

import datetime as dt
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
    say,
    say_lines,
)

if TYPE_CHECKING:
    from omh_git_memory.recall import Searcher
    from omh_git_memory.semantic import SemanticView
    from omh_git_memory.workspace import Workspace

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
    LayerChoice | None, typer.Option("--layer", help="Only this layer (default: both).")
]


@app.callback()
def memory(ctx: typer.Context, as_json: JsonFlag = False) -> None:
    """With no command: list the notes by layer, with how many notes link to each."""
    if ctx.invoked_subcommand is None:
        list_notes(as_json)


@app.command("list")
def list_notes(as_json: JsonFlag = False) -> None:
    """List the notes by layer, with how many notes link to each."""
    from omh_git_memory.layers import Layer
    from omh_git_memory.recall import date_of

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
            unreadable.append({"layer": doc.layer, "path": doc.location, "problem": doc.problem})
            continue
        rows.append(
            {
                "key": doc.key,
                "layer": doc.layer,
                "type": doc.kind,
                "recorded": date_of(doc),
                "title": doc.title,
                "inbound": len(inbound.get(slot, [])),
                "path": doc.location,
            }
        )
    unreadable += [
        {"layer": e.layer.value, "path": e.location, "problem": e.problem}
        for e in local
        if e.note is None
    ]
    rows.sort(key=lambda r: (str(r["layer"]), str(r["key"])))
    if as_json:
        emit_json({"notes": rows, "unreadable": unreadable, "local_store": str(ws.local.root)})
        return
    for layer in Layer:
        mine = [r for r in rows if r["layer"] == layer.value]
        where = f" in {ws.local.root}" if layer is Layer.LOCAL else " at HEAD"
        say(f"{layer} · {_count(len(mine), 'note')}{where}")
        width = max((len(str(r["key"])) for r in mine), default=0)
        for r in mine:
            say(
                f"  {str(r['key']).ljust(width)}  {r['recorded']}  {r['type']:<8}  "
                f"← {_count(int(str(r['inbound'])), 'link')}"
            )
    for u in unreadable:
        say(f"unreadable: {u['path']}: {u['problem']} (omh memory lint says more)")


def _semantic_view(ws: Workspace, searcher: Searcher, asked: bool) -> SemanticView | None:
    """The semantic view; when only the settings turned it on and the extra is
    missing, one warning on stderr and None (recall by words). `--semantic` asked
    for it: then the missing extra is the error."""
    from omh_git_memory.semantic import SemanticUnavailable

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
    from omh_git_memory.recall import date_of, read_at, render_tree, shown_docs
    from omh_git_memory.recall import recall as do_recall
    from omh_git_memory.stale import stale_marks

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
                        "path": read_at(h.doc),
                        "score": round(h.score, 4),
                        "stale": fired.get((h.doc.layer, h.doc.key)),
                        "neighbours": [
                            {"key": n.key, "layer": n.layer, "recorded": date_of(n),
                             "title": n.title, "path": read_at(n),
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
    from omh_git_memory.recall import date_of
    from omh_git_memory.stale import Finding
    from omh_git_memory.stale import check as run_check

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
    from omh_git_memory.agents_md import refresh
    from omh_git_memory.census import own_prefixes, take_census

    ws = here()
    path = ws.checkout / "AGENTS.md"
    census = take_census(ws.searcher().docs, own_prefixes(ws.config().keys.templates))
    changed = refresh(path, census)
    if as_json:
        emit_json({"path": str(path), "changed": changed})
    else:
        say(f"{'refreshed' if changed else 'already current:'} {path}")


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
    typer.echo(
        f"indexed {snap.commit[:12]}: {_count(live, 'document')} "
        f"({snap.analysed} analysed, {snap.reused} reused) in {took:.2f} s"
    )


@app.command()
def remember(
    expected: Annotated[str, typer.Option(help="What you thought would happen.")],
    observed: Annotated[str, typer.Option(help="What happened; its first sentence is the title.")],
    evidence: Annotated[str, typer.Option(help="The command, the error, the file that shows it.")],
    answers: Annotated[
        list[str] | None,
        typer.Option("--answers", help="A question this note answers (repeat for more)."),
    ] = None,
    relates_to: Annotated[
        list[str] | None,
        typer.Option("--relates-to", help="Key of a related note (repeat for more)."),
    ] = None,
    invalidated_by: Annotated[
        str | None, typer.Option(help="What makes the note stale, e.g. base:2026-09.")
    ] = None,
    source: Annotated[str, typer.Option(help="Who observed it.")] = "cli",
    recorded: Annotated[
        str | None, typer.Option(help="The day it happened, YYYY-MM-DD (default: today).")
    ] = None,
    if_exists: Annotated[
        IfExistsChoice, typer.Option(help="When the key is taken: error, skip, suffix, override.")
    ] = IfExistsChoice.error,
    strict: Annotated[
        bool, typer.Option("--strict", help="Refuse links to notes that do not exist.")
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Record what surprised you as a note in the local layer."""
    from omh_git_memory.errors import NoteRefused
    from omh_git_memory.remember import Observation, TeamKeys
    from omh_git_memory.remember import remember as do_remember
    from omh_git_memory.store import IfExists

    day = None
    if recorded is not None:
        try:
            day = dt.date.fromisoformat(recorded)
        except ValueError:
            raise NoteRefused(
                f"--recorded {recorded!r} is not a date that exists (YYYY-MM-DD)"
            ) from None
    from omh_git_memory.stale import pin_trigger

    ws = here()
    obs = Observation(
        expected=expected,
        observed=observed,
        evidence=evidence,
        answers=answers or [],
        relates_to=relates_to or [],
        invalidated_by=pin_trigger(invalidated_by, ws.facts()),
        source=source,
        recorded=day,
    )
    known = None
    if strict:
        known = {d.key for d in ws.searcher().docs if d is not None and not d.problem}
    team = TeamKeys.of(ws.snapshot(progress=progress_bar()).docs)  # a taken team key conflicts
    result = do_remember(ws.local, obs, ws.config().keys, IfExists(if_exists.value),
                         known_keys=known, team=team)
    if as_json:
        emit_json(
            {
                "key": result.key.value,
                "layer": result.layer.value,
                "path": result.path,
                "written": result.written,
            }
        )
    elif result.written:
        say(f"remembered {result.layer}/{result.key}")
        say(f"  {result.path}")
    else:
        say(f"kept the existing {result.layer}/{result.key} (--if-exists skip)")


@app.command()
def show(
    key: Annotated[str, typer.Argument(help="The note's key.")],
    layer: LayerOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Print a note as it is stored (both layers' notes when both hold the key)."""
    from omh_git_memory.index import derived_note
    from omh_git_memory.layers import Layer
    from omh_git_memory.note import render

    ws = here()
    graph = all_notes(ws)
    wanted = Layer(layer.value) if layer else None
    shown: list[tuple[str, str, str]] = []  # (layer, location, text)
    if wanted in (None, Layer.TEAM) and key in graph.derived:
        for _, doc in ws.snapshot().live():
            if doc.key == key and doc.derived:
                note = derived_note(ws.repo, ws.config(), doc)
                if note is not None:
                    shown.append(("team", f"derived from {doc.location}", render(note)))
    written = [e for lay in Layer for e in graph.claimants(lay, key) if wanted in (None, lay)]
    if not shown or written:
        shown += [(e.layer.value, e.location, render(e.note))
                  for e in find_notes(graph, key, wanted) if e.note is not None]
    if as_json:
        emit_json({"notes": [{"key": key, "layer": lay, "path": where, "text": text}
                             for lay, where, text in shown]})
        return
    for index, (lay, _where, text) in enumerate(shown):
        if len(shown) > 1:
            if index:
                typer.echo("")
            say(f"==> {lay}/{key} <==")
        typer.echo(text, nl=False)


@app.command()
def rm(
    key: Annotated[str, typer.Argument(help="The note's key.")],
    layer: LayerOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Remove one note and say what linked to it. Never removes anything else."""
    from omh_git_memory.errors import OmhError
    from omh_git_memory.keys import Key
    from omh_git_memory.layers import Layer

    ws = here()
    graph = all_notes(ws)
    wanted = Layer(layer.value) if layer else None
    written = [e for lay in Layer for e in graph.claimants(lay, key) if wanted in (None, lay)]
    if not written and key in graph.derived and wanted in (None, Layer.TEAM):
        raise OmhError(
            f"{key} is derived from a document, not written; to drop it, add the document's "
            "path to [stubs] exclude in .omh/memory.toml"
        )
    found = find_notes(graph, key, wanted)
    if len(found) > 1:
        raise OmhError(f"{key} is in both layers; say which with --layer team or --layer local")
    entry = found[0]
    linkers = sorted(graph.inbound().get((entry.layer, key), []))
    if entry.layer is Layer.TEAM:
        from omh_git_memory.promote import remove_team_note

        commit: str | None = remove_team_note(ws, Key(entry.relpath.removesuffix(".md")))
        path = entry.location.split(":", 1)[1]
    else:
        from omh_git_memory import faults
        from omh_git_memory.note import render

        assert entry.note is not None
        faults.point("rm:local")
        # Remove only what was read: a note rewritten since is not the one meant.
        removed = ws.local.remove_if(Key(entry.relpath.removesuffix(".md")),
                                     render(entry.note).encode("utf-8"))
        if removed is None:
            raise OmhError(f"local/{key} changed while rm ran, so nothing was removed; "
                           f"look at it (omh memory show {key} --layer local) and run rm again")
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
        one = len(linkers) == 1
        typer.echo(f"{_count(len(linkers), 'note')} still link{'s' if one else ''} to it; "
                   f"{'that link now dangles' if one else 'those links now dangle'}:")
        for lay, k in linkers:
            say(f"  {lay}/{k}")
    else:
        typer.echo("no note linked to it")


@app.command()
def promote(
    keys: Annotated[list[str], typer.Argument(help="Keys of local notes to share.")],
    as_json: JsonFlag = False,
) -> None:
    """Share local notes with the team: one commit adding them under .omh/notes/."""
    from omh_git_memory.promote import promote as do_promote

    result = do_promote(here(), keys)
    if as_json:
        emit_json(
            {
                "commit": result.commit,
                "promoted": [k.value for k in result.keys],
                "paths": list(result.paths),
                "left_in_local": [k.value for k in result.left_in_local],
                "finished": [k.value for k in result.finished],
                "changed_in_local": [k.value for k in result.changed_in_local],
                "already_in_team": [k.value for k in result.already_in_team],
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
            f"(omh memory show {key} shows both)")
    for key in result.already_in_team:
        say(f"left out {key}: it is in the team layer already and not in the local one")
    typer.echo("push the branch to share " + ("it" if len(result.keys) == 1 else "them"))


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
    """Check every note: six rules refuse a note, three warn. Fails only on refusals."""
    from omh_git_memory.errors import OmhError
    from omh_git_memory.lint import RULES, Severity
    from omh_git_memory.lint import lint as run_lint

    if ref is not None and worktree:
        raise OmhError("--ref and --worktree name two different sets of notes; give one")
    ws = here()
    if worktree:
        graph, read = ws.worktree_team_graph(), "the team notes in the working tree"
    elif ref is not None:
        graph, read = ws.graph(ref, local=False), f"the team notes at {ref}"
    else:
        from omh_git_memory.lint_summary import fingerprint

        mark = fingerprint(ws)  # before reading, so a change meanwhile is linted again
        graph, read = ws.graph(), f"team notes at HEAD and {ws.local.root}"
    report = run_lint(graph)
    if ref is None and not worktree:  # the whole store: the counts recall's description shows
        from omh_git_memory.lint_summary import remember_report

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


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"
