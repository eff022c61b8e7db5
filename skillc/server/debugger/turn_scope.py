"""Requests a chat turn makes to the skills' MCP run in that turn's :class:`CallGroup`.

The chat simulator is an MCP client of this very server: its tools/call arrives as a request of
its own, and the API call it starts runs on a task the MCP SDK creates from that request's context.
This ASGI middleware binds the turn's group (named by :data:`~.chat.TURN_HEADER`) to the request's
context, so the API calls inherit it and the turn's cancel trips their deadlines. An unknown or
finished turn id binds nothing: a header can only put a request under a running turn's cancel,
never take anything away from it.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from skillc.runtime.api.cancel import calls_in
from skillc.server.debugger.chat import TURN_HEADER, ChatSimulator

_HEADER = TURN_HEADER.encode("latin-1")


class TurnScope:
    def __init__(self, app: ASGIApp, chat: ChatSimulator) -> None:
        self.app = app
        self.chat = chat

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        group = None
        if scope.get("type") == "http":
            turn = next((v for k, v in scope.get("headers") or [] if k.lower() == _HEADER), None)
            if turn is not None:
                group = self.chat.groups.get(turn.decode("latin-1"))
        if group is None:
            await self.app(scope, receive, send)
            return
        with calls_in(group):
            await self.app(scope, receive, send)
