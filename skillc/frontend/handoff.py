"""Handoff mode, statically (V017, V018): an API that declares ``_meta.ui.pagePath`` returns
``handoff: {query, payload?, card?}`` and WeChat opens that page of the mini program, whose
``onLoad(query)`` reads the query.

The page lives in the project, outside the skill folder, so these rules need the project
(``SkillPackage.project``); a skill checked on its own gets only the parts that need no page.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from skillc.diagnostics import DiagnosticSink, Span
from skillc.frontend.consistency import PackageView, Script, Segment, api_code, object_keys
from skillc.frontend.jsonsrc import JArray, JNode, JObject, lookup
from skillc.frontend.manifest import ApiSpec
from skillc.frontend.project import Project
from skillc.frontend.source import decode_utf8

_HANDOFF = re.compile(r"\bhandoff\s*(?::|=(?!=))\s*")
_QUERY = re.compile(r"\bquery\s*:\s*")
_QUERY_KEY = re.compile(r"(?:^|&)([^=&${}]+)=")
# onLoad(query) / onLoad: function (query) / onLoad: (query) => / async onLoad(query)
_ON_LOAD = re.compile(
    r"\bonLoad\s*(?::\s*(?:async\s+)?(?:function\s*)?)?\(\s*(?:([A-Za-z_$][\w$]*)|\{([^{}]*)\})?\s*[,)]"
)
# Ways a page uses its query object whole (hands it on, iterates it): every key counts as read.
_WHOLE = (
    r"(?:Object\s*\.\s*(?:keys|entries|values|assign)\s*\([^)]*\b{q}\b"
    r"|\.\.\.\s*{q}\b|setData\s*\(\s*{q}\b|\b{q}\s*\[(?!\s*['\"]))"
)


@dataclass(frozen=True)
class QueryKey:
    name: str
    script: Script
    start: int
    end: int


@dataclass(frozen=True)
class HandoffFacts:
    """What an API's code says about its handoff: whether it returns one, and the query keys of
    each literal query (string, template or object). ``static`` is False when a query is built
    some other way, so its keys are unknown."""

    returns: bool
    keys: tuple[QueryKey, ...]
    static: bool


def handoff_facts(segments: list[Segment]) -> HandoffFacts:
    returns, static = False, True
    keys: list[QueryKey] = []
    for seg in segments:
        text = seg.script.masked
        for m in _HANDOFF.finditer(text, seg.start, seg.end):
            returns = True
            at = m.end()
            if at >= len(text) or text[at] != "{":
                static = False
                continue
            outer = object_keys(text, at)
            query = next((k for k in outer.keys if k.name == "query"), None)
            if query is None:
                continue
            q = _QUERY.match(text, query.start)
            if q is None:
                static = False
                continue
            found = _query_keys(seg.script, q.end())
            if found is None:
                static = False
            else:
                keys += found
    return HandoffFacts(returns, tuple(keys), static)


def _query_keys(script: Script, at: int) -> list[QueryKey] | None:
    text = script.masked
    if at >= len(text):
        return None
    c = text[at]
    if c == "{":
        obj = object_keys(text, at)
        found = [QueryKey(k.name, script, k.start, k.end) for k in obj.keys]
        return found if obj.complete else None
    if c in "'\"`":
        end = text.find(c, at + 1)
        if end < 0:
            return None
        body = text[at + 1 : end]
        if c == "`":  # blank out ${...} (same length, so offsets hold): keys are the literal parts
            body = re.sub(r"\$\{[^}]*\}", lambda m: " " * len(m.group()), body)
        skip = len(body) - len(body.lstrip("?"))
        keys = []
        for m in _QUERY_KEY.finditer(body[skip:]):
            name = m.group(1).strip()
            if name:
                start = at + 1 + skip + m.start(1) + (len(m.group(1)) - len(m.group(1).lstrip()))
                keys.append(QueryKey(name, script, start, start + len(name)))
        return keys
    return None


def page_reads(text: str) -> set[str] | None:
    """The query keys a page's ``onLoad(query)`` reads; None when it uses the query whole (every
    key counts) or has no onLoad with a parameter we can follow."""
    m = _ON_LOAD.search(text)
    if m is None:
        return set()
    if m.group(2) is not None:  # onLoad({ a, b: c })
        return {p.split(":")[0].strip() for p in m.group(2).split(",") if p.strip()}
    name = m.group(1)
    if name is None:
        return set()
    q = re.escape(name)
    if re.search(_WHOLE.format(q=q), text):
        return None
    reads = set(re.findall(rf"\b{q}\s*\??\.\s*([A-Za-z_$][\w$]*)", text))
    reads |= set(re.findall(rf"\b{q}\s*\[\s*['\"]([^'\"]+)['\"]\s*\]", text))
    for d in re.finditer(rf"\{{([^{{}}]*)\}}\s*=\s*{q}\b", text):
        reads |= {p.split(":")[0].strip() for p in d.group(1).split(",") if p.strip()}
    return reads


def _page_span(manifest: JNode | None, index: int) -> Span | None:
    node = lookup(manifest, ("apis", index, "_meta", "ui", "pagePath")) if manifest is not None else None
    return node.span if node is not None else None


def _read_page(root: Path, route: str) -> str | None:
    path = root / f"{route}.js"
    try:
        text, _ = decode_utf8(path.read_bytes())
    except OSError:
        return None
    return text


def check_handoffs(
    pkg: PackageView,
    apis: list[ApiSpec],
    manifest: JNode | None,
    project: Project | None,
    sink: DiagnosticSink,
    cache: dict[str, Script] | None = None,
) -> None:
    """V017: the page exists in app.json and the API returns a handoff. V018: the page reads
    every query key the API sends."""
    spans = _api_indexes(manifest)
    for spec in apis:
        page = spec.meta.ui.page_path if spec.meta and spec.meta.ui else None
        if not isinstance(page, str) or not page.startswith("/") or "?" in page:
            continue  # MCP012 reports the form
        where = _page_span(manifest, spans.get(spec.name, -1))
        route = page.strip("/")
        facts = handoff_facts(api_code(pkg.sources, spec.name, pkg.code_root, cache))
        if not facts.returns:
            sink.emit(
                "CON006",
                f"{spec.name} declares pagePath {page} but its code returns no handoff, so the page is never opened",
                file="mcp.json",
                span=where,
                hint="return { content, handoff: { query: 'id=1' } } from the API",
            )
        if project is None:
            continue
        if route not in project.pages:
            sink.emit(
                "CON005",
                f"pagePath {page} of {spec.name} is not a page of app.json (pages or subPackages[].pages)",
                file="mcp.json",
                span=where,
                hint=f'add "{route}" to app.json pages, or to the pages of the subpackage it sits in',
            )
            continue
        text = _read_page(project.root, route)
        if text is None or not facts.keys:
            continue
        reads = page_reads(Script(f"{route}.js", text).masked)
        if reads is None:
            continue
        for key in facts.keys:
            if key.name in reads:
                continue
            sink.emit(
                "CON007",
                f'handoff query key "{key.name}" of {spec.name} is never read by onLoad(query) of {route}.js',
                file=key.script.path,
                span=key.script.span(key.start, key.end),
                hint=f"read query.{key.name} in onLoad of {route}.js, or stop sending it",
            )


def _api_indexes(manifest: JNode | None) -> dict[str, int]:
    apis = manifest.get("apis") if isinstance(manifest, JObject) else None
    found: dict[str, int] = {}
    for i, item in enumerate(apis.items if isinstance(apis, JArray) else []):
        name = item.get("name") if isinstance(item, JObject) else None
        value = name.to_python() if name is not None else None
        if isinstance(value, str):
            found.setdefault(value, i)
    return found


def check_related_pages(manifest: JNode | None, project: Project | None, sink: DiagnosticSink) -> None:
    """V015 (O6b): a card's relatedPage (its "enter the mini program" entry) is a page of app.json."""
    comps = manifest.get("components") if isinstance(manifest, JObject) else None
    if project is None or not isinstance(comps, JArray):
        return
    for item in comps.items:
        node = item.get("relatedPage") if isinstance(item, JObject) else None
        value = node.to_python() if node is not None else None
        if node is None or not isinstance(value, str) or not value.startswith("/"):
            continue  # MCP014 reports the form
        route = value.split("?", 1)[0].strip("/")
        if route in project.pages:
            continue
        sink.emit(
            "CON008",
            f"relatedPage {value} is not a page of app.json (pages or subPackages[].pages)",
            file="mcp.json",
            span=node.span,
            hint=f'add "{route}" to app.json pages, or point relatedPage at an existing page',
        )
