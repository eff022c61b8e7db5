"""An MCP client that continues its session as a compliant host does (docs/serve.md "Sessions"):
it sends back, in each request's ``_meta["skillc/session"]``, the session the server named in its
last tool result. The official SDK ``Client`` otherwise: nothing is stubbed."""

from __future__ import annotations

from typing import Any

from mcp.client import Client
from mcp_types import CallToolResult, ReadResourceResult

SESSION_META = "skillc/session"


class SessionClient(Client):
    skillc_session: str | None = None

    def _meta(self, meta: Any) -> Any:
        if self.skillc_session is None:
            return meta
        return {SESSION_META: self.skillc_session, **(meta or {})}  # a test's own _meta wins

    async def call_tool(self, name: str, arguments: dict[str, Any] | None = None, *args: Any, **kw: Any) -> Any:
        kw["meta"] = self._meta(kw.get("meta"))
        result = await super().call_tool(name, arguments, *args, **kw)
        named = (result.meta or {}).get(SESSION_META) if isinstance(result, CallToolResult) else None
        if isinstance(named, str):
            self.skillc_session = named
        return result

    async def read_resource(self, uri: str, **kw: Any) -> ReadResourceResult:
        kw["meta"] = self._meta(kw.get("meta"))
        return await super().read_resource(uri, **kw)
