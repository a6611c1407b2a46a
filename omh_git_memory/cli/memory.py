"""`omh memory …`: the group, and its commands in the order `--help` lists them.

Each command lives in the module of its concept (listing, recall, checks,
remember, notes, change, promote, review); this one only gathers them."""

from __future__ import annotations

import typer

from omh_git_memory.cli import agents_md, change, checks, listing, notes, promote, recall
from omh_git_memory.cli import remember as remembering
from omh_git_memory.cli.options import JsonFlag, RefOption
from omh_git_memory.cli.output import usage_error
from omh_git_memory.cli.review import review as review_notes

app = typer.Typer(
    help="List, remember, show, remove and lint the notes of this repository.",
    invoke_without_command=True,
    rich_markup_mode=None,
)


@app.callback()
def memory(ctx: typer.Context, as_json: JsonFlag = False,
           layer: listing.ListLayer = None, types: listing.ListTypes = None,
           every: listing.ListAll = False, ref: RefOption = None) -> None:
    """With no command: list the notes by layer, with how many notes link to each (the
    options of `omh memory list`)."""
    if ctx.invoked_subcommand is None:
        listing.list_notes(as_json, layer, types, every, ref)
        return
    if ref is not None:
        raise usage_error("--ref before a command is `omh memory`'s own (what it lists); "
                          f"give it after the command: `omh memory {ctx.invoked_subcommand} "
                          "--ref REV`")
    if layer is not None or types or every:
        raise usage_error("--layer, --type and --all choose what `omh memory` lists; give "
                          "them without a command (`omh memory --all`) or to `omh memory "
                          f"list`, not before `{ctx.invoked_subcommand}`")
    if as_json:  # `omh memory --json CMD` means `omh memory CMD --json`
        ctx.default_map = {ctx.invoked_subcommand: {"as_json": True}}


app.command("list")(listing.list_notes)
app.command()(recall.recall)
app.command()(checks.stale)
app.command("agents-md")(agents_md.agents_md)
app.command()(recall.reindex)
app.command()(remembering.remember)
app.command()(notes.show)
app.command()(notes.rm)
app.command()(change.mv)
app.command()(promote.promote)
app.command()(checks.lint)
app.command("review")(review_notes)
app.command()(change.update)
app.command()(change.edit)
