"""The command line: check, build, render, call, run, serve, debug, schema and codes (click)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, cast

import click

from skillc import __version__
from skillc.state_cli import STATE_HELP, state_option
from skillc.state_cli import state as state_group
from skillc.state_cli import validate_state_url as _validate_state

if TYPE_CHECKING:
    from collections.abc import Callable

    from skillc.check import CheckReport
    from skillc.diagnostics import Diagnostic
    from skillc.frontend.package import SkillPackage
    from skillc.ir.render import RenderDocument
    from skillc.ir.viewport import Viewport
    from skillc.runtime.config import UserProfile
    from skillc.runtime.contracts import AtomicApiResult
    from skillc.server.runner import Prepared, ServeOptions

# Commands import the phases they need when they run: `skillc --help` and `skillc check` should
# not pay for the evaluator, the backends, QuickJS or the MCP server. Even the diagnostics model
# (pydantic) waits for a command: `--help`, `--version` and shell completion, which runs this
# module on every Tab, then cost little more than click. tests/test_startup.py keeps it so.

EXIT_OK, EXIT_ERRORS, EXIT_USAGE = 0, 1, 2


class _Commands(click.Group):
    """Every command: a state store that cannot be opened (a state dir under a regular file, an
    unreachable PostgreSQL) is one line on stderr and exit 1, not a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except Exception as err:
            from skillc.runtime.state.store import StateError  # only when something failed: start-up stays light

            if not isinstance(err, StateError):
                raise
            click.echo(f"skillc: error: {err}", err=True)
            sys.exit(EXIT_ERRORS)


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, "-V", "--version", prog_name="skillc")
def main() -> None:
    """skillc: check, compile, render, run and serve WeChat Mini Program AI-mode skills.

    A skill is a folder with SKILL.md, mcp.json, index.js, apis/ and components/.
    Start with `skillc check PATH`; every command explains itself with --help.
    """


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


# -- options shared by several commands: one definition, so names, ranges and help agree ---------

# The viewport widths every command accepts (the Viewport model's own bounds).
WIDTH_MIN, WIDTH_MAX = 1, 10000


def _width_option(help_text: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    return click.option(
        "--width", type=click.IntRange(WIDTH_MIN, WIDTH_MAX), default=375, show_default=True, help=help_text
    )


_color_option = click.option(
    "--color",
    "color",
    type=click.Choice(["auto", "always", "never"]),
    default="auto",
    show_default=True,
    help="Colour diagnostics: auto = only on a terminal and when NO_COLOR is not set.",
)

# Identity (docs/security.md, "Identity"): who the caller is and how long a wx.login lasts.
_anonymous_option = click.option(
    "--anonymous",
    is_flag=True,
    help="Call as nobody signed in (user DID did:skillc:anonymous): APIs at risk L1 and above are refused "
    "(RUN060), wx.login fails and wx.request carries no identity. Not with --user.",
)
_login_ttl_option = click.option(
    "--login-ttl",
    "login_ttl_s",
    type=click.FloatRange(0, 366 * 86400, min_open=True),
    default=None,
    help="Seconds a capability token from wx.login stays valid [7200].",
)


def _caller_did(user_did: str | None, anonymous: bool) -> str | None:
    """The user DID of ``--user`` / ``--anonymous`` (None: the configured one); both is a usage error."""
    from skillc.runtime.contracts import ANONYMOUS_USER_DID

    if anonymous and user_did is not None:
        click.echo("skillc: error: --anonymous and --user cannot be given together (pick one caller)", err=True)
        sys.exit(EXIT_USAGE)
    return ANONYMOUS_USER_DID if anonymous else user_did


# The user profile the wx stand-ins answer from (docs/runtime.md, "Stand-ins for WeChat-only APIs").
_profile_option = click.option(
    "--profile",
    "profile_path",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="A JSON file of the user's phone, addresses and location: what wx.getPhoneNumber, wx.chooseAddress, "
    "wx.getLocation and wx.getFuzzyLocation answer (each with the user's consent at L4). Without it they fail.",
)


def _profile(path: Path | None) -> UserProfile | None:
    """The ``--profile`` file as a UserProfile (None without one); a bad file is a usage error."""
    if path is None:
        return None
    from skillc.diagnostics import render_text
    from skillc.runtime.host.profile import read_profile

    profile, problems, text = read_profile(path)
    if profile is None:
        _echo(render_text(problems, {str(path): text}), err=True, nl=False)
        click.echo(f"skillc: error: {path} is not a usable user profile", err=True)
        sys.exit(EXIT_USAGE)
    return profile


def _json_alias(fmt: str, as_json: bool) -> str:
    """``--json`` is kept as the short form of ``--format json``."""
    return "json" if as_json else fmt


def use_color(choice: str, stream: TextIO | None = None) -> bool:
    """Whether to colour: --color always/never decide; auto honours NO_COLOR (https://no-color.org:
    any non-empty value) and colours only a terminal."""
    if choice == "always":
        return True
    if choice == "never" or os.environ.get("NO_COLOR"):
        return False
    out = stream if stream is not None else sys.stdout
    try:
        return out.isatty()
    except (AttributeError, ValueError):
        return False


def _errors_only(diags: list[Diagnostic], quiet: bool) -> list[Diagnostic]:
    from skillc.diagnostics import Severity

    return [d for d in diags if d.severity is Severity.ERROR] if quiet else diags


@main.command()
@click.argument("path", type=click.Path(path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "github", "sarif"]),
    default="text",
    show_default=True,
    help="text: compiler-style lines with source excerpts; json: one machine-readable document; "
    "github: GitHub Actions annotations (::error file=...,line=...::message); sarif: a SARIF 2.1.0 log.",
)
@_color_option
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
        f"checked {_plural(len(skills), 'skill')}: {_plural(errors, 'error')}, "
        f"{_plural(warnings, 'warning')} ({status})"
    )
    if fmt == "json":
        click.echo(json.dumps(_json_report(reports, quiet), ensure_ascii=False, indent=2))
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


def _one_line(err: Exception) -> str:
    """A pydantic ValidationError as one line (``width: Input should be ...``), else str(err)."""
    from pydantic import ValidationError

    if isinstance(err, ValidationError):
        first = err.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"])
        return f"{where}: {first['msg']}" if where else first["msg"]
    return str(err).splitlines()[0] if str(err) else type(err).__name__


