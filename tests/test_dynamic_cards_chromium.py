"""A dynamic card's timers in the MCP Apps view, in a real headless Chromium: the view (inside the
minimal test host of tests/fixtures/apps-host/host.html) polls skillc_card_updates through the
host's tools/call while the card has live timers and applies the patches, so the countdown changes
in the DOM with no tap; hidden (document.visibilitychange), it tells the server
(skillc_card_visibility), which pauses the card's timers, and resumes when shown again.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from importlib.util import find_spec
from typing import Any

import pytest

from skillc.runtime.config import RuntimeConfig
from skillc.server.runner import ServeHandle, ServeOptions
from tests.conftest import FIXTURES, require
from tests.test_html_chromium import CHROMIUM_ARGS
from tests.test_server import rpc

pytestmark = pytest.mark.chromium

PICKUP = FIXTURES / "dynamic-cards" / "pickup-skill"
HOST_PAGE = (FIXTURES / "apps-host" / "host.html").read_text(encoding="utf-8")
LEFT = '[data-uid="0.1"]'  # the countdown's "N 秒" text

# Inside the view: pretend the host hid (or showed) the document, as a browser does for a
# background tab; the view hears it through visibilitychange like any other.
SET_HIDDEN_JS = """hidden => {
  Object.defineProperty(document, 'hidden', { configurable: true, get: () => hidden })
  document.dispatchEvent(new Event('visibilitychange'))
}"""


@pytest.fixture(scope="module")
def pickup_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeHandle]:
    config = RuntimeConfig(state_dir=tmp_path_factory.mktemp("pickup-view"), card_timer_min_interval_ms=100)
    with ServeHandle.start(ServeOptions(paths=(PICKUP,), port=0, runtime=config)) as handle:
        yield handle


@pytest.fixture(scope="module")
def page(chromium_path: str) -> Iterator[Any]:
    require(find_spec("playwright") is not None, "the playwright Python package is not installed")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path, headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser.new_context(viewport={"width": 375, "height": 800}).new_page()
        finally:
            browser.close()


def _seconds(text: str) -> int:
    return int(text.split()[0])


def test_the_view_applies_timer_patches_and_pauses_the_card_while_hidden(page: Any, pickup_server: ServeHandle) -> None:
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    calls: list[dict[str, Any]] = []

    def mcp_call(method: str, params: dict[str, Any]) -> Any:
        calls.append(params)
        return rpc(pickup_server.url, method, params).json()["result"]

    page.expose_function("mcpCall", mcp_call)
    page.set_content(HOST_PAGE, wait_until="load")
    html = rpc(pickup_server.url, "resources/read", {"uri": "ui://pickup-skill/countdown"}).json()
    page.evaluate("html => hostLoad(html)", html["result"]["contents"][0]["text"])
    args = {"seconds": 60, "tickMs": 200}
    result = rpc(pickup_server.url, "tools/call", {"name": "startCountdown", "arguments": args}).json()["result"]
    card_id = result["_meta"]["skillc/card"]["cardId"]
    page.evaluate("([a, r]) => hostDeliver(a, r)", [args, result])
    view = page.frames[1]
    left = page.frame_locator("iframe").locator(LEFT)
    left.wait_for()
    assert left.inner_text() == "60 秒"

    # No tap: the interval runs on the server and the view's polls bring its patches.
    view.wait_for_function(f"() => parseInt(document.querySelector('{LEFT}').textContent) <= 57", timeout=10_000)
    polls = [c for c in calls if c.get("name") == "skillc_card_updates"]
    assert polls and polls[0]["arguments"]["cardId"] == card_id and polls[0]["arguments"]["since"].endswith(".0")
    carried = {"skillc/session": result["_meta"]["skillc/session"]}
    assert polls[0]["_meta"] == carried  # the view carries its card's session

    # A tap between two beats: its patches and the timers' come out in the server's order.
    page.frame_locator("iframe").locator('[data-uid="0.3"]').click()
    view.wait_for_function(f"() => parseInt(document.querySelector('{LEFT}').textContent) >= 60", timeout=10_000)

    view.evaluate(SET_HIDDEN_JS, True)
    view.wait_for_function("() => window.skillcView.state.slots[0].poll === null", timeout=10_000)
    page.wait_for_timeout(300)  # let the visibility answer land
    told = [c["arguments"] for c in calls if c.get("name") == "skillc_card_visibility"]
    assert told and told[-1]["visible"] is False and told[-1]["cardId"] == card_id
    frozen = _seconds(left.inner_text())
    cursor = view.evaluate("() => window.skillcView.state.slots[0].cursor")
    asked = len(calls)
    page.wait_for_timeout(1000)  # five intervals: a visible card would have ticked
    assert _seconds(left.inner_text()) == frozen and len(calls) == asked
    # The view's copy is the server's: nothing after its cursor, and the server's tree says the same.
    now = rpc(
        pickup_server.url,
        "tools/call",
        {"name": "skillc_card_updates", "arguments": {"cardId": card_id}, "_meta": carried},
    )
    out = now.json()["result"]["structuredContent"]
    assert out["hidden"] is True and out["cursor"] == cursor
    (reset,) = out["updates"]
    root = reset["patches"][0]["node"]
    assert root["children"][0]["children"][1]["children"][0]["props"]["text"] == f"{frozen} 秒"

    view.evaluate(SET_HIDDEN_JS, False)
    deadline = time.monotonic() + 10
    while _seconds(left.inner_text()) >= frozen and time.monotonic() < deadline:
        page.wait_for_timeout(50)
    assert _seconds(left.inner_text()) < frozen  # ticking again, from where it paused
    told = [c["arguments"] for c in calls if c.get("name") == "skillc_card_visibility"]
    assert told[-1]["visible"] is True
    assert errors == []
