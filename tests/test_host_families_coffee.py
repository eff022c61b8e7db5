"""The coffee card in each family of hosts, in Chromium: dark on its first painted frame, and the
order completed by taps alone.

- MCP Apps (Claude, VS Code, ChatGPT's MCP Apps mode): the official ext-apps ``AppBridge`` host
  (tests/apps_bridge.py).
- OpenAI's Apps SDK runtime (``window.openai``): no official package of it is on npm, so the host
  is a page written from OpenAI's published contract (tests/openai_host.py).

"First painted frame": a script the browser runs in every view document before the view's own
(Playwright ``add_init_script``) looks at the document on every animation frame, that is right
before each paint: whether anything is visible, in which theme, and the look of each card slot
the first frame it is shown. Also here: the size reported within the host's ``maxWidth`` and the
one summary of all live cards the model gets (tests/test_host_meta.py: the metadata each family
reads, and the card session a bridge without ``_meta`` passes as an argument).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from skillc.runtime.config import RuntimeConfig
from skillc.server.consent import ConsentPolicy
from skillc.server.runner import ServeHandle, ServeOptions
from tests.apps_bridge import HOST_ORIGIN, AppsHost, apps_bridge_bundle, apps_browser, schema_failures, server_calls
from tests.conftest import COFFEE
from tests.openai_host import OpenAIHost

pytestmark = pytest.mark.chromium
__all__ = ["apps_bridge_bundle", "apps_browser"]  # fixtures from tests/apps_bridge.py

DRINK_LIST = '.skillc-slot[data-component="components/drink-list/index"]'
ORDER = '.skillc-slot[data-component="components/order-confirm/index"]'
PAYMENT = '.skillc-slot[data-component="components/payment-result/index"]'
COMPONENTS = ["components/drink-list/index", "components/order-confirm/index", "components/payment-result/index"]

# Runs in every frame before its scripts; in a view it records, on each animation frame (just
# before the browser paints it), whether the document shows anything and in which theme, and
# the look of each card slot on the first frame it is visible.
PAINT_PROBE = """(() => {
  if (window === window.top) return
  const paint = { frames: 0, notDark: [], firstLook: {} }
  window.__paint = paint
  const tick = () => {
    const body = document.body
    if (body && getComputedStyle(body).visibility !== 'hidden') {
      paint.frames++
      const theme = document.documentElement.getAttribute('data-theme')
      if (theme !== 'dark' && paint.notDark.length < 20) paint.notDark.push(String(theme))
      document.querySelectorAll('.skillc-slot[data-kind="card"]').forEach((slot) => {
        const key = slot.getAttribute('data-slot') + ':' + slot.getAttribute('data-card-id')
        if (paint.firstLook[key] || !slot.getClientRects().length) return
        const el = slot.querySelector('[data-uid="root"] > [data-uid="0"]')
        if (!el) return
        const style = getComputedStyle(el)
        paint.firstLook[key] = { component: slot.getAttribute('data-component'),
          background: style.backgroundColor, image: style.backgroundImage }
      })
    }
    requestAnimationFrame(tick)
  }
  requestAnimationFrame(tick)
})()"""


def _dark(look: dict[str, Any]) -> bool:
    """The skill's own dark @media: the drink list's gradient from #2a211b, #1c1714 elsewhere."""
    return "42, 33, 27" in look["image"] or look["background"] == "rgb(28, 23, 20)"


@pytest.fixture(scope="module")
def approving(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeHandle]:
    options = ServeOptions(
        paths=(COFFEE,),
        port=0,
        runtime=RuntimeConfig(state_dir=tmp_path_factory.mktemp("hosts")),
        consent=ConsentPolicy(approve_all=True),
        allowed_origins=(HOST_ORIGIN,),
    )
    with ServeHandle.start(options) as handle:
        yield handle


