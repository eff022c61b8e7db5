"""The Debugger MCP against `skillc debug`'s server with its headless console (real Chromium):
take_snapshot shows each tappable node as a named button with its events and each image named;
a Chinese chat query calls searchDrinks with the user's own word; every trace event carries a
string requestId."""

from __future__ import annotations

import re

import pytest

from tests.test_debugger_console_chromium import Running, call, debug_server

pytestmark = pytest.mark.chromium
__all__ = ["debug_server"]  # the module-scoped fixture, shared by import

DRINKS = {
    "d01": ("拿铁 Latte ¥28", "拿铁 Latte"),
    "d02": ("燕麦拿铁 Oat Latte ¥32 已选", "燕麦拿铁 Oat Latte"),  # the preview's selected drink
    "d09": ("抹茶拿铁 Matcha Latte ¥30", "抹茶拿铁 Matcha Latte"),
}


def test_take_snapshot_shows_roles_names_and_events(debug_server: Running) -> None:
    url = debug_server.mcp_url
    rendered = call(url, "render_widget", {"widgetId": "drink-list"})
    assert not rendered.is_error, rendered.structured_content
    tree = call(url, "take_snapshot", {}).structured_content["snapshot"]
    lines = [line.strip() for line in tree.split("\n")]
    for key, (button, image) in DRINKS.items():
        assert f'uid=0.1.0[{key}] view role="button" name="{button}" bindtap="onSelect"' in lines, tree
        src = f"https://img.morningbeans.example/drinks/{key}.jpg"
        assert f'uid=0.1.0[{key}].0 image role="img" name="{image}" src="{src}"' in lines, tree
    # Only the nodes with a handler are buttons and show events.
    assert sum(" bindtap=" in line for line in lines) == sum('role="button"' in line for line in lines) == 3


def test_a_chinese_query_calls_search_drinks(debug_server: Running) -> None:
    url = debug_server.mcp_url
    sent = call(url, "submit_chat_query", {"query": "我要一杯拿铁"})
    assert not sent.is_error, sent.structured_content
    request_id = sent.structured_content["requestId"]

    calls = call(url, "list_agent_tool_calls", {"requestId": request_id}).structured_content["toolCalls"]
    assert [(c["toolName"], c["status"]) for c in calls] == [("searchDrinks", "succeeded")]
    assert "找到 3 款饮品" in calls[0]["message"]  # 拿铁 Latte, 燕麦拿铁, 抹茶拿铁

    decided = call(url, "list_agent_trace_events", {"requestId": request_id, "event": "planner_decision"})
    first = decided.structured_content["events"][0]["payload"]
    assert first["calls"] == ["searchDrinks"] and first["arguments"] == [{"keyword": "拿铁"}]
    why = first["why"]
    assert (why["tool"], why["arguments"], why["matched"]) == (
        "searchDrinks",
        {"keyword": "拿铁"},
        {"SKILL.md": ["拿铁"]},
    )
    assert (
        first["note"]
        == 'term match: searchDrinks shares 1 term(s) with the query (SKILL.md: 拿铁); arguments {"keyword": "拿铁"}'
    )

    # The turn's own text says it too, and the card it mounted lists the drinks.
    scene = call(url, "get_log_snapshot", {}).structured_content["snapshot"]
    turn = next(t for t in scene["context"]["chat"] if t["requestId"] == request_id)
    assert (
        turn["messages"][1]["text"]
        == 'Calling searchDrinks {"keyword": "拿铁"}: the query shares 拿铁 with its SKILL.md: 拿铁.'
    )
    tree = call(url, "take_snapshot", {}).structured_content["snapshot"]
    assert 'name="抹茶拿铁 Matcha Latte ¥30" bindtap="onSelect"' in tree


def test_every_trace_event_has_a_string_request_id(debug_server: Running) -> None:
    url = debug_server.mcp_url
    assert not call(url, "render_widget", {"widgetId": "order-confirm"}).is_error
    sent = call(url, "submit_chat_query", {"query": '/call searchDrinks {"keyword": "mocha"}'})
    assert not sent.is_error, sent.structured_content
    assert not call(url, "render_widget", {"widgetId": "drink-list"}).is_error
    events = call(url, "list_agent_trace_events", {"pageSize": 200}).structured_content["events"]
    assert {e["event"] for e in events} >= {"render_widget", "turn_start", "tools_call", "turn_end"}
    bad = [e for e in events if not isinstance(e["requestId"], str) or not e["requestId"]]
    assert bad == []
    # A render is outside any turn: its own id, derived from the event's, the same on every read.
    renders = [e for e in events if e["event"] == "render_widget"]
    assert all(e["requestId"] == f"req-{e['id']}" and re.fullmatch(r"req-ev-\d+", e["requestId"]) for e in renders)
    again = call(url, "list_agent_trace_events", {"event": "render_widget", "pageSize": 200}).structured_content
    assert [e["requestId"] for e in again["events"]] == [e["requestId"] for e in renders]
    # Each turn's events carry that turn's id.
    turn = [e for e in events if e["requestId"] == sent.structured_content["requestId"]]
    assert turn[0]["event"] == "turn_start" and turn[-1]["event"] == "turn_end"
