"""The card box, in a real headless Chromium: the HTML backend shows a card as WeChat does, as wide
as the viewport and as tall as its content between a quarter of that width and all of it, with the
rest clipped (a long list is not an unbounded page)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from skillc.backends.html_backend import render_html
from skillc.diagnostics import DiagnosticSink
from skillc.frontend.package import load_skill
from skillc.ir.component import compile_component
from skillc.ir.evaluate import CardRenderer
from skillc.ir.viewport import Viewport
from tests.conftest import FIXTURES
from tests.test_html_chromium import TINY_PNG, browser  # noqa: F401  (the module's browser fixture)

pytestmark = pytest.mark.chromium


STORES = FIXTURES / "storage-seed" / "preview-skill"  # a card whose list grows downwards


def _stores(n: int) -> dict[str, Any]:
    return {"city": "杭州", "badge": "", "stores": [{"id": f"s{i}", "name": f"Store {i}"} for i in range(n)]}


def _html(width: int, data: dict[str, Any]) -> str:
    sink = DiagnosticSink()
    pkg = load_skill(STORES, sink)
    assert pkg is not None
    compiled = compile_component(pkg, "store-list", sink)
    assert compiled is not None
    return render_html(CardRenderer(compiled, Viewport(width=width, height=900)).render(data))


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:  # noqa: F811
    context = browser.new_context(viewport={"width": 600, "height": 900}, device_scale_factor=1)
    page = context.new_page()
    page.route("**/*", lambda route: route.fulfill(status=200, content_type="image/png", body=TINY_PNG))
    try:
        yield page
    finally:
        context.close()


def _box(page: Any) -> dict[str, float]:
    return dict(
        page.evaluate("(() => { const r = document.body.getBoundingClientRect(); return {w: r.width, h: r.height} })()")
    )


@pytest.mark.parametrize("width", [375, 414])
def test_a_long_list_is_clipped_at_a_square(page: Any, width: int) -> None:
    page.set_content(_html(width, _stores(30)), wait_until="load")
    assert _box(page) == {"w": width, "h": width}
    content = page.evaluate("document.body.scrollHeight")
    assert content > 2 * width  # 30 stores are far taller than the card
    # What lies below the box is not shown: the point just under it hits no card element.
    below = page.evaluate(f"document.elementFromPoint(10, {width + 5}).tagName")
    assert below == "HTML"
    assert page.evaluate(f"document.elementFromPoint(10, {width - 5}).tagName") != "HTML"


def test_a_short_card_is_at_least_a_quarter_of_its_width(page: Any) -> None:
    page.set_content(_html(375, _stores(0)), wait_until="load")
    assert page.evaluate("document.querySelector('[data-uid]').getBoundingClientRect().height") < 375 // 4
    assert _box(page) == {"w": 375, "h": 375 // 4}


def test_a_card_between_the_bounds_is_as_tall_as_its_content(page: Any) -> None:
    page.set_content(_html(375, _stores(2)), wait_until="load")
    box = _box(page)
    content = page.evaluate("document.querySelector('[data-uid]').getBoundingClientRect().height")
    assert 375 // 4 < box["h"] < 375
    assert box["h"] == content