def _order(host: AppsHost) -> Any:
    """The user's taps: a drink, then confirm; returns the view once the payment card is there."""
    view = host.frame(0)
    view.locator(f'{DRINK_LIST} [data-uid="0.1.0[d02]"]').wait_for()
    host.tap(0, view.locator(f'{DRINK_LIST} [data-uid="0.1.0[d02].1"]'))
    view.locator(f'{ORDER} button[data-type="button"]').wait_for()
    host.tap(0, view.locator(f'{ORDER} button[data-type="button"]'))
    view.locator(PAYMENT).wait_for()
    paid = view.locator(PAYMENT).inner_text()
    assert "支付成功" in paid and "取餐码" in paid
    return view


def _first_frames(host: AppsHost) -> dict[str, Any]:
    paint: dict[str, Any] = host.content_frame(0).evaluate("() => window.__paint")
    return paint


def _assert_dark_from_the_first_frame(paint: dict[str, Any]) -> None:
    assert paint["frames"] > 0 and paint["notDark"] == []  # no frame shown in any other theme
    looks = list(paint["firstLook"].values())
    assert [look["component"] for look in looks] == COMPONENTS
    assert [look for look in looks if not _dark(look)] == []  # each card dark the first time it is shown


def _summary(text: str) -> None:
    """The model's one summary after the order: both things the user did and all three cards."""
    assert text.startswith(
        'On the coffee-skill card the user said: "我要一杯燕麦拿铁 Oat Latte". The card called confirmOrder'
    )
    assert "The card called payOrder" in text
    assert "The coffee-skill view shows 3 cards, oldest first:" in text
    for n, name in enumerate(["drink-list", "order-confirm", "payment-result"], start=1):
        assert f"\n{n}. {name} card card-" in text
    assert "支付成功" in text.split("\n3. payment-result")[1]


def test_mcp_apps_host_shows_the_card_dark_from_the_first_frame_and_completes_the_order(
    approving: ServeHandle, apps_browser: Any, apps_bridge_bundle: Path
) -> None:
    with server_calls(approving) as calls, AppsHost.open(apps_browser, approving.url, apps_bridge_bundle) as host:
        host.context.add_init_script(PAINT_PROBE)
        host.set_theme("dark")  # the host is dark before the tool is called
        host.call_tool("searchDrinks", {"keyword": "latte"})
        view = _order(host)
        _assert_dark_from_the_first_frame(_first_frames(host))
        assert view.locator(f"{DRINK_LIST} .skillc-expired").count() == 1
        assert {n: calls.counts[n] for n in ("searchDrinks", "confirmOrder", "payOrder")} == {
            "searchDrinks": 1,
            "confirmOrder": 1,
            "payOrder": 1,
        }
        # The view declared its display modes, as the MCP Apps draft requires of a view.
        (init,) = [m for m in host.view_messages(0) if m["method"] == "ui/initialize"]
        assert init["params"]["appCapabilities"]["availableDisplayModes"] == ["inline"]
        # Each update replaces the last in the host: the last one holds everything.
        updates = host.recorded("modelContext")
        assert len(updates) == 2
        last = updates[-1]["params"]
        _summary(last["content"][0]["text"])
        assert [c["kind"] for c in last["structuredContent"]["cards"]] == ["card"] * 3
        assert [c["expired"] for c in last["structuredContent"]["cards"]] == [True, False, False]
        assert host.errors == [] and host.csp_violations == []
        assert schema_failures(host.log) == []


