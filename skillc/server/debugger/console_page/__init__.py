"""The debug console page (static HTML + JS, no build step) and the small JSON API it reads.

- ``GET /`` and ``GET /__debug``: the page (index.html); ``GET /__debug/static/{name}``: its script and style.
- ``GET /__debug/api/targets``: the render targets: widgets (the skills' components) and pages (the
  routes APIs hand off to through ``_meta.ui.pagePath`` or a component's ``relatedPage``).
- ``POST /__debug/api/render`` ``{"widgetId", "structuredContent", "width", "height"}``: the card as
  an HTML backend document (``{"ok": true, "html", "diagnostics", "console"}``). ``structuredContent``
  is what the API bound to the component returned: the skill server's card host mounts the card
  with it as a call would (its index.js runs: created, attached, Input, Result), so the card VM's
  console lines come back too. An empty ``structuredContent`` shows the component's
  ``preview.json`` as template data (what the WXML binds; no JavaScript runs), and so does a
  component no API shows.
- ``POST /__debug/api/chat`` ``{"query"}``: one chat turn (:mod:`skillc.server.debugger.chat`):
  its requestId, messages, trace events, tool calls, console lines and the card it mounted, as HTML.
- ``GET /__debug/api/console``: the runtime console lines so far (:mod:`..console_feed`).
- ``POST /__debug/api/page`` and ``/__debug/api/page/event``: a page opened as the handoff opens it,
  and its taps (:mod:`skillc.server.debugger.pages`).

The page subscribes to the control channel (:mod:`skillc.server.debugger.channel_sse`), runs the
commands on the rendered DOM and posts the scene to ``/__agent_trace``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from importlib.resources import files
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from skillc.backends.html_backend import render_html
from skillc.diagnostics import DiagnosticSink, render_blockers
from skillc.frontend.package import SkillPackage
from skillc.ir.component import compile_component
from skillc.ir.evaluate import CardRenderer
from skillc.ir.render import from_plain
from skillc.ir.viewport import Viewport
from skillc.runtime.cards.card_host import CardHost
from skillc.runtime.contracts import AtomicApiResult
from skillc.server.debugger.chat import ChatError, ChatSimulator, ToolOutcome
from skillc.server.debugger.console_feed import ConsoleFeed
from skillc.server.debugger.guard import BadJson, DebugGuard, new_token, read_json
from skillc.server.debugger.pages import PageSessions
from skillc.server.debugger.planner import CommandPlanner, Planner
from skillc.server.results import HANDOFF_META

CONSOLE_PATHS = ("/", "/__debug")
_STATIC = {"console.js": "text/javascript; charset=utf-8", "console.css": "text/css; charset=utf-8"}


@cache
def _asset(name: str) -> str:
    return (files("skillc.server.debugger.console_page") / name).read_text(encoding="utf-8")


@dataclass(frozen=True)
class Widget:
    widget_id: str
    name: str
    skill: str
    component: str
    package: SkillPackage


def widgets_of(packages: list[SkillPackage]) -> list[Widget]:
    """Every component of every skill; the id is the component's name, ``skill/name`` when two skills share it."""
    names = [c for p in packages for c in p.components]
    out = []
    for pkg in packages:
        for comp in sorted(pkg.components):
            wid = comp if names.count(comp) == 1 else f"{pkg.name}/{comp}"
            out.append(Widget(wid, comp, pkg.name, comp, pkg))
    return out


def pages_of(packages: list[SkillPackage]) -> list[dict[str, Any]]:
    """Handoff pages: ``_meta.ui.pagePath`` of APIs and ``relatedPage`` of components, first seen first."""
    seen: dict[str, dict[str, Any]] = {}
    for pkg in packages:
        manifest = pkg.manifest
        if manifest is None:
            continue
        home = None
        if pkg.project is not None:
            pages = pkg.project.pages  # app.json's order: the first is the mini program's home
            if pages:
                home = "/" + str(pages[0]).lstrip("/")
        for api in manifest.apis:
            path = api.meta.ui.page_path if api.meta and api.meta.ui else None
            if path and path not in seen:
                seen[path] = {"via": f"{pkg.name}/{api.name} (_meta.ui.pagePath)", "home": home}
        for comp in manifest.components or []:
            if comp.related_page and comp.related_page not in seen:
                seen[comp.related_page] = {"via": f"{pkg.name}/{comp.name} (relatedPage)", "home": home}
    return [
        {
            "pageId": path,
            "path": path,
            "name": path.strip("/").split("/")[-2] if path.count("/") >= 2 else path.strip("/"),
            "isHome": info["home"] == path,
            "via": info["via"],
        }
        for path, info in seen.items()
    ]


