"""The session event buffer: events://session/<id> paged by cursor (skillc.server.events), fed by
`skillc serve` (console lines, trace, tool calls) and read over real HTTP with the SDK client."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from mcp.client import Client
from mcp.shared.exceptions import MCPError
from mcp_types import Implementation

from skillc.runtime.config import RuntimeConfig
from skillc.runtime.state import StateStore, StateUnavailable, StateUrl, connect_state, open_state, parse_state_url
from skillc.server.consent import ConsentPolicy
from skillc.server.events import EventHub, EventLimits, EventQuery, EventUriError, parse_events_uri
from skillc.server.runner import ServeHandle, ServeOptions
from tests.conftest import COFFEE
from tests.session_client import SessionClient
from tests.test_server import apps_client

# -- the buffer -------------------------------------------------------------------------------------
# Every buffer test runs on each backend: this process's memory, and the state store's tables on
# SQLite and PostgreSQL (skipped without a PostgreSQL to start).

NewStore = Callable[[], StateStore]
NewHub = Callable[..., EventHub]


def _stores(kind: str, request: pytest.FixtureRequest) -> NewStore:
    """Stores on one database, a new one per call with connections of its own: what another
    instance of a fleet on that database would open."""
    if kind == "sqlite":
        path = request.getfixturevalue("tmp_path") / "state.sqlite3"
        return lambda: open_state(path)
    url: StateUrl = parse_state_url(request.getfixturevalue("postgres_url"))
    pooled = [open_state(url)]  # migrated; closed with the schema by postgres_url
    extra: list[StateStore] = []

    def close() -> None:
        for store in extra:
            store.close()

    request.addfinalizer(close)

    def another() -> StateStore:
        if pooled:
            return pooled.pop()
        extra.append(connect_state(url))
        return extra[-1]

    return another


def _hubs(backend: str, request: pytest.FixtureRequest) -> NewHub:
    if backend == "memory":
        return lambda limits=None: EventHub(limits)
    stores = _stores(backend, request)
    return lambda limits=None: EventHub(limits, store=stores())


@pytest.fixture(params=["memory", "sqlite", "postgresql"])
def new_hub(request: pytest.FixtureRequest) -> NewHub:
    """``new_hub(limits=None)``: a hub on this test's backend (each on a store of its own)."""
    return _hubs(str(request.param), request)


@pytest.fixture(params=["sqlite", "postgresql"])
def new_instance(request: pytest.FixtureRequest) -> NewHub:
    """``new_instance(limits=None)``: a hub on a shared store, as one more instance would have."""
    return _hubs(str(request.param), request)


def _fill(hub: EventHub, n: int, session: str = "s") -> None:
    for i in range(n):
        hub.append(session, "api-vm", "console", "info", f"line {i + 1}")


def test_pages_follow_the_cursor_without_duplicates_or_gaps(new_hub: NewHub) -> None:
    hub = new_hub()
    _fill(hub, 5)
    first = hub.page(EventQuery("s", cursor=0, limit=2))
    assert [e.id for e in first.events] == [1, 2] and first.next_cursor == 2
    _fill(hub, 2)  # more arrive between polls
    second = hub.page(EventQuery("s", cursor=first.next_cursor, limit=100))
    assert [e.id for e in second.events] == [3, 4, 5, 6, 7] and second.next_cursor == 7
    empty = hub.page(EventQuery("s", cursor=second.next_cursor))
    assert empty.events == [] and empty.next_cursor == 7  # nothing new: the cursor stays
    assert (empty.oldest_cursor, empty.newest_cursor, empty.retained_count, empty.dropped_count) == (1, 7, 7, 0)
    assert [e.message for e in second.events] == ["line 3", "line 4", "line 5", "line 1", "line 2"]
    beyond = hub.page(EventQuery("s", cursor=10**30, drain=True))  # any number the URI takes
    assert (beyond.events, beyond.next_cursor, beyond.retained_count) == ([], 10**30, 7)