def test_openai_runtime_host_shows_the_card_dark_from_the_first_frame_and_completes_the_order(
    approving: ServeHandle, apps_browser: Any, apps_bridge_bundle: Path
) -> None:
    with server_calls(approving) as calls, OpenAIHost.open(apps_browser, approving.url, apps_bridge_bundle) as host:
        host.context.add_init_script(PAINT_PROBE)
        host.set_theme("dark")
        host.call_tool("searchDrinks", {"keyword": "latte"})
        _order(host)
        _assert_dark_from_the_first_frame(_first_frames(host))
        assert {n: calls.counts[n] for n in ("searchDrinks", "confirmOrder", "payOrder")} == {
            "searchDrinks": 1,
            "confirmOrder": 1,
            "payOrder": 1,
        }
        state = host.state()
        # The view asked once whether the host speaks MCP Apps; unanswered, it used window.openai only.
        assert [m["message"]["method"] for m in state["jsonrpc"]] == ["ui/initialize"]
        calls_made = state["toolCalls"]
        assert all(c["allowed"] for c in calls_made)
        # The taps reached their cards: the card's session rode in the arguments.
        taps = [c for c in calls_made if c["name"] == "skillc_card_event"]
        assert len(taps) == 2 and all(c["arguments"]["session"].startswith("s1-") for c in taps)
        assert all(not c["result"].get("isError") for c in taps)
        # The model's view of the widget: one summary, replaced as a whole (setWidgetState).
        last = state["widgetStates"][-1]["params"]
        _summary(last["modelContent"])
        assert state["followUps"] == []
        assert state["heights"][0] and host.iframe_height(0) == state["heights"][0][-1]
        assert host.errors == [] and host.csp_violations == []


def test_the_size_reported_stays_within_the_hosts_max_width(
    approving: ServeHandle, apps_browser: Any, apps_bridge_bundle: Path
) -> None:
    with AppsHost.open(apps_browser, approving.url, apps_bridge_bundle) as host:
        # The frame is 375 px wide; the host says the view may be at most 340 px wide.
        host.page.evaluate("() => { window.appsHost.state.container = { maxWidth: 340, maxHeight: 900 } }")
        host.call_tool("searchDrinks", {"keyword": "latte"})
        host.frame(0).locator(f'{DRINK_LIST} [data-uid="0.1.0[d02]"]').wait_for()
        host.wait_for("s => s.sizes[0].some(r => r.width === 340)")
        restyles = [c["arguments"] for c in host.tool_calls if c["name"] == "skillc_card_view"]
        assert restyles and restyles[0]["width"] == 340  # the card is laid out at that width
        assert [r for r in host.size_reports(0) if r["width"] > 340] == []
        assert host.errors == []


# A host that injects window.openai and speaks MCP Apps as well (as ChatGPT does): the stub
# records any use of window.openai's methods.
OPENAI_STUB = """<script>(() => {
  const used = []
  window.__openaiUsed = used
  const record = (name) => (...args) => { used.push(name); return Promise.resolve(null) }
  window.openai = { theme: 'dark', displayMode: 'inline', locale: 'zh-CN', maxHeight: 900,
    toolInput: {}, toolOutput: null, toolResponseMetadata: null, widgetState: null,
    callTool: record('callTool'), setWidgetState: record('setWidgetState'),
    sendFollowUpMessage: record('sendFollowUpMessage'), notifyIntrinsicHeight: record('notifyIntrinsicHeight') }
})()</script>"""


class BothBridgesHost(AppsHost):
    def _serve_view(self, payload: dict[str, Any]) -> str:
        html = str(payload["html"]).replace("<head>", "<head>" + OPENAI_STUB, 1)
        return super()._serve_view({**payload, "html": html})


def test_a_host_with_both_bridges_is_spoken_to_in_mcp_apps(
    approving: ServeHandle, apps_browser: Any, apps_bridge_bundle: Path
) -> None:
    with BothBridgesHost.open(apps_browser, approving.url, apps_bridge_bundle) as host:
        host.context.add_init_script(PAINT_PROBE)
        host.set_theme("dark")
        host.call_tool("searchDrinks", {"keyword": "latte"})
        view = _order(host)
        _assert_dark_from_the_first_frame(_first_frames(host))
        assert host.content_frame(0).evaluate("() => window.__openaiUsed") == []
        # In MCP Apps the follow-up keeps the conversation's session: the drink list expired.
        assert view.locator(f"{DRINK_LIST} .skillc-expired").count() == 1
        assert [c["name"] for c in host.tool_calls].count("skillc_card_event") == 2
        assert host.errors == []