class ConsolePage:
    """The page's routes, for the skills being debugged. ``cards``: the skill server's card host of
    a skill (for renders that run the card's JavaScript); ``chat``: the chat box's simulator."""

    def __init__(
        self,
        packages: list[SkillPackage],
        *,
        cards: Callable[[str], CardHost | None] | None = None,
        chat: ChatSimulator | None = None,
        feed: ConsoleFeed | None = None,
    ) -> None:
        self.packages = packages
        self.widgets = {w.widget_id: w for w in widgets_of(packages)}
        self.pages = pages_of(packages)
        self.cards = cards
        self.chat = chat
        self.feed = feed or ConsoleFeed()

        def runtime(skill: str) -> Any:
            host = cards(skill) if cards is not None else None
            return host.runtime if host is not None else None

        self.page_sessions = PageSessions(packages, runtime, self.feed)

    async def index(self, _request: Request) -> Response:
        return HTMLResponse(_asset("index.html"), headers={"Cache-Control": "no-store"})

    async def static(self, request: Request) -> Response:
        name = request.path_params["name"]
        if name not in _STATIC:
            return Response("not found", status_code=404)
        return Response(_asset(name), media_type=_STATIC[name], headers={"Cache-Control": "no-store"})

    async def targets(self, _request: Request) -> Response:
        widgets = [
            {"widgetId": w.widget_id, "name": w.name, "skill": w.skill, "path": f"components/{w.component}/index"}
            for w in self.widgets.values()
        ]
        return JSONResponse({"widgets": widgets, "pages": self.pages})

    async def console(self, _request: Request) -> Response:
        return JSONResponse({"console": list(self.feed.lines)})

    async def render(self, request: Request) -> Response:
        try:
            body = await _json_body(request)
        except BadJson as err:
            return JSONResponse(_fail("RENDER_FAILED", str(err)), 400)
        if body is None:
            return JSONResponse(_fail("RENDER_FAILED", "the body must be a JSON object"), 400)
        return JSONResponse(await self.render_widget(body))

    async def render_widget(self, body: dict[str, Any]) -> dict[str, Any]:
        widget = self.widgets.get(str(body.get("widgetId")))
        if widget is None:
            known = ", ".join(self.widgets) or "none"
            return _fail("TARGET_NOT_FOUND", f"no widget {body.get('widgetId')!r} (widgets: {known})")
        data = body.get("structuredContent")
        if data is None:
            data = {}
        if not isinstance(data, dict):
            return _fail("RENDER_FAILED", "structuredContent must be a JSON object")
        try:
            viewport = Viewport(width=int(body.get("width") or 375), height=int(body.get("height") or 667))
        except (TypeError, ValueError) as err:
            return _fail("VIEWPORT_FAILED", f"bad viewport: {err}")
        pkg = widget.package
        path = f"components/{widget.component}/index"
        api = next((a.name for a in pkg.manifest.apis if a.component_path == path), None) if pkg.manifest else None
        host = self.cards(pkg.name) if self.cards is not None and api is not None else None
        if data and host is not None and api is not None:
            return await self._mount(widget, host, api, data, viewport)
        preview = f"components/{widget.component}/preview.json"
        if not data and preview in pkg.sources:
            try:
                loaded = json.loads(pkg.sources[preview])
            except ValueError:
                loaded = {}
            data = loaded if isinstance(loaded, dict) else {}
        return self._template(widget, data, viewport)

    async def _mount(
        self, widget: Widget, host: CardHost, api: str, data: dict[str, Any], viewport: Viewport
    ) -> dict[str, Any]:
        """The card as a call of ``api`` returning ``data`` would show it (its JavaScript runs)."""
        result = AtomicApiResult(content=[], structured_content=data)
        outcome = await host.show(api, result, {}, viewport=viewport)
        console = self.feed.add(widget.skill, "card-vm", outcome.console)
        diagnostics = [_diag(d) for d in outcome.diagnostics + outcome.findings]
        if outcome.card is None:
            reason = outcome.fallback.reason if outcome.fallback is not None else "no card"
            failed = _fail("RENDER_FAILED", f"{widget.widget_id} could not be shown: {reason}")
            return {**failed, "diagnostics": diagnostics, "console": console}
        return {
            "ok": True,
            "html": render_html(outcome.card.document, title=f"{widget.skill} / {widget.component}"),
            "diagnostics": diagnostics,
            "console": console,
            "path": f"components/{widget.component}/index",
            "data": data,
            "cardId": outcome.card.card_id,
        }

    def _template(self, widget: Widget, data: dict[str, Any], viewport: Viewport) -> dict[str, Any]:
        """``data`` as the template's data: what the WXML binds, without the card's JavaScript."""
        pkg = widget.package
        sink = DiagnosticSink()
        compiled = compile_component(pkg, widget.component, sink)
        diagnostics = [_diag(d) for d in sink]
        if compiled is None or render_blockers(sink):
            return {**_fail("RENDER_FAILED", f"{widget.widget_id} does not compile"), "diagnostics": diagnostics}
        local = DiagnosticSink()
        try:
            doc = CardRenderer(compiled, viewport, sink=local).render(data)
        except Exception as err:  # a renderer bug must not kill the console
            return _fail("RENDER_FAILED", f"{widget.widget_id} could not render: {err}")
        diagnostics += [_diag(d) for d in local]
        return {
            "ok": True,
            "html": render_html(doc, title=f"{pkg.name} / {widget.component}"),
            "diagnostics": diagnostics,
            "console": [],
            "path": f"components/{widget.component}/index",
            "data": data,
        }

    async def page(self, request: Request) -> Response:
        return await self._page_call(request, self.page_sessions.open)

    async def page_event(self, request: Request) -> Response:
        return await self._page_call(request, self.page_sessions.event)

    async def _page_call(self, request: Request, run: Callable[[dict[str, Any]], Any]) -> Response:
        try:
            body = await _json_body(request)
        except BadJson as err:
            return JSONResponse(_fail("RENDER_FAILED", str(err)), 400)
        if body is None:
            return JSONResponse(_fail("RENDER_FAILED", "the body must be a JSON object"), 400)
        return JSONResponse(await run(body))

    async def chat_turn(self, request: Request) -> Response:
        try:
            body = await _json_body(request)
        except BadJson as err:
            return JSONResponse(_fail("CHAT_SUBMIT_FAILED", str(err)), 400)
        query = body.get("query") if body is not None else None
        if not isinstance(query, str):
            return JSONResponse(_fail("CHAT_SUBMIT_FAILED", 'the body must be {"query": string}'), 400)
        if self.chat is None:
            return JSONResponse(_fail("CHAT_NOT_READY", "this debug server has no chat simulator"), 503)
        mark = self.feed.total
        try:
            turn = await self.chat.turn(query)
        except ChatError as err:
            status = {"CHAT_BUSY": 409, "CHAT_NOT_READY": 503}.get(err.code, 502)
            return JSONResponse(_fail(err.code, str(err)), status)
        return JSONResponse(
            {
                "ok": True,
                "requestId": turn.request_id,
                "completed": turn.completed,
                "planner": turn.planner,
                "messages": [m.wire() for m in turn.messages],
                "traceEvents": [e.wire() for e in turn.trace_events],
                "toolCalls": [c.wire() for c in turn.tool_calls],
                "console": self.feed.since(mark),
                "cards": [card for o in turn.outcomes if (card := self._card(o)) is not None],
                "handoffs": [h for o in turn.outcomes if (h := _handoff(o)) is not None],
            }
        )

    def _card(self, outcome: ToolOutcome) -> dict[str, Any] | None:
        """A card a turn's call mounted, as the console shows it: its Render IR from the result's
        ``_meta`` as HTML, and the widget it is an instance of."""
        card = outcome.card
        if card is None or outcome.result is None:
            return None
        path = str(card.get("componentPath") or "")
        widget = next(
            (
                w
                for w in self.widgets.values()
                if w.skill == outcome.skill and path.startswith(f"components/{w.component}/")
            ),
            None,
        )
        try:
            document = from_plain(card.get("document"))
        except (TypeError, ValueError, KeyError):
            return None
        return {
            "toolName": outcome.tool,
            "toolCallId": outcome.call_id,
            "cardId": card.get("cardId"),
            "componentPath": path,
            "widgetId": widget.widget_id if widget is not None else None,
            "name": widget.name if widget is not None else path,
            "structuredContent": outcome.result.structured_content,
            "html": render_html(document, title=path),
        }

    def routes(self) -> list[Route]:
        return [
            *(Route(path, self.index, methods=["GET"]) for path in CONSOLE_PATHS),
            Route("/__debug/static/{name}", self.static, methods=["GET"]),
            Route("/__debug/api/targets", self.targets, methods=["GET"]),
            Route("/__debug/api/console", self.console, methods=["GET"]),
            Route("/__debug/api/render", self.render, methods=["POST"]),
            Route("/__debug/api/chat", self.chat_turn, methods=["POST"]),
            Route("/__debug/api/page", self.page, methods=["POST"]),
            Route("/__debug/api/page/event", self.page_event, methods=["POST"]),
        ]


