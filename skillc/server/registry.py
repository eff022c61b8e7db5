"""The tool registry: every tool a server offers is one :class:`ToolSpec` (its MCP ``Tool`` and its
handler), and ``tools/call`` is a lookup in it.

The skill server registers one spec per served API and the card-event tool; the Debugger MCP
registers its own tools in a registry of its own. A handler gets the request context and the
call's parameters and answers with a result; whatever it raises reaches the client as an
``isError`` result (never an HTTP 500), and the server log keeps the traceback.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from mcp.server.context import ServerRequestContext
from mcp_types import CallToolRequestParams, CallToolResult, InputRequiredResult, TextContent, Tool
from pydantic import BaseModel

from skillc.runtime.state import StateError

log = logging.getLogger("skillc.server")

ToolResult = CallToolResult | InputRequiredResult
ToolHandler = Callable[[ServerRequestContext[Any], CallToolRequestParams], Awaitable[ToolResult]]


def error_result(message: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(text=message)], is_error=True)


def store_fault(err: StateError) -> CallToolResult:
    """A state-store fault as a result: ``isError`` with the fault's code leading the text (and in
    ``structuredContent.error.code``), never a JSON-RPC error with a driver's text. A client can
    act on it (SRV050: the store did not answer, try again; SRV051: the server is saturated)."""
    message = str(err).splitlines()[0] if str(err) else type(err).__name__
    text = message if message.startswith(err.code) else f"{err.code} {message}"
    return CallToolResult(
        content=[TextContent(text=text)],
        structured_content={"error": {"code": err.code, "message": text}},
        is_error=True,
    )


def output_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON Schema of a result model, in its wire (camelCase) form, as ``outputSchema``."""
    return model.model_json_schema(by_alias=True, mode="serialization")


@dataclass(frozen=True)
class ToolSpec:
    """One served tool. ``app_only``: called by a card view, never by the model (so an unknown
    tool's error does not offer it)."""

    tool: Tool
    handler: ToolHandler
    app_only: bool = False

    @property
    def name(self) -> str:
        return self.tool.name


class ToolRegistry:
    """Tools by name, in registration order (the order ``tools/list`` gives)."""

    def __init__(self) -> None:
        self._specs: dict[str, ToolSpec] = {}
        self._input_schemas: dict[str, dict[str, Any] | None] = {}

    def add(self, spec: ToolSpec) -> None:
        if spec.name in self._specs:
            raise ValueError(f"two tools are named {spec.name}")
        self._specs[spec.name] = spec

    def get(self, name: str) -> ToolSpec | None:
        return self._specs.get(name)

    def tools(self) -> list[Tool]:
        return [s.tool for s in self._specs.values()]

    def input_schema(self, name: str) -> dict[str, Any] | None:
        """``name``'s inputSchema as ``tools/list`` advertises it (a tool is never replaced, so it is
        dumped once). The SDK checks ``Mcp-Param-*`` headers against it; without it, the SDK runs the
        whole ``tools/list`` handler on every 2026-era ``tools/call``."""
        spec = self._specs.get(name)
        if spec is None:
            return None
        if name not in self._input_schemas:
            wire = spec.tool.model_dump(by_alias=True, mode="json", exclude_none=True)
            schema = wire.get("inputSchema")
            self._input_schemas[name] = schema if isinstance(schema, dict) else None
        return self._input_schemas[name]

    def __contains__(self, name: object) -> bool:
        return name in self._specs

    def __len__(self) -> int:
        return len(self._specs)

    async def call(self, ctx: ServerRequestContext[Any], params: CallToolRequestParams) -> ToolResult:
        spec = self._specs.get(params.name)
        if spec is None:
            known = ", ".join(sorted(s.name for s in self._specs.values() if not s.app_only)) or "none"
            return error_result(f"Unknown tool: {params.name} (tools: {known})")
        try:
            return await spec.handler(ctx, params)
        except StateError as err:  # the store failed, not us: a named fault, logged with the request
            return store_fault(err)
        except Exception as err:  # a bug of ours must reach the client as a result, never an HTTP 500
            log.exception("tools/call %s failed", params.name)
            return error_result(f"skillc could not run {params.name}: internal error ({type(err).__name__}: {err})")
