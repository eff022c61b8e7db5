"""`skillc debug`'s server in-process with its headless Chromium on the debug console page, driven
through the Debugger MCP with the SDK's Python client: render_widget of the coffee cards, then
take_snapshot / get_computed_style / get_element_rect / scroll_to / take_screenshot round trips,
and the channel's own errors (a console that goes away mid-command)."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import time
from collections.abc import Iterator
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest
from mcp.client import Client

from skillc.runtime.config import RuntimeConfig
from skillc.server.debugger.channel_sse import HeadlessConsole, SseConsoleChannel, image_size
from skillc.server.debugger.console_page import build_debug_server
from skillc.server.debugger.errors import DebuggerError
from skillc.server.runner import ServeOptions, prepare
from tests.conftest import COFFEE, FIXTURES, require
from tests.debug_servers import Running, free_port

pytestmark = pytest.mark.chromium
ORDER_SKILL = FIXTURES / "runtime-lifecycle" / "order-skill"


@pytest.fixture(scope="module")
def debug_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    require(find_spec("playwright") is not None, "playwright is not installed (pip install playwright)")
    require(HeadlessConsole.executable() is not None, "no chromium on PATH (apt-get install chromium)")
    state = tmp_path_factory.mktemp("debug-state")
    prepared = prepare(ServeOptions(paths=(COFFEE, ORDER_SKILL), runtime=RuntimeConfig(state_dir=state)))
    debug = build_debug_server(prepared, browser=True, offline=True)
    port = free_port()
    debug.listening("127.0.0.1", port)
    running = Running(debug, port)
    running.thread.start()
    deadline = time.monotonic() + 60
    while not debug.channel.connected:
        assert debug.browser_error is None, debug.browser_error
        assert time.monotonic() < deadline, "the headless console never connected"
        time.sleep(0.05)
    yield running
    running.server.should_exit = True
    running.thread.join(timeout=30)


def call(url: str, name: str, args: dict[str, Any], mode: str = "auto") -> Any:
    async def go() -> Any:
        async with Client(url, mode=mode) as client:
            return await client.call_tool(name, args)

    return asyncio.run(go())


def _uids(tree: str) -> list[str]:
    return [line.strip().split()[0].removeprefix("uid=") for line in tree.splitlines() if line.strip()]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_render_and_inspect_a_coffee_card(debug_server: Running, mode: str) -> None:
    url = debug_server.mcp_url
    for widget in ("drink-list", "order-confirm", "payment-result"):
        rendered = call(url, "render_widget", {"widgetId": widget}, mode)
        assert not rendered.is_error, rendered.structured_content
        assert rendered.structured_content["rendered"] is True
        assert rendered.structured_content["target"]["id"] == widget

    rendered = call(url, "render_widget", {"widgetId": "drink-list"}, mode)
    assert rendered.structured_content["target"]["type"] == "widget"
    snap = call(url, "take_snapshot", {}, mode)
    assert not snap.is_error, snap.structured_content
    tree = snap.structured_content["snapshot"]
    assert snap.structured_content["nodeCount"] > 3
    uids = _uids(tree)
    assert uids[0] == "root"
    uid = uids[1]

    style = call(url, "get_computed_style", {"uid": uid, "properties": ["display", "width"]}, mode)
    assert not style.is_error, style.structured_content
    names = {p["name"]: p["value"] for p in style.structured_content["computedStyle"]}
    assert names["display"] and names["width"].endswith("px")

    rect = call(url, "get_element_rect", {"uid": uid}, mode)
    assert not rect.is_error, rect.structured_content
    r = rect.structured_content
    assert r["width"] > 0 and r["height"] > 0
    assert 0 <= r["x"] <= 375

    shot = call(url, "take_screenshot", {}, mode)
    assert not shot.is_error, shot.structured_content
    meta = shot.structured_content
    assert meta["captured"] is True and "data" not in meta
    image = base64.b64decode(shot.content[0].data)
    assert image_size(image, "png") == (meta["width"], meta["height"]) == (375, 667)

    jpeg = call(url, "take_screenshot", {"uid": uid, "format": "jpeg", "quality": 60}, mode)
    assert not jpeg.is_error, jpeg.structured_content
    size = image_size(base64.b64decode(jpeg.content[0].data), "jpeg")
    assert size is not None and abs(size[0] - round(r["width"])) <= 1

    missing = call(url, "get_element_rect", {"uid": "no-such-uid"}, mode)
    assert missing.is_error and missing.structured_content["error"]["code"] == "ELEMENT_NOT_FOUND"


def test_a_screenshot_as_an_artefact_ref(debug_server: Running) -> None:
    """asRef: the image stays out of the result; its bytes come with resources/read of the ref, from
    the Debugger MCP and from the skills' MCP alike, and match the digest."""
    url = debug_server.mcp_url
    assert not call(url, "render_widget", {"widgetId": "drink-list"}).is_error
    shot = call(url, "take_screenshot", {"asRef": True})
    assert not shot.is_error, shot.structured_content
    assert [b.type for b in shot.content] == ["text"]  # no image block
    meta = shot.structured_content
    ref = meta["ref"]
    assert (ref["mime"], ref["display_name"]) == ("image/png", "screenshot-target.png")

    async def read(at: str) -> bytes:
        async with Client(at) as client:
            contents = (await client.read_resource(ref["uri"])).contents[0]
            return base64.b64decode(contents.blob)

    for at in (url, f"http://127.0.0.1:{debug_server.port}/mcp"):
        body = asyncio.run(read(at))
        digest = hashlib.sha256(body).hexdigest()
        assert ref["uri"] == f"artefact://sha256/{digest}" and ref["size_bytes"] == len(body)
        assert image_size(body, "png") == (meta["width"], meta["height"])


