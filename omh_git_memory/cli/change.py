"""`omh memory update`, `edit` and `mv`: a written note changed in place, or renamed
with the links to it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from omh_git_memory.cli.options import JsonFlag, LayerOption, chosen_layer
from omh_git_memory.cli.output import emit_json, here, recorded_day, say
from omh_git_memory.model.plural import count as _count

if TYPE_CHECKING:
    from omh_git_memory.actions.update import Updated


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
    add_answers: Annotated[
        list[str] | None,
        typer.Option("--add-answers", help="A question to add to `## Answers`, the others "
                     "kept (repeat for more)."),
    ] = None,
    add_relates_to: Annotated[
        list[str] | None,
        typer.Option("--add-relates-to", help="A key to add to `## Related`, the others "
                     "kept (repeat for more)."),
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
    layer: LayerOption = None,
    strict: Annotated[
        bool, typer.Option("--strict", help="Refuse new links to notes that do not exist.")
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Change the given sections of a note; every other byte of it is kept."""
    from omh_git_memory.actions.remember import single_trigger
    from omh_git_memory.actions.update import Changes
    from omh_git_memory.actions.update import update as do_update

    changes = Changes(
        expected=expected, observed=observed, evidence=evidence, answers=answers,
        relates_to=relates_to, invalidated_by=single_trigger(invalidated_by),
        source=source, recorded=recorded_day(recorded), title=title,
        add_answers=add_answers, add_relates_to=add_relates_to,
    )
    done = do_update(here(), key, changes, chosen_layer(layer), strict)
    _report_change(done, "update", as_json)


def edit(
    key: Annotated[str, typer.Argument(help="The note's key.")],
    layer: LayerOption = None,
    strict: Annotated[
        bool, typer.Option("--strict", help="Refuse new links to notes that do not exist.")
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Open a note in $VISUAL or $EDITOR; what you save is checked, then written."""
    from omh_git_memory.actions.edit import edit as do_edit

    done = do_edit(here(), key, chosen_layer(layer), strict)
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
                   "dropped": {name: list(items) for name, items in done.dropped.items()},
                   "recited": list(done.recited),
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
    for name, items in done.dropped.items():
        flag = name.replace("_", "-")
        gone = "; ".join(items)
        say(f"note: --{flag} replaced the whole list; no longer in it: {gone} "
            f"(--add-{flag} adds to the list instead)")
    if done.recited:
        from omh_git_memory.model.plural import agree
        from omh_git_memory.recall.render import and_list

        now = agree(len(done.recited), "it is", "they are")
        say(f"note: the note now cites {and_list(done.recited)} as {now} now, which had "
            "changed since it was cited; the mark is gone, so check the note still holds")
    if done.title_differs:
        from omh_git_memory.model.keys import shell_word

        say(f"note: the title still reads {done.note.title!r}, no longer the first sentence "
            f"of Observed; --title changes it, and `omh memory mv {shell_word(done.key)} NEW` "
            "renames the key")


def mv(
    old: Annotated[str, typer.Argument(help="The note's key now.")],
    new: Annotated[str, typer.Argument(help="Its new key (the file moves with it).")],
    layer: LayerOption = None,
    relink_local: Annotated[
        bool,
        typer.Option("--relink-local/--no-relink-local", help="For a team note: also "
                     "rewrite the [[OLD]] links of your local notes, after the commit "
                     "(the default)."),
    ] = True,
    as_json: JsonFlag = False,
) -> None:
    """Rename a note and rewrite every [[OLD]] link in its layer, all at once."""
    from omh_git_memory.actions.rename import rename

    done = rename(here(), old, new, chosen_layer(layer), relink_local=relink_local)
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
            f"{'it is' if one else 'they are'} (--no-relink-local); change "
            f"{'it' if one else 'them'} yourself (`omh memory edit KEY`):")
        for lay, k in done.untouched:
            say(f"  {lay}/{k}")
