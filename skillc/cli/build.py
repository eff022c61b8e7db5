"""``skillc build``: compile a skill's components and render their previews into a build folder."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from skillc.cli.options import color_option
from skillc.cli.output import EXIT_ERRORS, EXIT_OK, EXIT_USAGE, one_line, plural, use_color

if TYPE_CHECKING:
    from skillc.ir.viewport import Viewport


@click.command()
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
@color_option
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
            f"{plural(report.errors, 'error')}"
        )
    sys.exit(EXIT_ERRORS if errors else EXIT_OK)


def _viewports(specs: tuple[str, ...]) -> tuple[Viewport, ...]:
    from pydantic import ValidationError

    from skillc.build import parse_viewport

    out = []
    for spec in specs:
        try:
            out.append(parse_viewport(spec))
        except ValidationError as err:
            raise click.BadParameter(f"{spec!r}: {one_line(err)}", param_hint="'--viewport'") from None
        except ValueError as err:
            raise click.BadParameter(str(err), param_hint="'--viewport'") from None
    return tuple(out)


def _skills_of(path: Path) -> list[Path]:
    """The skill folders PATH names: itself, those a project's app.json lists, or the skill
    folders inside a folder that is neither."""
    from skillc.check import looks_like_a_skill, skill_folders_in
    from skillc.diagnostics import DiagnosticSink, render_text
    from skillc.frontend.project import load_project

    sink = DiagnosticSink()
    project = load_project(path, sink)
    if project is None:
        return [path] if looks_like_a_skill(path) else (skill_folders_in(path) or [path])
    if not project.skills:
        sources = {"app.json": project.app_json or ""}
        click.echo(render_text(sink, sources, prefix=str(project.root)), err=True, nl=False)
        sys.exit(EXIT_USAGE)
    return [s.path for s in project.skills]
