"""The Debugger MCP at /__wsd_mcp over real HTTP on loopback, with the SDK's Python client in both
protocol modes: the snapshot tools after a fixture snapshot is posted to /__agent_trace, paging and
limits, the descriptor resource, CORS preflight, and every error code of DEBUGGER-PROTOCOL.md
(the browser tools through a scripted ConsoleChannel standing in for the console page).
"""

from __future__ import annotations

import asyncio
import base64
import copy
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from mcp.client import Client
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, ImageContent, TextContent, TextResourceContents

from skillc.runtime.config import RuntimeConfig
from skillc.server.catalog import build_catalogue, load_paths
from skillc.server.debugger import (
    DESCRIPTOR_URI,
    ERROR_CODES,
    DebugDescriptor,
    DebuggerApp,
    DebuggerError,
    build_debugger_app,
)
from skillc.server.debugger.snapshot import AgentTraceSnapshot, SnapshotStore
from skillc.server.debugger.tools import MAX_SCREENSHOT_B64
from skillc.server.debugger.tree import MAX_NODES
from tests.conftest import COFFEE, FIXTURES

SNAPSHOT = json.loads((FIXTURES / "debugger" / "drink-list-snapshot.json").read_text(encoding="utf-8"))
GOLDEN_TREE = (FIXTURES / "debugger" / "drink-list-tree.txt").read_text(encoding="utf-8").rstrip("\n")
MODES = [("auto", "2026-07-28"), ("legacy", "2025-11-25")]
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
TOOLS = {
    "list_console_messages", "get_console_message", "get_log_snapshot", "list_render_targets", "render_page",
    "render_widget", "submit_chat_query", "set_viewport", "take_snapshot", "get_computed_style",
    "get_element_rect", "scroll_to", "take_screenshot", "list_agent_trace_events", "list_agent_tool_calls",
}  # fmt: skip
CONTROL = {"render_page", "render_widget", "submit_chat_query", "set_viewport", "scroll_to"}
PNG_1X1 = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
    )
).decode()


class ScriptedConsole:
    """A ConsoleChannel standing in for the console page: renders post the fixture snapshot with the
    command's id; ``fail`` makes the next command raise a protocol code, ``crash`` an exception,
    ``hang`` sleep past the deadline, ``silent`` render without posting a snapshot."""

    def __init__(self, store: SnapshotStore) -> None:
        self.store = store
        self.fail: str | None = None
        self.crash = False
        self.hang = False
        self.silent = False
        self.answer: dict[str, Any] | None = None
        self.foreign_id: str | None = None  # render with the channel's own command id (as channel_sse does)
        self.posted: list[dict[str, Any]] = []
        self.commands: list[tuple[str, dict[str, Any], float]] = []

    async def command(self, name: str, params: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        self.commands.append((name, params, timeout_s))
        if self.fail is not None:
            code, self.fail = self.fail, None
            raise DebuggerError(code, f"scripted {code}")  # type: ignore[arg-type]
        if self.crash:
            self.crash = False
            raise RuntimeError("the console page threw")
        if self.hang:
            self.hang = False
            await asyncio.sleep(timeout_s + 5)
        if self.answer is not None:
            answer, self.answer = self.answer, None
            return answer
        if name in ("render_widget", "render_page"):
            if self.silent:
                self.silent = False
                return {}
            snap = copy.deepcopy(SNAPSHOT)
            snap["commandId"] = self.foreign_id or params["commandId"]
            if name == "render_page":
                route = params["url"].split("?")[0]
                snap["mode"] = "page"
                snap["currentTarget"] = {"type": "page", "id": route, "path": route}
            else:
                snap["currentTarget"] = {"type": "widget", "id": params["widgetId"], "name": params["widgetId"]}
            self.store.put(AgentTraceSnapshot.model_validate(snap))
            return {}
        answers: dict[str, dict[str, Any]] = {
            "submit_chat_query": {"requestId": "req-9"},
            "set_viewport": {"viewport": {"width": params.get("width"), "height": params.get("height")}},
            "get_computed_style": {"computedStyle": {"color": "rgb(51, 51, 51)", "font-size": "14px"}},
            "get_element_rect": {"x": 12, "y": 48.5, "width": 120, "height": 160},
            "scroll_to": {
                "uid": params.get("uid") or "0.1",
                "x": params.get("x", 0),
                "y": 0,
                "maxX": 140,
                "maxY": 0,
                "viewportWidth": 343,
                "viewportHeight": 180,
            },
            "take_screenshot": {"data": PNG_1X1, "width": 1, "height": 1},
        }
        return answers[name]  # fmt: skip

    def snapshot_posted(self, snapshot: dict[str, Any]) -> bool:
        self.posted.append(snapshot)
        return False


class Running:
    def __init__(self, debugger: DebuggerApp) -> None:
        self.debugger = debugger
        config = uvicorn.Config(debugger.app, host="127.0.0.1", port=0, log_level="warning", access_log=False)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=lambda: asyncio.run(self._server.serve()), daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self._server.started:
            assert self._thread.is_alive() and time.monotonic() < deadline, "the debugger did not start"
            time.sleep(0.01)
        port = self._server.servers[0].sockets[0].getsockname()[1]
        self.base = f"http://127.0.0.1:{port}"
        self.url = f"{self.base}/__wsd_mcp"

    def post_snapshot(self, body: Any) -> httpx.Response:
        return httpx.post(f"{self.base}/__agent_trace", json=body, timeout=30)

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=30)


