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


_SCHEMAS = ("render-ir", "patches")


@main.command()
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


@main.command()
@click.argument("skill", type=click.Path(path_type=Path))
@click.argument("api")
@click.option("--args", "args_json", default="{}", show_default=True, help="The arguments, as a JSON object.")
@click.option("--user", "user_did", default=None, help="The caller's user DID (storage is scoped by it).")
@click.option("--session", "session_id", default=None, help="The session id wx.modelContext.getSessionId returns.")
@click.option("--approve", is_flag=True, help="Approve an L3/L4 API for this call (otherwise it is refused).")
@click.option("--timeout", "timeout_s", type=float, default=None, help="Seconds for middleware + handler [300].")
@click.option("--allow-host", "allow_hosts", multiple=True, help="A host wx.request may reach (repeatable).")
@click.option(
    "--state-dir",
    type=click.Path(path_type=Path),
    default=None,
    help="Where storage and the audit log live [$SKILLC_STATE_DIR or ~/.local/state/skillc].",
)
@click.option("--json", "as_json", is_flag=True, help="Print the whole outcome as JSON (result, console, audit).")
def call(
    skill: Path,
    api: str,
    args_json: str,
    user_did: str | None,
    session_id: str | None,
    approve: bool,
    timeout_s: float | None,
    allow_hosts: tuple[str, ...],
    state_dir: Path | None,
    as_json: bool,
) -> None:
    """Call one atomic API of a skill, as the AI-mode runtime would, and print the result.

    The skill's index.js runs in a fresh sandboxed QuickJS context; the arguments are checked
    against the API's inputSchema (defaults filled in); APIs at risk level L3/L4 need --approve;
    L2+ calls are written to the audit log. Prints the AtomicApiResult and the captured console.

    Exit status: 0 result ok, 1 isError result, 2 usage error or not a skill.

    \b
    Example:
      skillc call examples/coffee-skill searchDrinks --args '{"keyword": "latte"}'
      skillc call examples/coffee-skill confirmOrder --args '{"drinkId": "d01"}' --approve --json
    """
    from skillc.diagnostics import DiagnosticSink
    from skillc.frontend.package import load_skill
    from skillc.runtime.config import RuntimeConfig, default_state_dir
    from skillc.runtime.orchestrator import ApiRuntime
    from skillc.runtime.report import render_outcome

    try:
        arguments = json.loads(args_json)
    except ValueError as err:
        click.echo(f"skillc: error: --args is not valid JSON: {err}", err=True)
        sys.exit(EXIT_USAGE)
    sink = DiagnosticSink()
    pkg = load_skill(skill, sink)
    if pkg is None or pkg.manifest is None:
        click.echo(render_text(sink, pkg.sources if pkg else {}, prefix=str(skill)), err=True, nl=False)
        click.echo(f"skillc: error: {skill} cannot be called: it has no usable mcp.json", err=True)
        sys.exit(EXIT_USAGE)
    config = RuntimeConfig(state_dir=state_dir or default_state_dir(), allowed_hosts=allow_hosts)
    runtime = ApiRuntime(pkg, config, approver=(lambda _request: True) if approve else None)
    try:
        context = runtime.context(api, user_did=user_did, session_id=session_id)
        outcome = runtime.call_blocking(api, arguments, context, timeout_s=timeout_s)
    finally:
        runtime.close()
    if as_json:
        click.echo(json.dumps(outcome.wire(), ensure_ascii=False, indent=2))
    else:
        click.echo(render_outcome(outcome, pkg.sources), nl=False)
    sys.exit(EXIT_ERRORS if outcome.result.is_error else EXIT_OK)
