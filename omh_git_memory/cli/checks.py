"""`omh memory lint` and `omh memory stale`: the checks CI runs, each with an exit
status a pipeline can fail on."""

from __future__ import annotations

from typing import Annotated

import typer

from omh_git_memory.cli.options import JsonFlag
from omh_git_memory.cli.output import emit_json, here, progress_bar, say
from omh_git_memory.model.plural import count as _count


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
    from omh_git_memory.actions.lint import RULES, Severity, lint_workspace
    # As of a commit, under that commit's own settings (its stubs, its key templates).
    linted = lint_workspace(here(ref if ref is not None and not worktree else None), ref,
                            worktree)
    report = linted.report
    if as_json:
        emit_json(
            {
                "read": linted.read,
                "notes": report.notes,
                "counts": report.counts,
                "refused": report.refused,
                "failed": linted.failed,
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
            f"{_count(report.notes, 'note')} read from {linted.read}: "
            f"{_count(refusals, 'refusal')}, {_count(warnings, 'warning')}"
        )
        if linted.failed and not report.refused:
            typer.echo("failed: a team note links to a key no team note has")
    if linted.failed:
        raise typer.Exit(1)
