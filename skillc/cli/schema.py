"""``skillc schema``: the JSON Schema of a contract."""

from __future__ import annotations

import json

import click

_SCHEMAS = ("render-ir", "patches")


@click.command()
@click.argument("name", type=click.Choice(_SCHEMAS))
def schema(name: str) -> None:
    """Print the JSON Schema of a contract (generated from its typed model).

    \b
    render-ir  the Render IR document every host renders from (docs/render-ir.md)
    patches    a list of Render IR patch ops (docs/patches.md)

    \b
    Example:
      skillc schema render-ir > render-ir.schema.json
    """
    from skillc.ir.diff import patches_schema
    from skillc.ir.render import render_ir_schema

    doc = render_ir_schema() if name == "render-ir" else patches_schema()
    click.echo(json.dumps(doc, ensure_ascii=False, indent=2, sort_keys=True))
