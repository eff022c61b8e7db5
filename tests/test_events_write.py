"""How a call's events reach the state store: on PostgreSQL one statement per group of appends (one
round trip, its ids taken inside it), on SQLite one transaction; either way every event is kept
exactly as the writer was answered with it."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from skillc.runtime.state import StateStore, close_pools, open_state, parse_state_url
from skillc.runtime.state import store as store_module
from skillc.server.events import EventHub, EventLimits, EventQuery, SessionEvent

# Text the JSON of an event escapes, and text that PostgreSQL's array syntax would have to quote.
AWKWARD = ['say "hi"', "back\\slash", "{a,b}", "NULL", "line\nbreak\ttab", "咖啡 ☕", "", "x" * 3000]


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> StateStore:
    if request.param == "sqlite":
        return open_state(tmp_path / "state.sqlite3")
    return open_state(parse_state_url(request.getfixturevalue("postgres_url")))


@pytest.fixture
def operations() -> Iterator[list[tuple[str, str]]]:
    """Every store operation of this process while the test runs: (engine, operation)."""
    seen: list[tuple[str, str]] = []

    def observe(engine: str, operation: str, seconds: float) -> None:
        seen.append((engine, operation))

    store_module.observe_store(observe)
    yield seen
    store_module._observers.remove(observe)


async def _call(hub: EventHub, session: str, messages: list[str]) -> None:
    batch = hub.batch()
    for i, message in enumerate(messages):
        batch.append(session, "mcp", "tool_call", "info", message, metadata={"i": i, "text": message})
    assert await batch.commit() == 0


def test_a_call_is_one_write_and_its_events_are_kept_as_written(
    store: StateStore, operations: list[tuple[str, str]]
) -> None:
    hub = EventHub(EventLimits(max_events=20), store=store)
    hub.append("s", "api-vm", "console", "info", "first")  # the session exists
    operations.clear()
    asyncio.run(_call(hub, "s", AWKWARD[:4]))
    # PostgreSQL: one statement in its own transaction (one round trip), no BEGIN ... COMMIT.
    expected = ("postgresql", "write") if store.kind == "postgresql" else ("sqlite", "transaction")
    assert operations == [expected]

    asyncio.run(_call(hub, "s", AWKWARD[4:]))
    page = hub.page(EventQuery("s", limit=100))
    assert [e.id for e in page.events] == list(range(1, 10))
    assert [e.message for e in page.events[1:]] == AWKWARD
    assert [e.metadata for e in page.events[1:]] == [{"i": i % 4, "text": m} for i, m in enumerate(AWKWARD)]
    for event in page.events:  # what a reader gets is the event's own JSON, id and all
        assert SessionEvent.model_validate_json(event.model_dump_json()) == event


def test_calls_written_together_take_their_ids_in_turn(store: StateStore) -> None:
    hub = EventHub(EventLimits(max_events=6), store=store)
    written: dict[str, list[int]] = {}

    async def calls() -> None:
        async def call(n: int) -> None:
            session = f"s{n % 3}"
            batch = hub.batch()
            for i in range(4):
                batch.append(session, "mcp", "tool_call", "info", f"{n}.{i}")
            assert await batch.commit() == 0

        await asyncio.gather(*(call(n) for n in range(9)))  # groups of several sessions at once

    asyncio.run(calls())
    for name in ("s0", "s1", "s2"):  # 12 events each, the newest 6 kept, no id twice or skipped
        page = hub.page(EventQuery(name, limit=100))
        written[name] = [e.id for e in page.events]
        assert written[name] == list(range(7, 13))
        assert (page.retained_count, page.dropped_count) == (6, 6)
        # A call's four events are consecutive and in its order.
        by_call: dict[str, list[int]] = {}
        for event in page.events:
            call, index = event.message.split(".")
            by_call.setdefault(call, []).append(int(index))
        assert all(indexes == sorted(indexes) for indexes in by_call.values())
    hub.close()


def test_postgresql_plans_the_events_statement_once_per_connection(postgres_url: str) -> None:
    """Each bind of a custom plan re-plans the events CTE (0.4 ms of the server's CPU per call); a
    generic plan is made once per connection and serves every call after it."""
    from skillc.runtime.config import PoolSettings

    # A pool of its own (one connection), which the fixture's close_pools does not name: closed here.
    url = parse_state_url(postgres_url).model_copy(update={"pool": PoolSettings(min_size=1, max_size=1)})
    store = open_state(url)
    hub = EventHub(EventLimits(max_events=20), store=store)
    try:
        for n in range(8):  # PostgreSQL's default tries five custom plans before it settles on a generic one
            asyncio.run(_call(hub, "s", [f"call {n}"]))
        # pg_prepared_statements shows the statements of this session only: the pool's one connection.
        rows = store.execute(
            "SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement LIKE '%INSERT INTO events%'"
        )
        assert len(rows) == 1
        generic, custom = rows[0]
        assert custom == 0 and generic >= 7, (generic, custom)
        assert [e.message for e in hub.page(EventQuery("s")).events] == [f"call {n}" for n in range(8)]
    finally:
        hub.close()
        close_pools(url)