def _handoff(outcome: ToolOutcome) -> dict[str, Any] | None:
    """The page a turn's call handed off to (``_meta`` of its result): the console opens it, as
    WeChat opens the page when an API returns a handoff."""
    meta = outcome.result.meta if outcome.result is not None else None
    handoff = (meta or {}).get(HANDOFF_META)
    if not isinstance(handoff, dict) or not isinstance(handoff.get("path"), str):
        return None
    return {"toolName": outcome.tool, "toolCallId": outcome.call_id, "path": handoff["path"], "url": handoff.get("url")}


async def _json_body(request: Request) -> dict[str, Any] | None:
    """The body if it is a JSON object, else None; :class:`BadJson` when it is not JSON at all."""
    body = await read_json(request)
    return body if isinstance(body, dict) else None


def _fail(code: str, message: str) -> dict[str, Any]:
    return {"ok": False, "error": {"code": code, "message": message}}


def _diag(d: Any) -> dict[str, Any]:
    span = getattr(d, "span", None)
    line = getattr(span, "line", None) if span is not None else None
    return {
        "code": d.code,
        "severity": str(getattr(d, "severity", "")),
        "message": d.message,
        "file": getattr(d, "file", None),
        "line": line,
    }


# -- the whole `skillc debug` server ---------------------------------------------------------------


