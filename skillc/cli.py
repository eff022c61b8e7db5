"""The command line: ``skillc check | codes`` (and, as they land, build, render, call, serve, debug)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from skillc import __version__
from skillc.check import CheckReport, NotASkill, check_path
from skillc.diagnostics import CATALOGUE, catalogue_markdown, render_text, to_json_obj

EXIT_OK, EXIT_ERRORS, EXIT_USAGE = 0, 1, 2


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, "-V", "--version", prog_name="skillc")
def main() -> None:
    """skillc: check, compile, render, run and serve WeChat Mini Program AI-mode skills.

    A skill is a folder with SKILL.md, mcp.json, index.js, apis/ and components/.
    Start with `skillc check PATH`; every command explains itself with --help.
    """


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


@main.command()
@click.argument("path", type=click.Path(path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="text: compiler-style lines with source excerpts; json: one machine-readable document.",
)
def check(path: Path, fmt: str) -> None:
    """Check a skill folder, or every skill of a mini-program project.

    PATH is a skill folder (SKILL.md, mcp.json, index.js, apis/, components/), or a project
    folder whose app.json lists agent.skills[].path. Diagnostics are printed as
    file:line:col with the source line and a caret, then a summary line.

    Exit status: 0 clean or warnings only, 1 errors found, 2 usage error or not a skill.

    \b
    Example:
      skillc check examples/coffee-skill
      skillc check --format json examples/coffee-skill | jq '.errors'
    """
    try:
        reports = check_path(path, str(path))
    except NotASkill as err:
        if fmt == "json":
            doc = {"version": 1, "error": to_json_obj([err.diagnostic], prefix=err.display)[0]}
            click.echo(json.dumps(doc, ensure_ascii=False, indent=2))
        else:
            click.echo(render_text([err.diagnostic], prefix=err.display), err=True, nl=False)
        sys.exit(EXIT_USAGE)
    errors = sum(r.counts.errors for r in reports)
    warnings = sum(r.counts.warnings for r in reports)
    skills = [r for r in reports if r.is_skill]
    if fmt == "json":
        click.echo(json.dumps(_json_report(reports), ensure_ascii=False, indent=2))
    else:
        for report in reports:
            text = render_text(report.diagnostics, report.sources, prefix=report.display)
            if text:
                click.echo(text)
        status = "ok" if errors == 0 else "failed"
        click.echo(
            f"checked {_plural(len(skills), 'skill')}: {_plural(errors, 'error')}, "
            f"{_plural(warnings, 'warning')} ({status})"
        )
    sys.exit(EXIT_ERRORS if errors else EXIT_OK)


def _json_report(reports: list[CheckReport]) -> dict[str, object]:
    return {
        "version": 1,
        "errors": sum(r.counts.errors for r in reports),
        "warnings": sum(r.counts.warnings for r in reports),
        "units": [
            {
                "kind": "skill" if r.is_skill else "project",
                "name": r.name,
                "path": r.display,
                "errors": r.counts.errors,
                "warnings": r.counts.warnings,
                "diagnostics": to_json_obj(r.diagnostics, prefix=r.display),
            }
            for r in reports
        ],
    }


@main.command()
@click.argument("code", required=False)
@click.option("--markdown", is_flag=True, help="Print the catalogue as the Markdown of docs/diagnostics.md.")
def codes(code: str | None, markdown: bool) -> None:
    """List the diagnostic codes, or explain one.

    \b
    Example:
      skillc codes MCP010
      skillc codes --markdown > docs/diagnostics.md
    """
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
