"""The ui:// card view in a real headless Chromium, inside a minimal MCP Apps host page.

tests/fixtures/apps-host/host.html mounts the view in a sandboxed iframe and speaks the MCP Apps
postMessage protocol; the view's tools/call requests go through the page to the real server over
HTTP. The test delivers a searchDrinks result, clicks a drink, and checks the patched DOM (equal
to a fresh render of the new data) and the ui/message follow-up.
"""

from __future__ import annotations

from collections.abc import Iterator
from importlib.util import find_spec
from typing import Any

import pytest

from skillc.diagnostics import DiagnosticSink
from skillc.frontend.package import load_skill
from skillc.ir.component import compile_component
from skillc.ir.evaluate import CardRenderer
from skillc.ir.render import TEXT, RenderNode
from skillc.server.runner import ServeHandle
from tests.conftest import COFFEE, FIXTURES, require
from tests.test_html_chromium import CHROMIUM_ARGS
from tests.test_server import coffee_server, rpc

pytestmark = pytest.mark.chromium
__all__ = ["coffee_server"]  # the module-scoped server fixture, shared with test_server.py

HOST_PAGE = (FIXTURES / "apps-host" / "host.html").read_text(encoding="utf-8")

# Walk the card's DOM the way the IR is walked: elements by (uid, type), text runs by text.
CANONICAL_JS = """() => {
  const out = []
  const walk = (n) => {
    if (n.nodeType === 3) { out.push(['text', n.textContent]); return }
    if (n.nodeType !== 1 || !n.hasAttribute('data-uid')) return
    out.push(['el', n.getAttribute('data-uid'), n.getAttribute('data-type')])
    n.childNodes.forEach(walk)
  }
  walk(document.querySelector('#card > .skillc-slot > [data-uid="root"]'))
  return out
}"""


def canonical(node: RenderNode) -> list[list[str]]:
    if node.type == TEXT:
        return [["text", node.text or ""]]
    out = [["el", node.id, node.type]]
    for child in node.children or []:
        out += canonical(child)
    return out


@pytest.fixture(scope="module")
def page(chromium_path: str) -> Iterator[Any]:
    require(find_spec("playwright") is not None, "the playwright Python package is not installed")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path, headless=True, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": 375, "height": 800}, device_scale_factor=1)
            page = context.new_page()
            # Nothing leaves the machine: card images are answered with nothing.
            page.route("https://**/*", lambda route: route.fulfill(status=204, body=b""))
            yield page
        finally:
            browser.close()


def test_card_view_renders_taps_and_follows_up(page: Any, coffee_server: ServeHandle) -> None:
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    forwarded: list[dict[str, Any]] = []

    def mcp_call(method: str, params: dict[str, Any]) -> Any:
        forwarded.append({"method": method, "params": params})
        return rpc(coffee_server.url, method, params).json()["result"]

    page.expose_function("mcpCall", mcp_call)
    page.set_content(HOST_PAGE, wait_until="load")
    html = rpc(coffee_server.url, "resources/read", {"uri": "ui://coffee-skill/drink-list"}).json()
    page.evaluate("html => hostLoad(html)", html["result"]["contents"][0]["text"])

    args = {"keyword": "latte"}
    result = rpc(coffee_server.url, "tools/call", {"name": "searchDrinks", "arguments": args}).json()["result"]
    page.evaluate("([a, r]) => hostDeliver(a, r)", [args, result])
    frame = page.frame_locator("iframe")
    drink = frame.locator('[data-uid="0.1.0[d02]"]')
    drink.wait_for()
    assert frame.locator('[data-uid="0.0.0"]').inner_text() == "“latte”的搜索结果"
    assert frame.locator("[data-uid^='0.1.0[']").count() >= 3
    before = drink.evaluate("el => getComputedStyle(el).borderTopColor")

    # Named and reachable as the static HTML is (skillc/backends/html_a11y.py): the drink is a
    # button, its picture named by the drink; Enter on it is the tap.
    assert [drink.get_attribute(a) for a in ("role", "tabindex", "aria-label")] == [
        "button",
        "0",
        "燕麦拿铁 Oat Latte ¥32",
    ]
    assert frame.locator('[data-uid="0.1.0[d02].0"]').get_attribute("alt") == "燕麦拿铁 Oat Latte"
    drink.focus()
    drink.press("Enter")
    badge = frame.locator('[data-uid="0.1.0[d02].2.1.0"]')
    badge.wait_for()
    assert badge.inner_text() == "已选"
    assert drink.evaluate("el => getComputedStyle(el).borderTopColor") != before

    # The follow-up takes one path: the api/call as one tools/call through the host, the user's
    # words to the model as ui/update-model-context (no ui/message: that would start a model turn
    # that may call confirmOrder a second time). This server approves nothing up front and the host
    # cannot elicit: the user is asked in the card area, below the card, and declines.
    consent = frame.locator('.skillc-slot[data-kind="consent"]')
    consent.wait_for()
    assert consent.inner_text().startswith("confirmOrder (risk L3) needs your consent.")
    consent.get_by_role("button", name="Decline").click()
    page.wait_for_function("() => hostLog.some(m => m.method === 'ui/update-model-context')")
    log = page.evaluate("hostLog")
    methods = [m.get("method") for m in log if "method" in m]
    assert "ui/message" not in methods
    assert methods[:2] == ["ui/initialize", "ui/notifications/initialized"]
    assert "ui/notifications/size-changed" in methods
    tool_calls = [f["params"] for f in forwarded if f["method"] == "tools/call"]
    assert tool_calls[0]["name"] == "skillc_card_event"
    assert tool_calls[0]["arguments"]["nodeId"] == "0.1.0[d02]"  # the focused button itself
    # Every call the view makes runs in its card's session: it carries the one the result named.
    carried = {"skillc/session": result["_meta"]["skillc/session"]}
    assert all(c["_meta"] == carried for c in tool_calls)
    assert [c for c in tool_calls if c["name"] == "confirmOrder"] == [
        {"name": "confirmOrder", "arguments": {"drinkId": "d02", "quantity": 1}, "_meta": carried}
    ]
    assert [c["name"] for c in tool_calls[1:]] == ["confirmOrder", "skillc_consent"]
    (context,) = [m["params"] for m in log if m.get("method") == "ui/update-model-context"]
    assert context["content"][0]["text"].startswith(
        'On the coffee-skill card the user said: "我要一杯燕麦拿铁 Oat Latte", and declined confirmOrder'
    )
    declined = frame.locator('.skillc-slot[data-consent="declined"]')
    declined.wait_for()
    assert declined.inner_text().startswith("The user declined confirmOrder")

    # The patched DOM is exactly a fresh render of the new data.
    pkg = load_skill(COFFEE, DiagnosticSink())
    assert pkg is not None
    component = compile_component(pkg, "drink-list", DiagnosticSink())
    assert component is not None
    data = {
        "title": "“latte”的搜索结果",
        "keyword": "latte",
        "drinks": result["structuredContent"]["drinks"],
        "selectedId": "d02",
    }
    expected = canonical(CardRenderer(component).render(data).root)
    inner = page.frames[1]
    assert inner.evaluate(CANONICAL_JS) == expected
    assert errors == []