def test_drain_removes_what_it_returned(new_hub: NewHub) -> None:
    hub = new_hub()
    _fill(hub, 4)
    drained = hub.page(EventQuery("s", cursor=0, limit=3, drain=True))
    assert [e.id for e in drained.events] == [1, 2, 3]
    assert (drained.retained_count, drained.dropped_count, drained.oldest_cursor) == (1, 3, 4)
    rest = hub.page(EventQuery("s", cursor=0))
    assert [e.id for e in rest.events] == [4]  # ids are never reused


def test_the_bound_holds_under_ten_thousand_events(new_hub: NewHub) -> None:
    hub = new_hub(EventLimits(max_events=1000))
    _fill(hub, 10_000)
    page = hub.page(EventQuery("s", cursor=0, limit=1000))
    assert (page.retained_count, page.dropped_count) == (1000, 9000)
    assert (page.oldest_cursor, page.newest_cursor) == (9001, 10_000)
    assert page.events[0].id == 9001  # a cursor before the oldest: the gap is visible, nothing repeats


def test_a_long_message_is_cut_at_a_character_boundary(new_hub: NewHub) -> None:
    hub = new_hub(EventLimits(max_message_bytes=64))
    event = hub.append("s", "api-vm", "console", "info", "咖" * 40)  # 120 bytes of UTF-8
    assert event.message == "咖" * 21  # 63 bytes: the 22nd character would be cut in half
    assert event.truncation is not None and event.truncation.wire() == {
        "original_size": 120,
        "truncated_size": 63,
        "max_size": 64,
    }


def test_the_least_recently_written_session_goes_first(new_hub: NewHub) -> None:
    hub = new_hub(EventLimits(max_sessions=2))
    _fill(hub, 1, "a")
    _fill(hub, 1, "b")
    _fill(hub, 1, "a")
    _fill(hub, 1, "c")
    assert hub.sessions() == ["a", "c"]
    assert hub.page(EventQuery("b")).events == []


# -- a call's events in one transaction ----------------------------------------------------------


def _counting(hub: EventHub) -> list[int]:
    """How many transactions the hub's store has begun, counted as they begin (the real store's
    transaction, wrapped on this one instance): a transaction of statements, or one write
    statement on its own (PostgreSQL writes a group of appends with one)."""
    store = hub._buffers.store  # type: ignore[attr-defined]
    begun = [0]
    real, real_execute = store.transaction, store.execute

    def transaction(*args: Any, **kwargs: Any) -> Any:
        begun[0] += 1
        return real(*args, **kwargs)

    def execute(sql: str, *args: Any) -> Any:
        begun[0] += not sql.startswith("SELECT")
        return real_execute(sql, *args)

    store.transaction = transaction
    store.execute = execute
    return begun


def test_a_batch_is_one_transaction_and_concurrent_batches_share_them(new_instance: NewHub) -> None:
    hub, reader = new_instance(), new_instance()
    _append(hub, "s", "made")  # the session exists: no trim of the session bound follows
    begun = _counting(hub)

    async def call(n: int) -> None:
        batch = hub.batch()
        for i in range(4):  # started, console, card rendered, finished
            batch.append("s", "mcp", "tool_call", "info", f"call {n} event {i}")
        assert await batch.commit() == 0

    asyncio.run(call(0))
    assert begun[0] == 1
    # Written before commit returned: another instance reads all four at once, in order.
    page = reader.page(EventQuery("s", cursor=1))
    assert [e.message for e in page.events] == [f"call 0 event {i}" for i in range(4)]
    assert [e.id for e in page.events] == [2, 3, 4, 5]

    async def calls() -> None:
        await asyncio.gather(*(call(n) for n in range(1, 9)))

    begun[0] = 0
    asyncio.run(calls())
    assert 1 <= begun[0] <= 8  # at most one each; those waiting together share one
    ids = [e.id for e in reader.page(EventQuery("s", cursor=5)).events]
    assert ids == list(range(6, 6 + 32))  # every id taken once, no gap


def test_a_batch_the_store_cannot_take_is_counted_not_raised(new_instance: NewHub, tmp_path: Path) -> None:
    hub = new_instance()
    batch = hub.batch()
    for i in range(3):
        batch.append("s", "mcp", "tool_call", "info", f"event {i}")
    # The store goes away before the batch is written: a file where its folder should be.
    (tmp_path / "gone").write_text("")
    hub._buffers.store = connect_state(StateUrl.sqlite(tmp_path / "gone" / "state.sqlite3"))  # type: ignore[attr-defined]
    assert asyncio.run(batch.commit()) == 3  # the call that made them still answers
    assert hub.lost == 3


