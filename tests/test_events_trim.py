"""The bound on stored event sessions, kept by a trim every few new sessions rather than after each
(skillc.server.events: a client without a session capability gets a new session per request, and
each trim takes a lock every instance of a fleet shares)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from skillc.runtime.state import StateStore, connect_state, open_state, parse_state_url
from skillc.server.events import EventHub, EventLimits, trim_every

MAX_SESSIONS = 64


@pytest.fixture(params=["sqlite", "postgresql"])
def new_instance(request: pytest.FixtureRequest) -> Callable[[], EventHub]:
    """A hub on the test's shared store, with connections of its own: one more instance."""
    stores: list[StateStore] = []
    if request.param == "sqlite":
        path = request.getfixturevalue("tmp_path") / "state.sqlite3"

        def store() -> StateStore:
            return open_state(path)
    else:
        url = parse_state_url(request.getfixturevalue("postgres_url"))
        open_state(url)  # migrated; closed with the schema by postgres_url

        def store() -> StateStore:
            stores.append(connect_state(url))
            return stores[-1]

    def close() -> None:
        for made in stores:
            made.close()

    request.addfinalizer(close)
    return lambda: EventHub(EventLimits(max_sessions=MAX_SESSIONS), store=store())


def _trims(hub: EventHub) -> list[int]:
    """How many trims the hub's store has begun (the transactions under the sessions lock)."""
    buffers: Any = hub._buffers
    store, lock = buffers.store, buffers.SESSIONS_LOCK
    count = [0]
    real = store.transaction

    def transaction(*args: Any, **kwargs: Any) -> Any:
        count[0] += (args[:1] or (kwargs.get("lock"),))[0] == lock
        return real(*args, **kwargs)

    store.transaction = transaction
    return count


def _write(hub: EventHub, session: str, *, batched: bool) -> None:
    if not batched:  # written at once
        hub.append(session, "api-vm", "console", "info", "x")
        return
    batch = hub.batch()  # a call's events, through the writer thread
    batch.append(session, "mcp", "tool_call", "info", "x")
    assert asyncio.run(batch.commit()) == 0


def test_new_sessions_stay_within_the_bound_of_each_instances_interval(new_instance: Callable[[], EventHub]) -> None:
    every = trim_every(MAX_SESSIONS)
    assert every > 1  # amortised at this bound
    one, two = new_instance(), new_instance()
    names = [f"s{i:03}" for i in range(5 * MAX_SESSIONS + 2)]  # each instance ends between trims
    for i, name in enumerate(names):
        _write((one, two)[i % 2], name, batched=i % 4 < 2)
        # Each instance leaves at most every - 1 of its own sessions above the bound.
        assert len(one.sessions()) <= MAX_SESSIONS + 2 * (every - 1)
    one.close()
    two.close()  # what each left above the bound goes when it closes: the newest are kept
    assert two.sessions() == names[-MAX_SESSIONS:]


def test_a_trim_follows_every_few_new_sessions_not_each(new_instance: Callable[[], EventHub]) -> None:
    hub = new_instance()
    trims = _trims(hub)
    every = trim_every(MAX_SESSIONS)
    for i in range(2 * MAX_SESSIONS):
        _write(hub, f"s{i:03}", batched=i % 2 == 0)
        _write(hub, f"s{i:03}", batched=i % 2 == 1)  # written again: not a new session
    assert trims[0] == 2 * MAX_SESSIONS // every
    hub.close()
    assert trims[0] == 2 * MAX_SESSIONS // every  # nothing left over: no trim on close


@pytest.mark.parametrize(("bound", "every"), [(1, 1), (15, 1), (16, 1), (64, 4), (256, 16), (2048, 64), (100_000, 64)])
def test_the_trim_interval(bound: int, every: int) -> None:
    assert trim_every(bound) == every
