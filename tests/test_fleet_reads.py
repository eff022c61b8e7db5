"""Every read is current on every worker and instance: two ``skillc serve --workers 2`` instances on
one state store (PostgreSQL in the PostgreSQL half of ``make test``, else SQLite), each worker of A
holding its own live copy of a card that B then taps. What the ui_control tools read on A
(snapshot, find, wait_for) is the card as B left it, and a snapshot taken on one worker is good on
another while the card has not changed since.

Each worker is reached on a keep-alive connection of its own (``/healthz`` names the pid that
answered), so a test knows which copy it reads.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from skillc.diagnostics import DiagnosticSink
from skillc.frontend.package import load_skill
from skillc.runtime.api.api_runtime import ApiRuntime
from skillc.runtime.cards.card_host import CardHost
from skillc.runtime.cards.card_timers import VirtualClock
from skillc.runtime.config import RuntimeConfig
from tests.conftest import FIXTURES, STATE_STORE_OPTION
from tests.test_multi_instance import ACCEPT, ADD, Instance, InstanceState, count_of, start

WORKERS = 2
COUNT_NODE = "0.1.0"  # the "N taps" text of the counter


def shared_state(request: pytest.FixtureRequest, tmp_path: Path) -> InstanceState:
    """Where both instances keep their state: PostgreSQL under ``--state-store=postgresql`` (the
    PostgreSQL half of ``make test``), else one SQLite folder."""
    if request.config.getoption(STATE_STORE_OPTION) == "postgresql":
        return InstanceState(args=("--state", request.getfixturevalue("postgres_url")))
    return InstanceState(args=("--state-dir", str(tmp_path / "state")))


@pytest.fixture
def fleet(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Instance, Instance]]:
    state = shared_state(request, tmp_path)
    a = start("A", state, "--workers", str(WORKERS))
    try:
        b = start("B", state, "--workers", str(WORKERS))
    except BaseException:
        a.proc.kill()
        a.proc.communicate()
        raise
    try:
        yield a, b
    finally:
        for one in (a, b):
            one.client.close()
            one.proc.terminate()
            try:
                one.proc.communicate(timeout=60)
            except Exception:
                one.proc.kill()
                one.proc.communicate()


def per_worker(instance: Instance) -> list[Instance]:
    """One connection to each worker of ``instance``: new connections until every pid answered
    (the kernel spreads them by a hash of the connection)."""
    base = instance.url.removesuffix("/mcp")
    found: dict[int, Instance] = {}
    for _ in range(400):
        client = httpx.Client(headers=ACCEPT, timeout=60)
        pid = int(client.get(f"{base}/healthz").json()["pid"])
        if pid in found:
            client.close()
        else:
            found[pid] = Instance(f"{instance.name}{len(found) + 1}", instance.url, instance.proc, client)
        if len(found) == WORKERS:
            return list(found.values())
    raise AssertionError(f"{instance.name}: only workers {sorted(found)} answered 400 new connections")


def ui(on: Instance, tool: str, **arguments: Any) -> dict[str, Any]:
    result = on.call(f"ui_control__{tool}", arguments)
    assert result["isError"] is False, result
    out: dict[str, Any] = result["structuredContent"]
    return out


def texts(node: dict[str, Any]) -> list[str]:
    """Every text and label of a snapshot's control tree."""
    own = [t for t in (node.get("text"), node.get("label")) if t]
    return own + [t for child in node.get("children") or [] for t in texts(child)]


def test_snapshot_find_and_wait_for_on_every_worker_of_a_see_a_tap_made_on_b(
    fleet: tuple[Instance, Instance],
) -> None:
    a, b = fleet
    card = a.show_counter("cups")
    a_workers, b_workers = per_worker(a), per_worker(b)
    for worker in a_workers:  # each worker of A now holds a live copy at 0 taps
        assert "0 taps" in texts(ui(worker, "snapshot", card_id=card)["root"])
    assert count_of(b_workers[0].tap(card)) == 1  # the count is odd now: an "odd" node appears
    for worker in a_workers:
        snap = ui(worker, "snapshot", card_id=card)
        assert {"1 taps", "odd"} <= set(texts(snap["root"])), (worker.name, snap)
        found = ui(worker, "find", card_id=card, query="odd")
        assert any("odd" in texts(m) for m in found["matches"]), (worker.name, found)
        held = ui(worker, "wait_for", card_id=card, kind="text_equals", node_id=COUNT_NODE, text="1 taps")
        assert held["ok"] is True, (worker.name, held)
    # A wait on A that is already polling when B taps: it sees the tap, well before its timeout.
    not_yet = ui(a_workers[1], "wait_for", card_id=card, kind="text_equals", node_id=COUNT_NODE, text="2 taps",
                 timeout_s=0.3)  # fmt: skip
    assert not_yet["ok"] is False and not_yet["error_code"] == "timeout", not_yet
    with ThreadPoolExecutor(1) as pool:
        waiting = pool.submit(
            ui, a_workers[1], "wait_for", card_id=card, kind="text_equals", node_id=COUNT_NODE, text="2 taps",
            timeout_s=30.0,
        )  # fmt: skip
        assert count_of(b_workers[1].tap(card)) == 2
        held = waiting.result()
    assert held["ok"] is True, held


