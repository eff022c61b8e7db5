"""First renders shared by the cards mounted on the same content.

A first render is a function of the component, the viewport and the data the component gave (its
JSON text), so every card mounted on the same content (every search for "latte") draws the same
Render IR. Rendering it is most of a mount's Python work; a card whose content has been drawn
before takes the kept document instead and builds its renderer's own state (the instance tree
that later setData patches diff against) only when something first needs it: a tap, a timer, a
restyle. Most cards are never touched, so most never build it.

A document is kept on the second sighting of its content, so a stream of cards that all differ
pays nothing but the lookup; the kept copy is apart from the drawing card's own (which later
patches change) and bounded in count and size. The card threads share one memo per card host.

A view of a card that shows a kept render carries the kept document itself, and its wire form
made once when it was kept: nothing changes either (a card that builds its renderer draws into
its own state from then on), and a view's document is read, never changed (card_models.CardView).
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

from skillc.diagnostics import Diagnostic
from skillc.ir.render import RenderDocument, json_bytes, to_plain
from skillc.runtime.cards.shared_memo import SharedMemo

FirstRenderKey = tuple[str, Hashable, str]  # component path, viewport, the data as JSON text


@dataclass(frozen=True)
class FirstRender:
    document: RenderDocument  # never changed: the views of the cards that show it share it
    height: float
    diagnostics: tuple[Diagnostic, ...]  # what the render reported, reported again by each card
    plain: dict[str, Any]  # the document's wire form (ir.render.to_plain), shared as the document is
    wire_bytes: int  # its size as compact UTF-8 JSON: each view's, without writing it


class FirstRenders(SharedMemo[FirstRenderKey, FirstRender]):
    """Bounded, oldest out first. ``max_nodes``: a bigger document is not kept (its memory is
    better spent on the live cards)."""

    def __init__(self, bound: int = 64, max_nodes: int = 2000) -> None:
        super().__init__(bound)
        self.max_nodes = max_nodes

    def keep(self, key: FirstRenderKey, document: RenderDocument, height: float, diagnostics: list[Diagnostic]) -> None:
        """Keep a private copy of ``document`` (the card that drew it goes on changing its own)."""
        if next(itertools.islice(document.root.walk(), self.max_nodes, None), None) is not None:
            return
        kept = document.clone()
        plain = to_plain(kept)
        self.put(key, FirstRender(kept, height, tuple(diagnostics), plain, len(json_bytes(plain))))