def _catalogue(tmp: Path) -> Any:
    skills, _ = load_paths([COFFEE])
    return build_catalogue(skills, RuntimeConfig(state_dir=tmp))


@pytest.fixture(scope="module")
def empty(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    """No console attached and no snapshot yet."""
    running = Running(build_debugger_app(_catalogue(tmp_path_factory.mktemp("empty"))))
    yield running
    running.stop()


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    """The fixture snapshot posted; no console attached."""
    running = Running(build_debugger_app(_catalogue(tmp_path_factory.mktemp("loaded"))))
    reply = running.post_snapshot(SNAPSHOT)
    assert reply.status_code == 200 and reply.json()["stored"] is True
    yield running
    running.stop()


@pytest.fixture(scope="module")
def scripted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Running, ScriptedConsole]]:
    store = SnapshotStore()
    console = ScriptedConsole(store)
    debugger = build_debugger_app(
        _catalogue(tmp_path_factory.mktemp("scripted")), console, store=store, command_timeout_s=0.5,
        chat_timeout_s=0.5,
    )  # fmt: skip
    running = Running(debugger)
    yield running, console
    running.stop()


def call(url: str, name: str, arguments: dict[str, Any] | None = None, mode: str = "auto") -> CallToolResult:
    async def go() -> CallToolResult:
        async with Client(url, mode=mode) as client:
            return await client.call_tool(name, arguments or {})

    return asyncio.run(go())


def body(result: CallToolResult) -> dict[str, Any]:
    assert isinstance(result.structured_content, dict)
    return result.structured_content


def error_code(result: CallToolResult) -> str:
    assert result.is_error is True
    error = body(result)["error"]
    assert isinstance(error["message"], str) and error["message"]
    code = error["code"]
    assert code in ERROR_CODES
    assert isinstance(result.content[0], TextContent) and json.loads(result.content[0].text) == body(result)
    return str(code)


# -- tools/list, both eras ----------------------------------------------------------------------------


