"""The MCP server of ``skillc serve``: skills as MCP tools with MCP Apps ``ui://`` cards.

Every served tool is a spec in a :mod:`registry <skillc.server.registry>`; the Debugger MCP
(not built yet) will register its tools the same way.
"""
