"""The Debugger MCP as ASGI routes: ``/__wsd_mcp`` (Streamable HTTP, stateless, JSON responses, both
protocol eras, OPTIONS 204) and ``/__agent_trace`` (where the console posts snapshots).

``build_debugger_app(catalogue, channel)`` gives a :class:`DebuggerApp`: mount its ``routes`` beside
``/mcp`` and the console page and enter its ``lifespan()`` in the outer app's lifespan (Starlette
never runs a mounted app's lifespan), or serve ``app`` alone.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_PARAMS,
    CallToolRequestParams,
    ListResourcesResult,
    ListToolsResult,
    PaginatedRequestParams,
    ReadResourceRequestParams,
    ReadResourceResult,
)
from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from skillc import __version__
from skillc.server.artefacts import ArtefactStore, parse_uri
from skillc.server.catalog import Catalogue
from skillc.server.debugger.channel import CHAT_TIMEOUT_S, COMMAND_TIMEOUT_S, ConsoleChannel, NoConsole
from skillc.server.debugger.guard import MAX_BODY_BYTES, BadJson, read_json
from skillc.server.debugger.snapshot import AgentTraceSnapshot, PageTarget, RenderTargets, SnapshotStore, WidgetTarget
from skillc.server.debugger.tools import DebuggerTools
from skillc.server.descriptor import DESCRIPTOR_URI, DebugDescriptor, descriptor_read, descriptor_resource
from skillc.server.http_app import Cors, security_settings
from skillc.server.registry import ToolResult
from skillc.server.results import wire_safe
from skillc.server.tools import HANDOFF_VIEW

DEBUGGER_PATH = "/__wsd_mcp"
AGENT_TRACE_PATH = "/__agent_trace"
MAX_SNAPSHOT_BYTES = MAX_BODY_BYTES  # the limit of every JSON body of the debug server


def catalogue_targets(catalogue: Catalogue | None) -> RenderTargets:
    """Widgets = the served components (widgetId = the component folder, ``<skill>/<folder>`` when two
    skills share one); pages = the routes APIs hand off to (``_meta.ui.pagePath``) and the cards'
    ``relatedPage``; the console runs a page as the handoff opens it (:mod:`skillc.server.debugger.pages`)."""
    if catalogue is None:
        return RenderTargets()
    comps = [(skill, path) for skill, path in catalogue.components.values() if path != HANDOFF_VIEW]
    folder = {c: c[1].split("/")[1] if c[1].count("/") == 2 else c[1] for c in comps}
    counts: dict[str, int] = {}
    for name in folder.values():
        counts[name] = counts.get(name, 0) + 1
    widgets = [
        WidgetTarget(widget_id=name if counts[name] == 1 else f"{skill}/{name}", name=name)
        for (skill, _path), name in folder.items()
    ]
    routes: list[str] = []
    for api in catalogue.apis.values():
        ui = api.spec.meta.ui if api.spec.meta is not None else None
        if ui is not None and ui.page_path:
            routes.append(ui.page_path)
    for loaded in catalogue.skills:
        manifest = loaded.package.manifest
        routes += [c.related_page for c in (manifest.components if manifest else []) if c.related_page]
    pages: dict[str, PageTarget] = {}
    for route in routes:
        route = route if route.startswith("/") else f"/{route}"
        pages.setdefault(route, PageTarget(page_id=route, path=route, name=route.strip("/"), is_home=False))
    return RenderTargets(pages=list(pages.values()), widgets=widgets)


@dataclass
class DebuggerApp:
    server: DebuggerServer
    manager: StreamableHTTPSessionManager
    routes: list[Route] = field(default_factory=list)

    @contextlib.asynccontextmanager
    async def lifespan(self) -> AsyncIterator[None]:
        async with self.manager.run():
            yield

    @property
    def app(self) -> Starlette:
        """The debugger alone (tests, embedders): its routes with its lifespan."""

        @contextlib.asynccontextmanager
        async def lifespan(_app: Any) -> AsyncIterator[None]:
            async with self.lifespan():
                yield

        return Starlette(routes=list(self.routes), lifespan=lifespan)


class DebuggerServer:
    """The low-level MCP server of the debugger: the 15 tools and the descriptor resource."""

    def __init__(self, tools: DebuggerTools, descriptor: DebugDescriptor) -> None:
        self.store = tools.store
        self.descriptor = descriptor
        self.tools = tools
        self.server: Server[Any] = Server(
            "skillc-debugger",
            version=__version__,
            instructions=(
                "The skillc debugger: render a skill's Widgets (cards) and Pages in the debug console, "
                "read their uid snapshot, styles, rects and screenshots, run chat turns, and page through "
                "the runtime console, trace events and tool calls. Call take_snapshot only when needed."
            ),
            on_list_tools=self.list_tools,
            on_call_tool=self.call_tool,
            on_list_resources=self.list_resources,
            on_read_resource=self.read_resource,
        )

    @property
    def channel(self) -> ConsoleChannel:
        return self.tools.channel

    @channel.setter
    def channel(self, channel: ConsoleChannel) -> None:
        """Attach (or replace) the console channel."""
        self.tools.channel = channel

    async def list_tools(
        self, _ctx: ServerRequestContext[Any], _params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        return ListToolsResult(tools=self.tools.registry.tools())

    async def call_tool(self, ctx: ServerRequestContext[Any], params: CallToolRequestParams) -> ToolResult:
        return wire_safe(await self.tools.registry.call(ctx, params))

    async def list_resources(
        self, _ctx: ServerRequestContext[Any], _params: PaginatedRequestParams | None
    ) -> ListResourcesResult:
        resource = descriptor_resource(
            "State, host, port, URLs, process id, runtime versions and skill paths of this debugger."
        )
        return ListResourcesResult(resources=[resource])

    async def read_resource(
        self, _ctx: ServerRequestContext[Any], params: ReadResourceRequestParams
    ) -> ReadResourceResult:
        uri = str(params.uri)
        if parse_uri(uri) is not None:
            blob = self.tools.artefacts.blob_contents(uri)  # screenshots taken with asRef
            if blob is None:
                raise MCPError(INVALID_PARAMS, f"Unknown resource: {uri}", {"uri": uri})
            return ReadResourceResult(contents=[blob])
        if uri != DESCRIPTOR_URI:
            raise MCPError(INVALID_PARAMS, f"Unknown resource: {uri}", {"uri": uri})
        return descriptor_read(self.descriptor)


def build_debugger_app(
    catalogue: Catalogue | None = None,
    channel: ConsoleChannel | None = None,
    *,
    store: SnapshotStore | None = None,
    descriptor: DebugDescriptor | None = None,
    security: TransportSecuritySettings | None = None,
    command_timeout_s: float = COMMAND_TIMEOUT_S,
    chat_timeout_s: float = CHAT_TIMEOUT_S,
    artefacts: ArtefactStore | None = None,
) -> DebuggerApp:
    """The debugger's routes over ``catalogue``'s render targets. ``channel``: the console (none yet:
    every browser tool answers DEBUGGER_NOT_CONNECTED; set ``app.server.channel`` later)."""
    store = store or SnapshotStore()
    if descriptor is None:
        skills = [s.display for s in catalogue.skills] if catalogue is not None else []
        descriptor = DebugDescriptor(skills=skills)
    tools = DebuggerTools(
        store,
        channel or NoConsole(),
        catalogue_targets(catalogue),
        command_timeout_s=command_timeout_s,
        chat_timeout_s=chat_timeout_s,
        artefacts=artefacts,
    )
    server = DebuggerServer(tools, descriptor)
    manager = StreamableHTTPSessionManager(
        app=server.server, stateless=True, json_response=True, security_settings=security or security_settings(True)
    )

    async def agent_trace(request: Request) -> Response:
        if request.method == "GET":
            head = store.header()
            if store.current is not None and store.current.snapshot.command_id is not None:
                head["commandId"] = store.current.snapshot.command_id
            return JSONResponse(head)
        try:
            raw = await read_json(request, MAX_SNAPSHOT_BYTES)
            snapshot = AgentTraceSnapshot.model_validate(raw)
        except ValidationError as err:
            return JSONResponse(
                {
                    "stored": False,
                    "error": "invalid snapshot",
                    "details": err.errors(include_url=False, include_context=False, include_input=False),
                },
                status_code=422,
            )
        except BadJson as err:
            return JSONResponse({"stored": False, "error": str(err)}, status_code=400)
        stored = store.put(snapshot)
        posted = getattr(server.channel, "snapshot_posted", None)
        if callable(posted):  # a channel that answers render commands from the snapshot (channel_sse)
            posted(raw)
        return JSONResponse({"stored": True, "storedAt": stored.stored_at, "updatedAtMs": snapshot.updated_at_ms})

    routes = [
        Route(DEBUGGER_PATH, endpoint=Cors(StreamableHTTPASGIApp(manager), reflect_origin=True)),
        # No CORS: only the console page, on this origin, posts snapshots.
        Route(AGENT_TRACE_PATH, endpoint=agent_trace, methods=["GET", "POST"]),
    ]
    return DebuggerApp(server, manager, routes)
