"""``skillc agent``: WeChat's ``cli agent execute`` / ``render --from-execute`` artefacts on Linux."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from skillc.cli.options import parse_args_json
from skillc.cli.output import EXIT_USAGE


@click.group()
def agent() -> None:
    """Write the files WeChat's `cli agent` writes, from skillc's runtime and renderer.

    Scripts written for the official `cli agent execute` and `render --from-execute` read these
    files unchanged: the same names, fields and exit codes (docs/wechat-cli.md maps each field).

    \b
    Example:
      skillc agent execute examples/coffee-skill searchDrinks --args '{"keyword": "latte"}' --out run/
      skillc agent render --from-execute run/execute-result.searchDrinks.json --out run/
    """


@agent.command(short_help="Call one API; write execute-result.<API>.json.")
@click.argument("skill", type=click.Path(path_type=Path))
@click.argument("api")
@click.option("--args", "args_json", default="{}", show_default=True, help="The arguments, as a JSON object.")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Where execute-result.<API>.json is written [cli-agent-run/ of the project, else of the skill].",
)
def execute(skill: Path, api: str, args_json: str, out_dir: Path | None) -> None:
    """Call one API and write cli-agent-run/execute-result.<API>.json, as `cli agent execute` does.

    An API that cli-agent-run/destructive-manifest.json marks destructive (true) or leaves
    undecided (null) is refused; with no manifest, so is any API whose name or description uses a
    destructive keyword (V019). The document is also printed.

    Exit status: 0 pass (status ok, no isError, structuredContent matching outputSchema), 1 fail,
    2 runtime error or usage error, 3 refused as destructive.

    \b
    Example:
      skillc agent execute examples/coffee-skill searchDrinks --args '{"keyword": "latte"}'
    """
    from skillc.wxa.destructive import MANIFEST_DIR, project_root
    from skillc.wxa.execute import ExecuteUsageError, load, write
    from skillc.wxa.execute import execute as run

    arguments = parse_args_json(args_json)
    if not isinstance(arguments, dict):
        click.echo("skillc: error: --args must be a JSON object", err=True)
        sys.exit(EXIT_USAGE)
    try:
        pkg = load(skill)
        done = run(pkg, api, arguments)
    except ExecuteUsageError as err:
        click.echo(f"skillc: error: {err}", err=True)
        sys.exit(EXIT_USAGE)
    path = write(done, out_dir or project_root(pkg) / MANIFEST_DIR)
    click.echo(json.dumps(done.document, ensure_ascii=False, indent=2))
    click.echo(f"wrote {path}", err=True)
    sys.exit(done.exit_code)


@agent.command(short_help="Draw an execute result's card: <API>.json and <API>.snapshot.png.")
@click.option(
    "--from-execute",
    "execute_file",
    required=True,
    type=click.Path(path_type=Path, dir_okay=False),
    help="An execute-result.<API>.json: its structuredContent is the card's data, its arguments the card's Input.",
)
@click.option(
    "--skill",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="The skill folder [from the result's _meta.project and params.subpackage].",
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Where <API>.json and <API>.snapshot.png are written [cli-agent-run/ of the project].",
)
def render(execute_file: Path, skill: Path | None, out_dir: Path | None) -> None:
    """Draw the card of an execute result: <API>.snapshot.png (headless Chromium) and <API>.json
    with the elementTree and the verify checks, as `cli agent render --from-execute` does.

    Exit status: 0 rendered and verified, 1 a verify check failed, 2 bad input (not an execute
    result, no structuredContent, an API without a card) or no Chromium.

    \b
    Example:
      skillc agent execute examples/coffee-skill searchDrinks --out run/
      skillc agent render --from-execute run/execute-result.searchDrinks.json --out run/
    """
    from skillc.wxa.render import RenderUsageError, render_from_execute

    try:
        done = render_from_execute(execute_file, out_dir, skill=skill)
    except RenderUsageError as err:
        click.echo(f"skillc: error: {err}", err=True)
        sys.exit(EXIT_USAGE)
    click.echo(json.dumps(done.document, ensure_ascii=False, indent=2))
    click.echo(f"wrote {done.json_path}" + (f" and {done.png_path}" if done.png_path else ""), err=True)
    sys.exit(done.exit_code)