def test_computed_style_matches_the_render_ir(debug_server: Running) -> None:
    url = debug_server.mcp_url
    assert not call(url, "render_widget", {"widgetId": "drink-list"}).is_error
    snap = call(url, "take_snapshot", {}).structured_content["snapshot"]
    assert snap.splitlines()[0].startswith("uid=root widget")
    assert len(_uids(snap)) == len(set(_uids(snap))), "every uid once"
    # 0.0.0 is the list's title: WXSS gives it font-size 17px, font-weight 600, color #2b1d12.
    style = call(url, "get_computed_style", {"uid": "0.0.0", "properties": ["font-size", "font-weight", "color"]})
    got = {p["name"]: p["value"] for p in style.structured_content["computedStyle"]}
    assert got == {"font-size": "17px", "font-weight": "600", "color": "rgb(43, 29, 18)"}


def test_scroll_to_the_drink_list(debug_server: Running) -> None:
    url = debug_server.mcp_url
    assert not call(url, "render_widget", {"widgetId": "drink-list"}).is_error
    scrolled = call(url, "scroll_to", {"x": 40})
    assert not scrolled.is_error, scrolled.structured_content
    info = scrolled.structured_content
    assert info["maxX"] > 0 and info["x"] == min(40, info["maxX"])


def test_set_viewport_re_renders_at_the_new_width(debug_server: Running) -> None:
    url = debug_server.mcp_url
    assert not call(url, "render_widget", {"widgetId": "payment-result"}).is_error
    try:
        vp = call(url, "set_viewport", {"width": 320, "height": 600})
        assert not vp.is_error, vp.structured_content
        shot = call(url, "take_screenshot", {})
        assert (shot.structured_content["width"], shot.structured_content["height"]) == (320, 600)
    finally:
        call(url, "set_viewport", {"width": 375, "height": 667})