@pytest.mark.parametrize(("mode", "version"), MODES)
def test_lists_the_fifteen_tools_with_annotations(empty: Running, mode: str, version: str) -> None:
    async def go() -> None:
        async with Client(empty.url, mode=mode) as client:
            assert client.protocol_version == version
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert set(tools) == TOOLS
            for name, tool in tools.items():
                ann = tool.annotations
                assert ann is not None and ann.destructive_hint is False
                assert ann.read_only_hint is (name not in CONTROL), name
                assert tool.input_schema["type"] == "object"
            for name in ("set_viewport", "scroll_to"):
                ann = tools[name].annotations
                assert ann is not None and (ann.idempotent_hint, ann.open_world_hint) == (True, False)
            props = tools["list_agent_tool_calls"].input_schema["properties"]
            assert set(props) == {"toolName", "status", "requestId", "query", "pageIdx", "pageSize"}
            assert set(tools["render_widget"].input_schema["properties"]) == {"widgetId", "structuredContent"}
            assert tools["submit_chat_query"].input_schema["required"] == ["query"]

    asyncio.run(go())


# -- before any snapshot ---------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["auto", "legacy"])
@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("list_console_messages", {}),
        ("get_console_message", {"msgid": "m1"}),
        ("get_log_snapshot", {}),
        ("list_render_targets", {}),
        ("take_snapshot", {}),
        ("list_agent_trace_events", {}),
        ("list_agent_tool_calls", {}),
    ],
)
def test_before_any_snapshot_tools_say_not_stored(empty: Running, mode: str, tool: str, args: dict[str, Any]) -> None:
    result = call(empty.url, tool, args, mode)
    assert result.is_error is not True
    assert body(result) == {"stored": False}


def test_agent_trace_get_and_bad_posts(empty: Running) -> None:
    assert httpx.get(f"{empty.base}/__agent_trace").json() == {"stored": False}
    bad = empty.post_snapshot({"updatedAtMs": "soon", "console": [{"msgid": 1}]})
    assert bad.status_code == 422 and bad.json()["stored"] is False
    broken = httpx.post(f"{empty.base}/__agent_trace", content=b"{nope", headers={"content-type": "application/json"})
    assert broken.status_code == 400
    assert httpx.get(f"{empty.base}/__agent_trace").json() == {"stored": False}


def test_updated_at_is_kept_when_no_live_target() -> None:
    store = SnapshotStore()
    store.put(AgentTraceSnapshot.model_validate({"updatedAtMs": 42}))
    store.clear()
    assert store.header() == {"stored": False, "updatedAtMs": 42}


# -- the snapshot tools, both eras --------------------------------------------------------------------


@pytest.mark.parametrize(("mode", "_version"), MODES)
def test_take_snapshot_text_tree(loaded: Running, mode: str, _version: str) -> None:
    result = call(loaded.url, "take_snapshot", {}, mode)
    out = body(result)
    assert isinstance(result.content[0], TextContent) and result.content[0].text == GOLDEN_TREE
    assert out["snapshot"] == GOLDEN_TREE
    assert out["stored"] is True and out["available"] is True and out["truncated"] is False
    assert out["nodeCount"] == 28 and out["selectedUid"] == "0.1.0[d01]"
    assert out["target"] == SNAPSHOT["currentTarget"]
    assert out["snapshotUpdatedAtMs"] == SNAPSHOT["updatedAtMs"]
    verbose = body(call(loaded.url, "take_snapshot", {"verbose": True, "target": "widget"}, mode))["snapshot"]
    assert 'data-id="d01"' in verbose and "focusable=false" in verbose and "focusable" not in GOLDEN_TREE
    assert error_code(call(loaded.url, "take_snapshot", {"target": "page"}, mode)) == "TARGET_MISMATCH"


