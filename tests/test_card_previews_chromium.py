"""The map and canvas previews of the html backend in a real headless Chromium: the canvas picture
(an SVG data URL) loads and paints the card's bars, the map box has the size its style gives and
lists its markers, an unpainted canvas keeps WeChat's default 300x150 box."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from skillc.ir.render import RenderDocument, from_plain
from tests.test_card_previews import render
from tests.test_html_chromium import browser, load

pytestmark = pytest.mark.chromium
__all__ = ["browser"]  # the module-scoped fixture, shared with the backend's Chromium tests


def _doc(tmp_path: Path, component: str) -> RenderDocument:
    # On a thread of its own: `render --result` runs an event loop, and Playwright's is running here.
    with ThreadPoolExecutor(1) as pool:
        result = pool.submit(render, tmp_path, component, "json").result()
    assert result.exit_code == 0, result.output
    return from_plain(json.loads(result.stdout))


def test_the_canvas_picture_loads_and_paints_the_bars(browser: Any, tmp_path: Path) -> None:
    with load(browser, _doc(tmp_path, "sales-chart")) as loaded:
        picture = loaded.page.evaluate(
            """() => {
                 const img = document.querySelector('[data-type="canvas"] > img[data-preview="drawing"]');
                 const r = img.getBoundingClientRect();
                 return [img.complete, img.naturalWidth, img.naturalHeight, r.left, r.top, r.width, r.height];
               }"""
        )
        shot = loaded.screenshot
        assert loaded.requested == []  # a data URL: nothing goes to the network
    complete, natural_w, natural_h, left, top, width, height = picture
    assert (complete, natural_w, natural_h) == (True, 400, 200)
    assert (width, height) == (200, 100)  # the element's CSS size

    def pixel(x: float, y: float) -> tuple[int, ...]:
        i = (int(top + y) * shot.width + int(left + x)) * shot.channels
        return tuple(shot.pixels[i : i + 3])

    assert pixel(60, 80) == (200, 116, 44)  # inside the second bar (30 sold): #c8742c
    assert pixel(60, 5) == (255, 248, 240)  # above it: the background #fff8f0


def test_the_map_box_lists_its_markers(browser: Any, tmp_path: Path) -> None:
    with load(browser, _doc(tmp_path, "store-map")) as loaded:
        box, caption, markers = loaded.page.evaluate(
            """() => {
                 const map = document.querySelector('[data-type="map"]');
                 const r = map.getBoundingClientRect();
                 return [[r.width, r.height, getComputedStyle(map).borderTopLeftRadius],
                         map.querySelector('[data-preview="caption"]').textContent,
                         [...map.querySelectorAll('[data-preview="markers"] > li')].map((li) => li.textContent)];
               }"""
        )
    assert box == [375 - 2 * 12, 160, "8px"]  # width: 100% of the padded card; its own height and radius
    assert caption == "Map 31.2304, 121.4737 · 3 markers"
    assert markers == [
        "南京西路店 · 31.2304, 121.4737",
        "Jing An Temple · 31.2235, 121.4452",
        "外滩店 · 31.2401, 121.4903",
    ]


def test_an_unpainted_canvas_keeps_the_default_box(browser: Any, tmp_path: Path) -> None:
    with load(browser, _doc(tmp_path, "blank-canvas")) as loaded:
        box = loaded.page.evaluate(
            """() => {
                 const c = document.querySelector('[data-type="canvas"]');
                 const r = c.getBoundingClientRect();
                 return [r.width, r.height, c.textContent];
               }"""
        )
    assert box == [300, 150, "Canvas · not drawn"]
