"""The one way the Debugger MCP reaches the browser: a :class:`ConsoleChannel` to the debug console page.

The debugger server sends a command named after the tool (``render_page``, ``render_widget``,
``submit_chat_query``, ``set_viewport``, ``get_computed_style``, ``get_element_rect``,
``scroll_to``, ``take_screenshot``) with the tool's arguments (camelCase, as the protocol spells
them, defaults filled in) and waits up to ``timeout_s``. The channel answers a JSON object
(:mod:`skillc.server.debugger.tools` documents what each command answers) or raises
:class:`~skillc.server.debugger.errors.DebuggerError` with the protocol's code
(``DEBUGGER_NOT_CONNECTED`` when no console is attached, ``DEBUGGER_DISCONNECTED`` when the SSE
stream dropped during the command, ``ELEMENT_NOT_FOUND``, ``RENDER_FAILED``...). A
``TimeoutError`` it raises becomes ``RENDER_TIMEOUT`` / ``CHAT_TIMEOUT`` / ``COMMAND_TIMEOUT``.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from skillc.server.debugger.errors import DebuggerError

COMMAND_TIMEOUT_S = 15.0
CHAT_TIMEOUT_S = 120.0

COMMANDS = (
    "render_page",
    "render_widget",
    "submit_chat_query",
    "set_viewport",
    "get_computed_style",
    "get_element_rect",
    "scroll_to",
    "take_screenshot",
)


@runtime_checkable
class ConsoleChannel(Protocol):
    async def command(self, name: str, params: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        """Run one control command in the console; serial per console (the channel's job)."""
        ...


class NoConsole:
    """The channel before a console is attached: every command is ``DEBUGGER_NOT_CONNECTED``."""

    async def command(self, name: str, params: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        raise DebuggerError(
            "DEBUGGER_NOT_CONNECTED",
            f"no debug console is attached, so {name} cannot run; open the debug console page "
            "(or start `skillc debug` without --no-browser)",
        )