def _viewports(specs: tuple[str, ...]) -> tuple[Viewport, ...]:
    from pydantic import ValidationError

    from skillc.build import parse_viewport

    out = []
    for spec in specs:
        try:
            out.append(parse_viewport(spec))
        except ValidationError as err:
            raise click.BadParameter(f"{spec!r}: {_one_line(err)}", param_hint="'--viewport'") from None
        except ValueError as err:
            raise click.BadParameter(str(err), param_hint="'--viewport'") from None
    return tuple(out)


def _args_json(text: str, option: str = "--args") -> object:
    """``--args`` as JSON: bounded in depth before it is parsed (json.loads recurses)."""
    return _bounded_json(text, f"{option} is too deeply nested", f"{option} is not valid JSON: {{err}}")


def _json_text(text: str, label: str) -> object:
    """A JSON data file: bounded in depth before it is parsed; a one-line error otherwise."""
    return _bounded_json(text, f"{label} is too deeply nested", f"{label}: not JSON ({{err}})")


def _bounded_json(text: str, too_deep_prefix: str, not_json: str) -> object:
    from skillc.runtime.api.values import DEPTH_LIMIT, json_depth, too_deep

    depth = json_depth(text)
    if depth > DEPTH_LIMIT:
        click.echo(f"skillc: error: {too_deep_prefix}: {too_deep(depth)}", err=True)
        sys.exit(EXIT_USAGE)
    try:
        return json.loads(text)
    except ValueError as err:
        click.echo("skillc: error: " + not_json.format(err=err), err=True)
        sys.exit(EXIT_USAGE)


def _echo(text: str, *, err: bool = False, nl: bool = True, color: bool = False) -> None:
    """click.echo of text that is valid UTF-8: lone surrogates become U+FFFD (docs/security.md)."""
    from skillc.runtime.api.values import clean_text

    click.echo(clean_text(text)[0], err=err, nl=nl, color=color)


def _approve_hint(diag: Diagnostic) -> Diagnostic:
    """The runtime's refusal of an L3/L4 call (RUN019) says how to approve it from this command."""
    if diag.code != "RUN019":
        return diag
    hint = "pass --approve to approve this call as the user would"
    return diag.model_copy(update={"hint": f"{diag.hint}; {hint}" if diag.hint else hint})


def _skills_of(path: Path) -> list[Path]:
    """The skill folders PATH names: itself, or those a project's app.json lists."""
    from skillc.diagnostics import DiagnosticSink, render_text
    from skillc.frontend.project import load_project

    sink = DiagnosticSink()
    project = load_project(path, sink)
    if project is None:
        return [path]
    if not project.skills:
        sources = {"app.json": project.app_json or ""}
        click.echo(render_text(sink, sources, prefix=str(project.root)), err=True, nl=False)
        sys.exit(EXIT_USAGE)
    return [s.path for s in project.skills]


@main.command()
@click.argument("path", type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--out",
    "out_dir",
    type=click.Path(path_type=Path),
    default=Path("build"),
    show_default=True,
    help="Output folder; each skill builds into OUT/<skill name>/.",
)
@click.option("--backend", "backends", multiple=True, help="Backends to render with (repeatable) [all built-ins].")
@click.option(
    "--viewport",
    "viewports",
    multiple=True,
    metavar="WIDTH[:SCHEME]",
    help="Viewports to render previews at (repeatable) [375:light, 414:dark].",
)
@click.option(
    "--data",
    "data",
    multiple=True,
    metavar="COMPONENT=FILE",
    help="Also render COMPONENT with the JSON data in FILE (repeatable).",
)
@_color_option
def build(
    path: Path,
    out_dir: Path,
    backends: tuple[str, ...],
    viewports: tuple[str, ...],
    data: tuple[str, ...],
    color: str,
) -> None:
    """Compile a skill's components and render their preview data.

    For each component: the template IR (template.json) and compiled stylesheet
    (stylesheet.json), and for each data file (components/<name>/preview.json and --data) and
    viewport, the output of every backend under render/. A build-manifest.json records the
    content hash of every input and output; unchanged components are not recompiled.

    Exit status: 0 built (warnings allowed), 1 errors, 2 usage error or not a skill.

    \b
    Example:
      skillc build examples/coffee-skill -o build
      skillc build examples/coffee-skill --backend html --viewport 390:dark
    """
    from skillc.build import BuildOptions, build_skill
    from skillc.diagnostics import render_text

    options = BuildOptions(out_dir=out_dir)
    if backends:
        options.backends = backends
    if viewports:
        options.viewports = _viewports(viewports)
    for spec in data:
        component, sep, file = spec.partition("=")
        if not sep or not Path(file).is_file():
            raise click.BadParameter(f"{spec!r}: expected COMPONENT=FILE with an existing file", param_hint="--data")
        options.data.setdefault(component, []).append(Path(file))
    skills = _skills_of(path)
    errors = 0
    paint = use_color(color)

    def progress(msg: str) -> None:
        click.echo(msg, err=True)

    for i, skill in enumerate(skills, 1):
        shown = str(skill)
        click.echo(f"[{i}/{len(skills)}] building {shown}", err=True)
        report = build_skill(skill, options, display=shown, progress=progress)
        if report is None:
            click.echo(f"skillc: error: {shown} is not a skill folder", err=True)
            sys.exit(EXIT_USAGE)
        text = render_text(report.diagnostics, report.sources, prefix=report.display, color=paint)
        if text:
            click.echo(text, color=paint)
        compiled = sum(1 for c in report.components if c.status == "compiled")
        cached = sum(1 for c in report.components if c.status == "cached")
        failed = sum(1 for c in report.components if c.status == "failed")
        errors += report.errors
        click.echo(
            f"built {shown} -> {report.out}: {compiled} compiled, {cached} up to date, {failed} failed; "
            f"{_plural(report.errors, 'error')}"
        )
    sys.exit(EXIT_ERRORS if errors else EXIT_OK)