@pytest.mark.parametrize(("mode", "_version"), MODES)
def test_console_messages_paged_and_filtered(loaded: Running, mode: str, _version: str) -> None:
    first = body(call(loaded.url, "list_console_messages", {"target": "all", "pageSize": 3}, mode))
    assert (first["total"], first["pageIdx"], first["pageSize"], first["hasMore"]) == (7, 0, 3, True)
    assert first["stored"] is True and first["updatedAtMs"] == SNAPSHOT["updatedAtMs"] and "storedAt" in first
    assert [m["msgid"] for m in first["messages"]] == ["m1", "m2", "m3"]
    assert "args" not in first["messages"][0] and first["messages"][0]["lineNumber"] == 10
    last = body(call(loaded.url, "list_console_messages", {"target": "all", "pageSize": 3, "pageIdx": 2}, mode))
    assert [m["msgid"] for m in last["messages"]] == ["m7"] and last["hasMore"] is False
    current = body(call(loaded.url, "list_console_messages", {}, mode))  # mode widget: the card VM
    assert {m["target"] for m in current["messages"]} == {"widget"} and current["total"] == 3
    errors = body(call(loaded.url, "list_console_messages", {"target": "app", "levels": ["error"]}, mode))
    assert [m["msgid"] for m in errors["messages"]] == ["m4"]
    found = body(call(loaded.url, "list_console_messages", {"target": "all", "query": "LIFECYCLE 2"}, mode))
    assert [m["msgid"] for m in found["messages"]] == ["m6"]
    capped = body(call(loaded.url, "list_console_messages", {"target": "all", "pageSize": 5000}, mode))
    assert capped["pageSize"] == 200 and capped["total"] == 7
    bad = call(loaded.url, "list_console_messages", {"levels": ["loud"]}, mode)
    assert bad.is_error is True


@pytest.mark.parametrize(("mode", "_version"), MODES)
def test_get_console_message(loaded: Running, mode: str, _version: str) -> None:
    hit = body(call(loaded.url, "get_console_message", {"msgid": "m4"}, mode))
    assert hit["found"] is True and hit["message"]["text"] == "TypeError: cannot read price"
    assert hit["message"]["entry"]["args"] == ["step 4", {"n": 3}] and "stack" in hit["message"]["entry"]
    miss = body(call(loaded.url, "get_console_message", {"msgid": "nope"}, mode))
    assert {k: miss[k] for k in ("stored", "found", "msgid")} == {"stored": True, "found": False, "msgid": "nope"}


@pytest.mark.parametrize(("mode", "_version"), MODES)
def test_log_snapshot_and_render_targets(loaded: Running, mode: str, _version: str) -> None:
    scene = body(call(loaded.url, "get_log_snapshot", {}, mode))["snapshot"]
    assert len(scene["console"]) == 7 and len(scene["traceEvents"]) == 5 and len(scene["toolCalls"]) == 2
    assert scene["context"]["cardData"] == {"title": "推荐饮品"} and "dom" not in scene
    targets = body(call(loaded.url, "list_render_targets", {}, mode))
    assert [w["widgetId"] for w in targets["widgets"]] == ["drink-list", "order-confirm", "payment-result"]
    assert targets["pages"][0] == {"pageId": "/pages/order/detail", "path": "/pages/order/detail",
                                   "name": "pages/order/detail", "isHome": False}  # fmt: skip
    assert targets["currentTarget"]["id"] == "drink-list"
    widgets = body(call(loaded.url, "list_render_targets", {"type": "widget"}, mode))
    assert "pages" not in widgets and len(widgets["widgets"]) == 3


