"""The artefact store: content addressing, bounds, expiry, session isolation, uri parsing; in
this process's memory and shared through the state store (SQLite, PostgreSQL) by several instances."""

from __future__ import annotations

import base64
import hashlib
import threading
import time
from collections.abc import Callable

import pytest
from pydantic import ValidationError

from skillc.runtime.state import StateStore, StateUrl, connect_state, open_state, parse_state_url
from skillc.server.artefacts import (
    ARTEFACT_URI_TEMPLATE,
    ArtefactLimits,
    ArtefactStore,
    ArtefactTooLarge,
    FileRef,
    MetadataValue,
    artefact_uri,
    parse_uri,
    resource_template,
    session_in_uri,
)

T0 = 1_796_220_000.0  # 2026-12-02T14:00:00Z


class Clock:
    def __init__(self, t: float = T0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def _uri(data: bytes) -> str:
    return f"artefact://sha256/{hashlib.sha256(data).hexdigest()}"


# -- backends ---------------------------------------------------------------------------------------
# The store's tests run on each backend: this process's memory, and the state store's tables on
# SQLite and PostgreSQL (skipped without a PostgreSQL to start). A test's stores all share one
# database, as the instances of a fleet do.

NewStore = Callable[[], StateStore]


class Make:
    """``make(limits=None, clock=time.time)``: one more artefact store on the test's backend; on a
    shared backend each has a state store (connections) of its own, on one database."""

    def __init__(self, backend: str, new_store: NewStore | None) -> None:
        self.backend = backend
        self.new_store = new_store

    @property
    def shared(self) -> bool:
        return self.new_store is not None

    def __call__(self, limits: ArtefactLimits | None = None, clock: Callable[[], float] = time.time) -> ArtefactStore:
        return ArtefactStore(limits, clock, store=self.new_store() if self.new_store else None)


def _stores(backend: str, request: pytest.FixtureRequest) -> NewStore:
    """Stores on one database of ``backend`` (sqlite or postgresql), a new one per call with
    connections of its own: what another instance on that database would open."""
    if backend == "sqlite":
        path = request.getfixturevalue("tmp_path") / "state.sqlite3"
        return lambda: open_state(path)
    url: StateUrl = parse_state_url(request.getfixturevalue("postgres_url"))
    # The first is the migrated pool open_state keeps (the postgres_url fixture closes it); the
    # others are pools of their own, closed first.
    stores = [open_state(url)]
    handed = 0

    def another() -> StateStore:
        nonlocal handed
        if handed:
            stores.append(connect_state(url))
        handed += 1
        return stores[-1]

    def close() -> None:
        for store in stores[1:]:
            store.close()

    request.addfinalizer(close)
    return another


@pytest.fixture(params=["memory", "sqlite", "postgresql"])
def make(request: pytest.FixtureRequest) -> Make:
    """An artefact store in memory, or on a state store on SQLite or PostgreSQL (skipped without
    a PostgreSQL to start)."""
    backend = str(request.param)
    return Make(backend, None if backend == "memory" else _stores(backend, request))


@pytest.fixture(params=["sqlite", "postgresql"])
def instance(request: pytest.FixtureRequest) -> Make:
    """Instances of a fleet: artefact stores on one shared state store."""
    backend = str(request.param)
    return Make(backend, _stores(backend, request))


def test_ref_is_content_addressed_and_bytes_round_trip(make: Make) -> None:
    store = make(clock=Clock())
    data = b"\x89PNG\r\n\x1a\n" + bytes(range(256))
    ref = store.put(data, mime="image/png", display_name="shot.png", tool_call_id="call-1", metadata={"w": 320})
    hexd = hashlib.sha256(data).hexdigest()
    assert ref.uri == f"artefact://sha256/{hexd}"
    assert ref.digest == f"sha256:{hexd}"
    assert ref.size_bytes == len(data)
    assert ref.created_at == "2026-12-02T14:00:00.000Z"
    assert ref.expires_at == "2026-12-02T15:00:00.000Z"
    assert store.get(ref.uri) == (ref, data)
    assert ref.wire() == {
        "uri": ref.uri,
        "mime": "image/png",
        "size_bytes": len(data),
        "display_name": "shot.png",
        "digest": f"sha256:{hexd}",
        "tool_call_id": "call-1",
        "created_at": "2026-12-02T14:00:00.000Z",
        "expires_at": "2026-12-02T15:00:00.000Z",
        "metadata": {"w": 320},
    }


def test_timestamps_keep_milliseconds_and_default_mime(make: Make) -> None:
    ref = make(clock=Clock(T0 + 0.25)).put(b"x", ttl_s=1.5)
    assert (ref.created_at, ref.expires_at) == ("2026-12-02T14:00:00.250Z", "2026-12-02T14:00:01.750Z")
    assert ref.mime == "application/octet-stream"


def test_blob_contents_is_base64_of_the_bytes(make: Make) -> None:
    store = make(clock=Clock())
    data = bytes(range(256)) * 3
    ref = store.put(data, mime="application/zip")
    blob = store.blob_contents(ref.uri)
    assert blob is not None
    assert base64.b64decode(blob.blob) == data
    assert blob.model_dump(by_alias=True, exclude_none=True) == {
        "uri": ref.uri,
        "mimeType": "application/zip",
        "blob": base64.b64encode(data).decode(),
    }
    assert store.blob_contents(_uri(b"never stored")) is None


def test_same_bytes_are_stored_once_and_refreshed(make: Make) -> None:
    clock = Clock()
    store = make(clock=clock)
    first = store.put(b"a" * 100, display_name="one")
    other = store.put(b"b" * 10)
    clock.t += 60
    second = store.put(b"a" * 100, display_name="two", mime="text/plain")
    assert second.uri == first.uri
    assert (second.display_name, second.mime, second.expires_at) == ("two", "text/plain", "2026-12-02T15:01:00.000Z")
    assert len(store) == 2
    assert store.total_bytes == 110
    assert store.get(first.uri) == (second, b"a" * 100)
    # The refresh moved it behind the other one.
    assert store.refs() == [other, second]


def test_ttl_expiry_with_an_injected_clock(make: Make) -> None:
    clock = Clock()
    store = make(ArtefactLimits(default_ttl_s=10), clock=clock)
    short = store.put(b"short")
    long = store.put(b"long", ttl_s=100)
    clock.t += 9.999
    assert store.get(short.uri) is not None
    clock.t += 0.001
    assert store.get(short.uri) is None
    assert store.evicted_expired == 1
    assert (len(store), store.total_bytes) == (1, 4)
    assert store.refs() == [long]
    clock.t += 90
    assert store.refs() == []
    assert (store.evicted_expired, len(store), store.total_bytes) == (2, 0, 0)


def test_a_put_evicts_expired_entries_first(make: Make) -> None:
    clock = Clock()
    store = make(ArtefactLimits(max_entries=2), clock=clock)
    keep = store.put(b"keep", ttl_s=100)
    store.put(b"stale", ttl_s=1)
    clock.t += 2
    new = store.put(b"new")
    assert store.refs() == [keep, new]
    assert (store.evicted_expired, store.evicted_for_space) == (1, 0)


def test_eviction_by_max_entries_drops_the_oldest(make: Make) -> None:
    store = make(ArtefactLimits(max_entries=3), clock=Clock())
    refs = [store.put(bytes([i]) * 4) for i in range(5)]
    assert store.refs() == refs[2:]
    assert store.evicted_for_space == 2
    assert store.get(refs[0].uri) is None
    assert store.get(refs[1].uri) is None
    assert (len(store), store.total_bytes) == (3, 12)


def test_eviction_by_max_total_bytes_drops_the_oldest(make: Make) -> None:
    store = make(ArtefactLimits(max_body_bytes=100, max_total_bytes=100), clock=Clock())
    a = store.put(b"a" * 40)
    b = store.put(b"b" * 40)
    c = store.put(b"c" * 30)  # 110 bytes: a goes
    assert store.refs() == [b, c]
    d = store.put(b"d" * 100)  # only d fits
    assert store.refs() == [d]
    assert (store.total_bytes, store.evicted_for_space) == (100, 3)
    assert store.get(a.uri) is None


def test_a_refresh_saves_an_entry_from_eviction(make: Make) -> None:
    store = make(ArtefactLimits(max_entries=2), clock=Clock())
    a = store.put(b"a")
    store.put(b"b")
    a2 = store.put(b"a")
    c = store.put(b"c")
    assert store.refs() == [a2, c]
    assert a2.uri == a.uri


def test_over_size_put_raises_with_the_sizes(make: Make) -> None:
    store = make(clock=Clock())
    with pytest.raises(ArtefactTooLarge) as info:
        store.put(b"\0" * (9 * 1024 * 1024))
    assert str(info.value) == "artefact of 9437184 bytes is over the 8388608-byte limit"
    assert (info.value.size, info.value.limit) == (9437184, 8388608)
    assert len(store) == 0
    assert store.put(b"\0" * (8 * 1024 * 1024)).size_bytes == 8388608


def test_another_session_cannot_read(make: Make) -> None:
    store = make(clock=Clock())
    mine = store.put(b"secret", session_id="A", display_name="a.png")
    assert store.get(mine.uri, session_id="B") is None
    assert store.blob_contents(mine.uri, session_id="B") is None
    assert store.refs("B") == []
    assert store.get(mine.uri, session_id="A") == (mine, b"secret")
    assert store.get(mine.uri) == (mine, b"secret")  # the server itself reads all


def test_the_same_bytes_from_two_sessions_stay_separate(make: Make) -> None:
    store = make(clock=Clock())
    a = store.put(b"blank page", session_id="A", tool_call_id="a-1")
    b = store.put(b"blank page", session_id="B", tool_call_id="b-1")
    # One digest, two refs: each session's uri carries its session, the store reads by digest.
    assert (a.digest, a.uri, b.uri) == (b.digest, artefact_uri(a.digest[7:], "A"), artefact_uri(a.digest[7:], "B"))
    assert store.get(a.uri, session_id="A") == (a, b"blank page")
    assert store.get(a.uri, session_id="B") == (b, b"blank page")
    assert store.get(a.uri, session_id="C") is None
    assert store.get(a.uri) == (b, b"blank page")  # the newest
    assert (len(store), store.total_bytes) == (2, 10)
    assert store.refs("A") == [a]
    assert store.refs() == [a, b]


def test_a_ref_without_a_session_is_readable_by_every_session(make: Make) -> None:
    store = make(clock=Clock())
    shared = store.put(b"built bundle")
    assert store.get(shared.uri, session_id="A") == (shared, b"built bundle")
    own = store.put(b"built bundle", session_id="A", display_name="mine")
    assert store.get(shared.uri, session_id="A") == (own, b"built bundle")
    assert store.get(shared.uri, session_id="B") == (shared, b"built bundle")
    assert store.refs("A") == [own]
    assert store.refs("B") == [shared]
    assert store.total_bytes == 12


def test_bytes_go_with_the_last_ref(make: Make) -> None:
    store = make(ArtefactLimits(max_entries=2), clock=Clock())
    store.put(b"x" * 5, session_id="A")
    store.put(b"x" * 5, session_id="B")
    assert store.total_bytes == 5
    store.put(b"y")  # A's ref goes, B still holds the bytes
    assert (len(store), store.total_bytes) == (2, 6)
    store.put(b"z")  # B's ref goes, and the bytes with it
    assert (len(store), store.total_bytes) == (2, 2)


@pytest.mark.parametrize(
    "uri",
    [
        "artefact://sha256/XYZ",
        "artefact://sha256/" + "A" * 64,
        "artefact://sha256/" + "a" * 63,
        "artefact://sha256/" + "a" * 65,
        "artefact://sha1/" + "a" * 64,
        "file://sha256/" + "a" * 64,
        "ARTEFACT://sha256/" + "a" * 64,
        "artefact://sha256/" + "a" * 64 + "\n",
        "artefact://sha256/" + "a" * 64 + "/../../etc/passwd",
        "artefact://sha256/../../../etc/passwd",
        "artefact://sha256/%2e%2e/" + "a" * 64,
        "/tmp/artefacts/" + "a" * 64,
        "",
    ],
)
def test_malformed_uris_give_none(uri: str, make: Make) -> None:
    store = make(clock=Clock())
    store.put(b"x")
    assert parse_uri(uri) is None
    assert ArtefactStore.parse_uri(uri) is None
    assert store.get(uri) is None
    assert store.blob_contents(uri) is None


def test_parse_uri_gives_the_hex_digest() -> None:
    hexd = hashlib.sha256(b"x").hexdigest()
    assert parse_uri(f"artefact://sha256/{hexd}") == hexd
    assert parse_uri(f"artefact://sha256/{hexd}?session=s1-ab") == hexd
    assert (session_in_uri(f"artefact://sha256/{hexd}?session=s1-ab"), session_in_uri(f"artefact://sha256/{hexd}")) == (
        "s1-ab",
        None,
    )
    assert parse_uri(f"artefact://sha256/{hexd}?session=a/b") is None


def test_resource_template() -> None:
    template = resource_template()
    wire = template.model_dump(by_alias=True, exclude_none=True)
    assert wire["uriTemplate"] == ARTEFACT_URI_TEMPLATE == "artefact://sha256/{digest}{?session}"
    assert (wire["name"], wire["mimeType"]) == ("artefact", "application/octet-stream")
    assert wire["title"] and wire["description"]


@pytest.mark.parametrize(
    "bad",
    [
        {"max_body_bytes": 0},
        {"max_entries": 0},
        {"max_total_bytes": -1},
        {"default_ttl_s": 0},
        {"default_ttl_s": float("inf")},
        {"max_body_bytes": 101, "max_total_bytes": 100},
    ],
)
def test_limits_are_validated(bad: dict[str, float]) -> None:
    with pytest.raises(ValidationError):
        ArtefactLimits.model_validate(bad)


@pytest.mark.parametrize("ttl", [0, -1, float("nan"), float("inf"), 1e300])
def test_a_bad_ttl_is_refused(ttl: float, make: Make) -> None:
    store = make(clock=Clock())
    with pytest.raises(ValueError):
        store.put(b"x", ttl_s=ttl)
    assert len(store) == 0


def test_file_ref_is_frozen_and_has_no_path() -> None:
    ref = ArtefactStore(clock=Clock()).put(b"x")
    with pytest.raises(ValidationError):
        ref.uri = "file:///etc/passwd"  # type: ignore[misc]
    with pytest.raises(ValidationError):
        FileRef.model_validate({**ref.wire(), "uri": "file:///tmp/x"})
    with pytest.raises(ValidationError):
        FileRef.model_validate({**ref.wire(), "path": "/tmp/x"})


def test_a_bytearray_changed_after_put_does_not_change_the_artefact(make: Make) -> None:
    store = make(clock=Clock())
    data = bytearray(b"before")
    ref = store.put(data)  # type: ignore[arg-type]
    data[:] = b"after!"
    assert store.get(ref.uri) == (ref, b"before")


def test_many_threads_putting(make: Make) -> None:
    limits = ArtefactLimits(max_entries=50, max_body_bytes=1000, max_total_bytes=2000)
    store = make(limits)
    errors: list[BaseException] = []
    barrier = threading.Barrier(16)
    rounds = 40 if make.shared else 300  # a shared put is a transaction: fewer, for the suite's time

    def work(n: int) -> None:
        try:
            barrier.wait()
            for i in range(rounds):
                data = f"{n}:{i}".encode() * (i % 7 + 1)
                ref = store.put(data, session_id=f"s{n % 4}")
                found = store.get(ref.uri)
                if found is not None:
                    assert found[1] == data
                assert len(store) <= 50
                assert store.total_bytes <= 2000
                store.refs(f"s{n % 4}")
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(store) <= 50
    sizes = {r.uri: r.size_bytes for r in store.refs()}  # bytes are counted once per uri
    assert store.total_bytes == sum(sizes.values())
    assert store.evicted_for_space == 16 * rounds - len(store)


def test_thousands_of_puts_stay_within_the_bounds(make: Make) -> None:
    limits = ArtefactLimits(max_entries=64, max_body_bytes=512, max_total_bytes=4096)
    store = make(limits, clock=Clock())
    puts = 2_000 if make.shared else 10_000
    for i in range(puts):
        store.put(i.to_bytes(4, "big") * (i % 128 + 1))
        assert len(store) <= 64
        assert store.total_bytes <= 4096
    survivors = store.refs()
    assert store.total_bytes == sum(r.size_bytes for r in survivors)
    assert store.evicted_for_space == puts - len(survivors)
    last = puts - 1
    assert store.get(_uri(last.to_bytes(4, "big") * (last % 128 + 1))) is not None


# -- shared through the state store -----------------------------------------------------------------


def test_every_byte_value_round_trips(make: Make) -> None:
    data = bytes(range(256)) + bytes(reversed(range(256))) + b"\0\0"
    store = make(clock=Clock())
    ref = store.put(data, mime="application/octet-stream", session_id="s-a")
    readers = [store, make(clock=Clock())] if make.shared else [store]  # the second: another instance
    for reader in readers:
        found = reader.get(ref.uri, session_id="s-a")
        assert found == (ref, data) and type(found[1]) is bytes
        blob = reader.blob_contents(ref.uri, session_id="s-a")
        assert blob is not None and base64.b64decode(blob.blob) == data
    assert (len(store), store.total_bytes, ref.size_bytes) == (1, 514, 514)


def test_a_put_through_one_instance_reads_the_same_through_another(instance: Make) -> None:
    clock = Clock()
    one, two = instance(clock=clock), instance(clock=clock)
    data = b"\x89PNG\r\n\x1a\n" + b"pixels" * 100
    metadata: dict[str, MetadataValue] = {"w": 320, "ratio": 1.5, "dark": True, "theme": "light"}
    ref = one.put(
        data,
        mime="image/png",
        display_name="shot.png",
        session_id="s-a",
        tool_call_id="call-1",
        correlation_id="corr-1",
        producer_job_id="job-1",
        metadata=metadata,
    )
    assert two.get(ref.uri, session_id="s-a") == (ref, data)
    assert two.get(ref.uri) == (ref, data)  # the server itself
    assert two.get(ref.uri, session_id="s-b") is None
    assert two.blob_contents(ref.uri, session_id="s-a") == one.blob_contents(ref.uri, session_id="s-a")
    assert two.blob_contents(ref.uri, session_id="s-b") is None
    assert (two.refs("s-a"), two.refs("s-b"), two.refs()) == ([ref], [], [ref])
    assert (len(two), two.total_bytes) == (1, len(data))
    # A refresh through the other instance is what the first now reads, still stored once.
    clock.t += 60
    again = two.put(data, session_id="s-a", display_name="again.png")
    shared = two.put(data)
    assert one.get(ref.uri, session_id="s-a") == (again, data)
    assert one.get(ref.uri, session_id="s-b") == (shared, data)
    assert (one.refs("s-a"), one.refs("s-b"), one.refs()) == ([again], [shared], [again, shared])
    assert (len(one), one.total_bytes) == (2, len(data))


def test_eviction_by_one_instance_bounds_the_others_view(instance: Make) -> None:
    clock = Clock()
    limits = ArtefactLimits(max_entries=3, max_body_bytes=100, max_total_bytes=100, default_ttl_s=100)
    one, two = instance(limits, clock), instance(limits, clock)
    old = [one.put(bytes([i]) * 10) for i in range(3)]
    new = two.put(b"n" * 10)  # over max_entries: two drops the oldest, which one put
    assert one.get(old[0].uri) is None
    assert one.refs() == [*old[1:], new]
    assert (len(one), one.total_bytes) == (3, 30)
    big = one.put(b"b" * 90)  # over max_total_bytes: one drops old[1] and old[2]
    assert two.refs() == [new, big]
    assert two.get(old[2].uri) is None
    assert (len(two), two.total_bytes) == (2, 100)
    # The counters are each instance's own.
    assert (one.evicted_for_space, two.evicted_for_space) == (2, 1)
    # Expiry holds for every instance: one's ref, expired, is gone through two.
    clock.t += 100
    assert two.get(big.uri) is None
    assert two.refs() == [] and (len(one), one.total_bytes) == (0, 0)
    assert (one.evicted_expired, two.evicted_expired) == (0, 2)


def test_concurrent_puts_on_two_instances_keep_the_bounds(instance: Make) -> None:
    max_entries, max_bytes = 8, 6000
    limits = ArtefactLimits(max_entries=max_entries, max_body_bytes=1500, max_total_bytes=max_bytes)
    stores = [instance(limits), instance(limits)]
    watcher = instance.new_store
    assert watcher is not None
    db = watcher()
    threads_per_store, rounds = 4, 25
    common = b"the same bytes from every thread"
    errors: list[BaseException] = []
    done = threading.Event()
    barrier = threading.Barrier(2 * threads_per_store + 1)
    samples: list[tuple[int, ...]] = []

    def work(store: ArtefactStore, n: int) -> None:
        try:
            barrier.wait()
            store.put(common, session_id=f"s{n}")  # one digest, many holders
            for i in range(rounds):
                data = f"{n}:{i}:".encode() * (i * 13 % 150 + 1)  # distinct, up to 1500 bytes
                ref = store.put(data, session_id=f"s{n}")
                found = store.get(ref.uri, session_id=f"s{n}")
                assert found is None or found[1] == data  # None: another put has evicted it already
        except BaseException as exc:
            errors.append(exc)

    def watch() -> None:
        # One statement, so one snapshot: what any reader of the tables could see at that moment.
        query = (
            "SELECT (SELECT COUNT(*) FROM artefact_refs), (SELECT COALESCE(SUM(size), 0) FROM artefact_blobs),"
            " (SELECT COUNT(*) FROM artefact_blobs b WHERE NOT EXISTS"
            " (SELECT 1 FROM artefact_refs r WHERE r.digest = b.digest)),"
            " (SELECT COUNT(*) FROM artefact_refs r WHERE NOT EXISTS"
            " (SELECT 1 FROM artefact_blobs b WHERE b.digest = r.digest)),"
            " (SELECT COUNT(DISTINCT seq) FROM artefact_refs)"
        )
        try:
            barrier.wait()
            while not done.is_set():
                samples.append(tuple(int(v) for v in db.execute(query)[0]))
        except BaseException as exc:
            errors.append(exc)

    workers = [threading.Thread(target=work, args=(stores[n % 2], n)) for n in range(2 * threads_per_store)]
    sampler = threading.Thread(target=watch)
    for t in [*workers, sampler]:
        t.start()
    for t in workers:
        t.join()
    done.set()
    sampler.join()
    assert errors == []
    assert len(samples) > 10
    for refs, total, orphan_blobs, refs_without_bytes, distinct_seqs in samples:
        assert refs <= max_entries and total <= max_bytes
        assert (orphan_blobs, refs_without_bytes, distinct_seqs) == (0, 0, refs)
    survivors = stores[0].refs()
    assert len(survivors) == len(stores[1]) <= max_entries
    assert stores[1].total_bytes == sum({r.uri: r.size_bytes for r in survivors}.values())
    puts = 2 * threads_per_store * (rounds + 1)
    assert stores[0].evicted_for_space + stores[1].evicted_for_space == puts - len(survivors)
    for ref in survivors:
        for store in stores:
            found = store.get(ref.uri)
            assert found is not None and hashlib.sha256(found[1]).hexdigest() == parse_uri(ref.uri)


def test_a_shared_store_spells_no_session_as_empty(instance: Make) -> None:
    new_store = instance.new_store
    assert new_store is not None
    db = new_store()
    store = ArtefactStore(clock=Clock(), store=db)
    ref = store.put(b"for everyone")
    assert db.execute("SELECT session_id, ref FROM artefact_refs") == [("", ref.model_dump_json())]
    with pytest.raises(ValueError, match="session id must not be empty"):
        store.put(b"for everyone", session_id="")
    assert store.refs() == [ref] and store.get(ref.uri, session_id="") == (ref, b"for everyone")