def test_a_snapshot_taken_on_one_worker_acts_on_another_until_the_card_changes(
    fleet: tuple[Instance, Instance],
) -> None:
    a, b = fleet
    card = a.show_counter("cups")
    a_workers, b_workers = per_worker(a), per_worker(b)
    for worker in [*a_workers, *b_workers]:  # every worker holds a copy, and its own snapshots
        ui(worker, "snapshot", card_id=card)
    taken = ui(a_workers[0], "snapshot", card_id=card)["snapshot_id"]
    acted = ui(b_workers[1], "act", card_id=card, node_id=ADD, action="tap", snapshot_id=taken)
    assert acted["ok"] is True, acted
    # The tap moved the card on: the snapshot from before it is stale on any other worker.
    stale = ui(a_workers[1], "act", card_id=card, node_id=ADD, action="tap", snapshot_id=taken)
    assert stale["ok"] is False and stale["error_code"] == "stale_control", stale
    fresh = ui(b_workers[0], "snapshot", card_id=card)
    assert "1 taps" in texts(fresh["root"])
    again = ui(a_workers[1], "act", card_id=card, node_id=ADD, action="tap", snapshot_id=fresh["snapshot_id"])
    assert again["ok"] is True, again
    assert "2 taps" in texts(ui(a_workers[0], "snapshot", card_id=card)["root"])
    # Made up, or signed for another card: unknown wherever it lands.
    other = a.show_counter("mugs")
    for bogus in (f"{taken[:-1]}0" if not taken.endswith("0") else f"{taken[:-1]}1", taken):
        refused = ui(b_workers[0], "act", card_id=other, node_id=ADD, action="tap", snapshot_id=bogus)
        assert refused["error_code"] == "stale_control", refused


# -- a dynamic card's update stream read through a copy another instance moved past (in one process) --

PICKUP = FIXTURES / "dynamic-cards" / "pickup-skill"
MORE = "0.3"  # the countdown's "再等 10 秒" button: ten seconds more


class PickupHost:
    """A card host of the pickup skill on the shared state, its timers on a virtual clock (they
    fire only when told), on a private event loop: one instance, without a server."""

    def __init__(self, state: Path) -> None:
        pkg = load_skill(PICKUP, DiagnosticSink())
        assert pkg is not None
        self.runtime = ApiRuntime(pkg, RuntimeConfig(state_dir=state, card_timer_min_interval_ms=100))
        self.loop = asyncio.new_event_loop()
        self.host = CardHost(self.runtime, clock=VirtualClock())
        self.ctx = self.runtime.context(session_id="s1")

    def close(self) -> None:
        self.loop.run_until_complete(self.host.close())
        self.runtime.close()
        self.loop.close()


def test_the_update_stream_of_a_copy_another_instance_moved_past_gives_the_whole_card(tmp_path: Path) -> None:
    a, b = PickupHost(tmp_path), PickupHost(tmp_path)
    try:
        shown = a.loop.run_until_complete(a.host.call("startCountdown", {"seconds": 50, "tickMs": 1000}, a.ctx))
        assert shown.card is not None and shown.card.cursor is not None
        card_id, cursor = shown.card.card_id, shown.card.cursor
        tapped = b.loop.run_until_complete(b.host.event(card_id, MORE))
        assert tapped.handled == ["onMore"]
        view, _diags = a.loop.run_until_complete(a.host.updates(card_id, cursor))
        assert view is not None
        assert [u["kind"] for u in view.updates] == ["reset"], view.updates
        assert "60 秒" in json.dumps(view.updates, ensure_ascii=False)
        # Up to date now: the stream goes on from the reset's cursor, with nothing new.
        again, _ = a.loop.run_until_complete(a.host.updates(card_id, view.cursor))
        assert again is not None and again.updates == []
    finally:
        a.close()
        b.close()
