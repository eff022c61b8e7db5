"""``skillc check``: diagnostics for a skill folder or a project, as text, JSON, GitHub annotations or SARIF."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click

from skillc.cli.options import color_option
from skillc.cli.output import EXIT_ERRORS, EXIT_OK, EXIT_USAGE, plural, use_color

if TYPE_CHECKING:
    from skillc.check import CheckReport
    from skillc.check_cache import Outcome
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
    paint_out, paint_err = use_color(color), use_color(color, sys.stderr)
    from skillc import check_cache

    if fmt == "wxa":  # writes WeChat's files beside the skill and prints as it goes: always run
        outcome = _outcome(path, fmt, quiet, paint_out, paint_err)
        _print(outcome)
    key = check_cache.entry_key(path, [str(path), fmt, quiet, paint_out, paint_err])
    replayed = check_cache.lookup(key)
    if replayed is not None:
        _print(replayed)
    started = check_cache.now_ns()
    with check_cache.recording() as reads:
        outcome = _outcome(path, fmt, quiet, paint_out, paint_err)
    check_cache.store(key, path, reads, started, outcome)
    _print(outcome)


def _print(outcome: Outcome) -> NoReturn:
    for write in outcome.writes:
        click.echo(write.text, err=write.err, nl=write.nl, color=write.color)
    sys.exit(outcome.status)


def _outcome(path: Path, fmt: str, quiet: bool, paint_out: bool, paint_err: bool) -> Outcome:
    """Check ``path`` and say what to print, without printing it (the user cache keeps it)."""
    from skillc import __version__
    from skillc.check import NotASkill, check_path
    from skillc.check_cache import Outcome, Write
    from skillc.diagnostics import render_github, render_sarif, render_text, to_json_obj

    out = Outcome()
    try:
        reports = check_path(path, str(path))
    except NotASkill as err:
        if fmt == "json":
            doc = {"version": 1, "error": to_json_obj([err.diagnostic], prefix=err.display)[0]}
            out.writes.append(Write(json.dumps(doc, ensure_ascii=False, indent=2)))
        elif fmt == "github":
            out.writes.append(Write(render_github([err.diagnostic], prefix=err.display), nl=False))
        elif fmt == "sarif":
            text = render_sarif([(err.display, [err.diagnostic])], tool_version=__version__)
            out.writes.append(Write(text, nl=False))
        else:
            text = render_text([err.diagnostic], prefix=err.display, color=paint_err)
            out.writes.append(Write(text, err=True, nl=False, color=paint_err))
        out.status = EXIT_USAGE
        return out
    errors = sum(r.counts.errors for r in reports)
    warnings = sum(r.counts.warnings for r in reports)
    skills = [r for r in reports if r.is_skill]
    status = "ok" if errors == 0 else "failed"
    summary = (
        f"checked {plural(len(skills), 'skill')}: {plural(errors, 'error')}, {plural(warnings, 'warning')} ({status})"
    )
    if fmt == "wxa":
        from skillc.wxa.validate_report import write_wxa

        out.status = write_wxa(path, reports)
        return out
    if fmt == "json":
        out.writes.append(Write(json.dumps(_json_report(reports, quiet), ensure_ascii=False, indent=2)))
    elif fmt == "sarif":
        units = [(r.display, _errors_only(r.diagnostics, quiet)) for r in reports]
        out.writes.append(Write(render_sarif(units, tool_version=__version__), nl=False))
    elif fmt == "github":
        for report in reports:
            text = render_github(_errors_only(report.diagnostics, quiet), prefix=report.display)
            out.writes.append(Write(text, nl=False))
        if errors or not quiet:
            out.writes.append(Write(summary, err=True))  # stdout stays workflow commands only
    else:
        for report in reports:
            shown = _errors_only(report.diagnostics, quiet)
            text = render_text(shown, report.sources, prefix=report.display, color=paint_out)
            if text:
                out.writes.append(Write(text, color=paint_out))
        if errors or not quiet:
            out.writes.append(Write(summary))
    out.status = EXIT_ERRORS if errors else EXIT_OK
    return out


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
