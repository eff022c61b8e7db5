"""Risk levels from what a skill says (frontend/risk.py): pinned, else inferred from the API's name,
description and code; check's RISK001, the call chain's consent, the served tools' annotations."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from skillc.check import check_path
from skillc.diagnostics import DiagnosticSink
from skillc.frontend.manifest import ApiSpec
from skillc.frontend.package import load_skill
from skillc.frontend.risk import assess
from skillc.runtime.api.api_runtime import ApiRuntime, api_risk
from skillc.runtime.config import RuntimeConfig
from skillc.runtime.contracts import RiskLevel
from skillc.server.tools import ServedApi, tool_for

from .conftest import COFFEE, ROOT

SHOP = ROOT / "tests" / "fixtures" / "rules_project" / "skills" / "shop"


def spec(name: str, description: str = "Does a thing.", **extra: Any) -> ApiSpec:
    return ApiSpec.model_validate({"name": name, "description": description, "inputSchema": {}, **extra})


def level(s: ApiSpec, sources: dict[str, str] | None = None) -> tuple[str, str | None, list[str]]:
    found = assess(s, sources)
    return found.level, found.pinned, [str(e) for e in found.evidence]


@pytest.mark.parametrize(
    ("name", "description", "expected"),
    [
        ("payOrder", "Settle an order.", ("L3", None, ["payment (name payOrder)"])),
        ("settle", "用微信支付完成订单", ("L3", None, ['payment (description "支付")'])),
        ("submitOrder", "Send the basket to the shop.", ("L3", None, ["order submission (name submitOrder)"])),
        ("placeOrder", "Order it.", ("L3", None, ["order submission (name placeOrder)"])),
        ("makeOrder", "为用户下单", ("L3", None, ['order submission (description "下单")'])),
        ("refundOrder", "Give the money back.", ("L3", None, ["refund (name refundOrder)"])),
        ("cancelOrder", "Stop an order.", ("L3", None, ["a destructive action (name cancelOrder)"])),
        ("unbindCard", "Forget a card.", ("L3", None, ["a destructive action (name unbindCard)"])),
        ("account", "注销用户账号", ("L3", None, ['a destructive action (description "注销")'])),
        # English destructive words in a description say little ("remove sugar"): names only.
        ("brew", "Brew tea; remove the leaves after.", ("L1", None, [])),
        ("bindPhone", "Link the account.", ("L4", None, ["phone number (name bindPhone)"])),
        ("verify", "核验用户身份证", ("L4", None, ['identity (description "身份证")'])),
        ("shipTo", "Use the user's address.", ("L2", None, ['address (description "address")'])),
        ("nearby", "Find shops near the user's location.", ("L2", None, ['location (description "location")'])),
        ("searchTea", "Search teas.", ("L0", None, ["a read (name searchTea)"])),
        ("listOrders", "List the orders.", ("L0", None, ["a read (name listOrders)"])),
        ("查询", "查询门店营业时间", ("L0", None, ["a read (查询)"])),
        ("greet", "Say hello.", ("L1", None, [])),
        # A description's forbidden uses are not what the API does.
        ("searchMenu", "Search the menu.【严禁场景】不要用于下单或支付。", ("L0", None, ["a read (name searchMenu)"])),
    ],
)
def test_inferred_from_name_and_description(name: str, description: str, expected: tuple[Any, ...]) -> None:
    assert level(spec(name, description)) == (expected[0], expected[1], expected[2])


def test_inferred_from_the_code_the_handler_runs() -> None:
    sources = {
        "index.js": "const s = wx.modelContext.createSkill('x')\n"
        "s.registerAPI('go', require('./apis/go'))\n"
        "s.registerAPI('who', async () => { return wx.getPhoneNumber({}) })\n"
        "s.registerAPI('post', async () => wx.request({ url: 'https://a', method: 'POST' }))\n"
        "s.registerAPI('get', async () => wx.request({ url: 'https://a', method: 'GET' }))\n",
        "apis/go.js": "const pay = require('./pay')\nmodule.exports = async () => pay()\n",
        "apis/pay.js": "module.exports = () =>\n  wx.requestPayment({ timeStamp: '1' })\n",
    }
    assert level(spec("go"), sources) == ("L3", None, ["payment (code apis/pay.js:2 wx.requestPayment)"])
    assert level(spec("who"), sources) == ("L4", None, ["phone number (code index.js:3 wx.getPhoneNumber)"])
    post = "a wx.request that writes (code index.js:4 wx.request POST)"
    assert level(spec("post"), sources) == ("L2", None, [post])
    # An inline handler's code ends at the next registration: "get" does not inherit POST.
    assert level(spec("get"), sources) == ("L0", None, ["a read (name get)"])


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ({"_meta": {"x_skillc": {"risk": "L0"}}}, ("L0", "_meta.x_skillc.risk")),
        ({"_meta": {"anp": {"risk": "L2"}}}, ("L2", "_meta.anp.risk")),
        ({"x_anp": {"risk": "L1"}}, ("L1", "x_anp.risk")),
        ({"_meta": {"x_skillc": {"risk": "high"}}}, ("L4", "_meta.x_skillc.risk")),
    ],
)
def test_a_pinned_level_wins(extra: dict[str, Any], expected: tuple[str, str]) -> None:
    found = assess(spec("payOrder", **extra), None)
    assert (found.level, found.pinned, found.evidence) == (*expected, ())


def test_api_risk_order_override_pin_inference_floor() -> None:
    pay = spec("payOrder")
    assert api_risk(pay, RuntimeConfig()) == (RiskLevel.L3, None)
    assert api_risk(pay, RuntimeConfig(risk_overrides={"payOrder": RiskLevel.L0})) == (RiskLevel.L0, None)
    assert api_risk(spec("searchTea"), RuntimeConfig(default_risk=RiskLevel.L2)) == (RiskLevel.L2, None)
    bad = spec("x", _meta={"x_skillc": {"risk": "high"}})
    assert api_risk(bad, RuntimeConfig()) == (
        RiskLevel.L4,
        "x: _meta.x_skillc.risk is 'high', not one of L0-L4; treated as L4",
    )


def test_check_reports_the_inferred_level_at_the_api_name() -> None:
    reports = check_path(SHOP, "shop")
    risk = [(d.file, d.span.line if d.span else 0, d.severity.value, d.message, d.hint) for d in reports[0].diagnostics]
    risk = [r for r in risk if "RISK" in (r[4] or "") or "risk" in r[3]]
    assert risk == [
        (
            "mcp.json",
            26,
            "info",
            "payOrder: risk L3 inferred from payment (name payOrder); pin it with _meta.x_skillc.risk",
            '"_meta": {"x_skillc": {"risk": "L3"}}',
        )
    ]


def test_an_unpinned_payment_api_needs_consent(tmp_path: Path) -> None:
    pkg = load_skill(SHOP, DiagnosticSink())
    assert pkg is not None
    runtime = ApiRuntime(pkg, RuntimeConfig(state_dir=tmp_path))
    try:
        outcome = asyncio.run(runtime.call("payOrder", {"orderId": "A1"}))
    finally:
        runtime.close()
    assert (outcome.risk, outcome.result.is_error) == (RiskLevel.L3, True)
    assert [d.code for d in outcome.diagnostics] == ["RUN019"]


def _served(risk: RiskLevel) -> ServedApi:
    return ServedApi("t", "s", spec("t"), risk, False, None)


@pytest.mark.parametrize(
    ("risk", "read_only", "destructive"),
    [
        (RiskLevel.L0, True, False),
        (RiskLevel.L1, False, False),
        (RiskLevel.L2, False, False),
        (RiskLevel.L3, False, True),
        (RiskLevel.L4, False, True),
    ],
)
def test_tool_annotations_follow_the_level(risk: RiskLevel, read_only: bool, destructive: bool) -> None:
    annotations = tool_for(_served(risk)).annotations
    assert annotations is not None
    assert (annotations.read_only_hint, annotations.destructive_hint) == (read_only, destructive)


def test_the_coffee_skill_pins_every_level() -> None:
    pkg = load_skill(COFFEE, DiagnosticSink())
    assert pkg is not None and pkg.manifest is not None
    found = {a.name: assess(a, pkg.sources) for a in pkg.manifest.apis}
    assert {n: (f.level, f.pinned) for n, f in found.items()} == {
        "searchDrinks": ("L0", "_meta.x_skillc.risk"),
        "confirmOrder": ("L3", "_meta.x_skillc.risk"),
        "payOrder": ("L3", "_meta.x_skillc.risk"),
    }


def test_a_local_handler_is_judged_by_its_own_function() -> None:
    sources = {
        "index.js": "const skill = wx.modelContext.createSkill('x')\n"
        "async function lookUp (args) {\n  return { content: [] }\n}\n"
        "async function settle (args) {\n  await wx.requestPayment({})\n  return { content: [] }\n}\n"
        "skill.registerAPI('find', lookUp)\n"
        "skill.registerAPI('settle', settle)\n",
    }
    assert level(spec("find"), sources) == ("L0", None, ["a read (name find)"])
    assert level(spec("settle"), sources) == ("L3", None, ["payment (code index.js:6 wx.requestPayment)"])