GRACEFUL_S = 5.0  # how long `skillc debug` waits for open requests when it is told to stop
MAX_RELAUNCHES = 20  # a Chromium that keeps dying is given up on (the descriptor says error)


@dataclass
class DebugServer:
    """One ASGI app: the skills' MCP at ``/mcp``, the Debugger MCP at ``/__wsd_mcp`` (+ ``/__agent_trace``),
    the console page at ``/`` and its control channel. With ``browser``, headless Chromium opens the
    console page once the server listens (:meth:`listening` tells it the address), and is relaunched
    (the console re-attached) when it dies: the descriptor goes to ``error`` with the reason, then
    back to ``client_connected``. ``observers`` are told every descriptor state it moves to."""

    app: Any
    channel: Any  # SseConsoleChannel
    debugger: Any  # DebuggerApp
    headless: Any = None  # HeadlessConsole, when the server owns a browser
    browser_error: str | None = None
    page: ConsolePage | None = None
    token: str = ""  # the per-launch secret of the console's routes (skillc.server.debugger.guard)
    shooter: Any = None  # screenshot.Shooter
    observers: list[Callable[[Any], None]] = field(default_factory=list)

    def listening(self, host: str, port: int) -> None:
        server = self.debugger.server
        server.descriptor = server.descriptor.with_address(host, port, token=self.token or None)
        if self.headless is not None:
            self.headless.url = server.descriptor.urls.console
        if self.shooter is not None:
            self.shooter.base_url = server.descriptor.urls.console
        self.refresh()

    @property
    def descriptor(self) -> Any:
        return self.debugger.server.descriptor

    def refresh(self) -> None:
        """The descriptor's state from the facts: a console attached (client_connected), else the
        server's browser failing (error, with the reason), else listening."""
        server = self.debugger.server
        current = server.descriptor
        if current.urls is None and self.browser_error is None:  # not listening yet: nothing to say
            return
        if self.channel.connected:
            update = {"state": "client_connected", "error": None}
        elif self.browser_error is not None:
            update = {"state": "error", "error": self.browser_error}
        else:
            update = {"state": "listening", "error": None}
        if self.browser_error is not None:
            update["setup"] = f"the server's headless Chromium is unavailable ({self.browser_error})"
        else:
            update["setup"] = None
        if current.state == update["state"] and current.error == update["error"]:
            server.descriptor = current.model_copy(update=update)
            return
        server.descriptor = current.model_copy(update=update)
        for observe in list(self.observers):
            observe(server.descriptor)

    def stop_work(self) -> None:
        """Shutting down: end the running chat turn and every API call, whatever they wait for."""
        from skillc.runtime.api.cancel import interrupt_all

        if self.page is not None and self.page.chat is not None:
            self.page.chat.cancel()
        self.channel.close()
        interrupt_all()

    def uvicorn_server(self, host: str, port: int, graceful_s: float = GRACEFUL_S) -> Any:
        """A uvicorn server for :attr:`app` that first ends the consoles' SSE streams, the chat and the
        running API calls when it shuts down (uvicorn waits for open responses before the lifespan
        ends, and a console never hangs up), and waits at most ``graceful_s`` for the rest."""
        import uvicorn

        debug = self

        class _Server(uvicorn.Server):
            async def shutdown(self, sockets: Any = None) -> None:
                debug.stop_work()
                await super().shutdown(sockets)

        config = uvicorn.Config(
            self.app,
            host=host,
            port=port,
            log_level="warning",
            lifespan="on",
            access_log=False,
            timeout_graceful_shutdown=max(1, round(graceful_s)),
        )
        return _Server(config)