@pytest.mark.parametrize(("mode", "_version"), MODES)
def test_trace_events_and_tool_calls(loaded: Running, mode: str, _version: str) -> None:
    events = body(call(loaded.url, "list_agent_trace_events", {"requestId": "req-1", "pageSize": 2}, mode))
    assert (events["total"], events["hasMore"]) == (4, True)
    assert [e["id"] for e in events["events"]] == ["e1", "e2"]
    assert set(events["events"][0]) == {"source", "id", "timestamp", "category", "event", "requestId", "payload"}
    mcp = body(call(loaded.url, "list_agent_trace_events", {"category": "mcp"}, mode))
    assert [e["event"] for e in mcp["events"]] == ["tools/call"]
    ended = body(call(loaded.url, "list_agent_trace_events", {"event": "turn.end"}, mode))
    assert ended["events"][0]["payload"] is None
    calls = body(call(loaded.url, "list_agent_tool_calls", {}, mode))
    assert calls["total"] == 2 and calls["hasMore"] is False
    row = calls["toolCalls"][0]
    assert set(row) == {"id", "requestId", "toolCallId", "toolName", "serverId", "appKey", "status", "createdAtMs",
                        "updatedAtMs", "requiresUserApproval", "isMiniApp", "message"}  # fmt: skip
    filters: list[tuple[dict[str, Any], list[str]]] = [
        ({"toolName": "confirmOrder"}, ["tc2"]),
        ({"status": "succeeded"}, ["tc1"]),
        ({"requestId": "req-2"}, ["tc2"]),
        ({"query": "PLEASE"}, ["tc1"]),
        ({"pageIdx": 1, "pageSize": 1}, ["tc2"]),
    ]
    for args, ids in filters:
        assert [c["id"] for c in body(call(loaded.url, "list_agent_tool_calls", args, mode))["toolCalls"]] == ids


def test_snapshot_limits() -> None:
    from skillc.server.debugger.snapshot import DomNode
    from skillc.server.debugger.tree import render_tree

    wide = DomNode(uid="r", type="page", children=[DomNode(uid=f"n{i}", type="view") for i in range(MAX_NODES + 10)])
    tree = render_tree(wide)
    assert (tree.node_count, tree.truncated) == (MAX_NODES, True)
    long = render_tree(DomNode(uid="r", type="page", attrs={"class": "x" * 600}))
    assert long.truncated is True and ("x" * 500 + "…") in long.text and "x" * 501 not in long.text


# -- transport ---------------------------------------------------------------------------------------


def test_options_preflight_is_204(empty: Running) -> None:
    reply = httpx.options(
        f"{empty.base}/__wsd_mcp",
        headers={"origin": "http://localhost:5173", "access-control-request-method": "POST"},
    )
    # The admitted Origin itself, never "*"; /__agent_trace has no CORS (only its own page posts there).
    assert reply.status_code == 204 and reply.headers["access-control-allow-origin"] == "http://localhost:5173"
    assert httpx.options(f"{empty.base}/__agent_trace").status_code == 405


def test_stateless_legacy_request_and_discover(empty: Running) -> None:
    rpc = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    reply = httpx.post(empty.url, json=rpc, headers=ACCEPT)
    assert reply.status_code == 200 and "mcp-session-id" not in reply.headers
    assert len(reply.json()["result"]["tools"]) == 15
    discover = {
        "jsonrpc": "2.0", "id": 2, "method": "server/discover",
        "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                             "io.modelcontextprotocol/clientCapabilities": {}}},
    }  # fmt: skip
    headers = {**ACCEPT, "mcp-protocol-version": "2026-07-28", "mcp-method": "server/discover"}
    found = httpx.post(empty.url, json=discover, headers=headers)
    assert found.status_code == 200 and found.json()["result"]["supportedVersions"] == ["2026-07-28"]


# -- the descriptor resource ---------------------------------------------------------------------------


@pytest.mark.parametrize(("mode", "_version"), MODES)
def test_descriptor_resource(empty: Running, mode: str, _version: str) -> None:
    async def go() -> None:
        async with Client(empty.url, mode=mode) as client:
            resources = (await client.list_resources()).resources
            assert [str(r.uri) for r in resources] == [DESCRIPTOR_URI]
            read = await client.read_resource(DESCRIPTOR_URI)
            content = read.contents[0]
            assert isinstance(content, TextResourceContents) and content.mime_type == "application/json"
            descriptor = DebugDescriptor.model_validate_json(content.text)
            assert descriptor.state == "available" and descriptor.skills == [str(COFFEE)]
            assert descriptor.pid > 0 and descriptor.versions.python
            with pytest.raises(MCPError):
                await client.read_resource("skillc://debugger/nope")

    asyncio.run(go())


