"""The whole coffee order in an MCP Apps host built on the official ext-apps AppBridge, in Chromium.

The model calls searchDrinks; from then on the user only taps. The drink-list card's follow-up
calls confirmOrder, whose order-confirm card appears below it (and expires the drink list); its
confirm button's follow-up calls payOrder, whose payment-result card appears below that. Each
skill tool runs exactly once, counted on the server: the view takes one path per api/call (a
tools/call through the host, the user's words as ui/update-model-context), never a ui/message that
would let the model call the tool again. Then the host switches to dark and the cards re-style;
and the height the view reports is the height its cards are laid out at.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from skillc.runtime.config import RuntimeConfig
from skillc.server.consent import ConsentPolicy
from skillc.server.runner import ServeHandle, ServeOptions
from tests.apps_bridge import (
    HOST_ORIGIN,
    AppsHost,
    apps_bridge_bundle,
    apps_browser,
    schema_failures,
    server_calls,
)
from tests.conftest import COFFEE

pytestmark = pytest.mark.chromium
__all__ = ["apps_bridge_bundle", "apps_browser"]  # fixtures from tests/apps_bridge.py

DRINK_LIST = '.skillc-slot[data-component="components/drink-list/index"]'
ORDER = '.skillc-slot[data-component="components/order-confirm/index"]'
PAYMENT = '.skillc-slot[data-component="components/payment-result/index"]'
ERROR = '.skillc-slot[data-kind="error"]'
# The laid-out height of the view's content, measured as ext-apps' App measures it.
CONTENT_HEIGHT_JS = """() => {
  const html = document.documentElement, before = html.style.height
  html.style.height = 'max-content'
  const h = Math.ceil(html.getBoundingClientRect().height)
  html.style.height = before
  return h
}"""


def _server(tmp: Path, *, approve: bool) -> ServeHandle:
    return ServeHandle.start(
        ServeOptions(
            paths=(COFFEE,),
            port=0,
            runtime=RuntimeConfig(state_dir=tmp),
            consent=ConsentPolicy(approve_all=approve),
            allowed_origins=(HOST_ORIGIN,),
        )
    )


@pytest.fixture(scope="module")
def approving(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeHandle]:
    with _server(tmp_path_factory.mktemp("approving"), approve=True) as handle:
        yield handle


@pytest.fixture(scope="module")
def refusing(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeHandle]:
    with _server(tmp_path_factory.mktemp("refusing"), approve=False) as handle:
        yield handle


def _background(frame: Any, slot: str) -> str:
    return str(
        frame.locator(f'{slot} > [data-uid="root"] > [data-uid="0"]').evaluate(
            "el => getComputedStyle(el).backgroundColor"
        )
    )


def test_the_whole_order_plays_in_one_view(approving: ServeHandle, apps_browser: Any, apps_bridge_bundle: Path) -> None:
    with server_calls(approving) as calls, AppsHost.open(apps_browser, approving.url, apps_bridge_bundle) as host:
        host.call_tool("searchDrinks", {"keyword": "latte"})
        view = host.frame(0)
        view.locator(f'{DRINK_LIST} [data-uid="0.1.0[d02]"]').wait_for()

        # Tap a drink: the follow-up's confirmOrder result is the next card, the list expires.
        view.locator(f'{DRINK_LIST} [data-uid="0.1.0[d02].1"]').click()
        view.locator(ORDER).wait_for()
        assert "确认订单" in view.locator(ORDER).inner_text()
        view.locator(f"{DRINK_LIST} .skillc-expired").wait_for()
        assert view.locator(f"{DRINK_LIST} .skillc-expired").inner_text() == "服务已过期"

        # Confirm: the order card says so, and payOrder's payment-result card follows.
        view.locator(f'{ORDER} button[data-type="button"]').click()
        view.locator(PAYMENT).wait_for()
        paid = view.locator(PAYMENT).inner_text()
        assert "支付成功" in paid and "取餐码" in paid
        assert "已确认，正在支付…" in view.locator(ORDER).inner_text()

        # Each skill tool ran once on the server; the two taps went to the card-event tool.
        counts = calls.counts
        assert {name: counts[name] for name in ("searchDrinks", "confirmOrder", "payOrder")} == {
            "searchDrinks": 1,
            "confirmOrder": 1,
            "payOrder": 1,
        }
        assert counts["skillc_card_event"] == 2
        assert [c["name"] for c in host.tool_calls if c["allowed"]] == [
            "skillc_card_event",
            "confirmOrder",
            "skillc_card_event",
            "payOrder",
        ]
        # The model heard what the user did, without a new turn, and never got a ui/message.
        assert host.recorded("messages") == []
        told = [m["params"]["content"][0]["text"] for m in host.recorded("modelContext")]
        assert len(told) == 2
        assert told[0].startswith(
            'On the coffee-skill card the user said: "我要一杯燕麦拿铁 Oat Latte". The card called confirmOrder'
        )
        assert "payOrder" in told[1] and "returned" in told[1]

        # Dark: the live cards are rendered again in the dark scheme (the expired list keeps its look).
        light = _background(view, PAYMENT)
        assert light == "rgb(255, 255, 255)"
        host.set_theme("dark")
        host.wait_for(
            "() => window.appsHost.snapshot().toolCalls.filter(c => c.name === 'skillc_card_view').length >= 2"
        )
        view.locator(f'{PAYMENT} > [data-uid="root"] > [data-uid="0"]').wait_for()
        frame = host.content_frame(0)
        frame.wait_for_function(
            "s => getComputedStyle(document.querySelector(s)).backgroundColor === 'rgb(28, 23, 20)'",
            arg=f'{PAYMENT} > [data-uid="root"] > [data-uid="0"]',
        )
        assert _background(view, PAYMENT) == "rgb(28, 23, 20)"  # #1c1714 from the skill's dark @media
        assert _background(view, ORDER) == "rgb(28, 23, 20)"
        after = calls.counts  # restyling runs no skill code
        assert (after["confirmOrder"], after["payOrder"], after["skillc_card_event"]) == (1, 1, 2)

        # The reported height is the laid-out height, and the host sized the iframe to it.
        frame.wait_for_timeout(300)  # let the last resize settle
        height = frame.evaluate(CONTENT_HEIGHT_JS)
        reports = host.size_reports(0)
        assert reports[-1]["height"] == height
        assert host.iframe_height(0) == height
        assert all(a != b for a, b in pairwise(reports))  # never the same size twice

        # A host that makes the frame taller than the content still hears the content's height.
        host.iframe(0).evaluate("el => { el.style.height = '2000px' }")
        host.set_theme("light")
        frame.wait_for_function(
            "s => getComputedStyle(document.querySelector(s)).backgroundColor === 'rgb(255, 255, 255)'",
            arg=f'{PAYMENT} > [data-uid="root"] > [data-uid="0"]',
        )
        frame.wait_for_timeout(300)
        height = frame.evaluate(CONTENT_HEIGHT_JS)
        assert height < 2000 and host.size_reports(0)[-1]["height"] == height

        assert host.errors == [] and host.csp_violations == []
        assert schema_failures(host.log) == []


def test_a_refused_follow_up_is_shown_in_the_card_area(
    refusing: ServeHandle, apps_browser: Any, apps_bridge_bundle: Path
) -> None:
    with server_calls(refusing) as calls, AppsHost.open(apps_browser, refusing.url, apps_bridge_bundle) as host:
        host.call_tool("searchDrinks", {"keyword": "latte"})
        view = host.frame(0)
        view.locator(f'{DRINK_LIST} [data-uid="0.1.0[d02].1"]').click()
        view.locator(ERROR).wait_for()
        assert view.locator(ERROR).inner_text().startswith("confirmOrder needs the user's approval (risk L3)")
        assert view.locator(ERROR).get_attribute("role") == "alert"
        assert calls.counts["confirmOrder"] == 1  # asked once, refused once, never retried
        assert host.recorded("messages") == []
        (told,) = host.recorded("modelContext")
        text = told["params"]["content"][0]["text"]
        assert "confirmOrder" in text and "failed" in text
        assert host.errors == []


def test_a_card_first_shown_in_dark_is_rendered_dark(
    approving: ServeHandle, apps_browser: Any, apps_bridge_bundle: Path
) -> None:
    with AppsHost.open(apps_browser, approving.url, apps_bridge_bundle) as host:
        host.set_theme("dark")  # before any view: the next one starts in dark
        host.call_tool("searchDrinks", {"keyword": "mocha"})
        frame = host.content_frame(0)
        frame.wait_for_function(
            "s => { const el = document.querySelector(s)\n"
            "  return el && getComputedStyle(el).backgroundImage.includes('42, 33, 27') }",
            arg=f'{DRINK_LIST} > [data-uid="root"] > [data-uid="0"]',
        )
        assert frame.evaluate("document.documentElement.getAttribute('data-theme')") == "dark"
