"""The mount's shortcuts: cards on the same content share one first render, and the card a mount
evicts is detached inside that mount's job, on the thread the new card takes over."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from skillc.ir.diff import patches_to_plain
from skillc.ir.render import RenderNode, json_bytes, to_plain
from skillc.runtime.cards.component_vm import ComponentVm
from skillc.runtime.config import RuntimeConfig

from .test_component_vm import SKILL, Harness


def _alpha(root: RenderNode) -> str:
    return str(next(n.id for n in root.walk() if n.events and n.events["tap"].dataset.get("id") == "a"))


def test_cards_on_the_same_content_render_once_and_each_keeps_its_own_state(tmp_path: Path) -> None:
    h = Harness(SKILL, tmp_path / "state")
    try:
        outcomes = [h.call("showTapper") for _ in range(4)]
        cards = [o.card for o in outcomes]
        assert all(c is not None for c in cards)
        first, second, third, fourth = cards
        assert first is not None and second is not None and third is not None and fourth is not None
        drawn = to_plain(first.document)
        # Every card shows the same document, height and findings as the one that rendered it.
        assert all(to_plain(c.document) == drawn for c in (second, third, fourth))
        assert len({c.content_height for c in (first, second, third, fourth)}) == 1
        assert all([d.code for d in o.diagnostics] == [d.code for d in outcomes[0].diagnostics] for o in outcomes)
        # A view of the kept render knows its size as a result writes it; one drawn anew does not.
        assert first.document_bytes is None and second.document_bytes is None
        assert third.document_bytes == fourth.document_bytes == len(json_bytes(drawn))
        # The third card took the second's render: no renderer state until something needs it.
        live, drew = h.host._live.peek(third.card_id), h.host._live.peek(first.card_id)
        assert live is not None and drew is not None
        assert live.card._unrendered is not None and drew.card._unrendered is None
        # Their views share the kept document and its wire form, made once when it was kept.
        assert third.document is fourth.document
        assert third.wire(with_data=False)["document"] is fourth.wire(with_data=False)["document"]
        assert third.wire(with_data=False)["document"] == drawn

        # A tap on the card that took the kept render patches it as a tap on the first one does.
        node = _alpha(third.document.root)
        tapped = h.run(h.host.event(third.card_id, node))
        reference = h.run(h.host.event(first.card_id, node))
        assert tapped.handled == reference.handled == ["onPick"]
        assert patches_to_plain(tapped.patches) == patches_to_plain(reference.patches) != []
        # The tap drew into the third card's own state: the views taken before it are unchanged,
        # the shared document and wire form included, and a view taken now shows the tap.
        assert to_plain(third.document) == to_plain(fourth.document) == drawn
        assert third.wire(with_data=False)["document"] == fourth.wire(with_data=False)["document"] == drawn
        now = h.run(h.host.card(third.card_id))
        assert now is not None and to_plain(now.document) != drawn
        assert now.wire(with_data=False)["document"] == to_plain(now.document)
        # The second card drew the kept copy; its tap changes its own document, not the copy.
        h.run(h.host.event(second.card_id, node))
        fifth = h.call("showTapper").card
        assert fifth is not None and to_plain(fifth.document) == drawn
        assert fifth.wire(with_data=False)["document"] == drawn
        untouched = h.run(h.host.card(fourth.card_id))
        assert untouched is not None and to_plain(untouched.document) == drawn and untouched.data["picked"] == ""
    finally:
        h.close()


def test_an_evicted_card_is_detached_by_the_mount_that_takes_its_place(tmp_path: Path) -> None:
    h = Harness(SKILL, tmp_path / "state", max_cards=1, threads=2)
    try:
        first = h.call("showTapper").card
        assert first is not None
        evicted = h.host._live.peek(first.card_id)
        assert evicted is not None
        second = h.call("showGoodCard").card
        assert second is not None
        taking = h.host._live.peek(second.card_id)
        # The new card runs on the evicted card's thread, and the eviction needed no job of its own:
        # the evicted card is detached by the time the call answers.
        assert taking is not None and taking.executor is evicted.executor
        assert evicted.card.dead and not h.host._evicting
        assert h.host._live.peek(first.card_id) is None
        view = h.run(h.host.card(first.card_id))  # rebuilt from its persisted data, as before
        assert view is not None and view.data["label"] == first.data["label"]
    finally:
        h.close()


def test_a_mounted_card_collects_cycles_at_quickjs_default(tmp_path: Path) -> None:
    """A card lives on between taps: after its mount its context no longer waits for 1/8 of its
    memory limit before collecting cycles (a server holds many cards)."""
    h = Harness(SKILL, tmp_path / "state")
    try:
        card = h.call("showTapper").card
        assert card is not None
        live = h.host._live.peek(card.card_id)
        assert live is not None and live.card.vm is not None
        native = live.card.vm.session._native
        assert native is not None and native.gc_threshold == 256 << 10
    finally:
        h.close()


def test_an_evicted_card_runs_detached_without_collecting_what_its_release_frees(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past its mount a card collects at QuickJS's default, so the first allocation of its next job
    would run a collection; for detached, the last job before the context is released, that
    collection would free nothing the release does not, so it runs with the late threshold again."""
    seen: list[tuple[str, int]] = []
    lifetime = ComponentVm.lifetime

    def watched(vm: ComponentVm, name: str) -> Any:
        native = vm.session._native
        assert native is not None
        seen.append((name, native.gc_threshold))
        return lifetime(vm, name)

    monkeypatch.setattr(ComponentVm, "lifetime", watched)
    h = Harness(SKILL, tmp_path / "state", max_cards=1, threads=1)
    try:
        assert h.call("showTapper").card is not None
        assert h.call("showTapper").card is not None  # evicts the first
    finally:
        h.close()
    limit = RuntimeConfig(state_dir=tmp_path).memory_limit
    assert [s for s in seen if s[0] == "detached"][:1] == [("detached", limit // 8)]
    assert ("attached", limit // 8) in seen  # a mount's own lifetimes run late too
