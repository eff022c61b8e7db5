"""``skillc check``: diagnostics for a skill folder or a project, as text, JSON, GitHub annotations or SARIF."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from skillc.cli.options import color_option
from skillc.cli.output import EXIT_ERRORS, EXIT_OK, EXIT_USAGE, plural, use_color

if TYPE_CHECKING:
    from skillc.check import CheckReport
    from skillc.diagnostics import Diagnostic


@click.command()
@click.argument("path", type=click.Path(path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "github", "sarif", "wxa"]),
    default="text",
    show_default=True,
    help="text: compiler-style lines with source excerpts; json: one machine-readable document; "
    "github: GitHub Actions annotations (::error file=...,line=...::message); sarif: a SARIF 2.1.0 log; "
    "wxa: WeChat's validator files, PATH/cli-agent-run/validate-report.json and destructive-manifest.json "
    "(docs/wechat-cli.md), with its console lines.",
)
@color_option
@click.option(
    "-q", "--quiet", is_flag=True, help="Errors only: no warnings or infos, and no summary line when nothing failed."
)
def check(path: Path, fmt: str, color: str, quiet: bool) -> None:
    """Check a skill folder, or every skill of a mini-program project.

    PATH is a skill folder (SKILL.md, mcp.json, index.js, apis/, components/), or a project
    folder whose app.json lists agent.skills[].path. Diagnostics are printed as
    file:line:col with the source line and a caret, then a summary line.

    Exit status: 0 clean or warnings only, 1 errors found, 2 usage error or not a skill.

    \b
    Example:
      skillc check examples/coffee-skill
      skillc check --format json examples/coffee-skill | jq '.errors'
      skillc check --format github skills/     # in a GitHub Actions step
      skillc check --format sarif skills/ > skillc.sarif
    """
    from skillc import __version__
    from skillc.check import NotASkill, check_path
    from skillc.diagnostics import render_github, render_sarif, render_text, to_json_obj

    try:
        reports = check_path(path, str(path))
    except NotASkill as err:
        if fmt == "json":
            doc = {"version": 1, "error": to_json_obj([err.diagnostic], prefix=err.display)[0]}
            click.echo(json.dumps(doc, ensure_ascii=False, indent=2))
        elif fmt == "github":
            click.echo(render_github([err.diagnostic], prefix=err.display), nl=False)
        elif fmt == "sarif":
            click.echo(render_sarif([(err.display, [err.diagnostic])], tool_version=__version__), nl=False)
        else:
            paint = use_color(color, sys.stderr)
            click.echo(render_text([err.diagnostic], prefix=err.display, color=paint), err=True, nl=False, color=paint)
        sys.exit(EXIT_USAGE)
    errors = sum(r.counts.errors for r in reports)
    warnings = sum(r.counts.warnings for r in reports)
    skills = [r for r in reports if r.is_skill]
    status = "ok" if errors == 0 else "failed"
    summary = (
        f"checked {plural(len(skills), 'skill')}: {plural(errors, 'error')}, {plural(warnings, 'warning')} ({status})"
    )
    if fmt == "json":
        click.echo(json.dumps(_json_report(reports, quiet), ensure_ascii=False, indent=2))
    elif fmt == "wxa":
        from skillc.wxa.validate_report import write_wxa

        sys.exit(write_wxa(path, reports))
    elif fmt == "sarif":
        units = [(r.display, _errors_only(r.diagnostics, quiet)) for r in reports]
        click.echo(render_sarif(units, tool_version=__version__), nl=False)
    elif fmt == "github":
        for report in reports:
            click.echo(render_github(_errors_only(report.diagnostics, quiet), prefix=report.display), nl=False)
        if errors or not quiet:
            click.echo(summary, err=True)  # stdout stays workflow commands only
    else:
        paint = use_color(color)
        for report in reports:
            shown = _errors_only(report.diagnostics, quiet)
            text = render_text(shown, report.sources, prefix=report.display, color=paint)
            if text:
                click.echo(text, color=paint)
        if errors or not quiet:
            click.echo(summary)
    sys.exit(EXIT_ERRORS if errors else EXIT_OK)


def _json_report(reports: list[CheckReport], quiet: bool = False) -> dict[str, object]:
    from skillc.diagnostics import to_json_obj

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
                "diagnostics": to_json_obj(_errors_only(r.diagnostics, quiet), prefix=r.display),
            }
            for r in reports
        ],
    }


def _errors_only(diags: list[Diagnostic], quiet: bool) -> list[Diagnostic]:
    from skillc.diagnostics import Severity

    return [d for d in diags if d.severity is Severity.ERROR] if quiet else diags
