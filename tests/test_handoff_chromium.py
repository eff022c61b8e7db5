"""A handoff result in the MCP Apps card view, in a real headless Chromium: the view of a handoff
API (ui://<skill>/handoff-page) shows the CardSpec handoff card: the page, the query, the way in."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from skillc.runtime.config import RuntimeConfig
from skillc.server.runner import ServeHandle, ServeOptions
from tests.test_server import rpc
from tests.test_server_apps_chromium import HOST_PAGE, page

from .test_handoff import SHOP

pytestmark = pytest.mark.chromium
__all__ = ["page"]  # the module-scoped browser page, shared with test_server_apps_chromium.py


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeHandle]:
    state = tmp_path_factory.mktemp("shop-view")
    with ServeHandle.start(ServeOptions(paths=(SHOP,), port=0, runtime=RuntimeConfig(state_dir=state))) as handle:
        yield handle


def test_the_card_view_shows_the_handoff_card(page: Any, shop: ServeHandle) -> None:
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.expose_function("mcpCall", lambda method, params: rpc(shop.url, method, params).json()["result"])
    page.set_content(HOST_PAGE, wait_until="load")
    html = rpc(shop.url, "resources/read", {"uri": "ui://shop/handoff-page"}).json()
    page.evaluate("html => hostLoad(html)", html["result"]["contents"][0]["text"])

    args = {"orderId": "A7"}
    result = rpc(shop.url, "tools/call", {"name": "openOrder", "arguments": args}).json()["result"]
    page.evaluate("([a, r]) => hostDeliver(a, r)", [args, result])
    card = page.frame_locator("iframe").locator(".skillc-fallback")
    card.wait_for()
    assert [line for line in card.inner_text().split("\n") if line] == [
        "Continue in the mini program",
        "page",
        "/pages/order/detail",
        "orderId",
        "A7",
        "from",
        "agent",
        "Open in mini program: /pages/order/detail?orderId=A7&from=agent",
    ]
    assert errors == []
