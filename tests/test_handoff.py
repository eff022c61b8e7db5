"""Handoff mode: an API declares _meta.ui.pagePath and returns handoff {query, payload?, card?}.

The runtime validates it (runtime/api/result.py), `skillc run` prints a handoff card, and
`skillc serve` answers with the text, structuredContent.handoff and a CardSpec handoff card.
The static rules (V017, V018) are in test_official_rules.py.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from mcp.client import Client

from skillc.cli import main
from skillc.diagnostics import DiagnosticSink
from skillc.frontend.package import load_skill
from skillc.runtime.api.api_runtime import ApiRuntime
from skillc.runtime.api.result import Handoff, normalise, parse_handoff
from skillc.runtime.cards.card_host import CardHost
from skillc.runtime.config import RuntimeConfig
from skillc.runtime.flows.flow import FlowRunner, FlowScript, StepRecord
from skillc.runtime.flows.report import render_flow
from skillc.server.runner import ServeHandle, ServeOptions

from .conftest import ROOT

SHOP = ROOT / "tests" / "fixtures" / "rules_project" / "skills" / "shop"
TEXT = [{"type": "text", "text": "Opening."}]


def test_a_string_query_is_parsed_key_by_key() -> None:
    handoff, notes = parse_handoff("open", {"query": "?orderId=A7&from=agent", "payload": {"n": 1}}, "/pages/o")
    assert notes == []
    assert handoff == Handoff(
        path="/pages/o", query="orderId=A7&from=agent", params={"orderId": "A7", "from": "agent"}, payload={"n": 1}
    )
    assert handoff is not None and handoff.url == "/pages/o?orderId=A7&from=agent"


def test_an_object_query_becomes_a_query_string() -> None:
    handoff, _ = parse_handoff("open", {"query": {"id": 7, "vip": True, "q": "a b"}}, "/pages/o")
    assert handoff is not None
    assert (handoff.query, handoff.params) == ("id=7&vip=true&q=a+b", {"id": "7", "vip": "true", "q": "a b"})


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        (3, "`handoff` must be an object {query, payload?, card?}, got number"),
        ({"query": ["id", 1]}, "`handoff.query` must be a string 'a=1&b=2' or an object, got array"),
        ({"query": {"id": {"n": 1}}}, "`handoff.query.id` must be a string, number or boolean, got object"),
        ({"query": 7}, "`handoff.query` must be a string 'a=1&b=2' or an object, got number"),
        ({"path": 5}, "`handoff.path` must be a string, got number"),
    ],
)
def test_a_bad_shape_is_dropped_with_a_diagnostic(raw: Any, problem: str) -> None:
    normal = normalise("open", {"content": TEXT, "handoff": raw}, page_path="/pages/o")
    assert normal.result.is_error is False and normal.result.handoff is None
    assert [(d.code, d.severity.value, d.message) for d in normal.diagnostics] == [
        ("HND001", "error", f"open returned an invalid handoff: {problem}; it is dropped")
    ]


def test_a_handoff_without_a_page_is_kept_with_a_warning() -> None:
    normal = normalise("open", {"content": TEXT, "handoff": {"query": "a=1"}})
    assert normal.result.handoff == {"query": "a=1", "params": {"a": "1"}, "url": "?a=1"}
    assert [(d.code, d.severity.value, d.message) for d in normal.diagnostics] == [
        ("HND002", "warning", "open returned a handoff but declares no _meta.ui.pagePath; no page can open it")
    ]


def test_an_error_result_opens_no_page() -> None:
    normal = normalise("open", {"isError": True, "content": TEXT, "handoff": {"query": "a=1"}}, page_path="/p")
    assert normal.result.handoff is None and normal.diagnostics == []


# -- skillc run ----------------------------------------------------------------------------------

FLOW = {"steps": [{"call": "openOrder", "arguments": {"orderId": "A7"}}]}
RUN_TEXT = """\
[1] call openOrder
  openOrder: ok (risk L1)
    Opening the order in the mini program.
  handoff card: /pages/order/detail?orderId=A7&from=agent
    query {"from": "agent", "orderId": "A7"}
    payload {"orderId": "A7"}
    [open in mini program] opens /pages/order/detail with onLoad(query)
