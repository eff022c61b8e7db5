"""The pages the debug console opens (``render_page``): each route run as the AI-mode handoff
opens it (:mod:`skillc.runtime.pages`), drawn by the HTML backend, and its taps.

- ``POST /__debug/api/page`` ``{"url", "width", "height"}``: open the route with the url's query
  (a fresh page every time, so a render is always onLoad's): ``{"ok": true, "pageSessionId", "html",
  "diagnostics", "console", "path", "query", "data"}``; an unknown route is ``TARGET_NOT_FOUND``, a
  page with nothing to render ``RENDER_FAILED`` (with its diagnostics).
- ``POST /__debug/api/page/event`` ``{"pageSessionId", "nodeId", "kind"}``: a tap on a node of the
  open page: the page's methods bound there run, and the answer is the page as it now renders,
  with ``handled`` (the methods that ran).

Each open page lives on a thread of its own (its VM is pinned to it); the newest few are kept.
"""

from __future__ import annotations

import asyncio
import secrets
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

from skillc.backends.html_backend import render_html
from skillc.diagnostics import Diagnostic
from skillc.frontend.package import SkillPackage
from skillc.ir.viewport import Viewport
from skillc.runtime.api.api_runtime import ApiRuntime
from skillc.runtime.pages.opener import open_page
from skillc.runtime.pages.page import OpenPage, PageStep
from skillc.runtime.pages.page_source import normal_route
from skillc.server.debugger.console_feed import ConsoleFeed

MAX_OPEN_PAGES = 4
T = TypeVar("T")


@dataclass
class _Live:
    page: OpenPage
    skill: str
    path: str
    query: dict[str, str]
    executor: ThreadPoolExecutor


def page_routes(packages: list[SkillPackage]) -> dict[str, SkillPackage]:
    """Each handoff route (``pages/a/b``) and the skill whose project holds it, first seen first."""
    found: dict[str, SkillPackage] = {}
    for pkg in packages:
        manifest = pkg.manifest
        if manifest is None:
            continue
        paths = [a.meta.ui.page_path for a in manifest.apis if a.meta and a.meta.ui and a.meta.ui.page_path]
        paths += [c.related_page for c in manifest.components or [] if c.related_page]
        for path in paths:
            if path:
                found.setdefault(normal_route(path), pkg)
    return found


class PageSessions:
    """``runtime``: the skill server's API runtime of a skill (its config, storage and identity)."""

    def __init__(
        self,
        packages: list[SkillPackage],
        runtime: Callable[[str], ApiRuntime | None],
        feed: ConsoleFeed,
    ) -> None:
        self.routes = page_routes(packages)
        self.runtime = runtime
        self.feed = feed
        self._open: OrderedDict[str, _Live] = OrderedDict()

    async def open(self, body: dict[str, Any]) -> dict[str, Any]:
        url = str(body.get("url") or "")
        route = normal_route(url)
        pkg = self.routes.get(route)
        if pkg is None:
            known = ", ".join(f"/{r}" for r in self.routes) or "none"
            return _fail("TARGET_NOT_FOUND", f"no page /{route} among the handoff pages ({known})")
        try:
            viewport = Viewport(width=int(body.get("width") or 375), height=int(body.get("height") or 667))
        except (TypeError, ValueError) as err:
            return _fail("VIEWPORT_FAILED", f"bad viewport: {err}")
        runtime = self.runtime(pkg.name)
        if runtime is None:
            return _fail("RENDER_FAILED", f"{pkg.name} has no runtime in this debug server")
        executor = ThreadPoolExecutor(1, thread_name_prefix="skillc-page")
        opened = await _on(executor, open_page, runtime, url, viewport)
        step = opened.step
        if opened.page is None or step.document is None:
            if opened.page is not None:
                executor.submit(opened.page.close)
            executor.shutdown(wait=False)
            failed = _fail("RENDER_FAILED", f"/{route} could not be rendered")
            return {**failed, **self._report(pkg.name, step)}
        session_id = f"page-{secrets.token_hex(8)}"
        self._open[session_id] = _Live(opened.page, pkg.name, f"/{route}", opened.query, executor)
        while len(self._open) > MAX_OPEN_PAGES:
            _sid, old = self._open.popitem(last=False)
            _close(old)
        shown = self._shown(pkg.name, f"/{route}", step)
        return {"ok": True, "pageSessionId": session_id, "path": f"/{route}", "query": opened.query, **shown}

    async def event(self, body: dict[str, Any]) -> dict[str, Any]:
        live = self._open.get(str(body.get("pageSessionId")))
        if live is None:
            return _fail("TARGET_NOT_FOUND", "that page is no longer open; render it again")
        node_id = body.get("nodeId")
        if not isinstance(node_id, str) or not node_id:
            return _fail("ELEMENT_NOT_FOUND", "nodeId must be a node uid of the page")
        kind = str(body.get("kind") or "tap")
        step = await _on(live.executor, live.page.tap, node_id, kind)
        if step.document is None:
            return {**_fail("RENDER_FAILED", f"{live.path} could not be rendered"), **self._report(live.skill, step)}
        shown = self._shown(live.skill, live.path, step)
        return {"ok": True, "path": live.path, "query": live.query, "handled": step.handled, **shown}

    def close(self) -> None:
        while self._open:
            _close(self._open.popitem()[1])

    def _shown(self, skill: str, path: str, step: PageStep) -> dict[str, Any]:
        assert step.document is not None
        html = render_html(step.document, title=f"{skill} {path}", page=True)
        return {"html": html, "data": step.data, **self._report(skill, step)}

    def _report(self, skill: str, step: PageStep) -> dict[str, Any]:
        return {
            "diagnostics": [page_diagnostic(d) for d in step.diagnostics],
            "console": self.feed.add(skill, "page-vm", step.console),
        }


def page_diagnostic(d: Diagnostic) -> dict[str, Any]:
    """A diagnostic as the console shows it: code, severity, message and file:line:col."""
    return {
        "code": d.code,
        "severity": d.severity.value,
        "message": d.message,
        "file": d.file,
        "line": d.span.line if d.span is not None else None,
        "column": d.span.column if d.span is not None else None,
    }


async def _on(executor: ThreadPoolExecutor, fn: Callable[..., T], *args: Any) -> T:
    return await asyncio.get_running_loop().run_in_executor(executor, fn, *args)


def _close(live: _Live) -> None:
    live.executor.submit(live.page.close)
    live.executor.shutdown(wait=False)


def _fail(code: str, message: str) -> dict[str, Any]:
    return {"ok": False, "error": {"code": code, "message": message}}
