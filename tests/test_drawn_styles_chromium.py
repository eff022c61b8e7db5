"""The drawn-skill card's HTML in a real headless Chromium: gaps between a row's items, clamped
text, a single-line ellipsis, a box that clips its taller child, and the static end state of a
transition and an animation, measured from element rects and computed styles. The MCP Apps view
(what `serve` shows) draws the clamp as the backend does."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import pytest

from skillc.ir.render import to_plain
from skillc.server.view import view_html
from tests.test_drawn_styles import shop_doc
from tests.test_html_chromium import Loaded, browser, load

pytestmark = pytest.mark.chromium
__all__ = ["browser"]  # the module-scoped fixture, shared with the backend's Chromium tests

# Rect and computed style of the element with each data-uid.
_MEASURE = """(uids) => Object.fromEntries(uids.map((uid) => {
  const el = document.querySelector(`[data-uid="${uid}"]`);
  const r = el.getBoundingClientRect(), cs = getComputedStyle(el);
  return [uid, {left: r.left, right: r.right, top: r.top, bottom: r.bottom, height: r.height,
                scrollWidth: el.scrollWidth, clientWidth: el.clientWidth,
                scrollHeight: el.scrollHeight, clientHeight: el.clientHeight,
                overflow: cs.overflow, whiteSpace: cs.whiteSpace, textOverflow: cs.textOverflow,
                opacity: cs.opacity, transition: cs.transitionDuration, animation: cs.animationName}];
}))"""

TAGS = ["0.0.1.0[手擀面]", "0.0.1.0[骨汤]", "0.0.1.0[可外带]"]
STATS = ["0.0.2.0", "0.0.2.1"]
OTHERS = ["0.0.0", "0.0.3", "0.0.4", "0.0.5", "0.0.5.0", "0.0.6", "0.0.7"]


@pytest.fixture(scope="module")
def shop(browser: Any) -> Iterator[Loaded]:
    with load(browser, shop_doc()) as loaded:
        yield loaded


@pytest.fixture(scope="module")
def rects(shop: Loaded) -> dict[str, dict[str, Any]]:
    measured: dict[str, dict[str, Any]] = shop.page.evaluate(_MEASURE, TAGS + STATS + OTHERS)
    return measured


def test_the_items_of_a_row_are_a_gap_apart(rects: dict[str, dict[str, Any]]) -> None:
    tags = [rects[uid] for uid in TAGS]
    assert [round(b["left"] - a["right"], 3) for a, b in itertools.pairwise(tags)] == [8, 8]
    stats = [rects[uid] for uid in STATS]
    assert round(stats[1]["left"] - stats[0]["right"], 3) == 12  # column-gap: 24rpx at 375
    assert stats[0]["top"] == stats[1]["top"]  # one row: "月售 2000" then "1.2km", never glued


def test_clamped_text_is_exactly_n_lines_tall(rects: dict[str, dict[str, Any]]) -> None:
    intro, note = rects["0.0.3"], rects["0.0.4"]
    assert intro["height"] == 2 * 20  # -wx-line-clamp: 2, line-height 20px
    assert note["height"] == 3 * 18  # the -webkit-box trio with -webkit-line-clamp: 3, line-height 18px
    assert (intro["overflow"], note["overflow"]) == ("hidden", "hidden")


def test_without_the_clamp_the_same_text_is_taller(shop: Loaded) -> None:
    # The clamp tests above mean something only if the text runs longer than the clamp.
    natural = shop.page.evaluate(
        """(uids) => uids.map((uid) => { const el = document.querySelector(`[data-uid="${uid}"]`);
             const before = el.style.cssText;
             el.style.display = 'block'; el.style.webkitLineClamp = 'none';
             const height = el.getBoundingClientRect().height;
             el.style.cssText = before;  // the page is shared with the other checks
             return height; })""",
        ["0.0.3", "0.0.4"],
    )
    assert natural[0] > 2 * 20 and natural[1] > 3 * 18


def test_a_single_line_title_ends_in_an_ellipsis(rects: dict[str, dict[str, Any]]) -> None:
    title = rects["0.0.0"]
    assert title["scrollWidth"] > title["clientWidth"]  # the text is longer than the box
    assert title["height"] == 24  # and stays on one line
    assert (title["whiteSpace"], title["textOverflow"], title["overflow"]) == ("nowrap", "ellipsis", "hidden")


def test_a_box_clips_its_taller_child(shop: Loaded, rects: dict[str, dict[str, Any]]) -> None:
    frame, tall = rects["0.0.5"], rects["0.0.5.0"]
    assert (frame["height"], frame["overflow"], tall["height"]) == (40, "hidden", 120)
    assert tall["top"] == frame["top"] and tall["bottom"] > frame["bottom"]
    # Inside the box the child is what is hit; below the box's edge, within the child's rect, it is not.
    x = (frame["left"] + frame["right"]) / 2
    hit = "(p) => document.elementFromPoint(p[0], p[1]).getAttribute('data-uid')"
    assert shop.page.evaluate(hit, [x, frame["bottom"] - 1]) == "0.0.5.0"
    assert shop.page.evaluate(hit, [x, frame["bottom"] + 1]) != "0.0.5.0"


def test_a_transition_and_an_animation_draw_their_end_state(rects: dict[str, dict[str, Any]]) -> None:
    fade, pulse = rects["0.0.6"], rects["0.0.7"]
    assert (fade["opacity"], fade["transition"]) == ("0.6", "0s")
    assert (pulse["opacity"], pulse["animation"]) == ("1", "none")


def test_the_mcp_apps_view_draws_the_clamp_as_the_backend_does(browser: Any, rects: dict[str, dict[str, Any]]) -> None:
    doc = shop_doc()
    context = browser.new_context(viewport={"width": 375, "height": 667}, device_scale_factor=1)
    try:
        page = context.new_page()
        page.route("**/*", lambda route: route.abort())
        page.set_content(view_html("drawn-skill", "components/shop/index", "ui://drawn-skill/shop"))
        page.evaluate("(doc) => window.skillcView.render(doc)", to_plain(doc))
        seen = page.evaluate(_MEASURE, ["0.0.3", "0.0.4", "0.0.1.0[骨汤]", "0.0.1.0[可外带]"])
    finally:
        context.close()
    assert (seen["0.0.3"]["height"], seen["0.0.4"]["height"]) == (40, 54)
    assert round(seen["0.0.1.0[可外带]"]["left"] - seen["0.0.1.0[骨汤]"]["right"], 3) == 8