# -- instances sharing one store ------------------------------------------------------------------


def _append(hub: EventHub, session: str, message: str) -> int:
    return hub.append(session, "api-vm", "console", "info", message).id


def _run_all(jobs: list[Callable[[], list[int]]]) -> list[list[int]]:
    """Run each job on a thread of its own, all starting together; the first error is raised."""
    start = threading.Barrier(len(jobs))

    def run(job: Callable[[], list[int]]) -> list[int]:
        start.wait()
        return job()

    with ThreadPoolExecutor(len(jobs)) as pool:
        return list(pool.map(run, jobs))


def test_another_instance_pages_drains_and_continues_the_ids(new_instance: NewHub) -> None:
    one, two = new_instance(), new_instance()
    _fill(one, 3)
    seen = two.page(EventQuery("s"))
    assert [(e.id, e.message) for e in seen.events] == [(1, "line 1"), (2, "line 2"), (3, "line 3")]
    assert (_append(two, "s", "from two"), _append(one, "s", "from one")) == (4, 5)
    drained = two.page(EventQuery("s", cursor=0, limit=2, drain=True))
    assert [e.id for e in drained.events] == [1, 2]
    after = one.page(EventQuery("s", cursor=0))
    assert [(e.id, e.message) for e in after.events] == [(3, "line 3"), (4, "from two"), (5, "from one")]
    assert (after.oldest_cursor, after.newest_cursor, after.retained_count, after.dropped_count) == (3, 5, 3, 2)
    assert one.sessions() == two.sessions() == ["s"]
    one.page(EventQuery("s", cursor=4, limit=1000, drain=True))  # drains 5, and 3, 4 below the cursor
    gone = two.page(EventQuery("s", cursor=0))
    assert (gone.events, gone.retained_count, gone.dropped_count, gone.oldest_cursor) == ([], 0, 5, None)
    assert _append(two, "s", "after") == 6  # ids are never reused, whichever instance writes


def test_appends_from_threads_on_two_instances_take_every_id_once(new_instance: NewHub) -> None:
    hubs = [new_instance(), new_instance()]
    threads, each = 8, 40

    def writer(t: int) -> Callable[[], list[int]]:
        return lambda: [_append(hubs[t % 2], "s", f"{t}:{i}") for i in range(each)]

    taken = _run_all([writer(t) for t in range(threads)])
    total = threads * each
    assert sorted(i for ids in taken for i in ids) == list(range(1, total + 1))  # no duplicate, none lost
    assert all(ids == sorted(ids) for ids in taken)  # one writer's events keep its order
    page = hubs[1].page(EventQuery("s", limit=1000))
    assert [e.id for e in page.events] == list(range(1, total + 1))
    by_id = {e.id: e.message for e in page.events}
    assert all(by_id[i] == f"{t}:{n}" for t, ids in enumerate(taken) for n, i in enumerate(ids))
    assert (page.retained_count, page.dropped_count, page.next_cursor) == (total, 0, total)


def test_instances_draining_while_another_appends_see_each_event_once(new_instance: NewHub) -> None:
    # One client's polls may land on any instance, two at a time.
    writer, readers = new_instance(), [new_instance(), new_instance()]
    total = 300
    finished = threading.Event()

    def write() -> list[int]:
        try:
            return [_append(writer, "s", f"m{i}") for i in range(total)]
        finally:
            finished.set()

    def drain(reader: EventHub) -> Callable[[], list[int]]:
        def run() -> list[int]:
            seen: list[int] = []
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:  # counts gone wrong must fail the test, not hang it
                done = finished.is_set()  # read before the page: a page after the last write follows
                seen += [e.id for e in reader.page(EventQuery("s", cursor=0, limit=7, drain=True)).events]
                if done and reader.page(EventQuery("s")).retained_count == 0:
                    return seen
            raise AssertionError(f"the buffer never emptied: {reader.page(EventQuery('s'))}")

        return run

    written, *seen = _run_all([write, *(drain(r) for r in readers)])
    assert written == list(range(1, total + 1))
    assert sorted(seen[0] + seen[1]) == written  # each drained once, none lost
    assert all(ids == sorted(ids) for ids in seen)  # and in order
    last = writer.page(EventQuery("s"))
    assert (last.dropped_count, last.retained_count, last.oldest_cursor) == (total, 0, None)