def build_debug_server(
    prepared: Any,
    *,
    browser: bool = True,
    skill_paths: list[str] | None = None,
    offline: bool = False,
    planner: Planner | None = None,
    command_timeout_s: float | None = None,
    chat_timeout_s: float | None = None,
) -> DebugServer:
    """``prepared``: :func:`skillc.server.runner.prepare`'s result (the skills' server and security).
    ``offline``: the browser answers remote requests itself (images get a grey pixel; tests).
    ``planner``: who decides the chat simulator's tool calls (default: :class:`CommandPlanner`).
    ``command_timeout_s`` / ``chat_timeout_s``: the control commands' timeouts (default 15 s / 120 s)."""
    import asyncio
    import contextlib
    from collections.abc import AsyncIterator

    from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
    from starlette.applications import Starlette

    from skillc.server.debugger.app import build_debugger_app
    from skillc.server.debugger.browser import Chromium, HeadlessConsole, NoBrowser, executable
    from skillc.server.debugger.channel import CHAT_TIMEOUT_S, COMMAND_TIMEOUT_S
    from skillc.server.debugger.channel_sse import SseConsoleChannel
    from skillc.server.debugger.screenshot import Shooter
    from skillc.server.debugger.turn_scope import TurnScope
    from skillc.server.descriptor import DebugDescriptor, runtime_versions
    from skillc.server.http_app import MCP_PATH, Cors

    catalogue = prepared.server.catalogue
    chromium = Chromium()
    headless = HeadlessConsole("about:blank", offline=offline, chromium=chromium) if browser else None
    shooter = Shooter(chromium, offline=offline)
    channel = SseConsoleChannel(screenshotter=shooter.capture)
    descriptor = DebugDescriptor(
        skills=skill_paths or [s.display for s in catalogue.skills], versions=runtime_versions(executable())
    )
    debugger = build_debugger_app(
        catalogue,
        channel,
        descriptor=descriptor,
        security=prepared.security,
        artefacts=prepared.server.artefacts,
        command_timeout_s=command_timeout_s or COMMAND_TIMEOUT_S,
        chat_timeout_s=chat_timeout_s or CHAT_TIMEOUT_S,
    )
    feed = ConsoleFeed(channel.broadcast)
    prepared.server.console_observers.append(feed.add)

    def skills_endpoint() -> str | None:
        """The skills' MCP as the simulator reaches it (a wildcard listen address is loopback here)."""
        d = debugger.server.descriptor
        if d.urls is None or d.port is None:
            return None
        return f"http://127.0.0.1:{d.port}{MCP_PATH}" if d.host in ("0.0.0.0", "::", "") else d.urls.skills_mcp

    guides = {s.package.name: s.package.skill_md or "" for s in catalogue.skills}
    chat = ChatSimulator(skills_endpoint, planner or CommandPlanner(), guides=guides)
    page = ConsolePage([s.package for s in catalogue.skills], cards=prepared.server.cards, chat=chat, feed=feed)
    out = DebugServer(
        app=None, channel=channel, debugger=debugger, headless=headless, page=page, token=new_token(), shooter=shooter
    )
    if browser and executable() is None and not _bundled_browser():
        out.browser_error = "no Chromium found (none on PATH, none installed by Playwright)"
        out.refresh()

    def timed_out(name: str) -> None:
        if name == "submit_chat_query":
            chat.cancel()  # its requests end, and the API calls they started stop at their next check

    channel.on_change = out.refresh
    channel.on_timeout.append(timed_out)
    channel.chat_busy = lambda: chat.busy
    prepared.server.descriptor = lambda: debugger.server.descriptor  # /mcp tells the debugger's state too
    skills_manager = StreamableHTTPSessionManager(
        app=prepared.server.server, stateless=True, json_response=True, security_settings=prepared.security
    )

    async def supervise_browser() -> None:
        """Launch the console's Chromium, and relaunch it (the console re-attaches) whenever it dies."""
        assert headless is not None
        for _launch in range(MAX_RELAUNCHES + 1):
            try:
                await headless.start()
            except Exception as err:  # no chromium, or it would not start: the console still serves
                out.browser_error = str(err) if isinstance(err, NoBrowser) else f"{type(err).__name__}: {err}"
                out.refresh()
                await headless.stop()
                if isinstance(err, NoBrowser):
                    return  # nothing to launch: trying again changes nothing
                continue
            out.browser_error = None
            out.refresh()
            await headless.wait_closed()
            out.browser_error = "the headless Chromium exited; relaunching it"
            out.refresh()
            await headless.stop()

    @contextlib.asynccontextmanager
    async def lifespan(_app: Any) -> AsyncIterator[None]:
        async with skills_manager.run(), debugger.lifespan():
            task = asyncio.get_running_loop().create_task(supervise_browser()) if headless is not None else None
            try:
                yield
            finally:
                out.stop_work()
                if task is not None:
                    task.cancel()
                    with contextlib.suppress(BaseException):
                        await task
                if headless is not None:
                    await headless.stop()
                page.page_sessions.close()
                await shooter.close()
                await chromium.close()
                await prepared.server.close()

    routes = [
        Route(MCP_PATH, endpoint=Cors(StreamableHTTPASGIApp(skills_manager), reflect_origin=True)),
        *debugger.routes,
        *channel.routes(),
        *page.routes(),
    ]
    inner = TurnScope(Starlette(routes=routes, lifespan=lifespan), chat)
    out.app = DebugGuard(inner, prepared.security, out.token)
    return out


def _bundled_browser() -> bool:
    """Whether Playwright has a Chromium of its own installed (``playwright install chromium``)."""
    import os
    from pathlib import Path

    root = os.environ.get("PLAYWRIGHT_BROWSERS_PATH") or str(Path.home() / ".cache" / "ms-playwright")
    return Path(root).is_dir() and any(p.name.startswith("chromium") for p in Path(root).iterdir())
