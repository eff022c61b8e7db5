"""The error codes of the Debugger MCP (DEBUGGER-PROTOCOL.md, "Safety boundary"), exactly as spelled there.

A failed tool returns an MCP error result (``isError: true``) whose ``structuredContent`` is
``{"error": {"code", "message"}}``; ``content[0].text`` is the same JSON pretty-printed.
"""

from __future__ import annotations

import json
from typing import Any, Final, Literal

from mcp_types import CallToolResult, TextContent

ErrorCode = Literal[
    "DEBUGGER_NOT_CONNECTED",
    "DEBUGGER_DISCONNECTED",
    "TARGET_NOT_FOUND",
    "TARGET_MISMATCH",
    "ELEMENT_NOT_FOUND",
    "RENDER_FAILED",
    "RENDER_TIMEOUT",
    "VIEWPORT_FAILED",
    "INSPECTION_FAILED",
    "SCROLL_FAILED",
    "SCREENSHOT_FAILED",
    "CHAT_NOT_READY",
    "CHAT_BUSY",
    "CHAT_SUBMIT_FAILED",
    "CHAT_TIMEOUT",
    "COMMAND_TIMEOUT",
]

ERROR_CODES: Final[tuple[str, ...]] = ErrorCode.__args__  # type: ignore[attr-defined]


class DebuggerError(Exception):
    """A tool failure with one of the protocol's codes. A :class:`ConsoleChannel` raises it too."""

    def __init__(self, code: ErrorCode, message: str, details: dict[str, Any] | None = None) -> None:
        if code not in ERROR_CODES:
            raise ValueError(f"{code!r} is not an error code of the Debugger protocol")
        super().__init__(message)
        self.code: ErrorCode = code
        self.message = message
        self.details = details

    def result(self) -> CallToolResult:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.details:
            error["details"] = self.details
        body = {"error": error}
        return CallToolResult(
            content=[TextContent(text=json.dumps(body, ensure_ascii=False, indent=2))],
            structured_content=body,
            is_error=True,
        )
