"""PostgreSQL faults under a real `skillc serve`: answers, not errors (docs/deploy.md, "Store faults").

Each test runs a PostgreSQL cluster of its own (Debian's binaries, tests/postgres_cluster.py), so
it can restart it or fill its connections without touching the suite's shared server:

- restarted under load (``pg_ctl stop -m fast``, calls answered while it is down, ``pg_ctl
  start``): no call gets a JSON-RPC error; a call the fault failed is an ``isError`` result whose
  text starts with its code (SRV05x), with a request-log line; a search that ran still answers
  its result; ``/readyz`` answers 200 within a second of the server accepting again;
- max_connections exhausted (every slot taken by other clients, the server's own connections
  terminated): every call answers in under 2 s, a search with its result (the store is needed
  only after the API ran) and a tap with a named error; ``/healthz`` answers 200 all the while,
  and once the slots are free calls succeed again;
- a pool configuration that cannot fit max_connections is refused by `skillc serve` at start.
"""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from skillc.runtime.config import PoolSettings, RuntimeConfig
from skillc.runtime.state import close_pools
from skillc.server.consent import ConsentPolicy
from skillc.server.request_log import REQUEST_LOGGER
from skillc.server.runner import ServeHandle, ServeOptions
from tests import postgres_cluster as pg
from tests.conftest import COFFEE, require
from tests.waiting import PATIENCE_S, wait_until

HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
CODES = ("SRV050", "SRV051")
POOL = PoolSettings(min_size=1, max_size=4, timeout_s=1.0)


def _cluster(max_connections: int = 40) -> tuple[pg.Cluster, str]:
    bindir = pg.find_bin()
    require(bindir is not None, "no PostgreSQL: install postgresql (initdb, pg_ctl)")
    assert bindir is not None
    cluster = pg.Cluster(bindir)
    try:
        return cluster, cluster.start(max_connections=max_connections)
    except BaseException:
        cluster.stop()
        raise


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[pg.Cluster, str, ServeHandle]]:
    cluster, url = _cluster()
    runtime = RuntimeConfig(state_dir=tmp_path, state_url=url, state_pool=POOL)
    try:
        # confirmOrder (L3) approved by the operator: it runs without a consent token from the store.
        consent = ConsentPolicy(approve=frozenset({"confirmOrder"}))
        with ServeHandle.start(ServeOptions(paths=(COFFEE,), port=0, runtime=runtime, consent=consent)) as handle:
            yield cluster, url, handle
    finally:
        close_pools()
        cluster.stop()


