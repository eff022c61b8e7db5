"""The HTTP layer's part of the request log: a request id for every HTTP request, and a line for
each one that has no MCP request line of its own.

The id is bound (skillc.server.request_log) before anything else runs, so the MCP handler's line,
any warning or traceback logged while the request runs, and this layer's line all carry it; the
response sends it back in ``X-Request-Id``. A GET (probe, scrape, info page), a HEAD, a DELETE, and
an MCP POST that never reached a handler (refused by the DNS-rebinding guard or auth, not JSON, a
notification) is one line here: method, path, status, time.
"""

from __future__ import annotations

import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from skillc.server import request_log

REQUEST_ID_HEADER = b"x-request-id"
_PATH_SHOWN = 200  # of a path a client made up, what the line shows


class HttpLog:
    def __init__(self, app: ASGIApp, paths: frozenset[str]) -> None:
        self.app = app
        self.paths = paths  # the served paths: any other is logged and counted as "other"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        header = next((v for k, v in scope.get("headers", []) if k == REQUEST_ID_HEADER), None)
        request_id = request_log.request_id_of(header.decode("latin-1") if header is not None else None)
        context, token = request_log.bind_request(request_id)
        status = 500  # a handler that raised before it answered: uvicorn answers 500
        started = time.perf_counter()

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                message = {
                    **message,
                    "headers": [*message.get("headers", []), (REQUEST_ID_HEADER, request_id.encode("latin-1"))],
                }
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            if context.lines == 0:
                path = str(scope.get("path", ""))
                ms = (time.perf_counter() - started) * 1000
                record = request_log.HttpRecord(scope["method"], path[:_PATH_SHOWN], status, ms, request_id)
                request_log.emit_http(record, path if path in self.paths else "other")
            request_log.unbind(token)