def test_descriptor_with_address() -> None:
    listening = DebugDescriptor(skills=["examples/coffee-skill"]).with_address("127.0.0.1", 8799)
    wire = listening.wire()
    assert wire["state"] == "listening" and wire["port"] == 8799
    assert wire["urls"] == {
        "debuggerMcp": "http://127.0.0.1:8799/__wsd_mcp",
        "skillsMcp": "http://127.0.0.1:8799/mcp",
        "console": "http://127.0.0.1:8799/",
        "agentTrace": "http://127.0.0.1:8799/__agent_trace",
    }


# -- no console: the browser tools fail with DEBUGGER_NOT_CONNECTED, never an old snapshot ---------------


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("render_page", {"url": "/pages/order/detail"}),
        ("render_widget", {"widgetId": "drink-list"}),
        ("submit_chat_query", {"query": "latte"}),
        ("set_viewport", {"width": 390, "height": 844}),
        ("get_computed_style", {"uid": "0.0.0"}),
        ("get_element_rect", {"uid": "0.0.0"}),
        ("scroll_to", {"uid": "0.1", "x": 100}),
        ("take_screenshot", {}),
    ],
)
def test_browser_tools_without_a_console(loaded: Running, tool: str, args: dict[str, Any]) -> None:
    for mode in ("auto", "legacy"):
        assert error_code(call(loaded.url, tool, args, mode)) == "DEBUGGER_NOT_CONNECTED"


def test_argument_checks_come_first(loaded: Running) -> None:
    bad: list[tuple[str, dict[str, Any]]] = [
        ("submit_chat_query", {"query": "  "}),
        ("set_viewport", {"width": 0, "height": 844}),
        ("set_viewport", {"width": 10000, "height": 844}),
        ("scroll_to", {"x": -1}),
        ("take_screenshot", {"format": "png", "quality": 80}),
        ("take_screenshot", {"format": "gif"}),
        ("render_page", {"url": "pages/x"}),
        ("render_widget", {"widgetId": "drink-list", "token": "t"}),
    ]
    for tool, args in bad:
        result = call(loaded.url, tool, args)
        assert result.is_error is True and result.structured_content is None, (tool, args)
    assert error_code(call(loaded.url, "render_widget", {"widgetId": "nope"})) == "TARGET_NOT_FOUND"
    assert error_code(call(loaded.url, "render_page", {"url": "/pages/nope?x=1"})) == "TARGET_NOT_FOUND"
    assert error_code(call(loaded.url, "get_element_rect", {"uid": "no-such-uid"})) == "ELEMENT_NOT_FOUND"


# -- a scripted console: the results, and every code it can answer -------------------------------------


