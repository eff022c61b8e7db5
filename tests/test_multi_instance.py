"""Cards on any instance: two real ``skillc serve`` processes on different ports sharing one state
store, called over HTTP through the MCP endpoints and the app-only tool a card view taps with.

The store is the ``multi_instance_state`` fixture: SQLite in a tmp folder, or PostgreSQL under
``pytest --state-store=postgresql`` (the in-process tests follow $SKILLC_STATE_URL, which that
option sets for every test).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp.client import Client
from mcp_types import ElicitResult, InputRequiredResult

from skillc.diagnostics import DiagnosticSink
from skillc.frontend.package import load_skill
from skillc.ir.diff import patches_to_plain
from skillc.runtime.api.api_runtime import ApiRuntime
from skillc.runtime.cards.card_host import CARD_WRITE_ATTEMPTS, CardHost
from skillc.runtime.cards.card_models import EventOutcome
from skillc.runtime.cards.card_store import CardStore
from skillc.runtime.config import RuntimeConfig
from skillc.server.consent import CONSENT_KEY
from skillc.server.results import event_result
from tests.conftest import FIXTURES, STATE_STORE_OPTION

COUNTER = FIXTURES / "multi-instance" / "counter-skill"
ADD = "0.3"  # the counter's +1 button in its Render IR
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
COUNT = re.compile(r"^(\d+) taps$")


@dataclass(frozen=True)
class InstanceState:
    """How every instance of a test is told where the shared state is: ``serve`` arguments."""

    args: tuple[str, ...]


@pytest.fixture
def multi_instance_state(request: pytest.FixtureRequest, tmp_path: Path) -> InstanceState:
    """The shared store: SQLite (WAL) in one state folder, or under ``--state-store=postgresql`` a
    fresh PostgreSQL schema (the ``postgres_url`` fixture) named with ``--state``."""
    if request.config.getoption(STATE_STORE_OPTION) == "postgresql":
        return InstanceState(args=("--state", request.getfixturevalue("postgres_url")))
    return InstanceState(args=("--state-dir", str(tmp_path / "state")))


# The one host these tests speak for: the session it carries across instances (a fresh state
# store's key verifies no earlier test's session, so the first call of each test starts one).
_HOST_SESSION: dict[str, str] = {}
_HOST_LOCK = threading.Lock()


@dataclass
class Instance:
    name: str
    url: str
    proc: subprocess.Popen[str]
    client: httpx.Client = field(default_factory=lambda: httpx.Client(headers=ACCEPT, timeout=60))

    def rpc(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        reply = self.client.post(self.url, json=body)
        reply.raise_for_status()
        got: dict[str, Any] = reply.json()
        assert "result" in got, got
        result: dict[str, Any] = got["result"]
        return result

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """A tools/call as one host makes it on any instance: it carries the session the last
        result named (``_meta["skillc/session"]``), so a card made on A is tapped on B in its session."""
        params: dict[str, Any] = {"name": name, "arguments": arguments}
        with _HOST_LOCK:
            if "session" in _HOST_SESSION:
                params["_meta"] = {"skillc/session": _HOST_SESSION["session"]}
        result = self.rpc("tools/call", params)
        named = result.get("_meta", {}).get("skillc/session")
        if isinstance(named, str):
            with _HOST_LOCK:
                _HOST_SESSION["session"] = named
        return result

    def show_counter(self, label: str) -> str:
        result = self.call("showCounter", {"label": label})
        card_id: str = result["_meta"]["skillc/card"]["cardId"]
        return card_id

    def tap(self, card_id: str) -> list[dict[str, Any]]:
        """The patches one tap on the card's +1 gives (an error result fails the test)."""
        result = self.call("skillc_card_event", {"cardId": card_id, "nodeId": ADD, "event": "tap"})
        assert result["isError"] is False, result
        patches: list[dict[str, Any]] = result["structuredContent"]["patches"]
        return patches


def count_of(patches: list[dict[str, Any]]) -> int:
    """The count a tap's patches show ("N taps")."""
    texts = [m.group(1) for p in patches if p["op"] == "setText" and (m := COUNT.match(p["text"]))]
    assert len(texts) == 1, patches
    return int(texts[0])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def start(name: str, state: InstanceState, *extra: str) -> Instance:
    """``skillc serve`` of the counter skill on a free port (``extra``: more serve arguments)."""
    port = _free_port()
    command = [sys.executable, "-m", "skillc", "serve", str(COUNTER), "--port", str(port), *state.args, *extra]
    proc = subprocess.Popen(command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    instance = Instance(name, f"http://127.0.0.1:{port}/mcp", proc)
    deadline = time.monotonic() + 60
    while True:
        try:
            instance.rpc("tools/list", {})
            return instance
        except httpx.TransportError:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"instance {name} did not start: {proc.communicate()[1]}") from None
            time.sleep(0.1)


