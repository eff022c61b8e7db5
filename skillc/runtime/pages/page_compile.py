"""A page's WXML and WXSS through the card compiler: the template IR and stylesheet the card
renderer draws from. The card gate's refusal of a tag (TPL001) is a card rule, not a page's: on a
page it becomes PAGE012 (a custom component of usingComponents) or PAGE017 (another tag), a
warning, and the tag is drawn as a plain box with its children."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from skillc.diagnostics import Diagnostic, DiagnosticSink, render_blockers
from skillc.frontend import wxml
from skillc.frontend.wxss import parse_wxss
from skillc.ir.component import CompiledComponent
from skillc.ir.lower import lower_document
from skillc.ir.styles import compile_stylesheet
from skillc.runtime.pages.page_check import custom_tags
from skillc.runtime.pages.page_source import PageSource

_REFUSED_TAG = re.compile(r"^<([^>\s]+)>")


@dataclass
class CompiledPage:
    component: CompiledComponent | None  # None: the WXML leaves no tree to draw
    diagnostics: list[Diagnostic] = field(default_factory=list)


def compile_page(source: PageSource) -> CompiledPage:
    sink = DiagnosticSink()
    wxml_file = source.path("wxml")
    text = source.text("wxml") or ""
    doc = wxml.parse_wxml(text, file=wxml_file, sink=sink)
    template = lower_document(doc, load=source.files.get, sink=sink)
    stylesheet = None
    css = source.text("wxss")
    if css is not None:
        sheet = parse_wxss(css, file=source.path("wxss"), sink=sink, load=source.files.get)
        stylesheet = compile_stylesheet(sheet)
    blocked = bool(render_blockers(sink))
    diagnostics = _as_page(list(sink), custom_tags(source))
    if blocked:
        return CompiledPage(None, diagnostics)
    return CompiledPage(CompiledComponent(name=source.route, template=template, stylesheet=stylesheet), diagnostics)


def _as_page(found: list[Diagnostic], custom: set[str]) -> list[Diagnostic]:
    out = []
    for d in found:
        m = _REFUSED_TAG.match(d.message) if d.code == "TPL001" else None
        if m is None:
            out.append(d)
            continue
        tag = m.group(1)
        if tag in custom:
            message = (
                f"<{tag}> is a custom component (usingComponents); the debug console does not run custom "
                "components and draws it as a plain box with its children"
            )
            out.append(Diagnostic.make("PAGE012", message, file=d.file, span=d.span))
        else:
            message = (
                f"<{tag}> is not drawn by the card renderer; the debug console shows it as a plain box "
                "with its children"
            )
            out.append(Diagnostic.make("PAGE017", message, file=d.file, span=d.span))
    return out
