"""Kept mounts: a card whose mount reached nothing outside its context starts the next card on the
same notifications without a context, and builds one (its mount, run again) only when its code is
needed. A mount that read anything its notifications do not decide is never kept."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from skillc.ir.diff import patches_to_plain
from skillc.ir.render import RenderNode, to_plain
from skillc.runtime.cards.card import Card
from skillc.runtime.cards.kept_mounts import KeptMount, KeptMounts

from .conftest import FIXTURES
from .test_component_vm import Harness

SKILL = FIXTURES / "cards" / "kept-mounts"


def _pick(root: RenderNode, item: str) -> str:
    return str(next(n.id for n in root.walk() if n.events and n.events["tap"].dataset.get("id") == item))


def _card(h: Harness, card_id: str) -> Card:
    live = h.host._live.peek(card_id)
    assert live is not None
    return live.card


def test_a_mount_that_reached_nothing_outside_runs_once_and_a_tap_builds_the_context(tmp_path: Path) -> None:
    h = Harness(SKILL, tmp_path / "state")
    try:
        first, second, third = (h.call("showProbe", {"mode": "pure"}).card for _ in range(3))
        assert first is not None and second is not None and third is not None
        assert len(h.host._kept_mounts) == 1
        # The first card ran the mount; the others took its data and have no context.
        assert _card(h, first.card_id).vm is not None
        assert _card(h, second.card_id).vm is None and _card(h, third.card_id).vm is None
        menu = {"label": "menu", "items": [{"id": "a", "name": "Alpha"}, {"id": "b", "name": "Beta"}]}
        assert first.data == second.data == third.data == {**menu, "picked": "", "note": ""}
        assert to_plain(first.document) == to_plain(third.document)

        # A tap on a card without a context builds one and does what a tap on the first card does.
        node = _pick(third.document.root, "b")
        tapped = h.run(h.host.event(third.card_id, node))
        reference = h.run(h.host.event(first.card_id, node))
        assert tapped.handled == reference.handled == ["onPick"]
        assert patches_to_plain(tapped.patches) == patches_to_plain(reference.patches) != []
        assert _card(h, third.card_id).vm is not None and _card(h, second.card_id).vm is None
        view = h.run(h.host.card(third.card_id))
        assert view is not None and view.data["picked"] == "b" and view.data["note"] == "menu:b"

        # Other notifications are another mount: it runs, and is kept in its turn.
        other = h.call("showProbe", {"mode": "pure", "label": "drinks"}).card
        assert other is not None and other.data["label"] == "drinks"
        assert _card(h, other.card_id).vm is not None and len(h.host._kept_mounts) == 2
    finally:
        h.close()


@pytest.mark.parametrize(
    ("mode", "kept"),
    [
        ("console", False),
        ("now", False),
        ("newDate", False),
        ("random", False),
        ("perf", False),
        ("perfOrigin", False),
        ("weakRef", False),
        ("storage", False),
        ("query", False),
        ("warn", False),
        ("expireOthers", False),
        # new Date(ms) is a function of ms, and a card's dimensions follow from its viewport (a key).
        ("fixedDate", True),
        ("dimensions", True),
        ("identities", True),
    ],
)
def test_a_mount_that_read_what_its_notifications_do_not_decide_is_not_kept(
    tmp_path: Path, mode: str, kept: bool
) -> None:
    h = Harness(SKILL, tmp_path / "state")
    try:
        cards = [h.call("showProbe", {"mode": mode}).card for _ in range(2)]
        assert all(c is not None for c in cards)
        assert len(h.host._kept_mounts) == (1 if kept else 0)
        second = cards[1]
        assert second is not None
        assert (_card(h, second.card_id).vm is None) is kept
        assert second.data["note"] == cards[0].data["note"]  # type: ignore[union-attr]
    finally:
        h.close()


@pytest.mark.parametrize(("api", "why"), [("showWithDetached", "a detached lifetime"), ("showTicker", "a timer")])
def test_a_card_whose_context_has_more_to_run_is_not_kept(tmp_path: Path, api: str, why: str) -> None:
    h = Harness(SKILL, tmp_path / "state")
    try:
        cards = [h.call(api).card for _ in range(2)]
        assert all(c is not None for c in cards), why
        assert len(h.host._kept_mounts) == 0, why
        assert all(_card(h, c.card_id).vm is not None for c in cards if c is not None), why
    finally:
        h.close()


def test_expiring_a_card_without_a_context_runs_only_the_handlers_it_has(tmp_path: Path) -> None:
    h = Harness(SKILL, tmp_path / "state")
    try:
        probes = [h.call("showProbe").card for _ in range(2)]
        expiring = [h.call("showExpiring").card for _ in range(2)]
        assert all(c is not None for c in probes + expiring)
        probe, listener = probes[1], expiring[1]
        assert probe is not None and listener is not None
        assert _card(h, probe.card_id).vm is None and _card(h, listener.card_id).vm is None

        # No Expire handler: the card is expired and still has no context.
        h.run(h.host.expire([probe.card_id]))
        assert _card(h, probe.card_id).expired and _card(h, probe.card_id).vm is None
        # An Expire handler: the context is built (the mount again) and the handler runs on its data.
        outcomes = h.run(h.host.expire([listener.card_id]))
        assert _card(h, listener.card_id).vm is not None
        view = h.run(h.host.card(listener.card_id))
        assert view is not None and view.expired and view.data["note"] == "expired menu"
        assert [o.card_id for o in outcomes] == [listener.card_id]
    finally:
        h.close()


def test_a_card_without_a_context_is_evicted_with_nothing_to_detach_and_comes_back(tmp_path: Path) -> None:
    h = Harness(SKILL, tmp_path / "state", max_cards=1)
    try:
        h.call("showProbe")
        kept = h.call("showProbe").card
        assert kept is not None
        evicted = _card(h, kept.card_id)
        assert evicted.vm is None
        h.call("showExpiring")  # takes its place
        assert evicted.dead and evicted.vm is None and h.host._live.peek(kept.card_id) is None
        back = h.run(h.host.card(kept.card_id))  # rebuilt from its persisted data, as any card
        assert back is not None and back.data == kept.data
    finally:
        h.close()


def test_data_another_instance_wrote_reaches_the_context_built_later(tmp_path: Path) -> None:
    h = Harness(SKILL, tmp_path / "state")
    try:
        h.call("showProbe")
        shown = h.call("showProbe").card
        assert shown is not None
        live = h.host._live.peek(shown.card_id)
        assert live is not None and live.card.vm is None
        data: dict[str, Any] = {**shown.data, "label": "written elsewhere"}
        step = h.run(h.host._run(live.executor, live.card.refresh, data))
        assert step.failure is None and live.card.vm is None
        # The tap builds the context from the mount, then gives it the data the card shows.
        tapped = h.run(h.host.event(shown.card_id, _pick(shown.document.root, "a")))
        assert tapped.handled == ["onPick"]
        view = h.run(h.host.card(shown.card_id))
        assert view is not None and view.data["label"] == "written elsewhere"
        assert view.data["note"] == "written elsewhere:a"
    finally:
        h.close()


def test_the_watched_clock_and_randomness_look_as_they_did_to_the_component(tmp_path: Path) -> None:
    h = Harness(SKILL, tmp_path / "state")
    try:
        card = h.call("showProbe", {"mode": "identities"}).card
        assert card is not None and card.data["note"] == "true"
    finally:
        h.close()


def test_kept_mounts_are_bounded_in_count_and_size() -> None:
    mounts = KeptMounts(bound=2, max_bytes=100)
    small = KeptMount('{"a":1}', '{"a": 1}', frozenset({"Result"}))
    for n in range(3):
        mounts.keep(("components/x/index", None, f'{{"input":{n}}}', "{}"), small)
    assert len(mounts) == 2  # the oldest went
    assert mounts.get(("components/x/index", None, '{"input":0}', "{}")) is None
    assert mounts.get(("components/x/index", None, '{"input":2}', "{}")) is small
    big = ("components/x/index", None, "{}", "x" * 90)  # with its data, over 100 bytes
    mounts.keep(big, small)
    assert mounts.get(big) is None and len(mounts) == 2