@pytest.fixture
def instances(multi_instance_state: InstanceState) -> Iterator[tuple[Instance, Instance]]:
    a = start("A", multi_instance_state)
    try:
        b = start("B", multi_instance_state)
    except BaseException:
        a.proc.kill()
        raise
    try:
        yield a, b
    finally:
        for one in (a, b):
            one.client.close()
            if one.proc.poll() is None:
                one.proc.terminate()
            try:
                one.proc.communicate(timeout=15)
            except subprocess.TimeoutExpired:
                one.proc.kill()
                one.proc.communicate()


def test_a_card_made_on_a_is_tapped_on_b_with_the_patches_a_gives(instances: tuple[Instance, Instance]) -> None:
    a, b = instances
    alone, shared = a.show_counter("cups"), a.show_counter("cups")
    on_a = [a.tap(alone) for _ in range(3)]
    on_b = [b.tap(shared) for _ in range(3)]  # B never saw the card: it rebuilds it from the store
    assert on_b == on_a
    assert [count_of(p) for p in on_b] == [1, 2, 3]
    assert on_a[0] == [
        {
            "parent": "0",
            "index": 2,
            "node": {
                "id": "0.2.0",
                "type": "view",
                "props": {},
                "style": {"color": "#b00020"},
                "events": None,
                "children": [
                    {
                        "id": "0.2.0.0",
                        "type": "#text",
                        "props": {"text": "odd"},
                        "style": {"color": "#b00020"},
                        "events": None,
                        "children": None,
                    }
                ],
            },
            "op": "insert",
        },
        {"id": "0.1.0", "text": "1 taps", "op": "setText"},
    ]
    # A's copy of the shared card is now three writes behind B's: it reloads before applying.
    assert count_of(a.tap(alone)) == 4
    assert a.tap(shared) == [
        {"parent": "0", "id": "0.2.0", "op": "remove"},
        {"id": "0.1.0", "text": "4 taps", "op": "setText"},
    ]
    assert count_of(b.tap(shared)) == 5
    assert count_of(a.tap(shared)) == 6


def test_storage_written_through_a_is_read_through_b(instances: tuple[Instance, Instance]) -> None:
    a, b = instances
    assert b.call("readNote", {})["content"] == [{"type": "text", "text": "note: (none)"}]
    assert a.call("keepNote", {"text": "oat milk"})["content"] == [{"type": "text", "text": "kept"}]
    assert b.call("readNote", {})["content"] == [{"type": "text", "text": "note: oat milk"}]


def test_a_consent_asked_on_a_is_answered_on_b_and_spent_once(instances: tuple[Instance, Instance]) -> None:
    a, b = instances
    a.call("keepNote", {"text": "oat milk"})
    yes = {CONSENT_KEY: ElicitResult(action="accept", content={"approve": True})}

    async def never_asked(_ctx: Any, _params: Any) -> ElicitResult:  # declares the capability
        raise AssertionError("the server asks through InputRequiredResult, not mid-call")

    async def session() -> tuple[Any, Any, Any]:
        async with (
            Client(a.url, elicitation_callback=never_asked) as on_a,
            Client(b.url, elicitation_callback=never_asked) as on_b,
        ):
            asked = await on_a.session.call_tool("clearNote", {}, allow_input_required=True)
            assert isinstance(asked, InputRequiredResult), asked
            state = asked.request_state
            # The host carries the session the answer named (_meta["skillc/session"]) to either instance.
            carried = {"skillc/session": (asked.meta or {})["skillc/session"]}
            done = await on_b.session.call_tool("clearNote", {}, input_responses=yes, request_state=state, meta=carried)
            again = await on_a.session.call_tool(
                "clearNote", {}, input_responses=yes, request_state=state, meta=carried
            )
            events = await on_b.read_resource(done.meta["skillc/events"] + "?limit=1000") if done.meta else None
            return done, again, events

    done, replayed, events = asyncio.run(session())
    # B accepts the consent A asked for (one key across the fleet), and A refuses it once spent on B.
    assert [c.text for c in done.content] == ["forgotten"]
    assert replayed.is_error is True and replayed.content[0].text.startswith("clearNote needs the user's approval")
    assert b.call("readNote", {})["content"] == [{"type": "text", "text": "note: (none)"}]
    # The client is one session on both instances: B's events page holds what ran on A too.
    assert events is not None
    page = json.loads(events.contents[0].text)
    consents = [e["metadata"]["consent"] for e in page["events"] if "consent" in e["metadata"]]
    assert consents == ["asked", "given", "refused"]
    assert [e["id"] for e in page["events"]] == list(range(1, len(page["events"]) + 1))


