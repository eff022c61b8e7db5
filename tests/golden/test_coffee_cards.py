"""The coffee cards through the whole pipeline: Render IR, CardSpec and HTML at two viewports
(golden), CardSpec validated against Adaptive Cards 1.5, and HTML in a real Chromium."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from skillc.backends.registry import get_backend
from skillc.diagnostics import DiagnosticSink
from skillc.frontend.package import load_skill
from skillc.ir.component import compile_component
from skillc.ir.evaluate import CardRenderer
from skillc.ir.render import RenderDocument
from skillc.ir.viewport import Viewport
from tests.conftest import COFFEE
from tests.test_backends_cardspec import assert_valid
from tests.test_html_chromium import Loaded, browser, load  # noqa: F401  (browser is a fixture)

CARDS = ["drink-list", "order-confirm", "payment-result"]
VIEWPORTS = {"375-light": Viewport(width=375), "414-dark": Viewport(width=414, color_scheme="dark")}
# A WXSS rule of each card whose value must reach the browser: (node id, property, computed value).
ACCENTS = {
    "drink-list": ("0.1.0[d02].2.0", "color", "rgb(200, 116, 44)"),  # .price { color: #c8742c }
    "order-confirm": ("0.2.1", "color", "rgb(200, 116, 44)"),  # .total-value
    "payment-result": ("0.0.0.3.1", "color", "rgb(200, 116, 44)"),  # .code
}


def render(card: str, viewport: str) -> RenderDocument:
    sink = DiagnosticSink()
    pkg = load_skill(COFFEE, sink)
    assert pkg is not None
    component = compile_component(pkg, card, sink)
    assert component is not None
    data = json.loads(pkg.sources[f"components/{card}/preview.json"])
    doc = CardRenderer(component, VIEWPORTS[viewport], sink=sink).render(data)
    assert list(sink) == []
    return doc


CASES = [(card, vp) for card in CARDS for vp in VIEWPORTS]


@pytest.mark.parametrize(("card", "viewport"), CASES)
def test_render_ir_json(card: str, viewport: str, snapshot: Any) -> None:
    text = get_backend("json").render(render(card, viewport))
    assert text == get_backend("json").render(render(card, viewport)), "byte-identical across runs"
    assert text == snapshot


@pytest.mark.parametrize(("card", "viewport"), CASES)
def test_cardspec(card: str, viewport: str, snapshot: Any) -> None:
    text = get_backend("cardspec").render(render(card, viewport))
    card_json = json.loads(text)
    assert_valid(card_json)
    assert card_json["fallbackText"]
    assert text == snapshot


@pytest.mark.parametrize(("card", "viewport"), CASES)
def test_html(card: str, viewport: str, snapshot: Any) -> None:
    assert get_backend("html").render(render(card, viewport)) == snapshot


@pytest.fixture(scope="module", params=CASES, ids=[f"{c}-{v}" for c, v in CASES])
def page(request: pytest.FixtureRequest, browser: Any) -> Iterator[tuple[str, Loaded]]:  # noqa: F811
    card, viewport = request.param
    with load(browser, render(card, viewport)) as loaded:
        yield card, loaded


@pytest.mark.chromium
def test_card_in_chromium(page: tuple[str, Loaded]) -> None:
    card, loaded = page
    width = loaded.doc.viewport.width
    assert loaded.page.evaluate("document.documentElement.getBoundingClientRect().width") == width
    assert loaded.screenshot.width == width
    assert loaded.screenshot.height > 100
    assert loaded.screenshot.luminance_variance() > 50, "the screenshot is not blank"
    uid, prop, expected = ACCENTS[card]
    node = loaded.doc.root.find(uid)
    assert node is not None and node.style[prop] == "#c8742c"
    computed = loaded.page.evaluate(
        '([uid, prop]) => getComputedStyle(document.querySelector(`[data-uid="${uid}"]`)).getPropertyValue(prop)',
        [uid, prop],
    )
    assert computed == expected