def test_a_console_that_disconnects_ends_running_and_queued_commands() -> None:
    async def scenario() -> list[str]:
        channel = SseConsoleChannel()
        console = channel._connect()  # a console that never answers
        running = asyncio.ensure_future(channel.command("get_element_rect", {"uid": "x"}, 10))
        queued = asyncio.ensure_future(channel.command("scroll_to", {}, 10))
        await asyncio.sleep(0.05)
        started = time.monotonic()
        channel._disconnect(console)
        codes: list[str] = []
        for fut in (running, queued):
            with pytest.raises(DebuggerError) as err:
                await fut
            codes.append(err.value.code)
        assert time.monotonic() - started < 5  # at the disconnect, not at their 10 s timeout
        with pytest.raises(DebuggerError) as none:
            await channel.command("scroll_to", {}, 1)
        codes.append(none.value.code)
        channel._connect()
        with pytest.raises(TimeoutError):
            await channel.command("scroll_to", {}, 0.05)
        return codes

    assert asyncio.run(scenario()) == ["DEBUGGER_DISCONNECTED", "DEBUGGER_DISCONNECTED", "DEBUGGER_NOT_CONNECTED"]


def test_console_page_render_endpoint_reports_unknown_widgets(tmp_path: Path) -> None:
    from skillc.server.debugger.console_page import ConsolePage

    prepared = prepare(ServeOptions(paths=(COFFEE,), runtime=RuntimeConfig(state_dir=tmp_path)))
    page = ConsolePage([s.package for s in prepared.server.catalogue.skills])
    assert set(page.widgets) == {"drink-list", "order-confirm", "payment-result"}
    assert {p["path"] for p in page.pages} >= {"/pages/menu/menu", "/pages/order/order"}
    bad = asyncio.run(page.render_widget({"widgetId": "nope"}))
    assert bad["ok"] is False and bad["error"]["code"] == "TARGET_NOT_FOUND"
    good = asyncio.run(page.render_widget({"widgetId": "drink-list", "width": 375, "height": 667}))
    assert good["ok"] is True and 'data-uid="' in good["html"]


def test_console_errors_reach_the_agent(debug_server: Running) -> None:
    url = debug_server.mcp_url
    assert not call(url, "render_widget", {"widgetId": "drink-list"}).is_error
    codes = {
        "scroll_to": call(url, "scroll_to", {"uid": "0.1", "y": 10}),
        "render_page": call(url, "render_page", {"url": "/pages/nowhere/index"}),
    }
    assert debug_server.debug.page is not None and debug_server.debug.page.chat is not None
    chat = debug_server.debug.page.chat
    endpoint = chat.endpoint
    try:
        chat.endpoint = lambda: None  # the skills' MCP is not listening
        codes["not_ready"] = call(url, "submit_chat_query", {"query": "a latte please"})
        chat.endpoint = lambda: "http://127.0.0.1:9/mcp"  # nothing answers there
        codes["submit_failed"] = call(url, "submit_chat_query", {"query": "a latte please"})
    finally:
        chat.endpoint = endpoint
    got = {name: r.structured_content["error"]["code"] for name, r in codes.items() if r.is_error}
    assert got == {
        "scroll_to": "SCROLL_FAILED",
        "render_page": "TARGET_NOT_FOUND",
        "not_ready": "CHAT_NOT_READY",
        "submit_failed": "CHAT_SUBMIT_FAILED",
    }
    failed = codes["submit_failed"].structured_content["error"]["message"]
    assert "tools/list at http://127.0.0.1:9/mcp failed" in failed


def test_the_descriptor_says_a_console_is_connected(debug_server: Running) -> None:
    async def go(url: str) -> Any:
        async with Client(url) as client:
            return await client.read_resource("skillc://debugger/descriptor")

    contents = asyncio.run(go(debug_server.mcp_url)).contents[0]
    descriptor = json.loads(contents.text)
    assert descriptor["state"] == "client_connected"
    assert descriptor["urls"]["console"] == f"http://127.0.0.1:{debug_server.port}/?token={debug_server.debug.token}"
    # The skills' own MCP publishes the same live descriptor, so an agent on /mcp can find the debugger.
    skills = asyncio.run(go(f"http://127.0.0.1:{debug_server.port}/mcp")).contents[0]
    assert json.loads(skills.text) == descriptor


