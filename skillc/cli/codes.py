"""``skillc codes``: the catalogue of diagnostic codes."""

from __future__ import annotations

import sys

import click

from skillc.cli.output import EXIT_USAGE


@click.command()
@click.argument("code", required=False)
@click.option("--markdown", is_flag=True, help="Print the catalogue as the Markdown of docs/diagnostics.md.")
def codes(code: str | None, markdown: bool) -> None:
    """List the diagnostic codes, or explain one.

    \b
    Example:
      skillc codes MCP010
      skillc codes --markdown > docs/diagnostics.md
    """
    from skillc.diagnostics import CATALOGUE, catalogue_markdown

    if markdown:
        click.echo(catalogue_markdown(), nl=False)
        return
    if code is not None:
        info = CATALOGUE.get(code.upper())
        if info is None:
            click.echo(f"skillc: error: unknown diagnostic code {code!r}", err=True)
            sys.exit(EXIT_USAGE)
        click.echo(f"{info.code} ({info.severity.value}): {info.summary}")
        return
    for info in CATALOGUE.values():
        click.echo(f"{info.code:8} {info.severity.value:8} {info.summary}")
