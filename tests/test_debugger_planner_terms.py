"""The offline planner in any script: character bigrams where words have no spaces, the skill's
SKILL.md passages as a source, arguments in the user's own words, the reasons it gives; and a
whole turn against a real `skillc serve` (a Chinese query calls searchDrinks). Also: a trace event
always has a string requestId."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest

from skillc.runtime.config import RuntimeConfig
from skillc.server.debugger.chat import ChatSimulator
from skillc.server.debugger.planner import CommandPlanner, Message, ToolInfo
from skillc.server.debugger.planner_terms import guide_passages, strip_filler, terms
from skillc.server.debugger.snapshot import AgentTraceSnapshot, TraceEvent
from skillc.server.runner import ServeHandle, ServeOptions
from tests.conftest import COFFEE

SKILL_MD = (COFFEE / "SKILL.md").read_text(encoding="utf-8")


def coffee_tools(*, with_guides: bool = True) -> list[ToolInfo]:
    apis = json.loads((COFFEE / "mcp.json").read_text(encoding="utf-8"))["apis"]
    return [
        ToolInfo(
            a["name"], a["description"], a["inputSchema"], guide_passages(SKILL_MD, a["name"]) if with_guides else ""
        )
        for a in apis
    ]


def plan(query: str, tools: list[ToolInfo]) -> Any:
    return asyncio.run(CommandPlanner().step([Message(role="user", text=query)], tools))


def test_a_chinese_query_calls_search_drinks_with_the_users_word() -> None:
    decision = plan("我要一杯拿铁", coffee_tools())
    assert [(c.tool, c.arguments) for c in decision.calls] == [("searchDrinks", {"keyword": "拿铁"})]
    assert decision.choice is not None
    assert decision.choice.wire() == {
        "tool": "searchDrinks",
        "arguments": {"keyword": "拿铁"},
        "score": 1,
        "shared": ["拿铁"],
        "matched": {"SKILL.md": ["拿铁"]},
        "filled": {"keyword": "the query's own words, without the tool's name and the words that only ask"},
        "others": [],
    }
    assert decision.text == 'Calling searchDrinks {"keyword": "拿铁"}: the query shares 拿铁 with its SKILL.md: 拿铁.'


def test_the_skill_md_is_where_the_chinese_words_are() -> None:
    # The tools' own descriptions are English: without the SKILL.md passages nothing matches.
    assert plan("我要一杯拿铁", coffee_tools(with_guides=False)).calls == []
    assert guide_passages(SKILL_MD, "searchDrinks").count("searchDrinks") == 3
    assert all("payOrder" in p for p in guide_passages(SKILL_MD, "payOrder").split("\n"))
    assert "拿铁" not in guide_passages(SKILL_MD, "payOrder")  # a passage counts for the tools it names


def test_english_still_matches_words_and_drops_the_asking_ones() -> None:
    decision = plan("I want a latte", coffee_tools())
    assert [(c.tool, c.arguments) for c in decision.calls] == [("searchDrinks", {"keyword": "latte"})]
    pay = plan("pay my order o-17", coffee_tools())
    assert [(c.tool, c.arguments) for c in pay.calls] == [("payOrder", {"orderId": "o-17"})]


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("我要一杯拿铁", {"我要", "要一", "一杯", "杯拿", "拿铁"}),  # bigrams, no spaces needed
        ("茶", {"茶"}),  # a one-character run is a term
        ("searchDrinks café", {"search", "drinks", "drink", "café"}),
        ("Привет мир", {"привет", "мир"}),  # other scripts with spaces: words
        ("नमस्ते दुनिया", {"नमस्ते", "दुनिया"}),  # combining marks stay inside their word
        ("กาแฟเย็น", {"กา", "าแ", "แฟ", "ฟเ", "เย", "ย็", "็น"}),  # Thai: no spaces, bigrams
        ("ラテ latte", {"ラテ", "latte"}),
    ],
)
def test_terms_in_any_script(text: str, want: set[str]) -> None:
    assert terms(text) == want


def test_a_tool_in_another_script_is_found() -> None:
    tools = [
        ToolInfo("menu", "メニューを表示する", {"type": "object", "properties": {}}),
        ToolInfo("weather", "Погода в городе", {"type": "object", "properties": {"city": {"type": "string"}}}),
    ]
    assert [c.tool for c in plan("メニューを見たい", tools).calls] == ["menu"]
    assert [c.tool for c in plan("погода Москва", tools).calls] == ["weather"]


def test_what_a_tool_must_never_do_is_no_match() -> None:
    order = ToolInfo("orderTool", "Show the menu. 【严禁场景】不要用它下单付款。", {"type": "object", "properties": {}})
    pay = ToolInfo("payTool", "付款", {"type": "object", "properties": {}})
    assert [c.tool for c in plan("我要付款", [order, pay]).calls] == ["payTool"]


@pytest.mark.parametrize(
    ("word", "rest"),
    [
        ("我要一杯拿铁", "拿铁"),
        ("来两杯冰美式吧", "冰美式"),
        ("帮我搜索燕麦拿铁", "燕麦拿铁"),
        ("我想喝一杯抹茶拿铁", "抹茶拿铁"),
        ("点心", "点心"),  # 点 starts a name here: kept
        ("有机拿铁", "有机拿铁"),
        ("要", "要"),  # never the whole word
    ],
)
def test_strip_filler(word: str, rest: str) -> None:
    assert strip_filler(word) == rest


def test_a_trace_event_without_a_request_id_gets_its_own() -> None:
    base = {"source": "widget_runtime", "id": "ev-3", "timestamp": 1.0, "category": "runtime", "event": "render_widget"}
    for given in ({}, {"requestId": None}, {"requestId": ""}):
        event = TraceEvent.model_validate({**base, **given})
        assert event.request_id == "req-ev-3" and event.wire()["requestId"] == "req-ev-3"
    assert TraceEvent.model_validate({**base, "requestId": "req-abc"}).request_id == "req-abc"
    posted = AgentTraceSnapshot.model_validate({"updatedAtMs": 1, "traceEvents": [{**base, "requestId": None}]})
    assert posted.trace_events[0].request_id == "req-ev-3"


# -- a whole turn against a running skillc serve ---------------------------------------------------


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeHandle]:
    state = tmp_path_factory.mktemp("planner-state")
    with ServeHandle.start(ServeOptions(paths=(COFFEE,), port=0, runtime=RuntimeConfig(state_dir=state))) as handle:
        yield handle


def test_a_chinese_turn_calls_search_drinks_through_mcp(served: ServeHandle) -> None:
    url = served.url if served.url.endswith("/mcp") else f"{served.url}/mcp"
    sim = ChatSimulator(lambda: url, CommandPlanner(), guides={"coffee-skill": SKILL_MD})
    turn = asyncio.run(sim.turn("我要一杯拿铁"))
    assert [(c.tool_name, c.status) for c in turn.tool_calls] == [("searchDrinks", "succeeded")]
    [outcome] = turn.outcomes
    assert outcome.arguments == {"keyword": "拿铁"}
    assert outcome.result is not None and outcome.result.structured_content is not None
    names = [d["name"] for d in outcome.result.structured_content["drinks"]]
    assert names == ["拿铁 Latte", "燕麦拿铁 Oat Latte", "抹茶拿铁 Matcha Latte"]
    decision = next(e for e in turn.trace_events if e.event == "planner_decision")
    assert decision.payload["arguments"] == [{"keyword": "拿铁"}]
    assert decision.payload["why"]["matched"] == {"SKILL.md": ["拿铁"]}
    assert {e.request_id for e in turn.trace_events} == {turn.request_id}
