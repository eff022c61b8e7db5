"""A component compiled for rendering: its template IR and its compiled stylesheet."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from skillc.diagnostics import DiagnosticSink
from skillc.frontend.package import SkillPackage
from skillc.frontend.wxss import SheetCache, parse_wxss
from skillc.ir.lower import lower_component
from skillc.ir.styles import CompiledStylesheet, compile_stylesheet
from skillc.ir.template import Template


@dataclass
class CompiledComponent:
    name: str
    template: Template
    stylesheet: CompiledStylesheet | None
    style_inputs: tuple[str, ...] = ()
    # What the evaluator derives once per template node (static parts, dependencies), shared by
    # every card rendered from this component. Keyed by node identity; the template owns the nodes.
    render_cache: dict[int, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def inputs(self) -> list[str]:
        """Every skill file the compiled form was read from (build caching keys on them)."""
        seen: dict[str, None] = dict.fromkeys([self.template.file, *self.template.dependencies, *self.style_inputs])
        return list(seen)


def compile_component(
    pkg: SkillPackage, name: str, sink: DiagnosticSink, sheets: SheetCache | None = None
) -> CompiledComponent | None:
    """Lower components/<name>/index.wxml and compile index.wxss. None without a template.
    ``sheets``: shared by the components of one build, so that a sheet they import is parsed once."""
    template = lower_component(pkg, name, sink)
    if template is None:
        return None
    rel = f"components/{name}/index.wxss"
    text = pkg.sources.get(rel)
    stylesheet = None
    style_inputs: tuple[str, ...] = ()
    if text is not None:
        sheet = parse_wxss(text, file=rel, sink=sink, load=pkg.sources.get, cache=sheets)
        stylesheet = compile_stylesheet(sheet)
        style_inputs = (rel, *(i.path for i in sheet.imports if i.found))
    return CompiledComponent(name=name, template=template, stylesheet=stylesheet, style_inputs=style_inputs)
