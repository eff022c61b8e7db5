"""A state-store fault as a tool result: ``isError`` with the fault's code, never a JSON-RPC error.

A client (or the model behind it) can act on a named fault (SRV050: the store did not answer,
try again; SRV051: the server is saturated), where a protocol error with a driver's text tells it
nothing and loses what the call did. The code leads the text, and ``structuredContent`` carries
it for a program to read.
"""

from __future__ import annotations

from mcp_types import CallToolResult, TextContent

from skillc.runtime.state import StateError


def store_fault(err: StateError) -> CallToolResult:
    message = str(err).splitlines()[0] if str(err) else type(err).__name__
    text = message if message.startswith(err.code) else f"{err.code} {message}"
    return CallToolResult(
        content=[TextContent(text=text)],
        structured_content={"error": {"code": err.code, "message": text}},
        is_error=True,
    )
