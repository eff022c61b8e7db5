"""The Debugger MCP at ``/__wsd_mcp`` (DEBUGGER-PROTOCOL.md): snapshots posted by the debug console
to ``/__agent_trace``, the 15 tools, the debug descriptor; the browser is reached through one
:class:`ConsoleChannel`."""

from skillc.server.debugger.app import (
    AGENT_TRACE_PATH,
    DEBUGGER_PATH,
    DebuggerApp,
    DebuggerServer,
    build_debugger_app,
    catalogue_targets,
)
from skillc.server.debugger.channel import ConsoleChannel, NoConsole
from skillc.server.debugger.errors import ERROR_CODES, DebuggerError
from skillc.server.debugger.snapshot import AgentTraceSnapshot, SnapshotStore
from skillc.server.descriptor import DESCRIPTOR_URI, DebugDescriptor

__all__ = [
    "AGENT_TRACE_PATH",
    "DEBUGGER_PATH",
    "DESCRIPTOR_URI",
    "ERROR_CODES",
    "AgentTraceSnapshot",
    "ConsoleChannel",
    "DebugDescriptor",
    "DebuggerApp",
    "DebuggerError",
    "DebuggerServer",
    "NoConsole",
    "SnapshotStore",
    "build_debugger_app",
    "catalogue_targets",
]
