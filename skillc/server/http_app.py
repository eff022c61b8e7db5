"""The ASGI application: Streamable HTTP at ``/mcp`` (stateless, JSON responses), CORS, DNS-rebinding guard.

The SDK's session manager must run inside the application's lifespan; Starlette never runs a
mounted app's lifespan, so the app below runs it itself. The SDK answers no CORS preflight
(OPTIONS is a 405), and Starlette's CORSMiddleware answers 200; browsers accept both, but the
spec'd answer to a preflight is 204, so a small wrapper answers it.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from skillc.server.skill_server import SkillServer

MCP_PATH = "/mcp"
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")

_CORS_ALLOW = [
    (b"access-control-allow-origin", b"*"),
    (b"access-control-allow-methods", b"GET, POST, DELETE, OPTIONS"),
    (
        b"access-control-allow-headers",
        b"content-type, accept, authorization, mcp-protocol-version, mcp-session-id, last-event-id, "
        b"mcp-method, mcp-name",
    ),
    (b"access-control-expose-headers", b"mcp-session-id, mcp-protocol-version"),
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
    """Answer preflight with 204; add the allow-origin and expose headers to every other response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope["method"] == "OPTIONS":
            await send({"type": "http.response.start", "status": 204, "headers": _CORS_ALLOW})
            await send({"type": "http.response.body", "body": b""})
            return

        async def with_cors(message: Message) -> None:
            if message["type"] == "http.response.start":
                names = {k.lower() for k, _ in message.get("headers", [])}
                extra = [h for h in _CORS_RESPONSE if h[0] not in names]
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        await self.app(scope, receive, with_cors)


def build_app(server: SkillServer, security: TransportSecuritySettings) -> Cors:
    manager = StreamableHTTPSessionManager(
        app=server.server, stateless=True, json_response=True, security_settings=security
    )

    @contextlib.asynccontextmanager
    async def lifespan(_app: Any) -> AsyncIterator[None]:
        async with manager.run():
            try:
                yield
            finally:
                await server.close()

    endpoint = StreamableHTTPASGIApp(manager)
    app = Starlette(routes=[Route(MCP_PATH, endpoint=endpoint)], lifespan=lifespan)
    return Cors(app)
