"""ui_control: scoped card automation (skillc/server/ui_control/) on a real coffee-skill card host."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp_types import CallToolRequestParams, CallToolResult, InputRequiredResult, TextContent
from pydantic import ValidationError

from skillc.diagnostics import DiagnosticSink
from skillc.frontend.package import load_skill
from skillc.ir.render import EventBinding, RenderDocument, RenderNode
from skillc.ir.viewport import Viewport
from skillc.runtime.api.api_runtime import ApiRuntime
from skillc.runtime.cards.card_host import CardHost
from skillc.runtime.cards.card_models import CardView, Dimensions, EventOutcome
from skillc.runtime.config import RuntimeConfig
from skillc.server.registry import ToolResult
from skillc.server.results import call_result
from skillc.server.ui_control import (
    MAX_DEPTH,
    MAX_NODES,
    UiActionRequest,
    UiControl,
    UiControlAuditRecord,
    UiControlNode,
    UiFindRequest,
    UiWaitCondition,
    build_tree,
    ui_control_tools,
)

from .conftest import COFFEE

SKILL = "coffee-skill"
OAT = "0.1.0[d02]"  # the oat latte's tappable drink view (wx:key d02)
LATTE = "0.1.0[d01]"
MALLORY = "did:example:mallory"


class Rig:
    """A coffee-skill CardHost and a UiControl over it; each coroutine runs to completion."""

    def __init__(self, state: Path, *, real_follow_up: bool = False, **kw: Any) -> None:
        pkg = load_skill(COFFEE, DiagnosticSink())
        assert pkg is not None
        self.runtime = ApiRuntime(pkg, RuntimeConfig(state_dir=state))
        counter = itertools.count(1)
        self.loop = asyncio.new_event_loop()
        self.host = CardHost(self.runtime, card_ids=lambda: f"card-{next(counter)}")
        self.ctx = self.runtime.context(session_id="s1")
        self.user = self.ctx.user_did
        self.real_follow_up = real_follow_up
        self.follow_ups: list[tuple[str, str, dict[str, Any], str]] = []
        self.audits: list[UiControlAuditRecord] = []
        self.control = UiControl(
            cards_of=lambda skill: self.host if skill == SKILL else None,
            skill_of_card=self._skill_of_card,
            owner_of=self._owner_of,
            run_follow_up=self._run_follow_up,
            audit=self.audits.append,
            **kw,
        )

    async def _skill_of_card(self, card_id: str) -> str | None:
        return SKILL if await self.host.card(card_id) is not None else None

    def _owner_of(self, view: CardView) -> str:
        # What the server does: the user DID of the context the card was mounted under.
        loaded = self.host.store.load(view.card_id)
        assert loaded is not None
        return loaded[0].context.user_did

    async def _run_follow_up(self, skill: str, api: str, arguments: dict[str, Any], caller: str) -> ToolResult:
        self.follow_ups.append((skill, api, arguments, caller))
        if not self.real_follow_up:
            return CallToolResult(content=[TextContent(text=f"{api} ran")], _meta={"skillc/card": {"cardId": "card-9"}})
        outcome = await self.host.call(api, arguments, self.ctx, approve=True)  # the consent chain said yes
        return call_result(outcome, {})

    def run(self, coro: Any) -> Any:
        return self.loop.run_until_complete(coro)

    def drinks(self, keyword: str = "latte") -> str:
        out = self.run(self.host.call("searchDrinks", {"keyword": keyword}, self.ctx))
        assert out.card is not None
        card_id: str = out.card.card_id
        return card_id

    def view(self, card_id: str) -> CardView:
        view = self.run(self.host.card(card_id))
        assert view is not None
        return view

    def close(self) -> None:
        self.run(self.host.close())
        self.runtime.close()
        self.loop.close()


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    r = Rig(tmp_path / "state")
    yield r
    r.close()


def node(root: UiControlNode | None, node_id: str) -> UiControlNode:
    assert root is not None
    stack = [root]
    while stack:
        n = stack.pop()
        if n.id == node_id:
            return n
        stack.extend(n.children)
    raise AssertionError(f"no {node_id}")


def tap(card_id: str, node_id: str, snapshot_id: str, action: str = "tap") -> UiActionRequest:
    return UiActionRequest(card_id=card_id, node_id=node_id, snapshot_id=snapshot_id, action=action)


def test_snapshot_gives_roles_labels_and_events(rig: Rig) -> None:
    card = rig.drinks()
    snap = rig.run(rig.control.snapshot(card, rig.user))
    assert snap.ok and snap.snapshot_id and not snap.truncated and not snap.expired
    assert snap.node_count == sum(1 for _ in rig.view(card).document.root.walk())
    oat = node(snap.root, OAT)
    assert oat.role == "button" and oat.events == ["tap"] and oat.enabled and oat.visible
    assert oat.label is not None and oat.label.startswith("燕麦拿铁 Oat Latte")
    assert oat.label == "燕麦拿铁 Oat Latte ¥32"  # the drink's text runs, one space apart
    assert node(snap.root, f"{OAT}.0").model_dump(include={"role", "label", "events"}) == {
        "role": "image",
        "label": "d02.jpg",
        "events": [],
    }
    name = node(snap.root, f"{OAT}.1")
    assert (name.role, name.text, name.label) == ("text", "燕麦拿铁 Oat Latte", "燕麦拿铁 Oat Latte")
    assert node(snap.root, "0.1").role == "scrollable"
    assert node(snap.root, "0.0").role == "group"
    assert node(snap.root, f"{OAT}.1.0").role == "text"  # a #text run
    wire = snap.wire()
    assert set(wire) == {"ok", "card_id", "snapshot_id", "root", "truncated", "node_count", "expired"}


def test_find_resolves_the_control_by_query_role_label_and_id(rig: Rig) -> None:
    card = rig.drinks()
    found = rig.run(rig.control.find(UiFindRequest(card_id=card, query="Oat Latte"), rig.user))
    assert found.ok and found.snapshot_id
    assert found.matches[0].id == OAT  # the actionable control first, then the text inside it
    assert {m.id for m in found.matches} >= {OAT, f"{OAT}.1", f"{OAT}.1.0"}
    assert all(m.children == [] for m in found.matches)
    again = UiFindRequest(card_id=card, snapshot_id=found.snapshot_id, role="button")
    buttons = rig.run(rig.control.find(again, rig.user))
    assert [m.id for m in buttons.matches] == ["0.1.0[d01]", OAT, "0.1.0[d09]"]
    assert buttons.snapshot_id == found.snapshot_id
    exact = rig.run(rig.control.find(UiFindRequest(card_id=card, label="燕麦拿铁 oat latte"), rig.user))
    assert [m.id for m in exact.matches] == [f"{OAT}.1", f"{OAT}.1.0"]
    by_id = rig.run(rig.control.find(UiFindRequest(card_id=card, node_id=OAT), rig.user))
    assert [m.id for m in by_id.matches] == [OAT]
    none = rig.run(rig.control.find(UiFindRequest(card_id=card, query="espresso tonic"), rig.user))
    assert none.ok and none.matches == [] and none.message
    with pytest.raises(ValidationError, match="at least one of"):
        UiFindRequest(card_id=card)


def test_a_tap_runs_the_handler_and_its_follow_up_and_an_old_snapshot_is_then_stale(rig: Rig) -> None:
    card = rig.drinks()
    snap = rig.run(rig.control.snapshot(card, rig.user))
    done = rig.run(rig.control.act(tap(card, OAT, snap.snapshot_id), rig.user))
    assert done.ok and done.error_code is None
    assert done.handled == ["onSelect"]
    assert done.messages == ["我要一杯燕麦拿铁 Oat Latte"]
    assert rig.follow_ups == [(SKILL, "confirmOrder", {"drinkId": "d02", "quantity": 1}, rig.user)]
    (follow,) = done.follow_up
    assert follow.model_dump() == {
        "api_name": "confirmOrder",
        "arguments": {"drinkId": "d02", "quantity": 1},
        "status": "ok",
        "text": "confirmOrder ran",
        "card_id": "card-9",
    }
    assert rig.view(card).data["selectedId"] == "d02"

    waited = rig.run(
        rig.control.wait_for(UiWaitCondition(card_id=card, kind="text_contains", node_id=OAT, text="已选"), rig.user)
    )
    assert waited.ok and waited.observed_text == "燕麦拿铁 Oat Latte ¥32 已选"

    before = rig.view(card)
    stale = rig.run(rig.control.act(tap(card, OAT, snap.snapshot_id), rig.user))
    assert (stale.ok, stale.error_code) == (False, "stale_control")
    assert stale.message is not None and "refresh the UI snapshot" in stale.message
    assert stale.handled == [] and stale.follow_up == []
    assert rig.follow_ups == [(SKILL, "confirmOrder", {"drinkId": "d02", "quantity": 1}, rig.user)]  # no new tap
    after = rig.view(card)
    assert after.data == before.data
    assert rig.audits[-1].before == rig.audits[-1].after

    # A control that did not change since the snapshot still takes the tap.
    other = rig.run(rig.control.act(tap(card, LATTE, snap.snapshot_id), rig.user))
    assert other.ok and other.handled == ["onSelect"]
    assert rig.view(card).data["selectedId"] == "d01"


def test_the_follow_up_runs_through_the_real_call_chain(tmp_path: Path) -> None:
    rig = Rig(tmp_path / "state", real_follow_up=True)
    try:
        card = rig.drinks()
        snap = rig.run(rig.control.snapshot(card, rig.user))
        done = rig.run(rig.control.act(tap(card, OAT, snap.snapshot_id), rig.user))
        (follow,) = done.follow_up
        assert (follow.status, follow.card_id) == ("ok", "card-2")  # the order-confirm card it mounted
        assert rig.view("card-2").component_path == "components/order-confirm/index"
        # confirmOrder expires the drink list (an API card action), so the list takes no more taps.
        assert rig.run(rig.control.snapshot(card, rig.user)).expired
        again = rig.run(rig.control.act(tap(card, LATTE, snap.snapshot_id), rig.user))
        assert again.error_code == "expired"
    finally:
        rig.close()


def test_a_follow_up_that_needs_consent_or_fails_is_reported(rig: Rig) -> None:
    answers: list[Any] = [InputRequiredResult(request_state="consent-1"), RuntimeError("boom")]

    async def follow(*_args: Any) -> ToolResult:
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer  # type: ignore[no-any-return]

    rig.control._run_follow_up = follow
    card = rig.drinks()
    snap = rig.run(rig.control.snapshot(card, rig.user))
    asked = rig.run(rig.control.act(tap(card, OAT, snap.snapshot_id), rig.user))
    assert asked.ok and asked.follow_up[0].status == "input_required"
    fresh = rig.run(rig.control.snapshot(card, rig.user))
    failed = rig.run(rig.control.act(tap(card, LATTE, fresh.snapshot_id), rig.user))
    assert failed.ok and (failed.follow_up[0].status, failed.follow_up[0].text) == ("error", "RuntimeError")


def test_a_tap_on_an_unchanged_inner_node_still_reaches_the_unchanged_handler(rig: Rig) -> None:
    card = rig.drinks()
    snap = rig.run(rig.control.snapshot(card, rig.user))
    assert rig.run(rig.control.act(tap(card, OAT, snap.snapshot_id), rig.user)).ok
    # The drink view got a badge (its subtree changed) but its own props, events and dataset did not.
    inner = rig.run(rig.control.act(tap(card, f"{OAT}.1.0", snap.snapshot_id), rig.user))
    assert inner.ok and inner.handled == ["onSelect"]
    fresh = rig.run(rig.control.snapshot(card, rig.user))
    assert rig.run(rig.control.act(tap(card, OAT, fresh.snapshot_id), rig.user)).ok  # a new snapshot works


class FakeHost:
    """A card whose document a test rewrites (what a re-render would do), recording the events."""

    def __init__(self, root: RenderNode) -> None:
        self.root = root
        self.events: list[tuple[str, str]] = []

    async def card_at(self, card_id: str) -> tuple[CardView, int] | None:
        view = await self.card(card_id)
        return (view, 1) if view is not None else None

    async def card(self, card_id: str) -> CardView | None:
        return CardView(
            card_id=card_id,
            component_path="components/x/index",
            api_name="x",
            session_id="s1",
            document=RenderDocument(1, Viewport(), self.root),
            data={},
            dimensions=Dimensions(min_height=1, max_height=2, width=3),
            content_height=0,
        )

    async def event(self, card_id: str, node_id: str, event: str = "tap", detail: Any = None) -> EventOutcome:
        self.events.append((node_id, event))
        return EventOutcome(card_id=card_id, handled=["onPick"])


def _row(pick: str, label: str) -> RenderNode:
    text = RenderNode("row.0", "text", children=[RenderNode("row.0.0", "#text", props={"text": label})])
    return RenderNode("row", "view", events={"tap": EventBinding("onPick", dataset={"id": pick})}, children=[text])


def test_a_tap_whose_handler_node_changed_its_dataset_is_stale() -> None:
    fake = FakeHost(RenderNode("root", "view", children=[_row("a", "Alpha")]))
    audits: list[UiControlAuditRecord] = []

    async def skill_of(card_id: str) -> str | None:
        return "x" if card_id == "c1" else None

    async def never(*_args: Any) -> ToolResult:
        raise AssertionError("no follow-up")

    control = UiControl(
        cards_of=lambda _s: fake,  # type: ignore[arg-type,return-value]
        skill_of_card=skill_of,
        owner_of=lambda _v: "u",
        run_follow_up=never,
        audit=audits.append,
    )
    loop = asyncio.new_event_loop()
    try:
        snap = loop.run_until_complete(control.snapshot("c1", "u"))
        # Same ids and text, another item under the row (an index-keyed list after a re-sort).
        fake.root = RenderNode("root", "view", children=[_row("b", "Alpha")])
        inner = loop.run_until_complete(control.act(tap("c1", "row.0.0", snap.snapshot_id), "u"))
        assert inner.error_code == "stale_control" and "row, whose handler" in (inner.message or "")
        direct = loop.run_until_complete(control.act(tap("c1", "row", snap.snapshot_id), "u"))
        assert direct.error_code == "stale_control"
        assert fake.events == []
        fresh = loop.run_until_complete(control.snapshot("c1", "u"))
        ok = loop.run_until_complete(control.act(tap("c1", "row.0.0", fresh.snapshot_id), "u"))
        assert ok.ok and fake.events == [("row.0.0", "tap")]
        # A hidden or disabled control takes no tap.
        fake.root = RenderNode("root", "view", children=[_row("b", "Alpha")])
        fake.root.children[0].props["disabled"] = True  # type: ignore[index]
        off = loop.run_until_complete(control.snapshot("c1", "u"))
        assert node(off.root, "row").enabled is False
        refused = loop.run_until_complete(control.act(tap("c1", "row", off.snapshot_id), "u"))
        assert refused.error_code == "unsupported_action" and "disabled" in (refused.message or "")
        fake.root.children[0].props.pop("disabled")  # type: ignore[index]
        fake.root.style["display"] = "none"
        hidden = loop.run_until_complete(control.snapshot("c1", "u"))
        assert node(hidden.root, "row.0.0").visible is False
        refused = loop.run_until_complete(control.act(tap("c1", "row.0.0", hidden.snapshot_id), "u"))
        assert refused.error_code == "unsupported_action" and "hidden" in (refused.message or "")
        assert fake.events == [("row.0.0", "tap")]
    finally:
        loop.close()


def test_unknown_snapshot_evicted_snapshot_and_unobserved_nodes_are_stale(tmp_path: Path) -> None:
    rig = Rig(tmp_path / "state", max_snapshots=2)
    try:
        card = rig.drinks()
        first = rig.run(rig.control.snapshot(card, rig.user))
        rig.run(rig.control.snapshot(card, rig.user))
        rig.run(rig.control.snapshot(card, rig.user))  # evicts the first
        for snapshot_id in (first.snapshot_id, "snap-nope"):
            out = rig.run(rig.control.act(tap(card, OAT, snapshot_id), rig.user))
            assert out.error_code == "stale_control" and "unknown or evicted" in (out.message or "")
        other = rig.drinks("matcha")
        theirs = rig.run(rig.control.snapshot(other, rig.user))
        wrong_card = rig.run(rig.control.act(tap(card, OAT, theirs.snapshot_id), rig.user))
        assert wrong_card.error_code == "stale_control"
        assert rig.follow_ups == []
    finally:
        rig.close()


def test_another_user_is_denied_and_nothing_is_delivered(rig: Rig) -> None:
    card = rig.drinks()
    mine = rig.run(rig.control.snapshot(card, rig.user))
    assert rig.run(rig.control.snapshot(card, MALLORY)).error_code == "denied"
    assert rig.run(rig.control.find(UiFindRequest(card_id=card, query="Oat"), MALLORY)).error_code == "denied"
    cond = UiWaitCondition(card_id=card, kind="card_expired", timeout_s=0.2)
    assert rig.run(rig.control.wait_for(cond, MALLORY)).error_code == "denied"
    out = rig.run(rig.control.act(tap(card, OAT, mine.snapshot_id), MALLORY))
    assert (out.ok, out.error_code) == (False, "denied")
    assert rig.follow_ups == [] and rig.view(card).data["selectedId"] == ""


def test_an_unknown_card_or_node_is_not_found(rig: Rig) -> None:
    assert rig.run(rig.control.snapshot("card-404", rig.user)).error_code == "not_found"
    out = rig.run(rig.control.act(tap("card-404", OAT, "snap-x"), rig.user))
    assert out.error_code == "not_found"
    card = rig.drinks()
    snap = rig.run(rig.control.snapshot(card, rig.user))
    assert rig.run(rig.control.act(tap(card, "0.9.9", snap.snapshot_id), rig.user)).error_code == "not_found"
    cond = UiWaitCondition(card_id="card-404", kind="node_present", node_id="x")
    assert rig.run(rig.control.wait_for(cond, rig.user)).error_code == "not_found"


def test_only_the_cards_own_events_are_actions(rig: Rig) -> None:
    card = rig.drinks()
    snap = rig.run(rig.control.snapshot(card, rig.user))
    scroll = rig.run(rig.control.act(tap(card, "0.1", snap.snapshot_id, "scroll"), rig.user))
    assert (scroll.ok, scroll.error_code) == (False, "unsupported_action")
    title = rig.run(rig.control.act(tap(card, "0.0.0", snap.snapshot_id), rig.user))
    assert title.error_code == "unsupported_action" and "tap handler" in (title.message or "")
    load = rig.run(rig.control.act(tap(card, f"{OAT}.0", snap.snapshot_id, "load"), rig.user))
    assert load.error_code == "unsupported_action"  # the photo binds no load handler
    assert rig.follow_ups == [] and rig.view(card).data["selectedId"] == ""


def test_wait_for_times_out_with_the_last_observed_text(rig: Rig) -> None:
    card = rig.drinks()
    cond = UiWaitCondition(card_id=card, kind="text_equals", node_id=f"{OAT}.1", text="已售罄", timeout_s=0.3)
    out = rig.run(rig.control.wait_for(cond, rig.user))
    assert (out.ok, out.error_code) == (False, "timeout")
    assert out.message is not None and "'燕麦拿铁 Oat Latte'" in out.message
    assert out.observed_text == "燕麦拿铁 Oat Latte" and out.elapsed_s >= 0.3
    gone = UiWaitCondition(card_id=card, kind="node_gone", node_id=OAT, timeout_s=0.2, poll_s=0.05)
    assert rig.run(rig.control.wait_for(gone, rig.user)).error_code == "timeout"
    present = UiWaitCondition(card_id=card, kind="node_present", node_id=OAT)
    assert rig.run(rig.control.wait_for(present, rig.user)).ok
    equals = UiWaitCondition(card_id=card, kind="text_equals", node_id=f"{OAT}.1", text=" 燕麦拿铁 Oat Latte ")
    assert rig.run(rig.control.wait_for(equals, rig.user)).ok
    with pytest.raises(ValidationError):
        UiWaitCondition(card_id=card, kind="text_equals")
    with pytest.raises(ValidationError):
        UiWaitCondition(card_id=card, kind="card_expired", timeout_s=31)


def test_an_expired_card_takes_no_action(rig: Rig) -> None:
    card = rig.drinks()
    snap = rig.run(rig.control.snapshot(card, rig.user))
    rig.run(rig.host.expire([card]))
    out = rig.run(rig.control.act(tap(card, OAT, snap.snapshot_id), rig.user))
    assert (out.ok, out.error_code) == (False, "expired")
    assert rig.follow_ups == []
    assert rig.run(rig.control.snapshot(card, rig.user)).expired
    assert rig.run(rig.control.wait_for(UiWaitCondition(card_id=card, kind="card_expired"), rig.user)).ok
    text = UiWaitCondition(card_id=card, kind="text_contains", text="已选", timeout_s=30)
    early = rig.run(rig.control.wait_for(text, rig.user))
    # An expired card no longer changes: the wait ends at once, long before its timeout.
    assert early.error_code == "expired" and early.elapsed_s < text.timeout_s / 2


def test_the_tree_is_bounded(tmp_path: Path) -> None:
    wide = RenderNode("root", "view", children=[RenderNode(f"n{i}", "view") for i in range(MAX_NODES + 100)])
    tree = build_tree(wide)
    assert (tree.node_count, tree.truncated) == (MAX_NODES, True)
    assert len(tree.fingerprints) == MAX_NODES
    deep = leaf = RenderNode("d0", "view")
    for i in range(1, MAX_DEPTH + 20):
        child = RenderNode(f"d{i}", "view")
        leaf.children = [child]
        leaf = child
    tree = build_tree(deep)
    assert (tree.node_count, tree.truncated) == (MAX_DEPTH, True)
    small = build_tree(RenderNode("root", "view", children=[RenderNode("a", "view")]))
    assert (small.node_count, small.truncated) == (2, False)
    rig = Rig(tmp_path / "state", max_nodes=5)
    try:
        snap = rig.run(rig.control.snapshot(rig.drinks(), rig.user))
        assert (snap.node_count, snap.truncated) == (5, True)
    finally:
        rig.close()


def test_every_act_is_audited_with_its_error_code(rig: Rig) -> None:
    card = rig.drinks()
    snap = rig.run(rig.control.snapshot(card, rig.user))
    rig.run(rig.control.act(tap(card, OAT, snap.snapshot_id), rig.user))
    rig.run(rig.control.act(tap(card, OAT, snap.snapshot_id), rig.user))
    rig.run(rig.control.act(tap(card, OAT, snap.snapshot_id), MALLORY))
    rig.run(rig.control.act(tap(card, "0.1", snap.snapshot_id, "scroll"), rig.user))
    rig.run(rig.control.act(tap("card-404", OAT, snap.snapshot_id), rig.user))
    got = [(a.user, a.action, a.node_id, a.ok, a.error_code) for a in rig.audits]
    assert got == [
        (rig.user, "tap", OAT, True, None),
        (rig.user, "tap", OAT, False, "stale_control"),
        (MALLORY, "tap", OAT, False, "denied"),
        (rig.user, "scroll", "0.1", False, "unsupported_action"),
        (rig.user, "tap", OAT, False, "not_found"),
    ]
    first = rig.audits[0]
    assert first.skill == SKILL and first.role == "button" and first.label == "燕麦拿铁 Oat Latte ¥32"
    assert first.before and first.after and first.before != first.after  # the tap changed the card
    assert first.at.endswith("Z")
    assert rig.audits[1].before == rig.audits[1].after
    assert rig.audits[4].skill is None and rig.audits[4].before is None


def test_the_mcp_tools(rig: Rig) -> None:
    specs = {s.name: s for s in ui_control_tools(rig.control, lambda _ctx: rig.user)}
    assert list(specs) == ["ui_control__snapshot", "ui_control__find", "ui_control__act", "ui_control__wait_for"]
    for name, spec in specs.items():
        ann = spec.tool.annotations
        assert ann is not None and ann.destructive_hint is False and ann.open_world_hint is False
        assert ann.read_only_hint is (name != "ui_control__act")
        assert spec.tool.meta is not None and spec.tool.meta["skillc/timeoutMs"] > 0
        assert spec.tool.input_schema["type"] == "object"
    assert set(specs["ui_control__act"].tool.input_schema["required"]) == {
        "card_id",
        "node_id",
        "snapshot_id",
        "action",
    }
    assert specs["ui_control__wait_for"].tool.input_schema["properties"]["timeout_s"]["maximum"] == 30

    def call(name: str, arguments: dict[str, Any]) -> CallToolResult:
        result = rig.run(specs[name].handler(None, CallToolRequestParams(name=name, arguments=arguments)))  # type: ignore[arg-type]
        assert isinstance(result, CallToolResult)
        return result

    card = rig.drinks()
    snap = call("ui_control__snapshot", {"card_id": card})
    assert snap.is_error is False and snap.structured_content is not None
    assert snap.structured_content["ok"] and snap.content[0].text.startswith(f"card {card}: ")  # type: ignore[union-attr]
    found = call("ui_control__find", {"card_id": card, "query": "Oat Latte"})
    assert found.structured_content is not None and found.structured_content["matches"][0]["id"] == OAT
    sid = found.structured_content["snapshot_id"]
    acted = call("ui_control__act", {"card_id": card, "node_id": OAT, "snapshot_id": sid, "action": "tap"})
    assert acted.is_error is False and acted.structured_content is not None
    assert acted.structured_content["handled"] == ["onSelect"]
    assert acted.structured_content["follow_up"][0]["api_name"] == "confirmOrder"
    stale = call("ui_control__act", {"card_id": card, "node_id": OAT, "snapshot_id": sid, "action": "tap"})
    assert stale.is_error is False and stale.structured_content is not None
    assert (stale.structured_content["ok"], stale.structured_content["error_code"]) == (False, "stale_control")
    waited = call("ui_control__wait_for", {"card_id": card, "kind": "text_contains", "text": "已选"})
    assert waited.structured_content is not None and waited.structured_content["ok"]
    bad = call("ui_control__act", {"card_id": card, "node_id": OAT})
    assert bad.is_error is True and "snapshot_id" in bad.content[0].text  # type: ignore[union-attr]
    extra = call("ui_control__wait_for", {"card_id": card, "kind": "node_present", "x": 1, "node_id": OAT})
    assert extra.is_error is True
