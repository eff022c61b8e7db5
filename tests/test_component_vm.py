"""The Atomic Component VM and the card host: lifecycle, fallbacks, events, actions, state."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from skillc.diagnostics import DiagnosticSink
from skillc.frontend.package import load_skill
from skillc.ir.render import RenderNode
from skillc.runtime.api.api_runtime import ApiRuntime
from skillc.runtime.cards.card_host import CardHost
from skillc.runtime.cards.card_models import (
    CallOutcome,
    OpenDetailPage,
    SetRelatedPage,
    TriggerEvent,
    UpdateModelContext,
)
from skillc.runtime.config import RuntimeConfig

from .conftest import COFFEE, FIXTURES

SKILL = FIXTURES / "cards" / "throwing-skill"


class Harness:
    """A card host on a private event loop; each call runs to completion."""

    def __init__(self, skill: Path, state: Path, **kw: Any) -> None:
        pkg = load_skill(skill, DiagnosticSink())
        assert pkg is not None
        self.runtime = ApiRuntime(pkg, RuntimeConfig(state_dir=state))
        counter = itertools.count(1)
        self.loop = asyncio.new_event_loop()
        self.host = CardHost(self.runtime, card_ids=lambda: f"card-{next(counter)}", **kw)
        self.ctx = self.runtime.context(session_id="s1")

    def run(self, coro: Any) -> Any:
        return self.loop.run_until_complete(coro)

    def call(self, api: str, args: dict[str, Any] | None = None, **kw: Any) -> CallOutcome:
        outcome: CallOutcome = self.run(self.host.call(api, args or {}, self.ctx, **kw))
        return outcome

    def close(self) -> None:
        self.run(self.host.close())
        self.runtime.close()
        self.loop.close()


@pytest.fixture
def h(tmp_path: Path) -> Iterator[Harness]:
    harness = Harness(SKILL, tmp_path / "state")
    yield harness
    harness.close()


def node_by_handler(root: RenderNode, handler: str) -> RenderNode:
    node: RenderNode = next(
        n for n in root.walk() if n.events and n.events.get("tap") and n.events["tap"].handler == handler
    )
    return node


@pytest.mark.parametrize(
    ("api", "code", "message"),
    [
        ("showThrowCreated", "CMPVM002", "threw in lifetimes.created: Error: created exploded"),
        (
            "showThrowAttached",
            "CMPVM002",
            "threw in lifetimes.attached: TypeError: cannot set property 'field' of undefined",
        ),
        (
            "showThrowResult",
            "CMPVM003",
            "threw in its Result notification handler: TypeError: cannot read property 'here' of undefined",
        ),
        ("showThrowAsync", "CMPVM003", "threw in its Result notification handler"),
    ],
)
def test_a_throwing_component_falls_back_and_the_next_card_still_renders(
    h: Harness, api: str, code: str, message: str
) -> None:
    out = h.call(api, {"label": "x"})
    assert out.card is None
    assert out.fallback is not None
    assert out.fallback.structured_content["label"] == "x"
    assert out.fallback.text == "shown x"
    diag = next(d for d in out.diagnostics if d.code == code)
    assert message in diag.message
    assert diag.severity.value == "error"
    if api != "showThrowAsync":
        assert diag.file is not None and diag.file.endswith("/index.js") and diag.span is not None
    good = h.call("showGoodCard", {"label": "fine"})
    assert good.card is not None and good.fallback is None
    assert good.card.document.root.text_content() == "fine"


def test_the_fallback_builds_a_cardspec_card_in_the_driver(h: Harness) -> None:
    from skillc.backends.cardspec_fallback import fallback_card

    out = h.call("showThrowCreated")
    assert out.fallback is not None
    card = fallback_card(out.fallback.structured_content, title=out.fallback.title, text=out.fallback.text)
    assert card["type"] == "AdaptiveCard" and "Alpha" in str(card)


def test_no_component_gives_a_generic_card_and_no_data_plain_text(h: Harness) -> None:
    data = h.call("noComponent")
    assert data.card is None and data.fallback is not None
    assert data.fallback.reason == "noComponent has no component" and data.fallback.structured_content == {"total": 3}
    text = h.call("plainText")
    assert text.card is None and text.fallback is None and text.api.result.text == "just text"


def test_lifecycle_order_dimensions_and_properties(h: Harness) -> None:
    out = h.call("showTapper", {"label": "L"})
    assert out.card is not None
    data = out.card.data
    # WeChat's order: attached, then the notifications (tests/test_lifecycle_order.py)
    assert data["log"] == ["attached:375x375:list", "input:L", "result"]
    assert data["mode"] == "list"
    assert out.card.dimensions.wire() == {"minHeight": 93, "maxHeight": 375, "width": 375}


def test_a_tap_runs_the_handler_setdata_paths_callbacks_and_observers(h: Harness) -> None:
    card = h.call("showTapper").card
    assert card is not None
    beta = next(n for n in card.document.root.walk() if n.events and n.events["tap"].dataset.get("id") == "b")
    ev = h.run(h.host.event(card.card_id, beta.id))
    assert ev.handled == ["onPick"]
    assert ev.diagnostics == []
    view = h.run(h.host.card(card.card_id))
    assert view is not None
    assert view.data["picked"] == "b"
    assert view.data["items"][1]["price"] == 12  # 'items[1].price' path key
    assert view.data["count"] == 1  # the setData callback ran after the render
    assert view.data["seen"] == [1]  # the observer on count fired
    texts = [p for p in ev.patches if p.op == "setText"]
    assert {p.id for p in texts} >= {beta.id + ".0.0"}


def test_a_tap_bubbles_from_an_inner_node_to_the_bound_ancestor(h: Harness) -> None:
    card = h.call("showTapper").card
    assert card is not None
    alpha = next(n for n in card.document.root.walk() if n.events and n.events["tap"].dataset.get("id") == "a")
    inner = alpha.children[0] if alpha.children else alpha
    ev = h.run(h.host.event(card.card_id, inner.id))
    assert ev.handled == ["onPick"]
    view = h.run(h.host.card(card.card_id))
    assert view is not None and view.data["picked"] == "a"


def test_event_handler_errors_keep_the_card(h: Harness) -> None:
    card = h.call("showTapper").card
    assert card is not None
    root = card.document.root
    boom = h.run(h.host.event(card.card_id, node_by_handler(root, "onBoom").id))
    assert [(d.code, d.message) for d in boom.diagnostics] == [
        ("CMPVM004", "components/tapper/index.onBoom threw: TypeError: tap exploded (at components/tapper/index.js:29)")
    ]
    missing = h.run(h.host.event(card.card_id, node_by_handler(root, "onMissing").id))
    assert [(d.code, d.message) for d in missing.diagnostics] == [
        (
            "CMPVM005",
            f'components/tapper/index has no method "onMissing" for the tap on {node_by_handler(root, "onMissing").id}',
        )
    ]
    nowhere = h.run(h.host.event(card.card_id, "no-such-node"))
    assert [d.code for d in nowhere.diagnostics] == ["CMPVM012"]
    bad_key = h.run(h.host.event(card.card_id, node_by_handler(root, "onBadKey").id))
    assert sorted(d.message for d in bad_key.diagnostics) == [
        'setData: "a..b" is not a data path; the key is ignored',
        'setData: the value of "gone" is undefined; the key is ignored',
    ]


def test_send_follow_up_message_is_validated(h: Harness) -> None:
    card = h.call("showTapper").card
    assert card is not None
    root = card.document.root
    bad = h.run(h.host.event(card.card_id, node_by_handler(root, "onBadFollowUp").id))
    assert bad.actions == []
    assert [(d.code, d.message) for d in bad.diagnostics] == [
        ("CMPVM006", "sendFollowUpMessage: the first block must be {type: 'text', text}")
    ]
    unknown = h.run(h.host.event(card.card_id, node_by_handler(root, "onUnknownApi").id))
    assert unknown.actions == []
    assert [(d.code, d.message) for d in unknown.diagnostics] == [
        ("CMPVM006", 'sendFollowUpMessage: api/call names "nope", which mcp.json does not declare')
    ]


def test_view_actions_are_recorded_and_a_static_card_has_no_request_or_timers(h: Harness) -> None:
    card = h.call("showTapper").card
    assert card is not None
    ev = h.run(h.host.event(card.card_id, node_by_handler(card.document.root, "onDetail").id))
    assert [type(a) for a in ev.actions] == [OpenDetailPage, SetRelatedPage, TriggerEvent, UpdateModelContext]
    assert [a.wire() for a in ev.actions] == [
        {"type": "openDetailPage", "cardId": card.card_id, "url": "/pages/detail/detail?id=1"},
        {"type": "setRelatedPage", "cardId": card.card_id, "query": "orderId=1"},
        {"type": "triggerEvent", "cardId": card.card_id, "name": "picked", "detail": {"id": "a"}},
        {"type": "updateModelContext", "cardId": card.card_id, "content": [{"type": "text", "text": "saw the detail"}]},
    ]
    # The second updateModelContext gave an image block: refused, said, not sent.
    assert [(d.code, d.message) for d in ev.diagnostics if d.code == "CMPVM013"] == [
        ("CMPVM013", "updateModelContext: content must be an array of {type: 'text', text} blocks")
    ]
    view = h.run(h.host.card(card.card_id))
    # wx.request is a stub that fails naming scope.dynamic (tests/test_unavailable_apis.py)
    assert view is not None and view.data["hasRequest"] == "function" and view.data["hasTimer"] == "undefined"


def test_expire_notifies_the_card_and_later_taps_are_ignored(h: Harness) -> None:
    card = h.call("showTapper").card
    assert card is not None
    (out,) = h.run(h.host.expire([card.card_id]))
    assert out.document is not None and "expired" in out.document.root.text_content()
    view = h.run(h.host.card(card.card_id))
    assert view is not None and view.expired and view.expired_text == "服务已过期"
    alpha = next(n for n in view.document.root.walk() if n.events and n.events["tap"].dataset.get("id") == "a")
    ignored = h.run(h.host.event(card.card_id, alpha.id))
    assert ignored.handled == [] and ignored.patches == []
    assert [d.code for d in ignored.diagnostics] == ["CMPVM012"]


def test_an_evicted_card_is_rebuilt_from_its_persisted_data(tmp_path: Path) -> None:
    h = Harness(SKILL, tmp_path / "state", max_cards=1)
    try:
        first = h.call("showTapper").card
        assert first is not None
        alpha = next(n for n in first.document.root.walk() if n.events and n.events["tap"].dataset.get("id") == "a")
        h.run(h.host.event(first.card_id, alpha.id))
        h.call("showGoodCard")  # evicts the first card (LRU bound 1)
        view = h.run(h.host.card(first.card_id))
        assert view is not None and view.data["picked"] == "a" and view.data["count"] == 1
        again = h.run(h.host.event(first.card_id, alpha.id))
        assert again.handled == ["onPick"]
        assert any(d.code == "CMPVM014" for d in again.diagnostics) or again.diagnostics == []
    finally:
        h.close()
    # A restart: a new host on the same state database rebuilds the card too.
    h2 = Harness(SKILL, tmp_path / "state")
    try:
        view = h2.run(h2.host.card(first.card_id))
        assert view is not None and view.data["count"] == 2 and view.data["picked"] == "a"
    finally:
        h2.close()


def test_an_unknown_card_is_reported(h: Harness) -> None:
    ev = h.run(h.host.event("card-404", "root"))
    assert [(d.code, d.message) for d in ev.diagnostics] == [
        ("CMPVM012", "there is no card 'card-404' for throwing-skill")
    ]


def test_an_endless_loop_in_a_handler_is_stopped_at_the_deadline(tmp_path: Path) -> None:
    root = tmp_path / "skill"
    import shutil

    shutil.copytree(SKILL, root)
    js = root / "components" / "tapper" / "index.js"
    js.write_text(
        js.read_text().replace("onBoom () { throw new TypeError('tap exploded') }", "onBoom () { while (true) {} }")
    )
    h = Harness(root, tmp_path / "state", slice_timeout_s=0.2)
    try:
        card = h.call("showTapper").card
        assert card is not None
        ev = h.run(h.host.event(card.card_id, node_by_handler(card.document.root, "onBoom").id))
        assert [(d.code, d.message) for d in ev.diagnostics] == [
            ("CMPVM011", "components/tapper/index ran past its 0.2 s deadline and was stopped")
        ]
        assert h.call("showGoodCard").card is not None
    finally:
        h.close()


def test_approval_is_per_call(tmp_path: Path) -> None:
    h = Harness(COFFEE, tmp_path / "state")
    try:
        refused = h.call("confirmOrder", {"drinkId": "d01"})
        assert refused.api.result.is_error and refused.card is None and refused.fallback is None
        approved = h.call("confirmOrder", {"drinkId": "d01"}, approve=True)
        assert approved.card is not None and approved.card.component_path == "components/order-confirm/index"
    finally:
        h.close()


def test_the_incremental_height_estimate_equals_a_full_one(h: Harness) -> None:
    from skillc.runtime.cards.card_layout import HeightCache, estimate_height

    card = h.call("showTapper").card
    assert card is not None
    beta = next(n for n in card.document.root.walk() if n.events and n.events["tap"].dataset.get("id") == "b")
    ev = h.run(h.host.event(card.card_id, beta.id))
    assert ev.document is not None
    full = estimate_height(ev.document.root, 375)
    assert ev.content_height == pytest.approx(full)
    assert HeightCache(375).measure(ev.document.root) == pytest.approx(full)


def test_cards_mounted_on_the_same_data_lay_out_once_and_still_measure_their_taps(
    h: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    from skillc.runtime.cards import card_layout
    from skillc.runtime.cards.card_layout import estimate_height

    layouts: list[str] = []
    real = card_layout.HeightCache.measure

    def counted(self: card_layout.HeightCache, root: RenderNode, dirty: set[str] | None = None) -> float:
        layouts.append("full" if dirty is None else "patch")
        return real(self, root, dirty)

    monkeypatch.setattr(card_layout.HeightCache, "measure", counted)
    first, second = h.call("showTapper").card, h.call("showTapper").card
    assert first is not None and second is not None and first.card_id != second.card_id
    assert layouts == ["full"]  # the second card's height came from the first's layout
    assert second.content_height == first.content_height == pytest.approx(estimate_height(first.document.root, 375))
    # The second card measures on its first tap (from nothing kept), and gets the full estimate.
    beta = next(n for n in second.document.root.walk() if n.events and n.events["tap"].dataset.get("id") == "b")
    ev = h.run(h.host.event(second.card_id, beta.id))
    assert ev.document is not None
    assert ev.content_height == pytest.approx(estimate_height(ev.document.root, 375))


def test_cards_on_different_data_or_viewports_each_lay_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from skillc.ir.viewport import Viewport
    from skillc.runtime.cards import card_layout
    from skillc.runtime.cards.card_layout import estimate_height

    layouts: list[float] = []
    real = card_layout.HeightCache.measure

    def counted(self: card_layout.HeightCache, root: RenderNode, dirty: set[str] | None = None) -> float:
        height = real(self, root, dirty)
        layouts.append(height)
        return height

    monkeypatch.setattr(card_layout.HeightCache, "measure", counted)
    coffee = Harness(COFFEE, tmp_path / "state")
    try:
        latte = coffee.call("searchDrinks", {"keyword": "latte"}).card
        tea = coffee.call("searchDrinks", {"keyword": "tea"}).card
        narrow = coffee.run(
            coffee.host.show(
                "searchDrinks",
                coffee.call("searchDrinks", {"keyword": "latte"}, mount=False).api.result,
                {"keyword": "latte"},
                coffee.ctx,
                viewport=Viewport(width=200),
            )
        ).card
    finally:
        coffee.close()
    assert latte is not None and tea is not None and narrow is not None
    assert len(layouts) == 3  # latte, tea (other data), latte at 200px (other viewport)
    for card, width in ((latte, 375), (tea, 375), (narrow, 200)):
        assert card.content_height == pytest.approx(estimate_height(card.document.root, width))


# -- the card surface of docs/compatibility.md (fixture: tests/fixtures/cards/surface-skill) --------

SURFACE = FIXTURES / "cards" / "surface-skill"


@pytest.fixture
def surface(tmp_path: Path) -> Iterator[Harness]:
    harness = Harness(SURFACE, tmp_path / "state")
    yield harness
    harness.close()


def _mounted(h: Harness) -> tuple[str, RenderNode]:
    out = h.call("showSurface")
    assert out.card is not None and out.diagnostics == []
    return out.card.card_id, out.card.document.root


def _first_child(node: RenderNode) -> str:
    assert node.children
    return node.children[0].id


def test_bindtap_bubbles_to_the_ancestors_and_catchtap_stops_it(surface: Harness) -> None:
    card_id, root = _mounted(surface)
    bubbled = surface.run(surface.host.event(card_id, _first_child(node_by_handler(root, "onInner"))))
    caught = surface.run(surface.host.event(card_id, _first_child(node_by_handler(root, "onCaught"))))
    assert (bubbled.handled, bubbled.diagnostics) == (["onInner", "onOuter"], [])
    assert (caught.handled, caught.diagnostics) == (["onCaught"], [])
    view = surface.run(surface.host.card(card_id))
    assert view is not None and view.data["log"] == ["inner", "outer", "caught"]


def test_an_image_load_and_error_reach_their_handlers_with_their_detail(surface: Harness) -> None:
    card_id, root = _mounted(surface)
    image = next(n for n in root.walk() if n.type == "image")
    loaded = surface.run(surface.host.event(card_id, image.id, "load", {"width": 80, "height": 60}))
    failed = surface.run(surface.host.event(card_id, image.id, "error"))
    assert (loaded.handled, failed.handled) == (["onLoad"], ["onError"])  # neither bubbles to onOuter
    view = surface.run(surface.host.card(card_id))
    assert view is not None and view.data["log"] == ['load load {"width":80,"height":60}', "error error {}"]


def test_a_card_has_storage_device_and_app_info_and_expires_cards(surface: Harness) -> None:
    card_id, root = _mounted(surface)
    ev = surface.run(surface.host.event(card_id, node_by_handler(root, "onHost").id))
    assert (ev.handled, ev.diagnostics) == (["onHost"], [])
    assert [a.wire() for a in ev.actions] == [
        {
            "type": "expireAllCards",
            "cardId": card_id,
            "componentPaths": ["components/surface/index"],
            "expired": [card_id],
        }
    ]
    view = surface.run(surface.host.card(card_id))
    assert view is not None and view.expired
    assert view.data["host"] == {"seen": {"n": 1}, "keys": ["seen"], "brand": "skillc", "sdk": "3.16.1"}


def test_reapply_api_call_runs_the_cards_api_again_with_the_new_arguments(surface: Harness) -> None:
    card_id, root = _mounted(surface)
    ev = surface.run(surface.host.event(card_id, node_by_handler(root, "onReapply").id))
    assert [a.wire() for a in ev.actions] == [
        {"type": "api/call", "cardId": card_id, "name": "showSurface", "arguments": {"label": "again"}}
    ]
    [again] = surface.run(surface.host.follow(ev.actions[0]))
    assert again.api.result.text == "surface again"
    assert again.card is not None and again.card.card_id != card_id and again.card.data["label"] == "again"
    bad = surface.run(surface.host.event(card_id, node_by_handler(root, "onBadReapply").id))
    assert bad.actions == []
    assert [(d.code, d.message) for d in bad.diagnostics] == [
        ("CMPVM013", "reapplyApiCall: arguments must be an object")
    ]


def test_a_card_taller_than_max_height_is_reported_once_and_notified(surface: Harness) -> None:
    card_id, root = _mounted(surface)
    grown = surface.run(surface.host.event(card_id, node_by_handler(root, "onGrow").id))
    assert [(d.code, d.message) for d in grown.diagnostics] == [
        (
            "CMPVM010",
            "components/surface/index renders about 715px tall, more than maxHeight 375px; the rest is clipped",
        )
    ]
    view = surface.run(surface.host.card(card_id))
    assert view is not None and view.data["overflow"] == {"maxHeight": 375, "over": True}
    again = surface.run(surface.host.event(card_id, node_by_handler(root, "onGrow").id))
    assert again.diagnostics == []  # the same height is not reported twice
