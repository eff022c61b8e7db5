"""Runtime: QuickJS (quickjs-ng) contexts for the Atomic API VM and the Atomic Component VM,
the wx.* host boundary (storage in SQLite, allow-listed wx.request), and the orchestrator
that runs every api/call through one call chain. Never imports `backends` or `server`.

Entry points: `orchestrator.ApiRuntime` (the call chain), `contracts` (the pydantic models that
leave the runtime), `engine.JsSession` (a locked-down context with deadline, console capture,
JSON bridge and async host calls, for any VM), `host.ApiHost` (the wx.* host boundary).
See docs/runtime.md and docs/security.md.
"""
