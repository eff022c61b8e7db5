"""Open a route of a skill's mini program as the handoff does: find its files, report what it uses
beyond the console (static findings), compile its WXML and WXSS, and load it with the query."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import parse_qsl

from skillc.diagnostics import Diagnostic, sort_diagnostics
from skillc.ir.viewport import Viewport
from skillc.runtime.api.api_runtime import ApiRuntime
from skillc.runtime.pages.page import OpenPage, PageSetup, PageStep
from skillc.runtime.pages.page_check import check_page
from skillc.runtime.pages.page_compile import compile_page
from skillc.runtime.pages.page_source import find_page, normal_route


@dataclass
class Opened:
    """The open page (None when nothing can render) and what loading it did."""

    page: OpenPage | None
    step: PageStep
    query: dict[str, str] = field(default_factory=dict)


def parse_query(url: str) -> dict[str, str]:
    """``/pages/a?x=1&y=%E6%8B%BF`` -> ``{"x": "1", "y": "拿"}``: what onLoad(query) receives."""
    _path, _sep, query = url.partition("?")
    return dict(parse_qsl(query, keep_blank_values=True))


def open_page(runtime: ApiRuntime, url: str, viewport: Viewport, *, slice_timeout_s: float = 5.0) -> Opened:
    """Load ``url`` (route + query) of ``runtime``'s skill's project. Run it on the thread that will
    tap it and close it (the page's VM is pinned to one thread)."""
    query = parse_query(url)
    source = find_page(runtime.package, url)
    if isinstance(source, str):
        file = f"{normal_route(url)}.wxml"
        return Opened(None, PageStep(diagnostics=[Diagnostic.make("PAGE001", source, file=file)]), query)
    found = check_page(source)
    compiled = compile_page(source)
    if compiled.component is None:
        return Opened(None, PageStep(diagnostics=sort_diagnostics(found) + compiled.diagnostics), query)
    setup = PageSetup(
        source=source,
        compiled=compiled.component,
        viewport=viewport,
        context=runtime.context(session_id=f"page-{source.route}"),
        config=runtime.config,
        storage=runtime.storage,
        native=runtime.mode == "interrupt",
        slice_timeout_s=slice_timeout_s,
    )
    page = OpenPage(setup)
    step = page.load(query)
    step.diagnostics[:0] = sort_diagnostics(found) + compiled.diagnostics
    return Opened(page, step, query)