@main.command()
@click.argument("skill", type=click.Path(path_type=Path))
@click.argument("component")
@click.option(
    "--data",
    "data_file",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    help="TEMPLATE DATA: a JSON object the WXML's {{ }} read directly (the card's `data` after "
    "setData); the card's JavaScript does not run, so a 2d canvas stays undrawn "
    "[components/<COMPONENT>/preview.json].",
)
@click.option(
    "--result",
    "result_file",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    help="AN API RESULT: an AtomicApiResult {content, structuredContent?, _meta?, isError?} as an API "
    "returns it; the card's index.js runs, gets it through its Input and Result notifications, and "
    "what it setData()s is rendered.",
)
@click.option(
    "--args",
    "args_json",
    default=None,
    metavar="JSON",
    help="With --result: the API arguments the card's Input notification receives, as a JSON object [{}].",
)
@click.option("--backend", default="html", show_default=True, help="json, cardspec, html, or a plug-in's name.")
@_width_option("Viewport width in px (750rpx).")
@click.option("--height", type=click.IntRange(1, 100000), default=667, show_default=True, help="Viewport height.")
@click.option("--color-scheme", type=click.Choice(["light", "dark"]), default="light", show_default=True)
def render(
    skill: Path,
    component: str,
    data_file: Path | None,
    result_file: Path | None,
    args_json: str | None,
    backend: str,
    width: int,
    height: int,
    color_scheme: str,
) -> None:
    """Render one component and print the result.

    Two inputs, never both: --data FILE is template data (what the WXML binds, no JavaScript
    runs); --result FILE is what an API returned, delivered to the card as at run time (created,
    attached, then the Input and Result notifications), so the card's own code builds its data.
    With neither, components/<COMPONENT>/preview.json is template data.

    Exit status: 0 rendered, 1 the card failed (compile errors, its JavaScript threw),
    2 usage error (bad file, not a skill, no such component).

    \b
    Example:
      skillc render examples/coffee-skill drink-list --backend json
      skillc render examples/coffee-skill drink-list --result search-result.json
      skillc render examples/coffee-skill payment-result --data paid.json --width 414 --color-scheme dark
    """
    if data_file is not None and result_file is not None:
        click.echo(
            "skillc: error: --data and --result cannot be used together: --data is template data, "
            "--result is an API result the card's JavaScript turns into data; give one",
            err=True,
        )
        sys.exit(EXIT_USAGE)
    if args_json is not None and result_file is None:
        click.echo("skillc: error: --args is the Input of a card rendered from --result; give --result too", err=True)
        sys.exit(EXIT_USAGE)
    from skillc.backends.base import RenderOptions
    from skillc.backends.registry import find_backend
    from skillc.diagnostics import DiagnosticSink, render_text
    from skillc.frontend.package import load_skill
    from skillc.ir.component import compile_component
    from skillc.ir.evaluate import CardRenderer
    from skillc.ir.viewport import Viewport

    sink = DiagnosticSink()
    pkg = load_skill(skill, sink)
    if pkg is None:
        click.echo(render_text(sink, prefix=str(skill)), err=True, nl=False)
        sys.exit(EXIT_USAGE)
    if component not in pkg.components:
        names = ", ".join(sorted(pkg.components)) or "none"
        click.echo(f"skillc: error: no component {component!r} in {skill} (components: {names})", err=True)
        sys.exit(EXIT_USAGE)
    chosen = find_backend(backend, sink)
    if chosen is None:
        click.echo(render_text([d for d in sink if d.code.startswith("RND")]), err=True, nl=False)
        sys.exit(EXIT_USAGE)
    local = DiagnosticSink()
    compiled = compile_component(pkg, component, local)
    values: object = {}  # with --result the card's JavaScript makes its data, and preview.json is not read
    preview = f"components/{component}/preview.json"
    if data_file is not None:
        try:
            data_text = data_file.read_text("utf-8")
        except (OSError, ValueError) as err:
            click.echo(f"skillc: error: {data_file}: cannot be read ({err})", err=True)
            sys.exit(EXIT_USAGE)
        values = _json_text(data_text, str(data_file))
    elif result_file is None and preview in pkg.sources:
        values = _json_text(pkg.sources[preview], preview)
    if not isinstance(values, dict):
        click.echo("skillc: error: the data must be a JSON object", err=True)
        sys.exit(EXIT_USAGE)
    if compiled is None or local.has_errors:
        click.echo(render_text(local, pkg.sources, prefix=str(skill)), err=True, nl=False)
        sys.exit(EXIT_ERRORS)
    viewport = Viewport(width=width, height=height, color_scheme=color_scheme)  # type: ignore[arg-type]
    if result_file is not None:
        api_result = _read_result(result_file)
        arguments = _args_json(args_json, "--args") if args_json is not None else {}
        if not isinstance(arguments, dict):
            click.echo("skillc: error: --args must be a JSON object", err=True)
            sys.exit(EXIT_USAGE)
        mounted, card_diags = _mount_result(pkg, component, api_result, arguments, viewport)
        shown = render_text(card_diags, pkg.sources, prefix=str(skill))
        if shown:
            click.echo(shown, err=True, nl=False)
        if mounted is None:
            click.echo(f"skillc: error: {component} could not be shown from {result_file}", err=True)
            sys.exit(EXIT_ERRORS)
        out = chosen.render(mounted, options=RenderOptions(title=f"{pkg.name} / {component}"))
        click.echo(out, nl=not out.endswith("\n"))
        return
    doc = CardRenderer(compiled, viewport, sink=local).render(values)
    warnings = render_text(local, pkg.sources, prefix=str(skill))
    if warnings:
        click.echo(warnings, err=True, nl=False)
    out = chosen.render(doc, options=RenderOptions(title=f"{pkg.name} / {component}"))
    click.echo(out, nl=not out.endswith("\n"))


def _json_kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


_RESULT_FIELDS = ("isError", "content", "structuredContent", "_meta", "handoff", "apiCalls")


