"""Phase 3, emit: Render IR -> JSON | CardSpec (Adaptive Cards 1.5 profile) | HTML.

Backends register through the entry-point group `skillc.backends`; they know only `ir`.
"""