@pytest.mark.parametrize(("mode", "_version"), MODES)
def test_control_tools_through_the_channel(scripted: tuple[Running, ScriptedConsole], mode: str, _version: str) -> None:
    running, console = scripted
    rendered = body(call(running.url, "render_widget", {"widgetId": "order-confirm"}, mode))
    assert rendered == {"rendered": True, "target": {"type": "widget", "id": "order-confirm", "name": "order-confirm"}}
    name, params, timeout_s = console.commands[-1]
    assert (name, params["structuredContent"], timeout_s) == ("render_widget", {}, 0.5)
    page = body(call(running.url, "render_page", {"url": "/pages/order/detail?id=7"}, mode))
    assert page["target"]["type"] == "page"
    assert body(call(running.url, "take_snapshot", {"target": "page"}, mode))["target"]["id"] == "/pages/order/detail"
    chat = body(call(running.url, "submit_chat_query", {"query": "a latte"}, mode))
    assert chat == {"submitted": True, "completed": True, "query": "a latte", "requestId": "req-9"}
    assert body(call(running.url, "set_viewport", {"width": 390, "height": 844}, mode)) == {
        "updated": True, "viewport": {"width": 390, "height": 844}}  # fmt: skip
    style = body(call(running.url, "get_computed_style", {"uid": "0.0.0", "properties": ["color"]}, mode))
    assert style == {"uid": "0.0.0", "computedStyle": [{"name": "color", "value": "rgb(51, 51, 51)"}]}
    rect = body(call(running.url, "get_element_rect", {"uid": "0.0.0"}, mode))
    assert rect == {"uid": "0.0.0", "x": 12, "y": 48.5, "width": 120, "height": 160}
    scrolled = body(call(running.url, "scroll_to", {"uid": "0.1", "x": 100}, mode))
    assert scrolled["scrolled"] is True and scrolled["maxX"] > 0 and scrolled["x"] == 100
    shot = call(running.url, "take_screenshot", {"format": "png"}, mode)
    image = shot.content[0]
    assert isinstance(image, ImageContent) and image.mime_type == "image/png" and image.data == PNG_1X1
    meta = body(shot)
    assert meta == {"captured": True, "format": "png", "mimeType": "image/png", "width": 1, "height": 1}
    assert PNG_1X1 not in json.dumps(meta)


CHANNEL_CODES = [
    ("DEBUGGER_DISCONNECTED", "render_widget", {"widgetId": "drink-list"}),
    ("TARGET_NOT_FOUND", "scroll_to", {}),
    ("ELEMENT_NOT_FOUND", "get_computed_style", {"uid": "0.0.0"}),
    ("RENDER_FAILED", "render_widget", {"widgetId": "drink-list"}),
    ("VIEWPORT_FAILED", "set_viewport", {"width": 1, "height": 1}),
    ("INSPECTION_FAILED", "get_element_rect", {"uid": "0.1"}),
    ("SCROLL_FAILED", "scroll_to", {"y": 10}),
    ("SCREENSHOT_FAILED", "take_screenshot", {"uid": "0.1"}),
    ("CHAT_NOT_READY", "submit_chat_query", {"query": "hi"}),
    ("CHAT_BUSY", "submit_chat_query", {"query": "hi"}),
    ("CHAT_SUBMIT_FAILED", "submit_chat_query", {"query": "hi"}),
    ("DEBUGGER_NOT_CONNECTED", "take_screenshot", {}),
]


@pytest.mark.parametrize(("code", "tool", "args"), CHANNEL_CODES)
def test_codes_the_console_answers_reach_the_client(
    scripted: tuple[Running, ScriptedConsole], code: str, tool: str, args: dict[str, Any]
) -> None:
    running, console = scripted
    console.fail = code
    assert error_code(call(running.url, tool, args)) == code


@pytest.mark.parametrize(
    ("tool", "args", "code"),
    [
        ("render_widget", {"widgetId": "drink-list"}, "RENDER_FAILED"),
        ("set_viewport", {"width": 1, "height": 1}, "VIEWPORT_FAILED"),
        ("get_computed_style", {"uid": "0.1"}, "INSPECTION_FAILED"),
        ("scroll_to", {}, "SCROLL_FAILED"),
        ("take_screenshot", {}, "SCREENSHOT_FAILED"),
        ("submit_chat_query", {"query": "hi"}, "CHAT_SUBMIT_FAILED"),
    ],
)
def test_a_console_exception_is_the_tools_failure_code(
    scripted: tuple[Running, ScriptedConsole], tool: str, args: dict[str, Any], code: str
) -> None:
    running, console = scripted
    console.crash = True
    assert error_code(call(running.url, tool, args)) == code