"""


def _replay(state: Path) -> list[StepRecord]:
    async def go() -> list[StepRecord]:
        pkg = load_skill(SHOP, DiagnosticSink())
        assert pkg is not None
        runtime = ApiRuntime(pkg, RuntimeConfig(state_dir=state))
        counter = itertools.count(1)
        host = CardHost(runtime, card_ids=lambda: f"card-{next(counter)}")
        try:
            return await FlowRunner(host, runtime.context(session_id="h")).run(FlowScript.model_validate(FLOW))
        finally:
            await host.close()
            runtime.close()

    return asyncio.run(go())


def test_run_shows_a_handoff_card(tmp_path: Path) -> None:
    [record] = _replay(tmp_path)
    assert record.failed is False and record.diagnostics == []
    assert [h.wire() for h in record.handoffs] == [
        {
            "path": "/pages/order/detail",
            "query": "orderId=A7&from=agent",
            "params": {"orderId": "A7", "from": "agent"},
            "payload": {"orderId": "A7"},
            "url": "/pages/order/detail?orderId=A7&from=agent",
        }
    ]
    assert record.wire()["handoffs"] == [h.wire() for h in record.handoffs]
    assert render_flow([record]) == RUN_TEXT


def test_the_run_command_prints_it(tmp_path: Path) -> None:
    flow = tmp_path / "flow.json"
    flow.write_text(json.dumps(FLOW), encoding="utf-8")
    result = CliRunner().invoke(main, ["run", str(SHOP), "--script", str(flow), "--state-dir", str(tmp_path / "s")])
    assert "  handoff card: /pages/order/detail?orderId=A7&from=agent\n" in result.output, result.output
    assert "    [open in mini program] opens /pages/order/detail with onLoad(query)\n" in result.output


def test_the_call_command_prints_it(tmp_path: Path) -> None:
    args = ["call", str(SHOP), "openOrder", "--args", '{"orderId": "A7"}', "--state-dir", str(tmp_path / "s")]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "handoff: open /pages/order/detail?orderId=A7&from=agent in the mini program\n" in result.output
    assert '  payload: {"orderId": "A7"}\n' in result.output


# -- skillc serve --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def shop_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeHandle]:
    state = tmp_path_factory.mktemp("shop-state")
    with ServeHandle.start(ServeOptions(paths=(SHOP,), port=0, runtime=RuntimeConfig(state_dir=state))) as handle:
        yield handle


def test_serve_answers_with_text_structured_content_and_a_handoff_card(shop_server: ServeHandle) -> None:
    async def session() -> Any:
        async with Client(shop_server.url) as client:
            return await client.call_tool("openOrder", {"orderId": "A7"})

    result = asyncio.run(session())
    assert result.is_error is False
    assert [c.text for c in result.content] == [
        "Opening the order in the mini program.",
        "Continue in the mini program: open /pages/order/detail with orderId=A7&from=agent.",
    ]
    wire = {
        "path": "/pages/order/detail",
        "query": "orderId=A7&from=agent",
        "params": {"orderId": "A7", "from": "agent"},
        "payload": {"orderId": "A7"},
        "url": "/pages/order/detail?orderId=A7&from=agent",
    }
    assert result.structured_content == {"handoff": wire}
    assert result.meta is not None and result.meta["skillc/handoff"] == wire
    fallback = result.meta["skillc/fallback"]
    assert (fallback["reason"], fallback["componentPath"]) == ("handoff", None)
    card = fallback["card"]
    assert card["body"][1] == {
        "type": "FactSet",
        "facts": [
            {"title": "page", "value": "/pages/order/detail"},
            {"title": "orderId", "value": "A7"},
            {"title": "from", "value": "agent"},
        ],
    }
    assert card["body"][2] == {
        "type": "TextBlock",
        "text": "Open in mini program: /pages/order/detail?orderId=A7&from=agent",
        "isSubtle": True,
        "wrap": True,
    }
    assert card["actions"] == [
        {
            "type": "Action.Submit",
            "title": "Open in mini program",
            "data": {
                "action": "skillc.openMiniProgramPage",
                "path": "/pages/order/detail",
                "query": "orderId=A7&from=agent",
                "url": "/pages/order/detail?orderId=A7&from=agent",
            },
        }
    ]


def test_serve_annotates_by_inferred_risk(shop_server: ServeHandle) -> None:
    async def session() -> Any:
        async with Client(shop_server.url) as client:
            return {t.name: t.annotations for t in (await client.list_tools()).tools}

    tools = asyncio.run(session())
    hints = {
        n: (a.read_only_hint, a.destructive_hint)
        for n, a in tools.items()
        if not n.startswith(("skillc_card_", "ui_control__"))
    }
    assert hints == {
        "searchGoods": (True, False),  # inferred a read
        "openOrder": (False, False),  # nothing shows it is a read
        "openCoupons": (False, False),
        "payOrder": (False, True),  # inferred L3
        "countGoods": (True, False),  # pinned L0
    }


@pytest.mark.parametrize(
    ("page", "reads"),
    [
        ("Page({ onLoad(query) { this.id = query.orderId; this.f = query['from'] } })", {"orderId", "from"}),
        ("Page({ onLoad: function (q) { const { a, b: bee } = q } })", {"a", "b"}),
        ("Page({ async onLoad({ a, b }) {} })", {"a", "b"}),
        ("Page({ onLoad(query) { this.setData(query) } })", None),  # the whole query: every key is read
        ("Page({ onLoad(query) { Object.keys(query).forEach(log) } })", None),
        ("Page({ onShow() {} })", set()),
    ],
)
def test_what_a_page_reads_of_its_query(page: str, reads: set[str] | None) -> None:
    from skillc.frontend.handoff import page_reads

    assert page_reads(page) == reads


def test_serve_gives_a_handoff_api_an_mcp_apps_view(shop_server: ServeHandle) -> None:
    async def session() -> Any:
        async with Client(shop_server.url) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            resources = {str(r.uri): r.name for r in (await client.list_resources()).resources}
            page = await client.read_resource("ui://shop/handoff-page")
            return tools, resources, page

    tools, resources, page = asyncio.run(session())
    assert tools["openOrder"].meta["ui"]["resourceUri"] == "ui://shop/handoff-page"
    assert tools["openCoupons"].meta["ui"]["resourceUri"] == "ui://shop/handoff-page"
    assert "ui" not in (tools["payOrder"].meta or {})
    assert resources == {
        "skill://shop/SKILL.md": "shop",  # the skill's name, as MCP Skills names a SKILL.md
        "skillc://debugger/descriptor": "debug-descriptor",
        "ui://shop/goods-card": "shop/goods-card",
        "ui://shop/handoff-page": "shop/page",
    }
    [content] = page.contents
    assert content.mime_type == "text/html;profile=mcp-app" and "renderFallback" in content.text