def test_the_session_bound_holds_across_instances(new_instance: NewHub) -> None:
    limits = EventLimits(max_sessions=3)
    one, two = new_instance(limits), new_instance(limits)
    for hub, session in [(one, "a"), (one, "b"), (one, "c"), (two, "a")]:  # a written again, elsewhere
        _append(hub, session, "x")
    _append(one, "d", "x")  # a fourth session: b is the least recently written, on either instance
    assert one.sessions() == two.sessions() == ["c", "a", "d"]
    assert two.page(EventQuery("b")).retained_count == 0
    assert _append(two, "b", "again") == 1  # a dropped session starts over, as in memory
    assert one.sessions() == ["a", "d", "b"]

    # Instances creating sessions and writing to the ones they keep, all at once.
    def churn(t: int) -> Callable[[], list[int]]:
        hub = (one, two)[t % 2]
        return lambda: [_append(hub, name, "y") for i in range(15) for name in (f"t{t}-{i}", "a", f"t{t}-{i}")]

    _run_all([churn(t) for t in range(6)])
    kept = two.sessions()
    assert len(kept) == 3 and one.sessions() == kept
    for name in kept:  # each kept buffer is whole: its ids run from oldest to newest
        page = one.page(EventQuery(name, limit=1000))
        assert page.oldest_cursor is not None and page.newest_cursor is not None
        assert [e.id for e in page.events] == list(range(page.oldest_cursor, page.newest_cursor + 1))
        assert page.retained_count == len(page.events) and page.dropped_count == 0
    for t in range(6):  # a dropped session left nothing behind: written again, it holds one event
        name = f"t{t}-0"
        assert _append(one, name, "z") == 1
        assert [e.message for e in two.page(EventQuery(name)).events] == ["z"]


@pytest.mark.parametrize(
    ("uri", "query"),
    [
        ("events://session/s-1", EventQuery("s-1")),
        ("events://session/s-1?cursor=5&limit=7&drain=true", EventQuery("s-1", 5, 7, True)),
        ("events://session/s-1?limit=0", EventQuery("s-1", 0, 100)),
        ("events://session/s-1?limit=99999", EventQuery("s-1", 0, 1000)),
        ("skill://coffee-skill/SKILL.md", None),
    ],
)
def test_event_uris(uri: str, query: EventQuery | None) -> None:
    assert parse_events_uri(uri) == query


@pytest.mark.parametrize(
    ("uri", "message"),
    [
        ("events://sessions/s-1", "expected events://session/<id>, got events://sessions/s-1"),
        ("events://session/", "expected events://session/<id>, got events://session/"),
        ("events://session/a/b", "expected events://session/<id>, got events://session/a/b"),
        ("events://session/s?cursor=-1", "cursor must be a non-negative integer, got '-1'"),
        ("events://session/s?since=3", "unknown query parameter 'since' (cursor, limit, drain)"),
    ],
)
def test_bad_event_uris(uri: str, message: str) -> None:
    with pytest.raises(EventUriError) as err:
        parse_events_uri(uri)
    assert str(err.value) == message


# -- over HTTP ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeHandle]:
    options = ServeOptions(
        paths=(COFFEE,),
        port=0,
        runtime=RuntimeConfig(state_dir=tmp_path_factory.mktemp("events-state")),
        consent=ConsentPolicy(approve=frozenset({"confirmOrder"})),
    )
    with ServeHandle.start(options) as handle:
        yield handle


def _client(url: str, name: str) -> Client:
    return apps_client(url, client_info=Implementation(name=name, version="1.0"))


async def _read(client: Client, uri: str) -> dict[str, Any]:
    read = await client.read_resource(uri)
    page: dict[str, Any] = json.loads(read.contents[0].text)  # type: ignore[union-attr]
    return page


