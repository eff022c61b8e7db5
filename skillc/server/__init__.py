"""Servers: skills as MCP tools with MCP Apps ui:// cards (`skillc serve`), and the
Debugger MCP at /__wsd_mcp with its debug console page (`skillc debug`).
"""