def _result_problem(raw: object) -> str | None:
    """What keeps ``raw`` from being an AtomicApiResult, naming the field; None when it is one."""
    if not isinstance(raw, dict):
        return f"expected a JSON object {{content, structuredContent?, _meta?, isError?}}, got {_json_kind(raw)}"
    if "content" not in raw:
        problem = 'the field "content" is missing (an array of {"type": "text", "text": ...} blocks)'
        if not any(key in raw for key in _RESULT_FIELDS):
            problem += "; this looks like template data: render it with --data"
        return problem
    content = raw["content"]
    if not isinstance(content, list):
        return f'the field "content" must be an array, got {_json_kind(content)}'
    for i, block in enumerate(content):
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            return f'the field "content[{i}]" must be an object with a string "type"'
        if block["type"] == "text" and not isinstance(block.get("text"), str):
            return f'the field "content[{i}].text" must be a string'
    for key in ("structuredContent", "_meta"):
        if raw.get(key) is not None and not isinstance(raw[key], dict):
            return f'the field "{key}" must be an object, got {_json_kind(raw[key])}'
    if "isError" in raw and not isinstance(raw["isError"], bool):
        return f'the field "isError" must be true or false, got {_json_kind(raw["isError"])}'
    unknown = [key for key in raw if key not in _RESULT_FIELDS]
    if unknown:
        return f'unknown field "{unknown[0]}" (an AtomicApiResult has isError, content, structuredContent, _meta)'
    return None


def _read_result(path: Path) -> AtomicApiResult:
    """``render --result FILE``: the file as an AtomicApiResult, or a one-line usage error naming the field."""
    from skillc.runtime.api.result import normalise
    from skillc.runtime.contracts import AtomicApiResult

    try:
        text = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as err:
        click.echo(f"skillc: error: {path}: cannot be read ({_one_line(err)})", err=True)
        sys.exit(EXIT_USAGE)
    raw = _json_text(text, str(path))
    problem = _result_problem(raw)
    if problem is None:
        # The runtime's own rules (200 KB per part) apply to a recorded result as to a returned one.
        checked = normalise(str(path), raw)
        problem = checked.diagnostics[0].message if checked.diagnostics else None
    if problem is not None:
        click.echo(f"skillc: error: {path} is not an AtomicApiResult: {problem}", err=True)
        sys.exit(EXIT_USAGE)
    return AtomicApiResult.model_validate(raw)


def _mount_result(
    pkg: SkillPackage,
    component: str,
    result: AtomicApiResult,
    arguments: dict[str, Any],
    viewport: Viewport,
) -> tuple[RenderDocument | None, list[Diagnostic]]:
    """Mount the card the way a call of its API would, with ``result`` standing in for the call:
    the card host compiles it, runs its index.js (created, attached, Input, Result) and renders
    the data the card set. Returns the document, or None when the card fell back."""
    import asyncio
    import tempfile

    from skillc.runtime.api.api_runtime import ApiRuntime
    from skillc.runtime.cards.card_host import CardHost
    from skillc.runtime.cards.card_models import CallOutcome
    from skillc.runtime.config import RuntimeConfig

    path = f"components/{component}/index"
    apis = pkg.manifest.apis if pkg.manifest else []
    api = next((a.name for a in apis if a.component_path == path), None)
    if api is None:
        click.echo(
            f"skillc: error: no API in mcp.json shows {path} (_meta.ui.componentPath), so no result "
            "reaches it; render it with --data",
            err=True,
        )
        sys.exit(EXIT_USAGE)
    if result.is_error:
        click.echo("skillc: error: the result has isError: true; WeChat shows no card for an error result", err=True)
        sys.exit(EXIT_ERRORS)

    async def mount(runtime: ApiRuntime) -> CallOutcome:
        host = CardHost(runtime, viewport=viewport, card_ids=lambda: "card-1")
        try:
            return await host.show(api, result, arguments)
        finally:
            await host.close()

    with tempfile.TemporaryDirectory(prefix="skillc-render-") as tmp:
        runtime = ApiRuntime(pkg, RuntimeConfig(state_dir=Path(tmp)))
        try:
            outcome = asyncio.run(mount(runtime))
        finally:
            runtime.close()
    diags = [*runtime.diagnostics, *outcome.api.diagnostics, *outcome.diagnostics]
    return (outcome.card.document if outcome.card is not None else None), diags


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
@_anonymous_option
@click.option(
    "--token",
    "capability_token",
    default=None,
    help="A capability token (the code of an earlier wx.login) the caller presents: wx.checkSession validates it "
    "and wx.request carries it while it is valid.",
)
@_login_ttl_option
@click.option("--session", "session_id", default=None, help="The session id wx.modelContext.getSessionId returns.")
@click.option("--approve", is_flag=True, help="Approve an L3/L4 API for this call (otherwise it is refused).")
@_profile_option
@click.option(
    "--payment",
    type=click.Choice(["success", "fail", "cancel"]),
    default="success",
    show_default=True,
    help="How the test payment provider answers the call's wx.requestPayment (no money moves).",
)
@click.option(
    "--timeout",
    "timeout_s",
    type=click.FloatRange(0, 86400, min_open=True),
    default=None,
    help="Seconds for middleware + handler [300].",
)
@click.option("--allow-host", "allow_hosts", multiple=True, help="A host wx.request may reach (repeatable).")
@click.option(
    "--state-dir",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Where storage and the audit log live [$SKILLC_STATE_DIR or ~/.local/state/skillc].",
)
@state_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="text: the result, console and diagnostics for a reader; json: the whole outcome "
    "(result, console, diagnostics, audit).",
)
@click.option("--json", "as_json", is_flag=True, help="Same as --format json.")
@_color_option
def call(
    skill: Path,
    api: str,
    args_json: str,
    user_did: str | None,
    anonymous: bool,
    capability_token: str | None,
    login_ttl_s: float | None,
    session_id: str | None,
    approve: bool,
    profile_path: Path | None,
    payment: str,
    timeout_s: float | None,
    allow_hosts: tuple[str, ...],
    state_dir: Path | None,
    state_url: str | None,
    fmt: str,
    as_json: bool,
    color: str,
) -> None:
    """Call one atomic API of a skill, as the AI-mode runtime would, and print the result.

    The skill's index.js runs in a fresh sandboxed QuickJS context; the arguments are checked
    against the API's inputSchema (defaults filled in), and an argument whose schema says
    "format": "image" or "file" (a local upload path) answers unsupported_format; APIs at risk
    level L3/L4 need --approve; L2+ calls are written to the audit log. Prints the
    AtomicApiResult (_meta, the card's part, apart) and the captured console.
    wx.requestPayment is answered by the test payment provider (--payment); wx.getPhoneNumber,
    chooseAddress, getLocation and getFuzzyLocation by --profile; each only with --approve.

    Exit status: 0 result ok, 1 isError result, 2 usage error (not a skill, an API mcp.json
    does not declare, bad --args, a bad --profile file).

    \b
    Example:
      skillc call examples/coffee-skill searchDrinks --args '{"keyword": "latte"}'
      skillc call examples/coffee-skill confirmOrder --args '{"drinkId": "d01"}' --approve --format json
      skillc call examples/coffee-skill payOrder --args '{"orderId": "MB000001"}' --approve --payment cancel
    """
    from skillc.diagnostics import DiagnosticSink, render_text
    from skillc.frontend.package import load_skill
    from skillc.runtime.api.api_runtime import ApiRuntime
    from skillc.runtime.api.report import render_outcome
    from skillc.runtime.config import RuntimeConfig, default_state_dir
    from skillc.runtime.host.payment import PaymentOutcome, ScriptedPaymentProvider

    arguments = _args_json(args_json)
    user_did = _caller_did(user_did, anonymous)
    profile = _profile(profile_path)
    sink = DiagnosticSink()
    pkg = load_skill(skill, sink)
    if pkg is None or pkg.manifest is None:
        click.echo(render_text(sink, pkg.sources if pkg else {}, prefix=str(skill)), err=True, nl=False)
        click.echo(f"skillc: error: {skill} cannot be called: it has no usable mcp.json", err=True)
        sys.exit(EXIT_USAGE)
    if pkg.manifest.api(api) is None:
        names = ", ".join(a.name for a in pkg.manifest.apis) or "none"
        click.echo(f"skillc: error: {skill} declares no API named {api!r} in mcp.json (APIs: {names})", err=True)
        sys.exit(EXIT_USAGE)
    config = RuntimeConfig(
        state_dir=state_dir or default_state_dir(), state_url=state_url, allowed_hosts=allow_hosts, profile=profile
    )
    if login_ttl_s is not None:
        config = config.model_copy(update={"login_ttl_s": login_ttl_s})
    payments = ScriptedPaymentProvider(cast(PaymentOutcome, payment))
    runtime = ApiRuntime(pkg, config, approver=(lambda _request: True) if approve else None, payments=payments)
    try:
        context = runtime.context(api, user_did=user_did, session_id=session_id, capability_token=capability_token)
        outcome = runtime.call_blocking(api, arguments, context, timeout_s=timeout_s)
    finally:
        runtime.close()
    if not approve:
        outcome.diagnostics = [_approve_hint(d) for d in outcome.diagnostics]
    if _json_alias(fmt, as_json) == "json":
        _echo(json.dumps(outcome.wire(), ensure_ascii=False, indent=2))
    else:
        # The diagnostics are located at the skill (its path), not the bare file names the runtime has.
        paint = use_color(color)
        body = render_outcome(outcome.model_copy(update={"diagnostics": []}), pkg.sources)
        diags = render_text(outcome.diagnostics, pkg.sources, prefix=str(skill), color=paint)
        _echo(body + diags, nl=False, color=paint)
    code = EXIT_ERRORS if outcome.result.is_error else EXIT_OK
    if runtime.overrunning:
        # A worker still runs a native built-in past the deadline; exiting normally would join it.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