def test_200_concurrent_taps_on_one_card_across_two_instances_apply_once_each(
    instances: tuple[Instance, Instance],
) -> None:
    a, b = instances
    card = a.show_counter("cups")
    taps = 200
    clients = [Instance(i.name, i.url, i.proc) for i in (a, b) for _ in range(8)]  # a connection each
    lock = threading.Lock()
    turn = iter(range(taps))

    def worker(me: Instance) -> list[int]:
        seen: list[int] = []
        while True:
            with lock:
                if next(turn, None) is None:
                    return seen
            seen.append(count_of(me.tap(card)))

    with ThreadPoolExecutor(len(clients)) as pool:
        per_client = list(pool.map(worker, clients))
    for client in clients:
        client.client.close()
    acked = sorted(n for seen in per_client for n in seen)
    per_instance = {
        name: sum(len(s) for c, s in zip(clients, per_client, strict=True) if c.name == name) for name in "AB"
    }
    # Every tap acknowledged once, each on the count the one before it left: none lost, none twice.
    assert acked == list(range(1, taps + 1))
    assert per_instance["A"] > 0 and per_instance["B"] > 0 and sum(per_instance.values()) == taps
    assert count_of(b.tap(card)) == taps + 1
    print(f"concurrent taps: {len(acked)} acknowledged, A {per_instance['A']}, B {per_instance['B']}")


def test_b_goes_on_serving_a_cards_after_a_is_killed(
    instances: tuple[Instance, Instance], multi_instance_state: InstanceState
) -> None:
    a, b = instances
    cards = [a.show_counter(f"cups {i}") for i in range(3)]
    untouched = a.show_counter("seen only by A")
    assert count_of(a.tap(untouched)) == 1
    calls = 500
    acked: dict[str, list[int]] = {c: [] for c in cards}
    sent: dict[str, int] = dict.fromkeys(cards, 0)
    failed_on_a = 0
    guard = threading.Lock()
    order = iter(range(calls))
    killed = threading.Event()

    def worker(pair: tuple[Instance, Instance]) -> None:
        nonlocal failed_on_a
        while True:
            with guard:
                i = next(order, None)
                if i is None:
                    return
                card = cards[i % len(cards)]
                sent[card] += 1
                if i == calls // 3:
                    os.kill(a.proc.pid, signal.SIGKILL)  # mid-run: calls to A in flight are cut off
                    killed.set()
            target = pair[i % 2]
            try:
                n = count_of(target.tap(card))
            except (httpx.TransportError, httpx.HTTPStatusError):
                assert target.name == "A" and killed.is_set()
                with guard:
                    failed_on_a += 1
                continue
            with guard:
                acked[card].append(n)

    pairs = [(Instance("A", a.url, a.proc), Instance("B", b.url, b.proc)) for _ in range(6)]
    with ThreadPoolExecutor(len(pairs)) as pool:
        list(pool.map(worker, pairs))
    for pair in pairs:
        for one in pair:
            one.client.close()
    assert a.proc.wait(timeout=30) == -signal.SIGKILL
    assert failed_on_a > 0
    finals = []
    for card in cards:
        final = count_of(b.tap(card)) - 1  # the count before this last tap
        finals.append((len(acked[card]), final, sent[card]))
        got = sorted(acked[card])
        # No acknowledged tap lost, none counted twice; a tap A applied as it died may be unacknowledged.
        assert len(set(got)) == len(got) and got[-1] <= final <= sent[card]
        assert len(got) <= final
    assert sum(len(v) for v in acked.values()) + failed_on_a == calls
    assert count_of(b.tap(untouched)) == 2  # a card only A had seen, rebuilt on B from the store
    print(f"SIGKILL run: {failed_on_a} calls to A failed; per card (acknowledged, stored, sent): {finals}")
    check = [sys.executable, "-m", "skillc", "state", "check", *multi_instance_state.args]
    checked = subprocess.run(check, capture_output=True, text=True, timeout=60)
    assert (checked.returncode, checked.stderr) == (0, ""), checked.stdout


