"""The artefact store: content addressing, bounds, expiry, session isolation, uri parsing."""

from __future__ import annotations

import base64
import hashlib
import threading

import pytest
from pydantic import ValidationError

from skillc.server.artefacts import (
    ARTEFACT_URI_TEMPLATE,
    ArtefactLimits,
    ArtefactStore,
    ArtefactTooLarge,
    FileRef,
    parse_uri,
    resource_template,
)

T0 = 1_796_220_000.0  # 2026-12-02T14:00:00Z


class Clock:
    def __init__(self, t: float = T0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def _uri(data: bytes) -> str:
    return f"artefact://sha256/{hashlib.sha256(data).hexdigest()}"


def test_ref_is_content_addressed_and_bytes_round_trip() -> None:
    store = ArtefactStore(clock=Clock())
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


def test_timestamps_keep_milliseconds_and_default_mime() -> None:
    ref = ArtefactStore(clock=Clock(T0 + 0.25)).put(b"x", ttl_s=1.5)
    assert (ref.created_at, ref.expires_at) == ("2026-12-02T14:00:00.250Z", "2026-12-02T14:00:01.750Z")
    assert ref.mime == "application/octet-stream"


def test_blob_contents_is_base64_of_the_bytes() -> None:
    store = ArtefactStore(clock=Clock())
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


def test_same_bytes_are_stored_once_and_refreshed() -> None:
    clock = Clock()
    store = ArtefactStore(clock=clock)
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


def test_ttl_expiry_with_an_injected_clock() -> None:
    clock = Clock()
    store = ArtefactStore(ArtefactLimits(default_ttl_s=10), clock=clock)
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


def test_a_put_evicts_expired_entries_first() -> None:
    clock = Clock()
    store = ArtefactStore(ArtefactLimits(max_entries=2), clock=clock)
    keep = store.put(b"keep", ttl_s=100)
    store.put(b"stale", ttl_s=1)
    clock.t += 2
    new = store.put(b"new")
    assert store.refs() == [keep, new]
    assert (store.evicted_expired, store.evicted_for_space) == (1, 0)


def test_eviction_by_max_entries_drops_the_oldest() -> None:
    store = ArtefactStore(ArtefactLimits(max_entries=3), clock=Clock())
    refs = [store.put(bytes([i]) * 4) for i in range(5)]
    assert store.refs() == refs[2:]
    assert store.evicted_for_space == 2
    assert store.get(refs[0].uri) is None
    assert store.get(refs[1].uri) is None
    assert (len(store), store.total_bytes) == (3, 12)


def test_eviction_by_max_total_bytes_drops_the_oldest() -> None:
    store = ArtefactStore(ArtefactLimits(max_body_bytes=100, max_total_bytes=100), clock=Clock())
    a = store.put(b"a" * 40)
    b = store.put(b"b" * 40)
    c = store.put(b"c" * 30)  # 110 bytes: a goes
    assert store.refs() == [b, c]
    d = store.put(b"d" * 100)  # only d fits
    assert store.refs() == [d]
    assert (store.total_bytes, store.evicted_for_space) == (100, 3)
    assert store.get(a.uri) is None


def test_a_refresh_saves_an_entry_from_eviction() -> None:
    store = ArtefactStore(ArtefactLimits(max_entries=2), clock=Clock())
    a = store.put(b"a")
    store.put(b"b")
    a2 = store.put(b"a")
    c = store.put(b"c")
    assert store.refs() == [a2, c]
    assert a2.uri == a.uri


def test_over_size_put_raises_with_the_sizes() -> None:
    store = ArtefactStore(clock=Clock())
    with pytest.raises(ArtefactTooLarge) as info:
        store.put(b"\0" * (9 * 1024 * 1024))
    assert str(info.value) == "artefact of 9437184 bytes is over the 8388608-byte limit"
    assert (info.value.size, info.value.limit) == (9437184, 8388608)
    assert len(store) == 0
    assert store.put(b"\0" * (8 * 1024 * 1024)).size_bytes == 8388608


def test_another_session_cannot_read() -> None:
    store = ArtefactStore(clock=Clock())
    mine = store.put(b"secret", session_id="A", display_name="a.png")
    assert store.get(mine.uri, session_id="B") is None
    assert store.blob_contents(mine.uri, session_id="B") is None
    assert store.refs("B") == []
    assert store.get(mine.uri, session_id="A") == (mine, b"secret")
    assert store.get(mine.uri) == (mine, b"secret")  # the server itself reads all


def test_the_same_bytes_from_two_sessions_stay_separate() -> None:
    store = ArtefactStore(clock=Clock())
    a = store.put(b"blank page", session_id="A", tool_call_id="a-1")
    b = store.put(b"blank page", session_id="B", tool_call_id="b-1")
    assert a.uri == b.uri
    assert store.get(a.uri, session_id="A") == (a, b"blank page")
    assert store.get(a.uri, session_id="B") == (b, b"blank page")
    assert store.get(a.uri, session_id="C") is None
    assert store.get(a.uri) == (b, b"blank page")  # the newest
    assert (len(store), store.total_bytes) == (2, 10)
    assert store.refs("A") == [a]
    assert store.refs() == [a, b]


def test_a_ref_without_a_session_is_readable_by_every_session() -> None:
    store = ArtefactStore(clock=Clock())
    shared = store.put(b"built bundle")
    assert store.get(shared.uri, session_id="A") == (shared, b"built bundle")
    own = store.put(b"built bundle", session_id="A", display_name="mine")
    assert store.get(shared.uri, session_id="A") == (own, b"built bundle")
    assert store.get(shared.uri, session_id="B") == (shared, b"built bundle")
    assert store.refs("A") == [own]
    assert store.refs("B") == [shared]
    assert store.total_bytes == 12


def test_bytes_go_with_the_last_ref() -> None:
    store = ArtefactStore(ArtefactLimits(max_entries=2), clock=Clock())
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
def test_malformed_uris_give_none(uri: str) -> None:
    store = ArtefactStore(clock=Clock())
    store.put(b"x")
    assert parse_uri(uri) is None
    assert ArtefactStore.parse_uri(uri) is None
    assert store.get(uri) is None
    assert store.blob_contents(uri) is None


def test_parse_uri_gives_the_hex_digest() -> None:
    hexd = hashlib.sha256(b"x").hexdigest()
    assert parse_uri(ARTEFACT_URI_TEMPLATE.format(digest=hexd)) == hexd


def test_resource_template() -> None:
    template = resource_template()
    wire = template.model_dump(by_alias=True, exclude_none=True)
    assert wire["uriTemplate"] == "artefact://sha256/{digest}"
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
def test_a_bad_ttl_is_refused(ttl: float) -> None:
    store = ArtefactStore(clock=Clock())
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


def test_a_bytearray_changed_after_put_does_not_change_the_artefact() -> None:
    store = ArtefactStore(clock=Clock())
    data = bytearray(b"before")
    ref = store.put(data)  # type: ignore[arg-type]
    data[:] = b"after!"
    assert store.get(ref.uri) == (ref, b"before")


def test_many_threads_putting() -> None:
    limits = ArtefactLimits(max_entries=50, max_body_bytes=1000, max_total_bytes=2000)
    store = ArtefactStore(limits)
    errors: list[BaseException] = []
    barrier = threading.Barrier(16)

    def work(n: int) -> None:
        try:
            barrier.wait()
            for i in range(300):
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
    assert store.evicted_for_space == 16 * 300 - len(store)


def test_ten_thousand_puts_stay_within_the_bounds() -> None:
    limits = ArtefactLimits(max_entries=64, max_body_bytes=512, max_total_bytes=4096)
    store = ArtefactStore(limits, clock=Clock())
    for i in range(10_000):
        store.put(i.to_bytes(4, "big") * (i % 128 + 1))
        assert len(store) <= 64
        assert store.total_bytes <= 4096
    survivors = store.refs()
    assert store.total_bytes == sum(r.size_bytes for r in survivors)
    assert store.evicted_for_space == 10_000 - len(survivors)
    assert store.get(_uri((9_999).to_bytes(4, "big") * (9_999 % 128 + 1))) is not None