@main.command()
@click.argument("skill", type=click.Path(path_type=Path))
@click.option(
    "--script",
    "script_path",
    type=click.Path(path_type=Path, dir_okay=False),
    required=True,
    help="The flow: a JSON file of steps (call, tap, follow, expire, wait, visibility); see docs/components.md.",
)
@_width_option("Viewport width in px (750rpx).")
@click.option("--user", "user_did", default=None, help="The user DID (storage and cards are scoped by it).")
@_anonymous_option
@_login_ttl_option
@click.option("--allow-host", "allow_hosts", multiple=True, help="A host wx.request may reach (repeatable).")
@_profile_option
@click.option(
    "--state-dir",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Where storage, audit and card state live [a fresh temporary folder, so replays repeat].",
)
@state_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="text: each step for a reader; json: every step with results, Render IR and patches.",
)
@click.option("--json", "as_json", is_flag=True, help="Same as --format json.")
def run(
    skill: Path,
    script_path: Path,
    width: int,
    user_did: str | None,
    anonymous: bool,
    login_ttl_s: float | None,
    allow_hosts: tuple[str, ...],
    profile_path: Path | None,
    state_dir: Path | None,
    state_url: str | None,
    fmt: str,
    as_json: bool,
) -> None:
    """Replay a scripted conversation: API calls, taps on card nodes, follow-ups, approvals.

    Each step prints the API result, a compact outline of the card's Render IR, the patches a
    tap produced and the actions the card asked for (follow-up messages, api/calls, expiry,
    wx.previewMedia and wx.makePhoneCall); a map or canvas shows its static preview.
    A card that fails to render is replaced by the generic CardSpec fallback card. A call or
    follow step's "payment" ("success", "fail", "cancel") is how the test payment provider answers
    the wx.requestPayment calls of that step; --profile supplies the user's phone, addresses and
    location. Time is virtual: the timers of dynamic cards (scope.dynamic) fire only in a
    {"wait": MS} step, which prints each callback's patches; {"visibility": "hidden"} pauses them.

    Exit status: 0 every step ran, 1 a step failed (no such node, an error diagnostic),
    2 usage error (bad script, not a skill, a bad --profile file).

    \b
    Example:
      skillc run examples/coffee-skill --script examples/coffee-skill/flows/order.json
      skillc run examples/coffee-skill --script examples/coffee-skill/flows/order-payment-fails.json
    """
    import asyncio
    import itertools
    import tempfile

    from skillc.backends.cardspec_fallback import fallback_card
    from skillc.diagnostics import DiagnosticSink, render_text
    from skillc.frontend.package import load_skill
    from skillc.ir.viewport import Viewport
    from skillc.runtime.api.api_runtime import ApiRuntime
    from skillc.runtime.cards.card_host import CardHost
    from skillc.runtime.cards.card_models import FallbackRequest
    from skillc.runtime.cards.card_timers import VirtualClock
    from skillc.runtime.config import RuntimeConfig
    from skillc.runtime.flows.flow import FlowRunner, StepRecord, load_flow
    from skillc.runtime.flows.report import render_flow

    try:
        script_text = script_path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as err:
        click.echo(f"skillc: error: cannot read the flow script {script_path}: {_one_line(err)}", err=True)
        sys.exit(EXIT_USAGE)
    script, problems = load_flow(script_text, str(script_path))
    if script is None:
        _echo(render_text(problems, {str(script_path): script_text}), err=True, nl=False)
        click.echo(f"skillc: error: {script_path} is not a usable flow script", err=True)
        sys.exit(EXIT_USAGE)
    profile = _profile(profile_path)
    sink = DiagnosticSink()
    pkg = load_skill(skill, sink)
    if pkg is None or pkg.manifest is None:
        click.echo(render_text(sink, pkg.sources if pkg else {}, prefix=str(skill)), err=True, nl=False)
        click.echo(f"skillc: error: {skill} cannot run: it has no usable mcp.json", err=True)
        sys.exit(EXIT_USAGE)

    def build_fallback(request: FallbackRequest) -> dict[str, object]:
        return fallback_card(request.structured_content, title=request.title, text=request.text)

    user_did = _caller_did(user_did, anonymous)

    async def replay(state: Path) -> list[StepRecord]:
        config = RuntimeConfig(state_dir=state, state_url=state_url, allowed_hosts=allow_hosts, profile=profile)
        if login_ttl_s is not None:
            config = config.model_copy(update={"login_ttl_s": login_ttl_s})
        runtime = ApiRuntime(pkg, config)
        counter = itertools.count(1)
        # Dynamic cards' timers run on the replay's own clock: only wait steps move it.
        clock = VirtualClock()
        host = CardHost(runtime, viewport=Viewport(width=width), card_ids=lambda: f"card-{next(counter)}", clock=clock)
        try:
            context = runtime.context(user_did=user_did, session_id="flow-" + script_path.stem)
            return await FlowRunner(host, context, build_fallback).run(script)
        finally:
            await host.close()
            runtime.close()

    with tempfile.TemporaryDirectory(prefix="skillc-run-") as tmp:
        records = asyncio.run(replay(state_dir or Path(tmp)))
    if _json_alias(fmt, as_json) == "json":
        _echo(json.dumps([r.wire() for r in records], ensure_ascii=False, indent=2))
    else:
        _echo(render_flow(records, pkg.sources), nl=False)
    sys.exit(EXIT_ERRORS if any(r.failed for r in records) else EXIT_OK)