# -- a write that finds the card changed since its copy was read (in one process, two card hosts) --


class Host:
    """A card host on the shared state, on a private event loop: one instance, without a server."""

    def __init__(self, state: Path) -> None:
        pkg = load_skill(COUNTER, DiagnosticSink())
        assert pkg is not None
        self.runtime = ApiRuntime(pkg, RuntimeConfig(state_dir=state))
        self.loop = asyncio.new_event_loop()
        self.host = CardHost(self.runtime)
        self.ctx = self.runtime.context(session_id="s1")

    def show(self) -> str:
        outcome = self.loop.run_until_complete(self.host.call("showCounter", {"label": "cups"}, self.ctx))
        assert outcome.card is not None
        return outcome.card.card_id

    def tap(self, card_id: str) -> EventOutcome:
        outcome: EventOutcome = self.loop.run_until_complete(self.host.event(card_id, ADD))
        return outcome

    def close(self) -> None:
        self.loop.run_until_complete(self.host.close())
        self.runtime.close()
        self.loop.close()


def _written_elsewhere(host: Host, times: int) -> Callable[[], int]:
    """Make the next ``times`` writes of ``host`` find that another instance wrote the card just
    before (a real write of count 41 through a second store); returns how many were made."""
    other = CardStore.of(host.runtime.config)
    real_save = host.host.store.save
    made = 0

    def save(card_id: str, version: int, **kw: Any) -> int | None:
        nonlocal made
        if made < times:
            made += 1
            stored = other.load_versioned(card_id)
            assert stored is not None
            assert other.save(card_id, stored.version, data={**stored.data, "count": 41}) == stored.version + 1
        return real_save(card_id, version, **kw)

    host.host.store.save = save  # type: ignore[method-assign]
    return lambda: made


def test_a_tap_whose_write_finds_the_card_changed_is_applied_again_on_the_new_state(tmp_path: Path) -> None:
    a = Host(tmp_path / "state")
    try:
        card = a.show()
        assert count_of(patch_list(a.tap(card))) == 1
        made = _written_elsewhere(a, 1)
        again = a.tap(card)
        assert made() == 1
        assert count_of(patch_list(again)) == 42  # 41 from the other write, then this tap: once
        assert [d.code for d in again.diagnostics] == ["CMPVM051"]  # the live copy took the new data in place
        stored = a.host.store.load_versioned(card)
        assert stored is not None and (stored.data["count"], stored.version) == (42, 4)
    finally:
        a.close()


def test_a_tap_that_loses_every_write_is_refused_with_cmpvm050(tmp_path: Path) -> None:
    a = Host(tmp_path / "state")
    try:
        card = a.show()
        made = _written_elsewhere(a, CARD_WRITE_ATTEMPTS)
        refused = a.tap(card)
        assert made() == CARD_WRITE_ATTEMPTS
        assert (refused.patches, refused.handled, refused.document) == ([], [], None)
        assert [(d.code, d.message) for d in refused.diagnostics if d.code != "CMPVM051"] == [
            (
                "CMPVM050",
                f"card {card} was changed by another instance each of 5 times the tap on {ADD} was applied;"
                " it was not applied",
            )
        ]
        assert event_result(refused).is_error is True
        stored = a.host.store.load_versioned(card)
        assert stored is not None and stored.data["count"] == 41  # only the other instance's writes
        assert count_of(patch_list(a.tap(card))) == 42  # the next tap reloads and applies once
    finally:
        a.close()


def patch_list(outcome: EventOutcome) -> list[dict[str, Any]]:
    plain: list[dict[str, Any]] = patches_to_plain(outcome.patches)
    return plain


def test_two_taps_at_once_on_a_card_this_instance_never_saw_rebuild_it_once(tmp_path: Path) -> None:
    a, b = Host(tmp_path / "state"), Host(tmp_path / "state")
    try:
        card = a.show()

        async def two_taps() -> list[EventOutcome]:
            return list(await asyncio.gather(b.host.event(card, ADD), b.host.event(card, ADD)))

        both = b.loop.run_until_complete(two_taps())
        assert sorted(count_of(patch_list(o)) for o in both) == [1, 2]
        assert sorted(d.code for o in both for d in o.diagnostics) == ["CMPVM014"]  # one rebuild, shared
        assert count_of(patch_list(a.tap(card))) == 3  # A's copy was stale: reloaded first
    finally:
        a.close()
        b.close()
