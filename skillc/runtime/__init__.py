"""Runtime: QuickJS (quickjs-ng) contexts for the Atomic API VM and the Atomic Component VM,
the wx.* host boundary (storage in SQLite, allow-listed wx.request), and the orchestrator
that runs every api/call through one call chain. Never imports `backends` or `server`.
"""