def _probe_port(host: str, port: int) -> int:
    """The port a server will get on ``host`` (``--port 0``: a free one), or a usage error when it is
    busy, said before anything is served. (Handing uvicorn the bound socket instead cost ~40 ms per
    request here.)"""
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as err:
            click.echo(f"skillc: error: cannot listen on {host}:{port}: {err.strerror or err}", err=True)
            sys.exit(EXIT_USAGE)
        return int(probe.getsockname()[1])


def _server_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """PATHS, --host, --port and --state-dir: the same for every command that starts a server."""
    for option in reversed(
        (
            click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path)),
            click.option("--host", default="127.0.0.1", show_default=True, help="The interface to listen on."),
            click.option(
                "--port",
                type=click.IntRange(0, 65535),
                default=8765,
                show_default=True,
                help="The port (0 picks a free one).",
            ),
            click.option(
                "--state-dir",
                type=click.Path(path_type=Path, file_okay=False),
                default=None,
                help="Where storage, cards and the audit log live [$SKILLC_STATE_DIR or ~/.local/state/skillc].",
            ),
            click.option(
                "--state", "state_url", default=None, metavar="URL", callback=_validate_state, help=STATE_HELP
            ),
        )
    ):
        f = option(f)
    return f


# The options that only mean something to the HTTP transport: given with --stdio, a usage error.
_HTTP_ONLY = {
    "host": "--host",
    "port": "--port",
    "dns_rebinding_protection": "--[no-]dns-rebinding-protection",
    "allowed_hosts": "--allowed-host",
    "allowed_origins": "--allowed-origin",
    "workers": "--workers",
    "graceful_timeout_s": "--graceful-timeout",
}


def _given(ctx: click.Context, name: str) -> bool:
    from click.core import ParameterSource

    return ctx.get_parameter_source(name) in (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT)


