"""The coffee order flow end to end: search -> tap a drink -> confirm (approved) -> pay -> payment result."""

from __future__ import annotations

import asyncio
import itertools
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from skillc.diagnostics import DiagnosticSink
from skillc.frontend.package import load_skill
from skillc.ir.diff import Insert, SetStyle, apply
from skillc.ir.render import to_plain
from skillc.runtime.api.api_runtime import ApiRuntime
from skillc.runtime.cards.card_host import CardHost
from skillc.runtime.cards.card_models import ExpirePreviousCards, SendFollowUpMessage
from skillc.runtime.config import RuntimeConfig
from skillc.runtime.flows.flow import FlowRunner, FlowScript, StepRecord
from skillc.runtime.flows.report import outline

from .conftest import COFFEE, ROOT

FLOW = COFFEE / "flows" / "order.json"


def replay(state: Path) -> list[StepRecord]:
    async def go() -> list[StepRecord]:
        pkg = load_skill(COFFEE, DiagnosticSink())
        assert pkg is not None
        runtime = ApiRuntime(pkg, RuntimeConfig(state_dir=state))
        counter = itertools.count(1)
        host = CardHost(runtime, card_ids=lambda: f"card-{next(counter)}")
        try:
            ctx = runtime.context(session_id="flow-test")
            return await FlowRunner(host, ctx).run(FlowScript.model_validate_json(FLOW.read_bytes()))
        finally:
            await host.close()
            runtime.close()

    return asyncio.run(go())


@pytest.fixture(scope="module")
def records(tmp_path_factory: pytest.TempPathFactory) -> list[StepRecord]:
    return replay(tmp_path_factory.mktemp("state"))


def test_every_step_of_the_order_flow_succeeds(records: list[StepRecord]) -> None:
    assert [r.kind for r in records] == ["call", "tap", "follow", "tap", "follow"]
    assert not any(r.failed for r in records), [d.message for r in records for d in r.diagnostics]
    assert [d for r in records for d in r.diagnostics] == []


def test_search_mounts_the_drink_list_card(records: list[StepRecord]) -> None:
    search = records[0]
    assert search.api[0].result.structured_content is not None
    card = search.cards[0]
    assert (card.card_id, card.component_path) == ("card-1", "components/drink-list/index")
    names = [n.text_content() for n in card.document.root.walk() if n.events and "tap" in n.events]
    assert names == ["拿铁 Latte¥28", "燕麦拿铁 Oat Latte¥32", "抹茶拿铁 Matcha Latte¥30"]
    assert card.data["title"] == "“latte”的搜索结果" and card.data["keyword"] == "latte"


def test_the_tap_patches_only_the_nodes_whose_bindings_changed(records: list[StepRecord]) -> None:
    tap, search = records[1], records[0]
    assert tap.handled == ["onSelect"]
    # selectedId feeds the selected drink's class (its style) and its badge's wx:if; nothing else.
    assert [type(p) for p in tap.patches] == [Insert, SetStyle]
    insert, style = tap.patches
    assert isinstance(insert, Insert) and isinstance(style, SetStyle)
    assert insert.parent == "0.1.0[d02].2" and insert.node.text_content() == "已选"
    assert style.id == "0.1.0[d02]" and style.style == {"border": "2px solid #c8742c"}
    # The patches turn the first render into what a full render of the new data gives.
    before = search.cards[0].document.root
    after = apply(before, tap.patches)
    assert "已选" in after.text_content()


def test_the_tap_sends_a_follow_up_with_an_api_call(records: list[StepRecord]) -> None:
    (action,) = records[1].actions
    assert isinstance(action, SendFollowUpMessage)
    assert action.text == "我要一杯燕麦拿铁 Oat Latte"
    assert [(c.name, c.arguments) for c in action.api_calls()] == [("confirmOrder", {"drinkId": "d02", "quantity": 1})]


def test_confirm_goes_through_the_chain_with_approval_and_expires_the_list(records: list[StepRecord]) -> None:
    confirm = records[2]
    api = confirm.api[0]
    assert (api.api_name, api.approved, api.risk.value) == ("confirmOrder", True, "L3")
    assert api.audit is not None and api.audit.outcome.value == "ok"
    assert confirm.cards[0].component_path == "components/order-confirm/index"
    (expire,) = confirm.actions
    assert isinstance(expire, ExpirePreviousCards) and expire.expired == ["card-1"]


