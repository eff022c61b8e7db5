"""Runtime: QuickJS (quickjs-ng) contexts for the Atomic API VM and the Atomic Component VM.

By part, each depending only on those before it (tests/test_architecture.py enforces it):

- ``sandbox/``: the engine (``JsSession``: a locked-down context with deadline, console capture,
  JSON bridge and async host calls) and the CommonJS module loader both VMs share;
- ``host/``: the wx.* boundary: one host-call table (``host.calls.HOST_CALLS``), its handlers
  (``host.api_host.ApiHost``), scoped storage, the state database, allow-listed wx.request;
- ``api/``: the Atomic API VM and the one call chain (``api.api_runtime.ApiRuntime``);
- ``cards/``: the Atomic Component VM, card instances and the card host (``cards.card_host.CardHost``);
- ``flows/``: scripted conversations (``skillc run``).

``contracts`` (the pydantic models that leave the runtime) and ``config`` serve every part. The
runtime never imports ``backends`` or ``server``. See docs/runtime.md and docs/security.md.
"""