@main.command()
@_server_options
@click.option(
    "--stdio",
    is_flag=True,
    help="Serve over stdin/stdout (the MCP stdio transport) instead of HTTP: JSON-RPC on stdout, "
    "every other line on stderr; closing stdin stops the server. Not with --host/--port.",
)
@click.option("--approve-all", is_flag=True, help="Approve every L3/L4 call without asking (tests, trusted setups).")
@click.option(
    "--approve",
    "approve",
    multiple=True,
    help="A tool (its tool name, or SKILL/API) approved without asking (repeatable).",
)
@click.option("--no-elicit", is_flag=True, help="Never ask for consent by elicitation; refuse L3/L4 calls instead.")
@click.option(
    "--timeout",
    "timeout_s",
    type=click.FloatRange(0, 86400, min_open=True),
    default=None,
    help="Seconds per API call [300].",
)
@click.option("--allow-host", "allow_hosts", multiple=True, help="A host wx.request may reach (repeatable).")
@_profile_option
@click.option("--user", "user_did", default=None, help="The user DID every call is made as [did:example:user].")
@_anonymous_option
@_login_ttl_option
@_width_option("The card width in px (750rpx).")
@click.option(
    "--strict-output",
    is_flag=True,
    help="Advertise each tool's outputSchema and enforce it: a result that breaks it becomes an isError result. "
    "Without it, outputSchema is not advertised and a mismatch is a warning in the result's _meta and in the log.",
)
@click.option(
    "--no-ui-control",
    is_flag=True,
    help="Do not serve the ui_control__* tools (agents operating cards as their user would); "
    "the tool listing then says disabled_by_policy.",
)
@click.option(
    "--max-events",
    type=click.IntRange(1, 1_000_000),
    default=1000,
    show_default=True,
    help="Events kept per session in events://session/<id> (the oldest are dropped).",
)
@click.option(
    "--max-event-bytes",
    type=click.IntRange(64, 1_048_576),
    default=4096,
    show_default=True,
    help="UTF-8 bytes of one event message (longer ones are cut, with a truncation record).",
)
@click.option(
    "--log-format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="The request log on stderr, one line per request: readable text, or one JSON object per line.",
)
@click.option(
    "--dns-rebinding-protection/--no-dns-rebinding-protection",
    default=True,
    show_default=True,
    help="Accept only loopback Host and Origin headers (plus --allowed-host / --allowed-origin).",
)
@click.option("--allowed-host", "allowed_hosts", multiple=True, help="Another accepted Host header, e.g. my.box:8765.")
@click.option("--allowed-origin", "allowed_origins", multiple=True, help="Another accepted Origin, e.g. https://x.y.")
@click.option(
    "--workers",
    type=click.IntRange(1, 256),
    default=1,
    show_default=True,
    help="Worker processes on the one port, each with its own QuickJS runtimes, sharing the state store; "
    "a worker that dies is restarted. HTTP only. See docs/deploy.md.",
)
@click.option(
    "--graceful-timeout",
    "graceful_timeout_s",
    type=click.FloatRange(0, 3600),
    default=30.0,
    show_default=True,
    help="On SIGTERM / Ctrl-C: stop accepting, give running calls this many seconds to finish, then exit 0.",
)
@click.pass_context
def serve(
    ctx: click.Context,
    paths: tuple[Path, ...],
    host: str,
    port: int,
    state_dir: Path | None,
    state_url: str | None,
    stdio: bool,
    approve_all: bool,
    approve: tuple[str, ...],
    no_elicit: bool,
    timeout_s: float | None,
    allow_hosts: tuple[str, ...],
    profile_path: Path | None,
    user_did: str | None,
    anonymous: bool,
    login_ttl_s: float | None,
    width: int,
    strict_output: bool,
    no_ui_control: bool,
    max_events: int,
    max_event_bytes: int,
    log_format: str,
    dns_rebinding_protection: bool,
    allowed_hosts: tuple[str, ...],
    allowed_origins: tuple[str, ...],
    workers: int,
    graceful_timeout_s: float,
) -> None:
    """Serve skills as an MCP server: APIs become tools, cards become MCP Apps.

    PATHS are skill folders or mini-program project folders. The server speaks Streamable HTTP
    (stateless, JSON responses) at http://HOST:PORT/mcp, both the 2026-07-28 protocol and the
    2025 initialize handshake; a browser opening that URL (or /) gets a page that says how to
    connect. With --stdio it speaks the MCP stdio transport instead (for clients that start their
    servers themselves). L3/L4 APIs ask for the user's consent by elicitation where the client
    supports it, else are refused unless approved with --approve / --approve-all. The timers of
    dynamic cards (scope.dynamic) run on their own in real time (at least 1000 ms apart, at most 8
    per card); the card view reads their patches through an app-only tool. Each request is one
    line on stderr (--log-format). See docs/serve.md.

    \b
    Example:
      skillc serve examples/coffee-skill --port 8765
      skillc serve skill-a skill-b --approve confirmOrder --state-dir /tmp/state
      skillc serve --stdio examples/coffee-skill
    """
    caller = _caller_did(user_did, anonymous)
    if stdio:
        given = [flag for name, flag in _HTTP_ONLY.items() if _given(ctx, name)]
        if given:
            click.echo(
                f"skillc: error: {', '.join(given)} {'is an HTTP option' if len(given) == 1 else 'are HTTP options'}"
                " and cannot be given with --stdio (which serves over stdin/stdout)",
                err=True,
            )
            sys.exit(EXIT_USAGE)

    from skillc.server.stdio import guard_stdio

    wire = guard_stdio() if stdio else None  # from here on, only JSON-RPC reaches the real stdout

    from skillc.diagnostics import render_text
    from skillc.ir.viewport import Viewport
    from skillc.runtime.config import RuntimeConfig, default_state_dir
    from skillc.server import request_log
    from skillc.server.consent import ConsentPolicy
    from skillc.server.events import EventLimits
    from skillc.server.runner import ServeOptions, endpoint_url, prepare, serve_foreground

    request_log.configure("json" if log_format == "json" else "text", sys.stderr)
    if not stdio:
        port = _probe_port(host, port)  # a busy port is a usage error before the slow start
    runtime = RuntimeConfig(
        state_dir=state_dir or default_state_dir(),
        state_url=state_url,
        allowed_hosts=allow_hosts,
        profile=_profile(profile_path),
    )
    if timeout_s is not None:
        runtime = runtime.model_copy(update={"timeout_s": timeout_s})
    if caller is not None:
        runtime = runtime.model_copy(update={"identity": runtime.identity.model_copy(update={"user_did": caller})})
    if login_ttl_s is not None:
        runtime = runtime.model_copy(update={"login_ttl_s": login_ttl_s})
    options = ServeOptions(
        paths=paths,
        host=host,
        port=port,
        runtime=runtime,
        consent=ConsentPolicy(approve_all=approve_all, approve=frozenset(approve), elicit=not no_elicit),
        viewport=Viewport(width=width),
        dns_rebinding_protection=dns_rebinding_protection,
        allowed_hosts=allowed_hosts,
        allowed_origins=allowed_origins,
        strict_output=strict_output,
        ui_control=not no_ui_control,
        events=EventLimits(max_events=max_events, max_message_bytes=max_event_bytes),
        graceful_timeout_s=graceful_timeout_s,
    )
    prepared = prepare(options, lambda s: click.echo(f"loading {s.package.name} ({s.display})...", err=True))
    if prepared.diagnostics:
        click.echo(render_text(prepared.diagnostics), err=True, nl=False)
    catalogue = prepared.server.catalogue
    if not catalogue.apis:
        click.echo("skillc: error: no skill could be served", err=True)
        sys.exit(EXIT_USAGE)
    unknown = options.consent.unknown(list(catalogue.apis.values())) if options.consent else []
    if unknown:
        # An --approve that names nothing is a typo or an API two skills share: never guess.
        names = ", ".join(unknown)
        click.echo(
            f"skillc: error: --approve {names}: no served tool has that name "
            "(use a tool name from the list below, or SKILL/API)",
            err=True,
        )
        for a in catalogue.apis.values():
            click.echo(f"  {a.tool_name}  ({a.skill}/{a.spec.name})", err=True)
        sys.exit(EXIT_USAGE)
    for skill in catalogue.skills:
        tools = [a.tool_name for a in catalogue.apis.values() if a.skill == skill.package.name]
        click.echo(f"serving {skill.package.name} ({skill.display}): {', '.join(tools)}", err=True)
    if stdio:
        from skillc.server.stdio import STDIO_BANNER, run_stdio

        stopped_by = run_stdio(prepared.server, wire, lambda: click.echo(STDIO_BANNER, err=True))
        sys.exit(EXIT_OK if stopped_by is None else 128 + stopped_by)
    if workers > 1:
        sys.exit(_serve_workers(prepared, options, workers, log_format))
    serve_foreground(prepared, host, port, lambda h, p: click.echo(f"MCP endpoint: {endpoint_url(h, p)}", err=True))


