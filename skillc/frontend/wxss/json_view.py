"""The plain JSON view of a stylesheet, for golden snapshots.

Spans become ``"line:column-end_line:end_column"`` strings and values keep both their CSS
text and their typed parts; a field at its default (not important, supported) is left out.
"""

from __future__ import annotations

from skillc.diagnostics import Span
from skillc.frontend.wxss.nodes import Declaration, MediaQueryList, Stylesheet
from skillc.frontend.wxss.values import Function, Part, value_css

__all__ = ["declaration_json", "media_json", "part_json", "span_text", "stylesheet_json"]


def span_text(span: Span) -> str:
    return f"{span.line}:{span.column}-{span.end_line}:{span.end_column}"


def part_json(part: Part) -> dict[str, object]:
    if isinstance(part, Function):
        return {"kind": "function", "name": part.name, "args": [part_json(a) for a in part.args]}
    return {"kind": part.kind, **_fields(part)}


def declaration_json(decl: Declaration) -> dict[str, object]:
    out: dict[str, object] = {
        "name": decl.name,
        "css": value_css(decl.value),
        "value": [part_json(p) for p in decl.value],
        "span": span_text(decl.span),
    }
    if decl.important:
        out["important"] = True
    if not decl.supported:
        out["supported"] = False
    if decl.drawn:
        out["drawn"] = True
    return out


def media_json(mql: MediaQueryList) -> dict[str, object]:
    queries = []
    for q in mql.queries:
        features = [{k: v for k, v in _fields(f).items() if v is not None} for f in q.features]
        entry: dict[str, object] = {"type": q.media_type, "features": features}
        if q.negated:
            entry["not"] = True
        if not q.supported:
            entry["supported"] = False
        queries.append(entry)
    return {"text": mql.text, "queries": queries}


def _fields(obj: object) -> dict[str, object]:
    return {slot: getattr(obj, slot) for slot in obj.__slots__}  # type: ignore[attr-defined]


def stylesheet_json(sheet: Stylesheet) -> dict[str, object]:
    return {
        "rules": [
            {
                "order": r.order,
                "file": r.file,
                "span": span_text(r.span),
                "selectors": [
                    {
                        "text": s.text,
                        "specificity": list(s.specificity),
                        "compounds": [
                            {k: v for k, v in (("tag", c.tag), ("id", c.id), ("classes", list(c.classes))) if v}
                            for c in s.compounds
                        ],
                        "span": span_text(s.span),
                    }
                    for s in r.selectors
                ],
                "media": [media_json(m) for m in r.media],
                "declarations": [declaration_json(d) for d in r.declarations],
            }
            for r in sheet.rules
        ],
        "imports": [
            {"path": i.path, "file": i.file, "span": span_text(i.span), "found": i.found} for i in sheet.imports
        ],
        "font_faces": [
            {"file": f.file, "span": span_text(f.span), "declarations": [declaration_json(d) for d in f.declarations]}
            for f in sheet.font_faces
        ],
    }
