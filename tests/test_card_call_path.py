"""The mount's shortcuts: the card a mount evicts is detached inside that mount's job, on the
thread the new card takes over."""

from __future__ import annotations

from pathlib import Path


from .test_component_vm import SKILL, Harness


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