def _serve_workers(prepared: Prepared, options: ServeOptions, workers: int, log_format: str) -> int:
    """``serve --workers N``: the skills loaded here only to check them (the usage errors and the
    listing above); each worker loads its own (skillc.server.supervisor)."""
    import asyncio
    from typing import Literal

    from skillc.server.runner import endpoint_url
    from skillc.server.supervisor import Supervisor, reserve_port
    from skillc.server.worker import worker_options

    asyncio.run(prepared.server.close())
    reservation = reserve_port(options.host, options.port)
    try:
        fmt: Literal["text", "json"] = "json" if log_format == "json" else "text"
        supervisor = Supervisor(worker_options(options, fmt), workers, lambda line: click.echo(line, err=True))
        endpoint = endpoint_url(options.host, options.port)
        return supervisor.run(lambda: click.echo(f"MCP endpoint: {endpoint} ({workers} workers)", err=True))
    finally:
        reservation.close()


@main.command()
@_server_options
@click.option("--approve-all", is_flag=True, help="Approve every L3/L4 call without asking.")
@click.option("--no-browser", is_flag=True, help="Do not launch headless Chromium; open the console URL yourself.")
@click.option(
    "--planner-url",
    default=None,
    help="An OpenAI-compatible chat-completions endpoint (e.g. https://api.openai.com/v1) that decides the "
    "chat box's tool calls [default: the built-in /call and keyword planner].",
)
@click.option("--planner-model", default=None, help="The model to ask at --planner-url.")
@click.option(
    "--planner-key-env",
    default="OPENAI_API_KEY",
    show_default=True,
    help="The environment variable holding --planner-url's API key (none sent when it is unset).",
)
def debug(
    paths: tuple[Path, ...],
    host: str,
    port: int,
    state_dir: Path | None,
    state_url: str | None,
    approve_all: bool,
    no_browser: bool,
    planner_url: str | None,
    planner_model: str | None,
    planner_key_env: str,
) -> None:
    """Debug skills: the skills' MCP, the Debugger MCP and the debug console page on one server.

    PATHS are skill folders or mini-program project folders. Serves the skills' MCP at /mcp (as
    `skillc serve`), the Debugger MCP at /__wsd_mcp and the debug console at /. Headless Chromium
    (the system's `chromium`, through Playwright) opens the console so an agent can use every
    debugger tool; --no-browser leaves that to you. Prints the URLs and the debug descriptor
    (JSON). See docs/debugger.md.

    The chat box (and the Debugger MCP's submit_chat_query) runs a simulated agent turn whose tool
    calls go to /mcp like any host's. By default a deterministic planner decides them: `/call TOOL
    {json}` calls that tool, any other query calls the tool whose name and description share the
    most words with it. --planner-url and --planner-model hand the decisions to a model instead.

    \b
    Examples:
      skillc debug examples/coffee-skill --port 8766
      skillc debug examples/coffee-skill --planner-url https://api.openai.com/v1 --planner-model gpt-4o-mini
    """
    import json
    import os

    from skillc.diagnostics import render_text
    from skillc.runtime.config import RuntimeConfig, default_state_dir
    from skillc.server.consent import ConsentPolicy
    from skillc.server.debugger.console_page import build_debug_server
    from skillc.server.debugger.planner import CommandPlanner, OpenAIPlanner, Planner
    from skillc.server.runner import ServeOptions, prepare

    if (planner_url is None) != (planner_model is None):
        click.echo("skillc: error: --planner-url and --planner-model go together; give both or neither", err=True)
        sys.exit(EXIT_USAGE)
    planner: Planner = CommandPlanner()
    if planner_url is not None and planner_model is not None:
        planner = OpenAIPlanner(planner_url, planner_model, api_key=os.environ.get(planner_key_env) or None)

    options = ServeOptions(
        paths=paths,
        host=host,
        port=port,
        runtime=RuntimeConfig(state_dir=state_dir or default_state_dir(), state_url=state_url),
        consent=ConsentPolicy(approve_all=approve_all),
    )
    prepared = prepare(options)
    if prepared.diagnostics:
        click.echo(render_text(prepared.diagnostics), err=True, nl=False)
    if not prepared.server.catalogue.skills:
        click.echo("skillc: error: no skill could be debugged", err=True)
        sys.exit(EXIT_USAGE)
    port = _probe_port(host, port)
    debug_server = build_debug_server(
        prepared, browser=not no_browser, skill_paths=[str(p) for p in paths], planner=planner
    )
    debug_server.listening(host, port)
    urls = debug_server.descriptor.urls
    click.echo(f"debug console:  {urls.console}", err=True)
    click.echo(f"Debugger MCP:   {urls.debugger_mcp}", err=True)
    click.echo(f"skills MCP:     {urls.skills_mcp}", err=True)
    if not no_browser and debug_server.headless is not None and debug_server.headless.executable() is None:
        click.echo("skillc: warning: no chromium on PATH; open the console URL in a browser", err=True)
    click.echo(json.dumps({"debugDescriptor": debug_server.descriptor.wire()}, ensure_ascii=False))
    debug_server.uvicorn_server(host, port).run()


main.add_command(state_group)
