"""The ASGI application: Streamable HTTP at ``/mcp`` (stateless, JSON responses), CORS, DNS-rebinding guard.

The SDK's session manager must run inside the application's lifespan; Starlette never runs a
mounted app's lifespan, so the app below runs it itself. The SDK answers no CORS preflight
(OPTIONS is a 405), and Starlette's CORSMiddleware answers 200; browsers accept both, but the
spec'd answer to a preflight is 204, so a small wrapper answers it.

A browser (``GET`` whose Accept names text/html and not text/event-stream) gets the info page
(skillc.server.info_page) at ``/mcp`` and at ``/``; the DNS-rebinding guard applies to it too.
``/healthz`` and ``/readyz`` (skillc.server.health) answer load balancers, outside MCP and the guard,
and so does ``/metrics`` (skillc.server.metrics) a Prometheus scraper. Every HTTP request gets a
request id and, when it has no MCP request line of its own, a line (skillc.server.http_log).

With auth (skillc.server.auth), every MCP request to ``/mcp`` needs a verified bearer token and runs
as its caller; the protected-resource metadata is served at ``/.well-known/oauth-protected-resource/mcp``.
The info page (``/``, and ``/mcp`` for a browser) stays public: it lists the served tools, which
every caller is listed the same, and nothing of any user. The health probes stay public too.

Two session managers serve the one MCP server. 2025-era requests get JSON responses, as
before. A 2026-07-28 request goes to a manager without the JSON-only setting: its answer is still
one JSON document unless the call emits a notification (the console lines a client asked for
with the ``logLevel`` ``_meta`` key), which the JSON-only mode would drop; then it is an event
stream that carries the notifications and the result.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import anyio.to_thread
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from skillc.server import metrics
from skillc.server.auth.config import AuthConfig
from skillc.server.health import HEALTHZ_PATH, READYZ_PATH, HealthEndpoints
from skillc.server.http_log import HttpLog
from skillc.server.info_page import HEADERS, render_info_page, wants_page
from skillc.server.skill_server import SkillServer

MCP_PATH = "/mcp"
METRICS_PATH = "/metrics"
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")

_CORS_ALLOW = [
    (b"access-control-allow-origin", b"*"),
    (b"access-control-allow-methods", b"GET, POST, DELETE, OPTIONS"),
    (
        b"access-control-allow-headers",
        b"content-type, accept, authorization, mcp-protocol-version, mcp-session-id, last-event-id, "
        b"mcp-method, mcp-name, x-request-id",
    ),
    (b"access-control-expose-headers", b"mcp-session-id, mcp-protocol-version, x-request-id"),
    (b"access-control-max-age", b"86400"),
]
_CORS_RESPONSE = [h for h in _CORS_ALLOW if h[0] in (b"access-control-allow-origin", b"access-control-expose-headers")]


def security_settings(
    protect: bool, extra_hosts: tuple[str, ...] = (), extra_origins: tuple[str, ...] = ()
) -> TransportSecuritySettings:
    """Loopback Host and Origin headers only (any port), plus what the user adds; off when not ``protect``."""
    if not protect:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    hosts = [h for base in LOOPBACK_HOSTS for h in (base, f"{base}:*")]
    origins = [f"http://{base}:*" for base in LOOPBACK_HOSTS] + [f"http://{base}" for base in LOOPBACK_HOSTS]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=hosts + list(extra_hosts),
        allowed_origins=[*origins, "null", *extra_origins],
    )


class Cors:
    """Answer preflight with 204; add the allow-origin and expose headers to every other response.

    ``reflect_origin``: allow the request's own Origin (only when it sent one) instead of ``*``, for
    a server whose guard already refused every Origin off its allow-list (``skillc debug``), so no
    page elsewhere may read its answers. ``null`` (sandboxed frames, any site can make one) passes
    the guard but is not reflected: such a page then cannot send the JSON an MCP endpoint needs."""

    def __init__(self, app: ASGIApp, *, reflect_origin: bool = False) -> None:
        self.app = app
        self.reflect_origin = reflect_origin

    def _headers(self, scope: Scope, headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
        if not self.reflect_origin:
            return headers
        origin = next((v for k, v in scope.get("headers", []) if k.lower() == b"origin"), None)
        rest = [h for h in headers if h[0] != b"access-control-allow-origin"]
        if origin is None or origin == b"null":
            return rest
        return [(b"access-control-allow-origin", origin), (b"vary", b"Origin"), *rest]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope["method"] == "OPTIONS":
            await send({"type": "http.response.start", "status": 204, "headers": self._headers(scope, _CORS_ALLOW)})
            await send({"type": "http.response.body", "body": b""})
            return
        response_headers = self._headers(scope, _CORS_RESPONSE)

        async def with_cors(message: Message) -> None:
            if message["type"] == "http.response.start":
                names = {k.lower() for k, _ in message.get("headers", [])}
                extra = [h for h in response_headers if h[0] not in names]
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        await self.app(scope, receive, with_cors)


class InfoPage:
    """The info page as an ASGI app; the endpoint URL is the one the browser used (its Host)."""

    def __init__(self, server: SkillServer, security: TransportSecuritySettings) -> None:
        self.server = server
        self.guard = TransportSecurityMiddleware(security)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        response: Response | None = await self.guard.validate_request(request, is_post=False)
        if response is None:
            host = request.headers.get("host") or _server_host(scope)
            endpoint = f"{scope.get('scheme', 'http')}://{host}{MCP_PATH}"
            response = HTMLResponse(render_info_page(self.server.catalogue, endpoint), headers=HEADERS)
        await response(scope, receive, send)


class McpOrPage:
    """``/mcp``: the info page for a browser's GET, the Streamable HTTP endpoint for everything else
    (``modern`` for a request that names a 2026-era protocol version, ``legacy`` for the rest)."""

    def __init__(self, legacy: ASGIApp, modern: ASGIApp, page: InfoPage) -> None:
        self.legacy = legacy
        self.modern = modern
        self.page = page

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = scope.get("headers", [])
        if scope["type"] == "http" and scope["method"] in ("GET", "HEAD"):
            accept = ", ".join(v.decode("latin-1") for k, v in headers if k.lower() == b"accept")
            if wants_page(accept):
                await self.page(scope, receive, send)
                return
        version = next((v.decode("latin-1").strip() for k, v in headers if k.lower() == b"mcp-protocol-version"), "")
        # The SDK routes the same way: no version or a handshake version is the 2025 path.
        modern = bool(version) and version not in HANDSHAKE_PROTOCOL_VERSIONS
        await (self.modern if modern else self.legacy)(scope, receive, send)


def _server_host(scope: Scope) -> str:
    host, port = scope.get("server") or ("127.0.0.1", 80)
    return f"[{host}]:{port}" if ":" in str(host) else f"{host}:{port}"


def build_app(
    server: SkillServer,
    security: TransportSecuritySettings,
    health: HealthEndpoints | None = None,
    auth: AuthConfig | None = None,
) -> HttpLog:
    manager = StreamableHTTPSessionManager(
        app=server.server, stateless=True, json_response=True, security_settings=security
    )
    streaming = StreamableHTTPSessionManager(
        app=server.server, stateless=True, json_response=False, security_settings=security
    )

    @contextlib.asynccontextmanager
    async def lifespan(_app: Any) -> AsyncIterator[None]:
        watch = metrics.StoreWatch(health.ping) if health is not None else None
        if watch is not None:
            watch.start()
        async with manager.run(), streaming.run():
            try:
                yield
            finally:
                if watch is not None:
                    await anyio.to_thread.run_sync(watch.stop)
                await server.close()

    page = InfoPage(server, security)
    legacy: ASGIApp = StreamableHTTPASGIApp(manager)
    modern: ASGIApp = StreamableHTTPASGIApp(streaming)
    routes: list[BaseRoute] = []
    if auth is not None:
        from skillc.server.auth.middleware import metadata_routes, protect, token_verifier

        verifier = token_verifier(auth)
        legacy, modern = protect(legacy, auth, verifier), protect(modern, auth, verifier)
        routes += metadata_routes(auth)
    endpoint = McpOrPage(legacy, modern, page)
    routes += [Route(MCP_PATH, endpoint=endpoint), Route("/", endpoint=page, methods=["GET", "HEAD"])]
    if health is not None:
        # Before the guard on purpose: load balancers probe by address, with no Origin (skillc.server.health).
        routes += [
            Route(HEALTHZ_PATH, endpoint=health.healthz, methods=["GET", "HEAD"]),
            Route(READYZ_PATH, endpoint=health.readyz, methods=["GET", "HEAD"]),
            Route(METRICS_PATH, endpoint=_metrics, methods=["GET", "HEAD"]),
        ]
        metrics.serve_tools(t.name for t in server.tools.tools())
    app = Starlette(routes=routes, lifespan=lifespan)
    paths = frozenset(r.path for r in routes if isinstance(r, Route))
    # Outermost: a preflight that Cors answers itself gets its id and its line too.
    return HttpLog(Cors(app), paths)


async def _metrics(_request: Request) -> Response:
    # Off the event loop: summing the workers' files reads a file per worker and metric kind.
    body = await anyio.to_thread.run_sync(metrics.exposition)
    return Response(body, media_type=metrics.CONTENT_TYPE, headers={"cache-control": "no-store"})