@pytest.mark.parametrize(
    ("tool", "args", "code"),
    [
        ("render_widget", {"widgetId": "drink-list"}, "RENDER_TIMEOUT"),
        ("submit_chat_query", {"query": "hi"}, "CHAT_TIMEOUT"),
        ("get_element_rect", {"uid": "0.1"}, "COMMAND_TIMEOUT"),
    ],
)
def test_timeouts(scripted: tuple[Running, ScriptedConsole], tool: str, args: dict[str, Any], code: str) -> None:
    running, console = scripted
    console.hang = True
    assert error_code(call(running.url, tool, args)) == code


def test_a_render_without_its_snapshot_is_a_timeout_not_the_old_snapshot(
    scripted: tuple[Running, ScriptedConsole],
) -> None:
    running, console = scripted
    assert body(call(running.url, "render_widget", {"widgetId": "drink-list"}))["rendered"] is True
    console.silent = True
    assert error_code(call(running.url, "render_widget", {"widgetId": "payment-result"})) == "RENDER_TIMEOUT"


def test_bad_console_answers(scripted: tuple[Running, ScriptedConsole]) -> None:
    running, console = scripted
    console.answer = {"data": "A" * (MAX_SCREENSHOT_B64 + 4), "width": 1, "height": 1}
    assert error_code(call(running.url, "take_screenshot", {})) == "SCREENSHOT_FAILED"
    console.answer = {"data": "not base64!", "width": 1, "height": 1}
    assert error_code(call(running.url, "take_screenshot", {})) == "SCREENSHOT_FAILED"
    console.answer = {"completed": True}
    assert error_code(call(running.url, "submit_chat_query", {"query": "hi"})) == "CHAT_SUBMIT_FAILED"
    console.answer = {"x": 1}
    assert error_code(call(running.url, "scroll_to", {})) == "SCROLL_FAILED"


def test_every_protocol_code_is_covered() -> None:
    provoked = {c for c, _t, _a in CHANNEL_CODES} | {"TARGET_MISMATCH", "RENDER_TIMEOUT", "CHAT_TIMEOUT",
                                                     "COMMAND_TIMEOUT"}  # fmt: skip
    assert provoked == set(ERROR_CODES)
    with pytest.raises(ValueError):
        DebuggerError("NOT_A_CODE", "x")  # type: ignore[arg-type]


def test_render_targets_of_the_catalogue(tmp_path: Path) -> None:
    from skillc.server.debugger import catalogue_targets

    targets = catalogue_targets(_catalogue(tmp_path)).wire()
    assert [w["widgetId"] for w in targets["widgets"]] == ["drink-list", "order-confirm", "payment-result"]
    assert [p["path"] for p in targets["pages"]] == ["/pages/menu/menu", "/pages/order/order"]
    assert catalogue_targets(None).wire() == {"pages": [], "widgets": []}


def test_a_catalogue_page_reaches_the_console(empty: Running) -> None:
    # Known to the catalogue (a card's relatedPage), so the check passes and the missing console answers.
    assert error_code(call(empty.url, "render_page", {"url": "/pages/menu/menu?from=card"})) == "DEBUGGER_NOT_CONNECTED"


def test_a_render_acknowledged_under_the_channels_own_id(scripted: tuple[Running, ScriptedConsole]) -> None:
    running, console = scripted
    console.foreign_id = "console-cmd-7"
    try:
        rendered = body(call(running.url, "render_widget", {"widgetId": "payment-result"}))
    finally:
        console.foreign_id = None
    assert rendered["target"]["id"] == "payment-result"


def test_posted_snapshots_reach_the_channel(scripted: tuple[Running, ScriptedConsole]) -> None:
    running, console = scripted
    snap = {**SNAPSHOT, "commandId": "cmd-x", "consoleId": "c1", "commandResult": {"ok": 1}}
    reply = running.post_snapshot(snap)
    assert reply.status_code == 200 and reply.json()["updatedAtMs"] == SNAPSHOT["updatedAtMs"]
    assert console.posted[-1]["commandResult"] == {"ok": 1}
    assert httpx.get(f"{running.base}/__agent_trace").json()["commandId"] == "cmd-x"