def test_confirming_the_order_swaps_the_button_for_the_hint(records: list[StepRecord]) -> None:
    tap = records[3]
    assert tap.handled == ["onConfirm"]
    ops = [p.op for p in tap.patches]
    assert sorted(ops) == ["insert", "remove", "setStyle"]
    (action,) = tap.actions
    assert isinstance(action, SendFollowUpMessage)
    assert action.api_calls()[0].name == "payOrder"


def test_pay_shows_the_payment_result(records: list[StepRecord]) -> None:
    pay = records[4]
    api = pay.api[0]
    assert api.api_name == "payOrder" and api.approved is True and not api.result.is_error
    card = pay.cards[0]
    assert card.data["status"] == "success"
    assert "支付成功" in card.document.root.text_content()


def _stable(record: StepRecord) -> dict[str, Any]:
    """A step without times, audit digests and console stamps, for the golden file."""
    data = record.wire()
    for api in data["api"]:
        for key in ("durationMs", "audit", "console"):
            api.pop(key, None)
        # The wx stand-ins' records (wx.requestPayment): what was decided, not when or digests of what.
        for entry in api.get("standInAudit", []):
            for key in ("time", "durationMs", "argumentsDigest"):
                entry.pop(key)
    for card in data["cards"]:
        card["outline"] = outline(record.cards[data["cards"].index(card)].document.root)
    return data


@pytest.mark.parametrize("step", range(5))
def test_each_step_matches_its_golden_snapshot(records: list[StepRecord], step: int, snapshot: Any) -> None:
    assert json.dumps(_stable(records[step]), ensure_ascii=False, indent=2, sort_keys=True) == snapshot


def test_a_second_replay_gives_the_same_steps(records: list[StepRecord], tmp_path: Path) -> None:
    again = replay(tmp_path)
    assert [_stable(r) for r in again] == [_stable(r) for r in records]


def test_card_documents_are_snapshots_not_live_trees(records: list[StepRecord]) -> None:
    # The search card was tapped after it was returned: the returned view must not have changed.
    first = to_plain(records[0].cards[0].document)
    assert "已选" not in json.dumps(first, ensure_ascii=False)


def test_skillc_run_replays_the_flow_from_the_cli(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "skillc", "run", str(COFFEE), "--script", str(FLOW), "--state-dir", str(tmp_path)]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "[1] call searchDrinks" in out
    assert "[2] tap onSelect[id=d02] on card-1 (node 0.1.0[d02])" in out
    assert "insert 0.1.0[d02].2.1.0 into 0.1.0[d02].2 at 1" in out
    assert "confirmOrder: ok (risk L3 approved)" in out
    assert "payOrder: ok (risk L3 approved)" in out
    assert "card card-3 components/payment-result/index" in out


def test_skillc_run_json_and_a_bad_script(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "skillc", "run", str(COFFEE), "--script", str(FLOW), "--json"]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    steps = json.loads(proc.stdout)
    assert [s["kind"] for s in steps] == ["call", "tap", "follow", "tap", "follow"]
    assert steps[1]["patches"][1] == {"id": "0.1.0[d02]", "op": "setStyle", "style": {"border": "2px solid #c8742c"}}
    bad = tmp_path / "bad.json"
    bad.write_text('{"steps": [{"jump": 1}]}')
    proc = subprocess.run(
        [sys.executable, "-m", "skillc", "run", str(COFFEE), "--script", str(bad)], capture_output=True, text=True
    )
    assert proc.returncode == 2 and "is not a usable flow script" in proc.stderr


def test_a_tap_on_a_node_that_does_not_exist_fails_the_step(tmp_path: Path) -> None:
    script = tmp_path / "flow.json"
    script.write_text(
        json.dumps({"steps": [{"call": "searchDrinks"}, {"tap": {"handler": "onSelect", "dataset": {"id": "zz"}}}]})
    )
    proc = subprocess.run(
        [sys.executable, "-m", "skillc", "run", str(COFFEE), "--script", str(script)], capture_output=True, text=True
    )
    assert proc.returncode == 1
    assert "CMPVM012" in proc.stdout and "no node with a tap handler matching onSelect[id=zz]" in proc.stdout
