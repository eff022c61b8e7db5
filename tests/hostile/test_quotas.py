"""Class 6 of the hardening issue: quotas on what a card produces.

A card event yields at most ``card_max_actions`` actions (a follow-up message costs one more per
api/call block, since each becomes a tools/call), with one ``CMPVM017`` however many were dropped;
the MCP Apps view runs no more than that either. A card's data is capped (tests/hostile/test_bounds.py),
and the card table is pruned on a cadence: expired and evicted rows past an age, then the oldest
beyond a row count and a byte size, never a live card's row.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from skillc.diagnostics import DiagnosticSink
from skillc.frontend.package import load_skill
from skillc.runtime.api.api_runtime import ApiRuntime
from skillc.runtime.cards.card_models import (
    EventOutcome,
    ExpirePreviousCards,
    SendFollowUpMessage,
    TextBlock,
    TriggerEvent,
)
from skillc.runtime.config import RuntimeConfig
from skillc.runtime.state import StateStore, open_state, state_url_of
from tests.hostile.cards import Comp, Host, card_skill, codes, contained, message_of
from tests.hostile.harness import Served, api, benign_skill, serve, while_attacking, write_skill

SECONDS = 12.0  # CPU seconds; unbounded, these ran for tens of seconds
MEGABYTES = 200.0
TAP = '<view bindtap="onTap">tap</view>'
FOLLOW = "getContext(this).sendFollowUpMessage"

COMPS = {
    "follow-10000": Comp(
        TAP,
        on_result="",
        on_tap=(
            "const c = wx.modelContext.getContext(this); "
            "for (let i = 0; i < 10000; i++) c.sendFollowUpMessage({content: [{type: 'text', text: 'hi ' + i}]})"
        ),
    ),
    "calls-10000": Comp(
        TAP,
        on_result="",
        on_tap=(
            "const blocks = [{type: 'text', text: 'go'}]; for (let i = 0; i < 10000; i++) "
            "blocks.push({type: 'api/call', data: {name: 'small', arguments: {i}}}); "
            "wx.modelContext.getContext(this)"
            ".sendFollowUpMessage({content: blocks, fail: (e) => this.setData({err: e.errMsg})})"
        ),
    ),
    "expire-10000": Comp(
        TAP,
        on_result="",
        on_tap=(
            "const v = wx.modelContext.getViewContext(this); "
            "for (let i = 0; i < 10000; i++) v.expirePreviousCards({componentPaths: ['components/small/index']})"
        ),
    ),
    "trigger-10000": Comp(TAP, on_result="", on_tap="for (let i = 0; i < 10000; i++) this.triggerEvent('x', {i})"),
    "mount-10000": Comp(TAP, on_result="for (let i = 0; i < 10000; i++) this.triggerEvent('x', {i})"),
    "small": Comp("<view>{{n}}</view>", structured={"n": 1}),
    "blob": Comp("<view>{{n}}</view>", on_result="this.setData({blob: 'x'.repeat(100000)})"),
}

CAPPED = "this event's actions would number 21, more than the limit of 20 (card_max_actions); the action was dropped"


@pytest.fixture(scope="module")
def h(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Host]:
    root = tmp_path_factory.mktemp("quotas")
    host = Host(card_skill(root, "quotas", COMPS), root / "state")
    assert host.call("small").card is not None  # warm
    yield host
    host.close()


def _tap(h: Host, api_name: str) -> EventOutcome:
    card = h.call(api_name).card
    assert card is not None
    ev, seconds, peak = contained(lambda: h.tap(card.card_id))
    assert seconds < SECONDS, f"{api_name}: {seconds:.1f} s"
    assert peak < MEGABYTES, f"{api_name}: {peak:.0f} MB"
    return ev


def test_ten_thousand_follow_up_messages_give_twenty_actions(h: Host) -> None:
    ev = _tap(h, "follow-10000")
    assert len(ev.actions) == 20
    assert all(isinstance(a, SendFollowUpMessage) for a in ev.actions)
    texts = [
        b.text
        for a in ev.actions
        if isinstance(a, SendFollowUpMessage)
        for b in a.content[:1]
        if isinstance(b, TextBlock)
    ]
    assert texts == [f"hi {i}" for i in range(20)]
    assert codes(ev.diagnostics).count("CMPVM017") == 1
    assert message_of(ev.diagnostics, "CMPVM017") == "sendFollowUpMessage: " + CAPPED


def test_the_quota_is_per_event(h: Host) -> None:
    card = h.call("trigger-10000").card
    assert card is not None
    for _ in range(3):
        ev = h.tap(card.card_id)
        assert len(ev.actions) == 20 and all(isinstance(a, TriggerEvent) for a in ev.actions)
        assert message_of(ev.diagnostics, "CMPVM017") == "triggerEvent: " + CAPPED


def test_one_message_with_ten_thousand_api_calls_is_refused(h: Host) -> None:
    ev = _tap(h, "calls-10000")
    assert ev.actions == []
    message = (
        "sendFollowUpMessage: this event's actions would number 10001, more than the limit of 20 "
        "(card_max_actions); the action was dropped"
    )
    assert message_of(ev.diagnostics, "CMPVM017") == message
    view = h.run(h.host.card(ev.card_id))
    assert view.data["err"] == "sendFollowUpMessage:fail " + message  # the skill is told


def test_ten_thousand_expiries_run_twenty_times(h: Host) -> None:
    for _ in range(3):
        assert h.call("small").card is not None
    ev = _tap(h, "expire-10000")
    assert len(ev.actions) == 20 and all(isinstance(a, ExpirePreviousCards) for a in ev.actions)
    first = ev.actions[0]
    assert (
        isinstance(first, ExpirePreviousCards) and len(first.expired) >= 3
    )  # the first one expired the small cards; the rest find none
    assert message_of(ev.diagnostics, "CMPVM017") == "expirePreviousCards: " + CAPPED


def test_actions_at_mount_are_capped_too(h: Host) -> None:
    out, seconds, peak = contained(lambda: h.call("mount-10000"))
    assert seconds < SECONDS and peak < MEGABYTES
    assert out.card is not None
    assert len(out.actions) == 20
    assert message_of(out.diagnostics, "CMPVM017") == "triggerEvent: " + CAPPED


def test_an_api_expires_cards_at_most_card_max_actions_times_per_call(tmp_path: Path) -> None:
    """expireAllCards in an API is bounded like a card event: 20 actions, one RUN045, the rest fail."""
    index = (
        "const skill = wx.modelContext.createSkill('expirer')\n"
        "skill.registerAPI('expireMany', async () => { let failed = 0, first = ''\n"
        "  for (let i = 0; i < 100000; i++) {\n"
        "    try { wx.modelContext.expireAllCards({ componentPaths: ['components/a/index'] }) }\n"
        "    catch (e) { failed++; first = first || String(e.message) } }\n"
        "  return { content: [{ type: 'text', text: failed + ' ' + first }] } })\n"
    )
    skill = write_skill(tmp_path, "expirer", index, [api("expireMany")])
    pkg = load_skill(skill, DiagnosticSink())
    assert pkg is not None
    runtime = ApiRuntime(pkg, RuntimeConfig(state_dir=tmp_path / "state"))
    try:
        outcome, seconds, peak = contained(lambda: asyncio.run(runtime.call("expireMany", {})))
    finally:
        runtime.close()
    assert seconds < SECONDS and peak < MEGABYTES
    message = "expireAllCards: more than 20 card actions in one call (card_max_actions); dropped"
    assert outcome.result.text == f"99980 expireAllCards:fail {message}"
    assert len(outcome.card_actions) == 20
    assert [(d.code, d.message) for d in outcome.diagnostics] == [("RUN045", message)]


# -- the card table -------------------------------------------------------------------------------


def _store(state: Path) -> StateStore:
    """The store the host of ``state`` writes (SQLite there, or PostgreSQL under --state-store)."""
    return open_state(state_url_of(RuntimeConfig(state_dir=state)))


def _rows(state: Path) -> tuple[int, int]:
    [(n, size)] = _store(state).execute("SELECT COUNT(*), COALESCE(SUM(length(data) + length(record)), 0) FROM cards")
    return int(n), int(size)


def test_the_card_table_stays_within_its_rows(tmp_path: Path) -> None:
    skill = card_skill(tmp_path, "quotas", COMPS)
    h = Host(skill, tmp_path / "state", max_cards=4, card_table_max_rows=30, card_table_prune_every=10)
    try:
        counts = []
        for _ in range(200):
            assert h.call("small").card is not None
            counts.append(_rows(tmp_path / "state")[0])
        assert max(counts) <= 30 + 10  # pruned back to 30 every 10 calls
        assert counts[-1] <= 40
        live = h.host._live.keys()
        assert len(live) == 4
        for card_id in live:  # live cards keep their rows (and so survive eviction)
            assert h.host.store.load(card_id) is not None
        assert h.host.store.load("card-1") is None  # the oldest evicted row went
        assert h.run(h.host.card("card-1")) is None
    finally:
        h.close()


def test_the_card_table_stays_within_its_bytes(tmp_path: Path) -> None:
    skill = card_skill(tmp_path, "quotas", COMPS)
    h = Host(skill, tmp_path / "state", max_cards=2, card_table_max_bytes=1 << 20, card_table_prune_every=5)
    try:
        sizes = []
        for _ in range(60):  # 100 KB each: 6 MB unpruned
            assert h.call("blob").card is not None
            sizes.append(_rows(tmp_path / "state")[1])
        assert max(sizes) <= (1 << 20) + 5 * 101_000
    finally:
        h.close()


def test_expired_and_evicted_rows_go_after_their_age(tmp_path: Path) -> None:
    skill = card_skill(tmp_path, "quotas", COMPS)
    h = Host(skill, tmp_path / "state", max_cards=4, card_table_prune_every=1000, card_table_max_age_days=1)
    try:
        ids = []
        for _ in range(8):  # the first call pruned (nothing yet)
            card = h.call("small").card
            assert card is not None
            ids.append(card.card_id)
        h.run(h.host.expire([ids[-1]]))  # live but expired
        old = time.time() - 2 * 86400
        store = _store(tmp_path / "state")
        if store.kind == "sqlite":
            store.execute("UPDATE cards SET record = json_set(record, '$.created', ?)", (old,))
        else:
            store.execute(
                "UPDATE cards SET record = jsonb_set(record::jsonb, '{created}', to_jsonb(?::float8))::text", (old,)
            )
        h.host._calls = 0  # the next call prunes
        _, seconds, _ = contained(lambda: h.call("small"))
        assert seconds < SECONDS
        kept = {i for i in ids if h.host.store.load(i) is not None}
        assert kept == set(ids[4:7])  # live and not expired; evicted (0-3) and expired (7) went
    finally:
        h.close()


# -- served: the view's event tool, with a benign skill answering meanwhile -----------------------


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("served")
    attacker = card_skill(root, "attacker", {"follow-10000": COMPS["follow-10000"]})
    with serve(attacker, benign_skill(root), state=root / "state") as s:
        yield s


def test_a_served_tap_of_ten_thousand_messages_is_capped(served: Served) -> None:
    card = served.call("follow-10000").result["_meta"]["skillc/card"]
    node = next(n for n in _walk(card["document"]["root"]) if n.get("events"))
    args = {"cardId": card["cardId"], "nodeId": node["id"], "event": "tap"}
    cpu = served.cpu_seconds()
    attack, probe = while_attacking(served, ("skillc_card_event", args), ("ping", {}))
    spent = served.cpu_seconds() - cpu
    assert spent < SECONDS, f"{spent:.1f} CPU seconds in the server"
    assert probe.text == "pong"
    result = attack.result
    assert len(result["structuredContent"]["actions"]) == 20
    diags = result["_meta"]["skillc/diagnostics"]
    assert [d["message"] for d in diags if d["code"] == "CMPVM017"] == ["sendFollowUpMessage: " + CAPPED]


def _walk(node: dict[str, object]) -> Iterator[dict[str, object]]:
    yield node
    for child in node.get("children") or []:  # type: ignore[attr-defined]
        yield from _walk(child)
