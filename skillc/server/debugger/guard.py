"""The gate in front of every route of ``skillc debug``: Host/Origin, the launch token, body size.

The console's routes can start chat turns (payments, with ``--approve-all``), attach as the console
that receives the Debugger MCP's commands, answer those commands and read the runtime console. A
page on another origin, a DNS-rebinding Host or another local user must reach none of them, so:

1. Host and Origin go through the same check (and allow-list) as ``/mcp``: the SDK's
   :class:`TransportSecurityMiddleware` with the server's settings (421 for a Host, 403 for an Origin).
2. The console's own routes (SSE, answer, ``/__debug/api/*``, ``/__agent_trace``) need the per-launch
   token the printed console URL carries (``?token=``), sent back as the :data:`TOKEN_HEADER` header or
   the ``token`` query parameter (EventSource cannot set headers). A cross-origin form or ``no-cors``
   fetch passes no Origin check on a browser that omits Origin, but cannot know the token.
   The MCP endpoints keep the MCP guard alone: an MCP client has no console URL.
3. A POST body is cut at the MCP endpoints' limit (the SDK's :class:`RequestBodyLimitMiddleware`),
   before the route reads it.

Every refusal happens before any body is read and is a one-line JSON ``{"error": ...}``.
"""

from __future__ import annotations

import hmac
import json
import secrets
from typing import Any

from mcp.server.transport_security import (
    DEFAULT_MAX_REQUEST_BODY_SIZE,
    RequestBodyLimitMiddleware,
    TransportSecurityMiddleware,
    TransportSecuritySettings,
)
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from skillc.runtime.api.values import json_depth, too_deep

TOKEN_HEADER = "x-skillc-debug-token"
TOKEN_QUERY = "token"
MAX_BODY_BYTES = DEFAULT_MAX_REQUEST_BODY_SIZE  # what /mcp and /__wsd_mcp accept
# Deeper than the API values' 64: a DOM snapshot nests two levels per element. Far under the
# recursion json.loads and pydantic would hit.
MAX_JSON_DEPTH = 400
# Guarded by the MCP transport's own checks (Host/Origin and body size), no token: see the module doc.
MCP_PATHS = ("/mcp", "/__wsd_mcp")
# The page and its script and style: nothing in them is secret, and the page must load to read its token.
OPEN_PATHS = ("/", "/__debug", "/__debug/static/")


def new_token() -> str:
    """A per-launch secret: 256 bits, URL-safe."""
    return secrets.token_urlsafe(32)


def _needs_token(path: str) -> bool:
    if path in MCP_PATHS or path in OPEN_PATHS[:2]:
        return False
    return not path.startswith(OPEN_PATHS[2])


class DebugGuard:
    """ASGI middleware over the whole debug server (see the module doc)."""

    def __init__(
        self, app: ASGIApp, security: TransportSecuritySettings, token: str, max_body: int = MAX_BODY_BYTES
    ) -> None:
        self.app = app
        self.hosts = TransportSecurityMiddleware(security)
        self.token = token.encode()
        self.limited = RequestBodyLimitMiddleware(app, max_body)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        refused = await self.hosts.validate_request(request, is_post=False)
        if refused is not None:
            reason = bytes(refused.body).decode("utf-8", "replace")
            await refuse(refused.status_code, reason)(scope, receive, send)
            return
        path = str(scope.get("path", ""))
        if _needs_token(path) and not self._has_token(request):
            await refuse(403, "missing or wrong debug console token (use the console URL skillc debug printed)")(
                scope, receive, send
            )
            return
        if path in MCP_PATHS:  # the SDK limits these bodies itself
            await self.app(scope, receive, send)
            return
        await self.limited(scope, receive, send)

    def _has_token(self, request: Request) -> bool:
        given = request.headers.get(TOKEN_HEADER) or request.query_params.get(TOKEN_QUERY) or ""
        # Constant time, so the token cannot be found a byte at a time.
        return hmac.compare_digest(given.encode("utf-8", "replace"), self.token)


def refuse(status: int, reason: str) -> JSONResponse:
    return JSONResponse({"error": " ".join(reason.split())}, status_code=status, headers={"Cache-Control": "no-store"})


class BadJson(ValueError):
    """A body that is not JSON, or nests too deep to parse safely; the message is one line."""


async def read_json(request: Request, max_bytes: int = MAX_BODY_BYTES, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """The request body as JSON: at most ``max_bytes`` (counted as it streams in) and ``max_depth``
    levels of arrays/objects, checked before parsing (json.loads recurses, and a RecursionError
    would be a 500). Raises :class:`BadJson`."""
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > max_bytes:
            raise BadJson(f"the body is over {max_bytes} bytes")
    try:
        text = bytes(body).decode("utf-8")
    except UnicodeDecodeError as err:
        raise BadJson("the body is not UTF-8") from err
    depth = json_depth(text)
    if depth > max_depth:
        raise BadJson(f"the body is too deeply nested: {too_deep(depth, max_depth)}")
    try:
        return json.loads(text)
    except ValueError as err:
        raise BadJson(f"not JSON: {err}") from err
