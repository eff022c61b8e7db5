"""``skillc render``: one component, from template data or from a recorded API result."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from skillc.cli.options import parse_args_json, parse_json_text, storage_option, storage_seed, width_option
from skillc.cli.output import EXIT_ERRORS, EXIT_USAGE, one_line

if TYPE_CHECKING:
    from skillc.diagnostics import Diagnostic
    from skillc.frontend.package import SkillPackage
    from skillc.ir.render import RenderDocument
    from skillc.ir.viewport import Viewport
    from skillc.runtime.contracts import AtomicApiResult, ConsoleEntry


@click.command()
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
    "what it setData()s is rendered; its console lines go to stderr with file:line.",
)
@click.option(
    "--args",
    "args_json",
    default=None,
    metavar="JSON",
    help="With --result: the API arguments the card's Input notification receives, as a JSON object [{}].",
)
@storage_option
@click.option("--backend", default="html", show_default=True, help="json, cardspec, html, or a plug-in's name.")
@width_option("Viewport width in px (750rpx).")
@click.option("--height", type=click.IntRange(1, 100000), default=667, show_default=True, help="Viewport height.")
@click.option("--color-scheme", type=click.Choice(["light", "dark"]), default="light", show_default=True)
def render(
    skill: Path,
    component: str,
    data_file: Path | None,
    result_file: Path | None,
    args_json: str | None,
    storage_path: Path | None,
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
    from skillc.diagnostics import DiagnosticSink, render_blockers, render_text
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
        values = parse_json_text(data_text, str(data_file))
    elif result_file is None and preview in pkg.sources:
        values = parse_json_text(pkg.sources[preview], preview)
    if not isinstance(values, dict):
        click.echo("skillc: error: the data must be a JSON object", err=True)
        sys.exit(EXIT_USAGE)
    # The gate judges, the renderer draws: findings go to stderr beside the card, and only a
    # template that leaves no tree to draw refuses it.
    if compiled is None or render_blockers(local):
        click.echo(render_text(local, pkg.sources, prefix=str(skill)), err=True, nl=False)
        wxml = f"components/{component}/index.wxml"
        click.echo(f"skillc: error: {wxml} does not parse, so there is no card to draw", err=True)
        sys.exit(EXIT_ERRORS)
    viewport = Viewport(width=width, height=height, color_scheme=color_scheme)  # type: ignore[arg-type]
    if result_file is not None:
        api_result = _read_result(result_file)
        arguments = parse_args_json(args_json, "--args") if args_json is not None else {}
        if not isinstance(arguments, dict):
            click.echo("skillc: error: --args must be a JSON object", err=True)
            sys.exit(EXIT_USAGE)
        seed = storage_seed(storage_path)
        mounted, card_diags, console = _mount_result(pkg, component, api_result, arguments, viewport, seed)
        if console:
            # The card's own console.log on mount, on stderr beside the findings, as `call` prints an API's.
            from skillc.runtime.api.report import console_lines

            click.echo("\n".join(["card console:", *console_lines(console, "  ")]), err=True)
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
        click.echo(f"skillc: error: {path}: cannot be read ({one_line(err)})", err=True)
        sys.exit(EXIT_USAGE)
    raw = parse_json_text(text, str(path))
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
    seed: dict[str, Any] | None = None,
) -> tuple[RenderDocument | None, list[Diagnostic], list[ConsoleEntry]]:
    """Mount the card the way a call of its API would, with ``result`` standing in for the call:
    the card host compiles it, runs its index.js (created, attached, Input, Result) and renders
    the data the card set. Returns the document (None when the card fell back), the diagnostics
    and the card VM's console lines."""
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
        runtime = ApiRuntime(pkg, RuntimeConfig(state_dir=Path(tmp), storage_seed=seed))
        try:
            outcome = asyncio.run(mount(runtime))
        finally:
            runtime.close()
    diags = [*runtime.diagnostics, *outcome.api.diagnostics, *outcome.diagnostics, *outcome.findings]
    return (outcome.card.document if outcome.card is not None else None), diags, outcome.console