def _call(i: int) -> dict[str, Any]:
    params = {"name": "searchDrinks", "arguments": {"keyword": "latte"}}
    return {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": params}


@dataclass
class Load:
    """Clients calling until told to stop, every answer kept with when it came: searches, and taps
    on cards of their own (a tap needs the store before anything runs)."""

    url: str
    cards: list[tuple[str, str, str]]  # (card id, a node with a tap handler, the card's session)
    answers: list[tuple[float, int, dict[str, Any]]] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    async def client(self, n: int) -> None:
        async with httpx.AsyncClient(headers=HEADERS, timeout=30) as http:
            i = 0
            while not self.stop.is_set():
                i += 1
                rid = n * 100_000 + i
                body = _tap(rid, *self.cards[n % len(self.cards)]) if n % 2 else _call(rid)
                reply = await http.post(self.url, json=body)
                self.answers.append((time.monotonic(), reply.status_code, reply.json()))

    def run(self, clients: int) -> threading.Thread:
        async def main() -> None:
            await asyncio.gather(*(self.client(n) for n in range(clients)))

        thread = threading.Thread(target=lambda: asyncio.run(main()), daemon=True)
        thread.start()
        return thread


def _tap(i: int, card_id: str, node_id: str, session: str) -> dict[str, Any]:
    """A tap in the session the card was shown in (the card answers only to it)."""
    arguments = {"cardId": card_id, "nodeId": node_id, "event": "tap"}
    params = {"name": "skillc_card_event", "arguments": arguments, "_meta": {"skillc/session": session}}
    return {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": params}


def _tappable(node: dict[str, Any]) -> list[str]:
    found = [str(node["id"])] if "tap" in (node.get("events") or {}) else []
    for child in node.get("children") or []:
        if isinstance(child, dict):
            found += _tappable(child)
    return found


def _mount(http: httpx.Client, url: str, i: int) -> tuple[str, str, str]:
    """A card of the caller's own: its id, a tappable node, its session."""
    shown = http.post(url, json=_call(i), headers=HEADERS).json()["result"]
    card = shown["_meta"]["skillc/card"]
    return card["cardId"], _tappable(card["document"]["root"])[0], shown["_meta"]["skillc/session"]


def _failed(answer: dict[str, Any]) -> str | None:
    """The text of an isError result (None for a result that is not one)."""
    result = answer.get("result") or {}
    if not result.get("isError"):
        return None
    return str((result.get("content") or [{}])[0].get("text", ""))


def _ready(http: httpx.Client, base: str) -> bool:
    return http.get(f"{base}/readyz").status_code == 200


def test_a_restart_under_load_fails_calls_as_named_results_and_readyz_follows(
    served: tuple[pg.Cluster, str, ServeHandle], caplog: pytest.LogCaptureFixture
) -> None:
    cluster, _url, handle = served
    base = handle.url.rsplit("/mcp", 1)[0]
    with caplog.at_level(logging.INFO, logger=REQUEST_LOGGER), httpx.Client(timeout=30) as http:
        load = Load(handle.url, [_mount(http, handle.url, i) for i in range(2)])
        runner = load.run(clients=4)
        wait_until(lambda: len(load.answers) >= 20, PATIENCE_S, "calls before the restart")
        cluster.stop_server()  # the restart's first half: every connection terminated
        down = time.monotonic()

        def failed_while_down() -> bool:
            return sum(1 for at, _, a in load.answers if at > down and _failed(a) is not None) >= 3

        wait_until(failed_while_down, PATIENCE_S, "calls answered while the store is down")
        cluster.start_server()
        back = time.monotonic()
        wait_until(lambda: _ready(http, base), PATIENCE_S, "/readyz 200 after the restart", every_s=0.05)
        ready_after = time.monotonic() - back
        answered = len(load.answers)
        wait_until(lambda: len(load.answers) >= answered + 20, PATIENCE_S, "calls after the restart")
        load.stop.set()
        runner.join(PATIENCE_S)
    assert not runner.is_alive()
    assert ready_after < 1.0, f"/readyz said 200 only {ready_after:.2f} s after the store was back"
    assert all(status == 200 for _, status, _ in load.answers)
    errors = [a for _, _, a in load.answers if "error" in a]
    assert errors == [], f"JSON-RPC errors: {errors[:3]}"
    failed = [text for _, _, a in load.answers if (text := _failed(a)) is not None]
    assert failed and all(text.startswith(CODES) for text in failed), failed[:3]
    lines = [r.getMessage() for r in caplog.records if r.name == REQUEST_LOGGER]
    for text in failed:  # each failed call has its request line, with the code
        assert any(text.split(" ", 1)[0] in line and "tools/call" in line for line in lines), text
    # A search while the store was down still answered its result (the API ran; its card could
    # not be kept, so the fallback shows it): a store fault never fails a call that ran.
    searches = [a for at, _, a in load.answers if down < at < back and "structuredContent" in a.get("result", {})]
    assert any(a["result"]["structuredContent"].get("total") == 3 for a in searches)
    # The calls after the restart succeed: a pool of dead connections was replaced, not kept.
    assert all(_failed(a) is None for at, _, a in load.answers if at > back + 1.0)


def test_exhausted_connections_answer_at_once_and_healthz_stays_up(
    served: tuple[pg.Cluster, str, ServeHandle],
) -> None:
    import psycopg

    _, url, handle = served
    base = handle.url.rsplit("/mcp", 1)[0]
    hogs: list[Any] = []
    with httpx.Client(headers=HEADERS, timeout=30) as http:
        card_id, node, session = _mount(http, handle.url, 1)
        with psycopg.connect(url, autocommit=True) as admin:
            # The server's own connections go (as if the server had been restarted), and every
            # free slot is taken by someone else: the pool can neither reuse nor open one.
            admin.execute(KILL_SKILLC_BACKENDS)
            while True:
                try:
                    hogs.append(psycopg.connect(url, autocommit=True))
                except psycopg.OperationalError:
                    break
            try:
                # A search needs the store only after the API ran: it answers its result (the
                # card could not be kept, so a fallback shows it), and its lost events are counted.
                started = time.monotonic()
                searched = http.post(handle.url, json=_call(2)).json()
                took = time.monotonic() - started
                assert "error" not in searched and _failed(searched) is None, searched
                assert searched["result"]["structuredContent"]["total"] == 3
                assert took < 2.0, f"the search took {took:.2f} s to answer"
                # A tap needs the store before anything runs (the card's lock and version): a named error.
                started = time.monotonic()
                tapped = http.post(handle.url, json=_tap(3, card_id, node, session)).json()
                took = time.monotonic() - started
                assert "error" not in tapped
                text = _failed(tapped)
                assert text is not None and text.startswith(CODES), tapped
                assert took < 2.0, f"the tap took {took:.2f} s to answer"
                # A call whose skill reads storage first: the read fails named, and so does the call.
                order = {"name": "confirmOrder", "arguments": {"drinkId": "d02"}}
                ordered = http.post(
                    handle.url, json={"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": order}
                )
                text = _failed(ordered.json())
                assert text is not None and "getStorageSync:fail SRV050" in text, ordered.json()
                # Liveness never waits on the store; readiness says it is gone.
                t0 = time.monotonic()
                assert http.get(f"{base}/healthz").status_code == 200
                assert time.monotonic() - t0 < 1.0
                assert http.get(f"{base}/readyz").status_code == 503
            finally:
                for hog in hogs:
                    hog.close()
        wait_until(lambda: _ready(http, base), PATIENCE_S, "/readyz 200 once the slots are free", every_s=0.05)
        assert _failed(http.post(handle.url, json=_tap(4, card_id, node, session)).json()) is None


def test_serve_refuses_a_pool_that_cannot_fit_max_connections(tmp_path: Path) -> None:
    cluster, url = _cluster(max_connections=12)
    try:
        command = [sys.executable, "-m", "skillc", "serve", str(COFFEE), "--port", "0", "--state", url]
        command += ["--state-dir", str(tmp_path), "--workers", "2", "--state-pool-max", "8"]
        done = subprocess.run(command, capture_output=True, text=True, timeout=PATIENCE_S, stdin=subprocess.DEVNULL)
        assert done.returncode == 2, done.stderr
        assert "SRV053" in done.stderr and "2 workers x --state-pool-max 8 = 16" in done.stderr
    finally:
        cluster.stop()


@pytest.fixture
def own_store(tmp_path: Path) -> Iterator[tuple[str, Any]]:
    """A pooled store on a cluster of its own: (its URL, the store)."""
    from skillc.runtime.state import open_state, parse_state_url

    cluster, url = _cluster()
    try:
        state = parse_state_url(url).model_copy(update={"pool": POOL})
        yield url, open_state(state)
    finally:
        close_pools()
        cluster.stop()


# The server's connections (named `skillc`, or `skillc INSTANCE/WORKER` through $PGAPPNAME), never the
# admin connection itself, which inherits the same $PGAPPNAME when a test process has one.
KILL_SKILLC_BACKENDS = (
    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
    " WHERE application_name LIKE 'skillc%' AND pid <> pg_backend_pid()"
)


def _kill_skillc_backends(url: str) -> int:
    import psycopg

    with psycopg.connect(url, autocommit=True) as admin:
        rows = admin.execute(KILL_SKILLC_BACKENDS).fetchall()
    return len(rows)


def test_a_read_on_a_dropped_connection_is_tried_again_and_a_write_is_a_named_fault(
    own_store: tuple[str, Any],
) -> None:
    from skillc.runtime.state import StateUnavailable

    url, store = own_store
    store.execute("CREATE TABLE IF NOT EXISTS t (n INT)")
    # Fresh from use (no ping before the next checkout): the drop is met by the statement itself.
    assert store.execute("SELECT 1") == [(1,)]
    assert _kill_skillc_backends(url) >= 1
    assert store.execute("SELECT 2") == [(2,)]  # the read met a dead connection and went again
    store.execute("SELECT 3")
    assert _kill_skillc_backends(url) >= 1
    with pytest.raises(StateUnavailable) as err:  # a write is never repeated: it may have applied
        store.execute("INSERT INTO t (n) VALUES (1)")
    assert str(err.value).startswith("SRV050") and err.value.code == "SRV050"


def test_an_idle_pool_after_a_restart_serves_the_first_statement(own_store: tuple[str, Any]) -> None:
    url, store = own_store
    store.execute("SELECT 1")
    assert _kill_skillc_backends(url) >= 1
    # Idle past the check: the dead connection is pinged, dropped and replaced before use, so
    # even a write (never retried) succeeds.
    wait_until(lambda: _idle_long_enough(store), PATIENCE_S, "the pooled connection to be idle")
    store.execute("CREATE TABLE IF NOT EXISTS t2 (n INT)")


def _idle_long_enough(store: Any) -> bool:
    from skillc.runtime.state.postgres_store import CHECK_IDLE_S

    returned = list(store._returned.values())
    return bool(returned) and time.monotonic() - max(returned) > CHECK_IDLE_S


def test_an_audited_call_that_ran_answers_though_its_audit_record_cannot_be_written(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from skillc.diagnostics import DiagnosticSink
    from skillc.frontend.package import load_skill
    from skillc.runtime.api.api_runtime import ApiRuntime
    from skillc.runtime.state import StateUrl, connect_state

    pkg = load_skill(COFFEE, DiagnosticSink())
    assert pkg is not None
    runtime = ApiRuntime(pkg, RuntimeConfig(state_dir=tmp_path / "state"))
    try:
        # The audit's store goes away after the order is made: a file where its folder should be.
        (tmp_path / "gone").write_text("")
        runtime.audit.store = connect_state(StateUrl.sqlite(tmp_path / "gone" / "state.sqlite3"))
        runtime.approver = lambda _request: True
        with caplog.at_level(logging.ERROR, logger="skillc.server"):
            outcome = runtime.call_blocking("confirmOrder", {"drinkId": "d01"})
        assert not outcome.result.is_error, outcome.result.text
        assert outcome.result.structured_content is not None
        assert outcome.result.structured_content["order"]["orderId"] == "MB000001"
        logged = [r.getMessage() for r in caplog.records if "SRV052 the audit record of confirmOrder" in r.getMessage()]
        assert len(logged) == 1 and '"api_name":"confirmOrder"' in logged[0].replace(" ", "")
    finally:
        runtime.close()
