"""`omh memory recall` and `omh memory reindex`: asking the store, and building the
index of HEAD that recall asks (it builds one on demand anyway)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated

import typer

from omh_git_memory.cli.adopt import warn_left_behind
from omh_git_memory.cli.options import JsonFlag, RefOption
from omh_git_memory.cli.output import (
    emit_json,
    here,
    pinned_json,
    pinned_line,
    progress_bar,
    say,
    say_lines,
)
from omh_git_memory.model.plural import count as _count

if TYPE_CHECKING:
    from omh_git_memory.actions.workspace import Workspace
    from omh_git_memory.recall.bm25 import Searcher
    from omh_git_memory.recall.sections import Section
    from omh_git_memory.recall.semantic import SemanticView


def recall(
    question: Annotated[list[str], typer.Argument(
        help="What you want to know, in your words (quoted or not: the words are joined).")],
    also: Annotated[
        list[str] | None,
        typer.Option("--also", help="The same question in other words (repeat for more)."),
    ] = None,
    semantic: Annotated[
        bool | None,
        typer.Option("--semantic/--no-semantic",
                     help="Fuse in semantic similarity (default: [recall] semantic)."),
    ] = None,
    ref: RefOption = None,
    as_json: JsonFlag = False,
) -> None:
    """The notes that best answer a question, each with the notes linked to it."""
    from omh_git_memory.actions.ask import Question, ask
    from omh_git_memory.recall.note_path import json_path
    from omh_git_memory.recall.render import date_of, render_tree

    asked = Question(" ".join(question), also or [])  # refused when empty, as over MCP
    ws = here(ref)
    if ws.pinned is None:  # a past commit's answer holds no local note to adopt
        warn_left_behind(ws)
    answered = ask(ws, asked, progress=progress_bar(), semantic=_semantic_for(ws, semantic))
    answer, fired = answered.answer, answered.stale
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
                        "section": _section_json(answered.sections.get((h.doc.layer, h.doc.key))),
                        "changed": _changed_json(answered.changed.get((h.doc.layer, h.doc.key))),
                        "citations": [c.as_json() for c in
                                      answered.citations.get((h.doc.layer, h.doc.key), ())],
                        "neighbours": [
                            {"key": n.key, "layer": n.layer, "recorded": date_of(n),
                             "title": n.title,
                             "path": json_path(n.layer, n.location, n.source),
                             "stale": fired.get((n.layer, n.key)),
                             "changed": _changed_json(answered.changed.get((n.layer, n.key)))}
                            for n in h.neighbours
                        ],
                        "more_neighbours": h.more_neighbours,
                    }
                    for h in answer.results
                ],
                "left_out": answer.left_out,
                "unknown_names": list(answer.unknown),
                **({"ref": pinned_json(ws.pinned)} if ws.pinned is not None else {}),
            }
        )
        return
    if ws.pinned is not None:
        say(pinned_line(ws.pinned))
    say_lines(render_tree(answer, fired, sections=answered.sections, changed=answered.changed,
                          cited=answered.cited()))


def _changed_json(change: tuple[str, str, int] | None) -> dict[str, str] | None:
    """The commit that last changed a team note or document, or None (a local note)."""
    if change is None:
        return None
    import datetime as dt

    commit, author, day = change
    return {"commit": commit, "author": author, "date": dt.date.fromordinal(day).isoformat()}


def _section_json(section: Section | None) -> dict[str, object] | None:
    """A stub result's matched section in `--json`: its heading (null for the lines
    before the first heading), the heading it is under when the document repeats
    its heading (else null), and its first and last line, 1-based."""
    if section is None:
        return None
    return {"heading": section.heading, "within": section.within,
            "start_line": section.start, "end_line": section.end}


def _semantic_for(ws: Workspace,
                  wanted: bool | None) -> Callable[[Searcher], SemanticView | None]:
    """The semantic view recall fuses in: when `--semantic` or `--no-semantic` says,
    else when the settings turn it on; None (by words) otherwise."""
    def view(searcher: Searcher) -> SemanticView | None:
        on = ws.config().semantic if wanted is None else wanted
        return _semantic_view(ws, searcher, asked=wanted is not None) if on else None

    return view


def _semantic_view(ws: Workspace, searcher: Searcher, asked: bool) -> SemanticView | None:
    """The semantic view; when only the settings turned it on and the extra is
    missing, one warning on stderr and None (recall by words). `--semantic` asked
    for it: then the missing extra is the error."""
    from omh_git_memory.model.errors import SemanticUnavailable

    try:
        return ws.semantic(searcher, progress=progress_bar())
    except SemanticUnavailable as err:
        if asked:
            raise
        typer.echo(f"omh: warning: {err.fallback()}", err=True)
        return None


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
