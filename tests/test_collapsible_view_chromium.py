"""A collapsible-view's HTML in a real headless Chromium: the content is clipped at a square
(a card's tallest shape) and the slot="button" child stays in view at the bottom edge."""

from __future__ import annotations

from typing import Any

import pytest

from skillc.ir.render import RenderDocument
from tests.test_collapsible_view import _render
from tests.test_html_chromium import browser, load

pytestmark = pytest.mark.chromium
__all__ = ["browser"]  # the module-scoped fixture, shared with the backend's Chromium tests

ROWS = "".join(f"<view>row {i}</view>" for i in range(60))


def _doc() -> RenderDocument:
    doc, sink = _render(f'<collapsible-view>{ROWS}<button slot="button">All 60</button></collapsible-view>', {})
    assert list(sink) == []
    return doc


def test_content_is_clipped_and_the_button_stays_visible(browser: Any) -> None:
    doc = _doc()
    with load(browser, doc) as loaded:
        box, button, last_row = loaded.page.evaluate(
            """() => {
                 const r = (e) => { const b = e.getBoundingClientRect(); return [b.top, b.bottom, b.height]; };
                 const box = document.querySelector('[data-type="collapsible-view"]');
                 const button = box.querySelector('[data-prop-slot="button"]');
                 const rows = box.querySelectorAll('[data-type="view"]');
                 return [r(box).concat([box.scrollHeight, getComputedStyle(box).overflow]), r(button),
                         r(rows[rows.length - 1])];
               }"""
        )
    width = doc.viewport.width
    top, bottom, height, scroll_height, overflow = box
    assert (height, overflow) == (width, "hidden")  # 60 rows are taller than the card: clipped
    assert scroll_height > height
    # The button sits on the clipped box's bottom edge, inside what is shown.
    assert button[1] == bottom and button[0] >= top and button[2] > 0
    assert last_row[0] > bottom  # the last row is below the clip
