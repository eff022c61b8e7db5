"""The `json` backend: the Render IR itself, as deterministic JSON."""

from __future__ import annotations

from skillc.backends.base import DEFAULT_OPTIONS, RenderOptions
from skillc.ir.render import RenderDocument


class JsonBackend:
    """Sorted keys and fixed separators, so equal documents give identical bytes.

    The document's own serialiser is the single definition of the format; this backend only
    adds the trailing newline a file on disk is expected to end with.
    """

    name = "json"
    media_type = "application/json"
    extension = ".json"

    def render(self, doc: RenderDocument, *, options: RenderOptions | None = None) -> str:
        opts = options or DEFAULT_OPTIONS
        return doc.to_json(indent=opts.indent) + "\n"
