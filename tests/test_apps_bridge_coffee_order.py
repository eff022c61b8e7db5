"""The whole coffee order in an MCP Apps host built on the official ext-apps AppBridge, in Chromium.

The model calls searchDrinks; from then on the user only taps. The drink-list card's follow-up
calls confirmOrder, whose order-confirm card appears below it (and expires the drink list); its
confirm button's follow-up calls payOrder, whose payment-result card appears below that. Each
skill tool runs exactly once, counted on the server: the view takes one path per api/call (a
tools/call through the host, the user's words as ui/update-model-context), never a ui/message that
would let the model call the tool again. Then the host switches to dark and the cards re-style;
and the height the view reports is the height its cards are laid out at.

Without --approve the same conversation completes through consent in the card: the host speaks the
2025 protocol and cannot elicit, so each L3 follow-up shows an Approve / Decline control, and the
user's answer goes to the app-only skillc_consent tool. Declining runs nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from skillc.runtime.api.audit import AuditLog
from skillc.runtime.config import RuntimeConfig
from skillc.runtime.contracts import AuditOutcome
from skillc.runtime.state import open_state, state_url_of
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
CONSENT = '.skillc-slot[data-kind="consent"]'
DECLINED = '.skillc-slot[data-consent="declined"]'
# The laid-out height of the view's content, measured as ext-apps' App measures it.
CONTENT_HEIGHT_JS = """() => {
  const html = document.documentElement, before = html.style.height
  html.style.height = 'max-content'
  const h = Math.ceil(html.getBoundingClientRect().height)
  html.style.height = before
  return h
}"""


def _server(tmp: Path, *, approve: bool, elicit: bool = True) -> ServeHandle:
    return ServeHandle.start(
        ServeOptions(
            paths=(COFFEE,),
            port=0,
            runtime=RuntimeConfig(state_dir=tmp),
            consent=ConsentPolicy(approve_all=approve, elicit=elicit),
            allowed_origins=(HOST_ORIGIN,),
        )
    )


@pytest.fixture(scope="module")
def approving(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeHandle]:
    with _server(tmp_path_factory.mktemp("approving"), approve=True) as handle:
        yield handle


@pytest.fixture(scope="module")
def asking(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeHandle]:
    """No --approve: the user is asked (here, in the card)."""
    with _server(tmp_path_factory.mktemp("asking"), approve=False) as handle:
        yield handle


@pytest.fixture(scope="module")
def refusing(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeHandle]:
    """--no-elicit without --approve: nobody is asked, L3/L4 calls are refused."""
    with _server(tmp_path_factory.mktemp("refusing"), approve=False, elicit=False) as handle:
        yield handle


def _config(handle: ServeHandle) -> RuntimeConfig:
    config = handle.prepared.config
    assert config is not None
    return config


def _audited(handle: ServeHandle) -> list[tuple[str, AuditOutcome]]:
    config = _config(handle)
    return [(r.api_name, r.outcome) for r in AuditLog.of(config).records() if r.wx_api is None]


def _storage(handle: ServeHandle) -> list[tuple[object, ...]]:
    return [tuple(r) for r in open_state(state_url_of(_config(handle))).execute("SELECT * FROM storage")]


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
        host.tap(0, view.locator(f'{DRINK_LIST} [data-uid="0.1.0[d02].1"]'))
        view.locator(ORDER).wait_for()
        assert "确认订单" in view.locator(ORDER).inner_text()
        view.locator(f"{DRINK_LIST} .skillc-expired").wait_for()
        assert view.locator(f"{DRINK_LIST} .skillc-expired").inner_text() == "服务已过期"

        # Confirm: the order card says so, and payOrder's payment-result card follows.
        host.tap(0, view.locator(f'{ORDER} button[data-type="button"]'))
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
        assert told[1].startswith(told[0].split("\n")[0])  # one summary: the earlier line is still there

        # Dark: every card is rendered again in the dark scheme, the expired list too (under its veil).
        light = _background(view, PAYMENT)
        assert light == "rgb(255, 255, 255)"
        host.set_theme("dark")
        host.wait_for(
            "() => window.appsHost.snapshot().toolCalls.filter(c => c.name === 'skillc_card_view').length >= 3"
        )
        view.locator(f'{PAYMENT} > [data-uid="root"] > [data-uid="0"]').wait_for()
        frame = host.content_frame(0)
        frame.wait_for_function(
            "s => getComputedStyle(document.querySelector(s)).backgroundColor === 'rgb(28, 23, 20)'",
            arg=f'{PAYMENT} > [data-uid="root"] > [data-uid="0"]',
        )
        assert _background(view, PAYMENT) == "rgb(28, 23, 20)"  # #1c1714 from the skill's dark @media
        assert _background(view, ORDER) == "rgb(28, 23, 20)"
        expired = view.locator(f'{DRINK_LIST} > [data-uid="root"] > [data-uid="0"]')
        assert "42, 33, 27" in expired.evaluate("el => getComputedStyle(el).backgroundImage")
        assert view.locator(f"{DRINK_LIST} .skillc-expired").count() == 1
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


def _approve_in_card(host: AppsHost, view: Any, tool: str) -> int:
    """The user reads the consent control for ``tool`` and approves; the slot it was in."""
    control = view.locator(CONSENT)
    control.wait_for()
    assert control.get_attribute("role") == "group"
    assert control.get_attribute("aria-label") == f"Consent for {tool}"
    assert control.inner_text().startswith(f"{tool} (risk L3) needs your consent.")
    slot = int(control.get_attribute("data-slot"))
    approve = control.get_by_role("button", name="Approve")
    assert control.get_by_role("button", name="Decline").is_enabled()
    host.tap(0, approve)
    return slot


def test_the_order_completes_with_consent_in_the_card(
    asking: ServeHandle, apps_browser: Any, apps_bridge_bundle: Path
) -> None:
    with server_calls(asking) as calls, AppsHost.open(apps_browser, asking.url, apps_bridge_bundle) as host:
        assert (host.protocol_version or "").startswith("2025-")  # a host that cannot elicit
        host.call_tool("searchDrinks", {"keyword": "latte"})
        view = host.frame(0)
        before = _audited(asking)

        # Tap a drink: confirmOrder asks; nothing has run until the user approves in the card.
        host.tap(0, view.locator(f'{DRINK_LIST} [data-uid="0.1.0[d02].1"]'))
        view.locator(CONSENT).wait_for()
        assert _audited(asking) == before
        assert view.locator(f"{DRINK_LIST} .skillc-expired").count() == 0
        [asked] = [c for c in host.tool_calls if c["name"] == "confirmOrder"]
        token = asked["result"]["_meta"]["skillc/consent"]["token"]
        # The token is where no model reads it: not in the content, not shown in the control.
        assert token not in json.dumps(asked["result"].get("content")) and "structuredContent" not in asked["result"]
        assert token not in view.locator(CONSENT).inner_text()
        slot = _approve_in_card(host, view, "confirmOrder")

        # The order card takes the control's place; the drink list expires as it does when approved up front.
        view.locator(ORDER).wait_for()
        assert int(view.locator(ORDER).get_attribute("data-slot")) == slot
        assert "确认订单" in view.locator(ORDER).inner_text()
        view.locator(f"{DRINK_LIST} .skillc-expired").wait_for()

        # Confirm: payOrder asks in the card too; approved, the payment-result card follows.
        host.tap(0, view.locator(f'{ORDER} button[data-type="button"]'))
        _approve_in_card(host, view, "payOrder")
        view.locator(PAYMENT).wait_for()
        paid = view.locator(PAYMENT).inner_text()
        assert "支付成功" in paid and "取餐码" in paid
        assert view.locator(CONSENT).count() == 0

        # Each skill tool ran exactly once: the asks ran nothing, each approval ran its call.
        counts = calls.counts
        assert {n: counts[n] for n in ("searchDrinks", "confirmOrder", "payOrder", "skillc_consent")} == {
            "searchDrinks": 1,
            "confirmOrder": 1,
            "payOrder": 1,
            "skillc_consent": 2,
        }
        assert _audited(asking)[len(before) :] == [("confirmOrder", AuditOutcome.OK), ("payOrder", AuditOutcome.OK)]
        assert [c["name"] for c in host.tool_calls if c["allowed"]] == [
            "skillc_card_event",
            "confirmOrder",
            "skillc_consent",
            "skillc_card_event",
            "payOrder",
            "skillc_consent",
        ]
        # The model heard of each call once, when the user answered, and never got a ui/message.
        assert host.recorded("messages") == []
        told = [m["params"]["content"][0]["text"] for m in host.recorded("modelContext")]
        assert len(told) == 2
        assert told[0].startswith(
            'On the coffee-skill card the user said: "我要一杯燕麦拿铁 Oat Latte", and approved confirmOrder'
        )
        assert "approved payOrder" in told[1] and "which returned" in told[1]
        assert host.errors == [] and host.csp_violations == []
        assert schema_failures(host.log) == []


def test_declining_in_the_card_runs_nothing_and_tells_the_model(
    asking: ServeHandle, apps_browser: Any, apps_bridge_bundle: Path
) -> None:
    with server_calls(asking) as calls, AppsHost.open(apps_browser, asking.url, apps_bridge_bundle) as host:
        host.call_tool("searchDrinks", {"keyword": "latte"})
        view = host.frame(0)
        host.tap(0, view.locator(f'{DRINK_LIST} [data-uid="0.1.0[d02].1"]'))
        control = view.locator(CONSENT)
        control.wait_for()
        audit, storage = _audited(asking), _storage(asking)
        slot = control.get_attribute("data-slot")
        # Decline, then Approve in the same instant (a double tap): the control takes one answer.
        answered = host.content_frame(0).evaluate(
            """() => {
              const button = a => document.querySelector(`button[data-consent="${a}"]`)
              const [approve, decline] = [button('approve'), button('decline')]
              decline.click(); approve.click()
              return [approve.disabled, decline.disabled]
            }"""
        )
        assert answered == [True, True]  # both disabled while the answer is on its way

        declined = view.locator(DECLINED)
        declined.wait_for()
        assert declined.get_attribute("data-slot") == slot  # the note takes the control's place
        assert declined.inner_text().startswith('The user declined confirmOrder {"drinkId": "d02"')
        assert view.locator(CONSENT).count() == 0
        # Nothing ran: no order, no audit line, the drink list is still live.
        assert (_audited(asking), _storage(asking)) == (audit, storage)
        assert view.locator(f"{DRINK_LIST} .skillc-expired").count() == 0
        assert calls.counts["confirmOrder"] == 1 and calls.counts["skillc_consent"] == 1
        assert host.recorded("messages") == []
        (told,) = host.recorded("modelContext")
        text = told["params"]["content"][0]["text"]
        assert text.startswith(
            'On the coffee-skill card the user said: "我要一杯燕麦拿铁 Oat Latte", and declined confirmOrder'
        )
        assert "it did not run" in text
        assert host.errors == []


def test_a_refused_follow_up_is_shown_in_the_card_area(
    refusing: ServeHandle, apps_browser: Any, apps_bridge_bundle: Path
) -> None:
    with server_calls(refusing) as calls, AppsHost.open(apps_browser, refusing.url, apps_bridge_bundle) as host:
        host.call_tool("searchDrinks", {"keyword": "latte"})
        view = host.frame(0)
        host.tap(0, view.locator(f'{DRINK_LIST} [data-uid="0.1.0[d02].1"]'))
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
