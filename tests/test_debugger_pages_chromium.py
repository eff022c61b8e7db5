"""render_page runs the page as the AI-mode handoff opens it, through the Debugger MCP with the
debug console in real headless Chromium: the fixture project's order page renders from its WXML
with onLoad's query applied, a tap in the device frame calls the page's method whose setData
changes what renders, and a page that leans on what only a full mini program has renders too,
with each finding as a page console message at its file:line:col."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib.util import find_spec
from typing import Any

import pytest
from mcp.client import Client

from skillc.runtime.config import RuntimeConfig
from skillc.server.debugger.channel_sse import HeadlessConsole
from skillc.server.debugger.console_page import build_debug_server
from skillc.server.runner import ServeOptions, prepare
from tests.conftest import FIXTURES, require
from tests.debug_servers import Running, free_port
from tests.waiting import PATIENCE_S, wait_until

pytestmark = pytest.mark.chromium
TEAHOUSE = FIXTURES / "pages" / "skills" / "teahouse"


@dataclass
class Console:
    running: Running
    page: Any  # the Playwright page running the debug console
    calls: ThreadPoolExecutor  # MCP calls run off this thread: Playwright's sync API holds its loop

    def call(self, name: str, args: dict[str, Any]) -> Any:
        async def go() -> Any:
            async with Client(self.running.mcp_url) as client:
                return await client.call_tool(name, args)

        return self.calls.submit(asyncio.run, go()).result(PATIENCE_S)

    def tree(self) -> str:
        snap = self.call("take_snapshot", {})
        assert not snap.is_error, snap.structured_content
        return str(snap.structured_content.get("snapshot", ""))


@pytest.fixture(scope="module")
def console(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Console]:
    require(find_spec("playwright") is not None, "playwright is not installed (pip install 'skillc[debug]')")
    require(HeadlessConsole.executable() is not None, "no chromium on PATH (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    state = tmp_path_factory.mktemp("page-debug-state")
    prepared = prepare(ServeOptions(paths=(TEAHOUSE,), runtime=RuntimeConfig(state_dir=state)))
    # The console runs in a headless Chromium of the test's own, so the test can tap in its frame.
    debug = build_debug_server(prepared, browser=False, offline=True)
    port = free_port()
    debug.listening("127.0.0.1", port)
    running = Running(debug, port)
    running.thread.start()
    pw = sync_playwright().start()
    browser = pw.chromium.launch(executable_path=HeadlessConsole.executable(), args=["--no-sandbox"])
    calls = ThreadPoolExecutor(1)
    try:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(debug.descriptor.urls.console)
        wait_until(lambda: debug.channel.connected, PATIENCE_S, "the console to connect")
        store = debug.debugger.server.store
        wait_until(lambda: store.current is not None, PATIENCE_S, "the console's first snapshot")
        yield Console(running, page, calls)
    finally:
        calls.shutdown()
        browser.close()
        pw.stop()
        running.stop()


def test_the_handoff_routes_are_the_page_targets(console: Console) -> None:
    targets = console.call("list_render_targets", {"type": "page"}).structured_content
    assert targets["pages"] == [
        {"pageId": "/pages/order/detail", "path": "/pages/order/detail", "name": "order", "isHome": True},
        {"pageId": "/pages/legacy/index", "path": "/pages/legacy/index", "name": "legacy", "isHome": False},
    ]


def test_render_page_applies_the_handoff_query_and_a_tap_re_renders(console: Console) -> None:
    rendered = console.call("render_page", {"url": "/pages/order/detail?orderId=T-7&cups=2"})
    assert not rendered.is_error, rendered.structured_content
    target = rendered.structured_content["target"]
    assert rendered.structured_content["rendered"] is True
    assert (target["type"], target["id"], target["query"]) == (
        "page",
        "/pages/order/detail",
        {"orderId": "T-7", "cups": "2"},
    )
    tree = console.tree()
    assert 'text "Order T-7"' in tree and 'text "2 cups"' in tree and 'text "loaded"' in tree
    assert 'uid=0.3 view role="button" name="Add a cup" "Add a cup" bindtap="addCup"' in tree
    # onShow's console line, as a page line with its place in the page's file.
    logs = console.call("list_console_messages", {"target": "page", "query": "order page shown"})
    [line] = logs.structured_content["messages"]
    assert (line["text"], line["source"], line["url"], line["lineNumber"]) == (
        "order page shown T-7",
        "page-vm",
        "pages/order/detail.js",
        8,
    )

    # A person taps "Add a cup" in the device frame: addCup's setData re-renders the page.
    console.page.frame_locator("#device").locator('[data-bind-tap="addCup"]').click()
    wait_until(lambda: 'text "3 cups"' in console.tree(), PATIENCE_S, "the tap's setData to render")
    assert 'text "Order T-7"' in console.tree()

    # render_page again is a fresh page: onLoad's query, not the tapped data.
    again = console.call("render_page", {"url": "/pages/order/detail?orderId=T-9&cups=5"})
    assert not again.is_error, again.structured_content
    tree = console.tree()
    assert 'text "Order T-9"' in tree and 'text "5 cups"' in tree


def test_a_page_with_unsupported_features_renders_and_reports_them(console: Console) -> None:
    rendered = console.call("render_page", {"url": "/pages/legacy/index?tab=all"})
    assert not rendered.is_error, rendered.structured_content
    tree = console.tree()
    assert 'text "Tab: all"' in tree and '"A-100"' in tree and '"A-101"' in tree
    found = console.call("list_console_messages", {"target": "page", "query": "PAGE0"})
    rows = [
        (m["text"].split(" ", 1)[0], m["level"], m["url"], m["lineNumber"], m["columnNumber"])
        for m in found.structured_content["messages"]
    ]
    assert rows == [
        ("PAGE010", "warn", "pages/legacy/index.js", 6, 5),
        ("PAGE007", "warn", "pages/legacy/index.js", 8, 3),
        ("PAGE010", "warn", "pages/legacy/index.js", 9, 5),
        ("PAGE006", "warn", "pages/legacy/index.js", 11, 3),
        ("PAGE009", "warn", "pages/legacy/index.js", 13, 5),
        ("PAGE013", "info", "pages/legacy/index.json", 2, 3),
        ("PAGE013", "info", "pages/legacy/index.json", 3, 3),
        ("PAGE011", "warn", "pages/legacy/index.json", 5, 18),
        ("PAGE012", "warn", "pages/legacy/index.wxml", 3, 4),
    ]
    texts = [m["text"] for m in found.structured_content["messages"]]
    assert (
        "PAGE009 pages/legacy/index calls wx.navigateTo: the debug console shows one page (the handoff's), "
        "so the call fails; render the other page with render_page instead"
    ) in texts

    # A tap on a row calls wx.navigateTo inside the page: it fails there, the page stays.
    console.page.frame_locator("#device").locator('[data-bind-tap="openRow"]').first.click()
    wait_until(
        lambda: any(
            e["event"] == "page_event"
            for e in console.call("list_agent_trace_events", {"category": "runtime"}).structured_content["events"]
        ),
        PATIENCE_S,
        "the tap to reach the page",
    )
    assert 'text "Tab: all"' in console.tree()


def test_a_chat_turn_that_hands_off_opens_the_page_with_its_query(console: Console) -> None:
    """openOrder returns handoff {query: {orderId, cups: 2}}: the console opens its pagePath with that
    query, as WeChat does, and the page is the current target when the turn ends."""
    turn = console.call("submit_chat_query", {"query": '/call openOrder {"orderId": "T-5"}'})
    assert not turn.is_error, turn.structured_content
    snap = console.call("take_snapshot", {})
    assert not snap.is_error, snap.structured_content
    target = snap.structured_content["target"]
    assert (target["type"], target["id"], target["query"]) == (
        "page",
        "/pages/order/detail",
        {"orderId": "T-5", "cups": "2"},
    )
    tree = snap.structured_content["snapshot"]
    assert 'text "Order T-5"' in tree and 'text "2 cups"' in tree