def test_a_call_s_events_tell_what_ran(server: ServeHandle) -> None:
    async def session() -> tuple[Any, dict[str, Any], Any]:
        async with _client(server.url, "trace-reader") as client:
            templates = await client.list_resource_templates()
            shown = await client.call_tool("searchDrinks", {"keyword": "latte"})
            card_id = shown.meta["skillc/card"]["cardId"]
            await client.call_tool("skillc_card_event", {"cardId": card_id, "nodeId": "0.1.0[d02].1"})
            await client.call_tool("confirmOrder", {"drinkId": "d02"})
            await client.call_tool("payOrder", {"orderId": "MB-nope"})
            return templates, await _read(client, shown.meta["skillc/events"]), card_id

    templates, page, card_id = asyncio.run(session())
    template = templates.resource_templates[0]
    assert (template.uri_template, template.mime_type) == (
        "events://session/{session_id}{?cursor,limit,drain}",
        "application/json",
    )
    lines = [(e["source"], e["stream"], e["level"], e["message"]) for e in page["events"]]
    assert [e["id"] for e in page["events"]] == list(range(1, len(lines) + 1))
    assert lines[0] == ("mcp", "tool_call", "info", "tools/call searchDrinks started")
    assert lines[1] == ("api-vm", "console", "info", lines[1][3]) and lines[1][3].startswith(
        "[coffee-skill] searchDrinks took"
    )
    assert lines[2] == ("trace", "trace", "info", f"card {card_id} rendered (components/drink-list/index)")
    assert lines[3][3].startswith("tools/call searchDrinks finished: ok in ")
    messages = [line[3] for line in lines]
    assert f"card {card_id} tap on 0.1.0[d02].1: onSelect, 2 patches" in messages
    assert "consent given for confirmOrder (risk L3)" in messages
    # Not approved up front: this client shows cards, so the user is asked in the card.
    assert "consent asked for payOrder (risk L3)" in messages
    assert any(m.startswith(f"card {card_id} expired (expirePreviousCards)") for m in messages)
    asked = next(e for e in page["events"] if e["message"].startswith("tools/call payOrder finished"))
    assert asked["metadata"]["outcome"] == "input_required"
    assert all(e["session_id"] == page["events"][0]["session_id"] for e in page["events"])
    assert page["events"][0]["tool_call_id"] is not None


def test_polling_while_calls_run_sees_each_event_once(server: ServeHandle) -> None:
    calls_done = threading.Event()

    session: list[str] = []

    async def caller() -> None:
        async with _client(server.url, "poller") as client:
            client.skillc_session = session[0]  # the poller's session, as a host carries it
            for _ in range(12):
                await client.call_tool("searchDrinks", {"keyword": "mocha"})

    def run_calls() -> None:
        try:
            asyncio.run(caller())
        finally:
            calls_done.set()

    async def poll() -> tuple[list[int], int]:
        async with _client(server.url, "poller") as client:  # the same client: the same session
            first = await client.call_tool("searchDrinks", {"keyword": "latte"})
            uri = first.meta["skillc/events"]
            session.append(first.meta["skillc/session"])
            seen: list[int] = []
            cursor, polls = 0, 0
            thread = threading.Thread(target=run_calls)
            thread.start()
            while not calls_done.is_set() or polls < 3:
                page = await _read(client, f"{uri}?cursor={cursor}&limit=5")
                seen += [e["id"] for e in page["events"]]
                cursor = page["next_cursor"]
                polls += 1
                await asyncio.sleep(0.05)
            thread.join()
            while True:  # what arrived after the last poll
                page = await _read(client, f"{uri}?cursor={cursor}&limit=5")
                if not page["events"]:
                    return seen, polls
                seen += [e["id"] for e in page["events"]]
                cursor = page["next_cursor"]

    seen, polls = asyncio.run(poll())
    assert polls >= 3
    assert seen == list(range(1, len(seen) + 1))  # no duplicate, no gap
    assert len(seen) >= 13 * 3  # started, console, finished for each of the 13 calls (plus cards)


