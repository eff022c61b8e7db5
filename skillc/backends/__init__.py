"""Phase 3, emit: Render IR -> JSON | CardSpec (Adaptive Cards 1.5 profile) | HTML.

Backends register through the entry-point group `skillc.backends`; they know only `ir`.

Use :func:`skillc.backends.registry.get_backend` (``get_backend("html").render(doc)``); the
contract a backend meets is :class:`skillc.backends.base.Backend`. docs/backends.md and
docs/cardspec.md describe the outputs.
"""