def test_another_open_console_does_not_take_the_commands(debug_server: Running) -> None:
    import httpx

    events = f"http://127.0.0.1:{debug_server.port}/__debug/events?token={debug_server.debug.token}"
    with httpx.stream("GET", events, timeout=10) as stream:
        lines = stream.iter_lines()
        assert next(lines) == "event: hello"
        assert next(lines).startswith("data: ")
        rendered = call(debug_server.mcp_url, "render_widget", {"widgetId": "order-confirm"})
        assert not rendered.is_error, rendered.structured_content


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_submit_chat_query_records_the_turn(debug_server: Running, mode: str) -> None:
    url = debug_server.mcp_url
    sent = call(url, "submit_chat_query", {"query": '/call searchDrinks {"keyword": "拿铁"}'}, mode)
    assert not sent.is_error, sent.structured_content
    turn = sent.structured_content
    assert turn["submitted"] is True and turn["completed"] is True and turn["query"].startswith("/call")
    request_id = turn["requestId"]

    events = call(url, "list_agent_trace_events", {"requestId": request_id}, mode).structured_content
    assert events["total"] == len(events["events"]) >= 6
    assert {e["requestId"] for e in events["events"]} == {request_id}
    assert [e["event"] for e in events["events"]][:2] == ["turn_start", "tools_list"]
    mcp = call(url, "list_agent_trace_events", {"requestId": request_id, "category": "mcp"}, mode)
    assert [e["event"] for e in mcp.structured_content["events"]] == ["tools_list", "tools_call", "tools_call_result"]

    calls = call(url, "list_agent_tool_calls", {"requestId": request_id}, mode).structured_content
    [tool_call] = calls["toolCalls"]
    assert (tool_call["toolName"], tool_call["status"], tool_call["appKey"]) == (
        "searchDrinks",
        "succeeded",
        "coffee-skill",
    )
    by_query = call(url, "list_agent_tool_calls", {"query": "拿铁", "toolName": "searchDrinks"}, mode)
    assert request_id in {c["requestId"] for c in by_query.structured_content["toolCalls"]}

    # The API VM's console line, with file:line, is in the console the agent reads.
    lines = call(url, "list_console_messages", {"target": "app", "query": "searchDrinks took"}, mode)
    found = lines.structured_content["messages"]
    assert found and found[-1]["source"] == "api-vm"
    assert (found[-1]["url"], found[-1]["lineNumber"]) == ("coffee-skill/index.js", 11)

    # The card the turn mounted is the current target, rendered from the card's own Render IR.
    snap = call(url, "take_snapshot", {}, mode).structured_content
    assert snap["target"]["type"] == "widget" and snap["target"]["id"] == "drink-list"
    assert "拿铁" in snap["snapshot"]
    scene = call(url, "get_log_snapshot", {}, mode).structured_content["snapshot"]
    last = scene["context"]["chat"][-1]
    assert last["requestId"] == request_id
    assert [m["role"] for m in last["messages"]] == ["user", "assistant", "tool", "assistant"]
    assert last["cards"][0]["structuredContent"]["keyword"] == "拿铁"


def test_render_widget_with_structured_content_runs_the_cards_javascript(debug_server: Running) -> None:
    url = debug_server.mcp_url
    rendered = call(url, "render_widget", {"widgetId": "order-card", "structuredContent": {"title": "Order o-3"}})
    assert not rendered.is_error, rendered.structured_content
    snap = call(url, "take_snapshot", {}).structured_content["snapshot"]
    assert '"Order o-3"' in snap  # set by the card's Result handler, not bound from the data
    lines = call(url, "list_console_messages", {"target": "widget", "query": "result waiting"}).structured_content
    message = lines["messages"][-1]
    assert (message["source"], message["url"]) == ("card-vm", "order-skill/components/order-card/index.js")
    full = call(url, "get_console_message", {"msgid": message["msgid"]}).structured_content
    assert full["found"] is True and full["message"]["entry"]["args"] == ["result waiting"]