def test_drain_over_http_and_another_session_cannot_read(server: ServeHandle) -> None:
    async def session() -> tuple[dict[str, Any], dict[str, Any], str]:
        async with _client(server.url, "drainer") as client:
            shown = await client.call_tool("searchDrinks", {})
            uri = shown.meta["skillc/events"]
            drained = await _read(client, f"{uri}?drain=true&limit=1000")
            after = await _read(client, uri)
        async with _client(server.url, "intruder") as other:
            # Another session cannot name this one: an id with a forged MAC, or of the old
            # clientInfo-derived shape, reads as unknown.
            forged = uri[:-1] + ("0" if uri[-1] != "0" else "1")
            for guess in (forged, "events://session/s-" + "0" * 32):
                with pytest.raises(MCPError, match="Unknown resource: events://session/"):
                    await other.read_resource(guess)
            mine = (await other.call_tool("searchDrinks", {})).meta["skillc/events"]
        return drained, after, mine

    drained, after, mine = asyncio.run(session())
    assert drained["events"] and after["events"] == [] and after["retained_count"] == 0
    assert after["dropped_count"] == len(drained["events"])
    assert mine != drained["events"][0]["session_id"]


def test_a_client_cannot_choose_its_session(server: ServeHandle, tmp_path: Path) -> None:
    async def session() -> tuple[str, str]:
        async with SessionClient(server.url, mode="legacy") as client:
            plain = await client.call_tool("searchDrinks", {})
            own = await client.call_tool("searchDrinks", {}, meta={"skillc/session": "tab-2"})
            return plain.meta["skillc/events"], own.meta["skillc/events"]

    plain, own = asyncio.run(session())
    # A made-up value is no session: that call runs in a fresh one the server minted.
    assert plain != own and plain.startswith("events://session/s1-") and own.startswith("events://session/s1-")


def test_a_bad_events_uri_is_a_protocol_error(server: ServeHandle) -> None:
    async def session() -> None:
        async with SessionClient(server.url) as client:
            with pytest.raises(MCPError, match="Bad events URI: unknown query parameter 'since'"):
                await client.read_resource("events://session/s-x?since=1")

    asyncio.run(session())


def test_an_events_read_the_store_cannot_answer_names_the_fault(
    server: ServeHandle, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No driver text reaches the client: the JSON-RPC error names SRV050 and says to try again."""

    def unreachable(*_args: Any) -> Any:
        raise StateUnavailable("SRV050 the state store dropped the connection: server closed the connection")

    async def session() -> str:
        async with SessionClient(server.url) as client:
            uri = (await client.call_tool("searchDrinks", {})).meta["skillc/events"]
            monkeypatch.setattr(server.prepared.server.events, "page", unreachable)
            with pytest.raises(MCPError) as raised:
                await client.read_resource(uri)
            assert raised.value.error.code == -32603
            assert raised.value.error.data == {"uri": uri, "code": "SRV050"}
            return str(raised.value)

    message = asyncio.run(session())
    assert message.startswith("SRV050 the state store could not be read for events://session/s1-")
    assert message.endswith("; try again (see /readyz)") and "server closed" not in message


def test_the_bound_holds_over_http(tmp_path: Path) -> None:
    from skillc.server.events import EventLimits as Limits

    options = ServeOptions(
        paths=(COFFEE,), port=0, runtime=RuntimeConfig(state_dir=tmp_path), events=Limits(max_events=100)
    )
    with ServeHandle.start(options) as handle:

        async def session() -> dict[str, Any]:
            async with _client(handle.url, "flood") as client:
                shown = await client.call_tool("searchDrinks", {})
                uri = shown.meta["skillc/events"]
                sid = uri.removeprefix("events://session/")
                for i in range(10_000):  # what 10 000 console lines of one session would leave
                    handle.prepared.server.events.append(sid, "api-vm", "console", "info", f"line {i}")
                return await _read(client, f"{uri}?limit=1000")

        page = asyncio.run(session())
    assert (page["retained_count"], len(page["events"])) == (100, 100)
    assert page["newest_cursor"] - page["oldest_cursor"] == 99 and page["dropped_count"] >= 10_000 - 100
    assert page["events"][-1]["message"] == "line 9999"
