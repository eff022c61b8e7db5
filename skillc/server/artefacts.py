"""A bounded, content-addressed store for large or binary tool outputs (screenshots, built
artefacts, big Render IR documents, fallback cards for oversized results).

A tool result carries a small :class:`FileRef` in the model's context; the client fetches the bytes
with ``resources/read`` on the ref's ``artefact://sha256/<hex>`` uri, answered by
:meth:`ArtefactStore.blob_contents`. The uri names the content, never a filesystem path, so it
reveals nothing about the machine the server runs on.

Sessions. Each ref is kept per ``(digest, session_id)``: the bytes are stored once per digest, but
two clients that produce the same bytes each get their own ref (their own tool call, display name
and expiry), and neither sees the other's. A reader passing a ``session_id`` reads its own refs and
refs stored without a session; a reader passing ``session_id=None`` is the server itself and reads
everything. The server must therefore always pass the client's session id when it serves a
client's request. A session's ref has the uri ``artefact://sha256/<hex>?session=<id>``, so the uri
a result hands out names whose ref it is; the server reads it as that session only when the id
verifies for the caller (skillc/server/sessions.py), and a ref stored without a session keeps the
plain ``artefact://sha256/<hex>``, readable by anyone who knows it.

Bounds. ``max_entries`` counts refs, ``max_total_bytes`` counts stored bytes (each digest once).
After every put the store drops expired refs, then the least recently put refs until both bounds
hold; a blob goes when its last ref goes.

Shared. Given a state store (``ArtefactStore(limits, store=open_state(...))``), refs and bytes
live in its ``artefact_refs`` and ``artefact_blobs`` tables instead of this process's memory, so a
uri one server instance returned reads the same through any instance on the same store, with the
same rules. A put and its evictions run in one transaction under the store-wide ``artefacts``
lock; reads take no lock unless they find an expired ref to drop. Times are kept to the
millisecond, the eviction counters count this instance's evictions, and every instance should use
the same limits (each put enforces the putter's). An empty session id is refused there: the
tables spell "no session" as ``''``.
"""

from __future__ import annotations

import base64
import hashlib
import math
import re
import threading
import time
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated

from mcp_types import BlobResourceContents, ResourceTemplate
from pydantic import BaseModel, ConfigDict, Field, model_validator

from skillc.runtime.state.store import StateStore, Tx

ARTEFACT_URI_TEMPLATE = "artefact://sha256/{digest}{?session}"
DEFAULT_MIME = "application/octet-stream"
MiB = 1024 * 1024

# Only lowercase: the uri is an identity, and two spellings of one digest would be two identities.
# A session's artefact carries the session capability in its uri (``?session=``): the uri a result
# hands out is then readable by whoever holds it, and by no one who only knows the digest.
_SESSION_CHARS = r"[A-Za-z0-9_-]{1,128}"
_URI_RE = re.compile(rf"artefact://sha256/([0-9a-f]{{64}})(?:\?session=({_SESSION_CHARS}))?")
_URI_PATTERN = rf"^artefact://sha256/[0-9a-f]{{64}}(\?session={_SESSION_CHARS})?$"
_DIGEST_PATTERN = r"^sha256:[0-9a-f]{64}$"
_TIME_PATTERN = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$"

MetadataValue = str | int | float | bool
Timestamp = Annotated[str, Field(pattern=_TIME_PATTERN)]


class FileRef(BaseModel):
    """What a tool result shows of an artefact: enough to describe it and fetch it, no bytes."""

    # Snake_case on the wire, as the runtime contract spells it (unlike the camelCase MCP types).
    model_config = ConfigDict(frozen=True, extra="forbid")

    uri: Annotated[str, Field(pattern=_URI_PATTERN)]
    mime: Annotated[str, Field(min_length=1)] = DEFAULT_MIME
    size_bytes: Annotated[int, Field(ge=0)]
    display_name: str | None = None
    digest: Annotated[str, Field(pattern=_DIGEST_PATTERN)]
    producer_job_id: str | None = None
    tool_call_id: str | None = None
    session_id: str | None = None
    correlation_id: str | None = None
    created_at: Timestamp
    expires_at: Timestamp
    metadata: dict[str, MetadataValue] = Field(default_factory=dict)

    def wire(self) -> dict[str, object]:
        return self.model_dump(exclude_none=True, mode="json")


class ArtefactLimits(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    max_body_bytes: Annotated[int, Field(gt=0)] = 8 * MiB
    max_entries: Annotated[int, Field(gt=0)] = 256
    max_total_bytes: Annotated[int, Field(gt=0)] = 64 * MiB
    default_ttl_s: Annotated[float, Field(gt=0, allow_inf_nan=False)] = 3600.0

    @model_validator(mode="after")
    def _body_fits_in_total(self) -> ArtefactLimits:
        # Otherwise an accepted put could be evicted by its own insert and its ref would dangle.
        if self.max_body_bytes > self.max_total_bytes:
            raise ValueError(f"max_body_bytes ({self.max_body_bytes}) is over max_total_bytes ({self.max_total_bytes})")
        return self


class ArtefactTooLarge(ValueError):
    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"artefact of {size} bytes is over the {limit}-byte limit")
        self.size = size
        self.limit = limit


def parse_uri(uri: str) -> str | None:
    """The hex digest of a well-formed ``artefact://sha256/<64 lowercase hex>[?session=<id>]`` uri,
    else None."""
    match = _URI_RE.fullmatch(uri)
    return match.group(1) if match else None


def session_in_uri(uri: str) -> str | None:
    """The session a well-formed artefact uri carries (None: none, or not an artefact uri). It is
    only a claim: the server verifies it for the caller before reading that session's refs."""
    match = _URI_RE.fullmatch(uri)
    return match.group(2) if match else None


def artefact_uri(hex_digest: str, session_id: str | None = None) -> str:
    """The uri of a digest's ref: a session's carries the session, a session-less one does not."""
    base = f"artefact://sha256/{hex_digest}"
    return base if not session_id else f"{base}?session={session_id}"


def resource_template() -> ResourceTemplate:
    """The ``resources/templates/list`` entry announcing artefact uris."""
    return ResourceTemplate(
        uri_template=ARTEFACT_URI_TEMPLATE,
        name="artefact",
        title="Artefact",
        description=(
            "Bytes of a large or binary tool output (screenshot, build artefact, Render IR document), "
            "addressed by the SHA-256 of its content. Read the uri a tool result's file ref gives, as given: "
            "a session's artefact carries its session (?session=), and only that session's caller reads it."
        ),
        mime_type=DEFAULT_MIME,
    )


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, tz=UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _ms(t: float) -> int:
    return round(t * 1000)


@dataclass(frozen=True)
class _Put:
    """A checked put waiting for its time: the index reads the clock under its lock, so put order
    and ``created_at`` agree."""

    hex_digest: str
    body: bytes
    session_id: str | None
    ttl: float
    mime: str
    display_name: str | None
    tool_call_id: str | None
    correlation_id: str | None
    producer_job_id: str | None
    metadata: dict[str, MetadataValue]

    def ref_at(self, now: float) -> FileRef:
        try:
            expires_at = _iso(now + self.ttl)
        except (OverflowError, OSError, ValueError) as exc:
            raise ValueError(f"ttl_s {self.ttl!r} puts the expiry out of range") from exc
        return FileRef(
            uri=artefact_uri(self.hex_digest, self.session_id),
            mime=self.mime,
            size_bytes=len(self.body),
            display_name=self.display_name,
            digest=f"sha256:{self.hex_digest}",
            producer_job_id=self.producer_job_id,
            tool_call_id=self.tool_call_id,
            session_id=self.session_id,
            correlation_id=self.correlation_id,
            created_at=_iso(now),
            expires_at=expires_at,
            metadata=self.metadata,
        )


class _Index(ABC):
    """Where the refs and bytes live and how the bounds are kept; :class:`ArtefactStore` checks
    the arguments and delegates. Every method must be safe to call from several threads."""

    def __init__(self, limits: ArtefactLimits, clock: Callable[[], float]) -> None:
        self.limits = limits
        self.clock = clock

    @abstractmethod
    def put(self, put: _Put) -> FileRef: ...

    @abstractmethod
    def get(self, hex_digest: str, session_id: str | None) -> tuple[FileRef, bytes] | None: ...

    @abstractmethod
    def refs(self, session_id: str | None) -> list[FileRef]: ...

    @abstractmethod
    def count(self) -> int: ...

    @abstractmethod
    def total_bytes(self) -> int: ...

    @abstractmethod
    def evictions(self) -> tuple[int, int]:
        """(expired, for space) so far."""


_Key = tuple[str, str | None]  # (hex digest, session id)


@dataclass(frozen=True)
class _Entry:
    ref: FileRef
    expires: float  # clock seconds; the ref's expires_at is only its rendering
    seq: int  # put order; created_at has millisecond ties


class _MemoryIndex(_Index):
    """This process's memory: every method takes the one lock, so puts and reads from the
    server's request threads and the runner's worker threads see one consistent store."""

    def __init__(self, limits: ArtefactLimits, clock: Callable[[], float]) -> None:
        super().__init__(limits, clock)
        self._lock = threading.Lock()
        # Oldest first; a refresh moves the ref to the end, so the front is what to evict next.
        self._entries: OrderedDict[_Key, _Entry] = OrderedDict()
        self._blobs: dict[str, bytes] = {}
        self._holders: dict[str, set[str | None]] = {}  # digest -> sessions with a ref to it
        self._total_bytes = 0
        self._evicted_expired = 0
        self._evicted_for_space = 0
        self._seq = 0

    def put(self, put: _Put) -> FileRef:
        with self._lock:
            now = self.clock()
            ref = put.ref_at(now)
            key: _Key = (put.hex_digest, put.session_id)
            self._entries.pop(key, None)
            self._seq += 1
            self._entries[key] = _Entry(ref, now + put.ttl, self._seq)
            self._holders.setdefault(put.hex_digest, set()).add(put.session_id)
            if put.hex_digest not in self._blobs:
                self._blobs[put.hex_digest] = put.body
                self._total_bytes += len(put.body)
            self._evict(now)
            return ref

    def _evict(self, now: float) -> None:
        self._drop_expired(now)
        # The newest ref alone always fits (max_body_bytes <= max_total_bytes), so this stops at it.
        while len(self._entries) > self.limits.max_entries or self._total_bytes > self.limits.max_total_bytes:
            self._drop(next(iter(self._entries)))
            self._evicted_for_space += 1

    def _drop_expired(self, now: float) -> None:
        for key in [k for k, e in self._entries.items() if e.expires <= now]:
            self._drop(key)
            self._evicted_expired += 1

    def _drop(self, key: _Key) -> None:
        del self._entries[key]
        hex_digest, session_id = key
        holders = self._holders[hex_digest]
        holders.discard(session_id)
        if not holders:
            del self._holders[hex_digest]
            self._total_bytes -= len(self._blobs.pop(hex_digest))

    def _live(self, key: _Key, now: float) -> _Entry | None:
        entry = self._entries.get(key)
        if entry is not None and entry.expires <= now:
            self._drop(key)
            self._evicted_expired += 1
            return None
        return entry

    def get(self, hex_digest: str, session_id: str | None) -> tuple[FileRef, bytes] | None:
        with self._lock:
            now = self.clock()
            if session_id is None:
                candidates = [self._live((hex_digest, s), now) for s in list(self._holders.get(hex_digest, ()))]
                live = [e for e in candidates if e is not None]
                # Several sessions may hold the digest; the newest put is the most relevant ref.
                entry = max(live, key=lambda e: e.seq, default=None)
            else:
                entry = self._live((hex_digest, session_id), now) or self._live((hex_digest, None), now)
            if entry is None:
                return None
            return entry.ref, self._blobs[hex_digest]

    def refs(self, session_id: str | None) -> list[FileRef]:
        with self._lock:
            self._drop_expired(self.clock())
            if session_id is None:
                return [e.ref for e in self._entries.values()]
            return [
                e.ref
                for (d, s), e in self._entries.items()
                if s == session_id or (s is None and (d, session_id) not in self._entries)
            ]

    def count(self) -> int:
        with self._lock:
            return len(self._entries)

    def total_bytes(self) -> int:
        with self._lock:
            return self._total_bytes

    def evictions(self) -> tuple[int, int]:
        with self._lock:
            return self._evicted_expired, self._evicted_for_space


# Every write to the two tables happens under this lock, so a put's count-then-evict sees no other
# put, seq (MAX + 1) is unique, and no blob is dropped while a put is adding a ref to it.
STORE_LOCK = "artefacts"
_NO_SESSION = ""  # a key column cannot be NULL


def _column(session_id: str | None) -> str:
    return _NO_SESSION if session_id is None else session_id


class _StoredIndex(_Index):
    """The state store's ``artefact_refs`` and ``artefact_blobs`` tables, shared by every instance
    on the store. Writes run in a transaction under :data:`STORE_LOCK`; reads are single
    statements without it, and a ref or blob gone between two of them reads as gone."""

    def __init__(self, store: StateStore, limits: ArtefactLimits, clock: Callable[[], float]) -> None:
        super().__init__(limits, clock)
        self._store = store
        self._counts_lock = threading.Lock()
        self._evicted_expired = 0
        self._evicted_for_space = 0

    def _counted(self, expired: int, for_space: int = 0) -> None:
        # Called after the commit: a rolled-back transaction evicted nothing.
        with self._counts_lock:
            self._evicted_expired += expired
            self._evicted_for_space += for_space

    # -- writing ---------------------------------------------------------------------------------

    def put(self, put: _Put) -> FileRef:
        if put.session_id == _NO_SESSION:
            raise ValueError("a session id must not be empty: the shared store spells no session as ''")
        store = self._store
        with store.transaction(lock=STORE_LOCK) as tx:
            now = self.clock()
            ref = put.ref_at(now)
            # At least a millisecond: a positive ttl must not expire at its own put, as in memory.
            expires = max(_ms(now + put.ttl), _ms(now) + 1)
            # One round trip for what the put must know: its place in eviction order, and whether
            # the bytes are there already (then they are not sent to the database again).
            seq, stored = tx.execute(
                "SELECT COALESCE(MAX(seq), 0) + 1, EXISTS (SELECT 1 FROM artefact_blobs WHERE digest = ?)"
                " FROM artefact_refs",
                (put.hex_digest,),
            )[0]
            columns = ("digest", "session_id", "seq", "expires", "ref")
            tx.execute(
                store.dialect.upsert("artefact_refs", columns, ("digest", "session_id")),
                (put.hex_digest, _column(put.session_id), int(seq), expires, ref.model_dump_json()),
            )
            if not stored:
                tx.execute(
                    "INSERT INTO artefact_blobs (digest, size, body) VALUES (?, ?, ?)",
                    (put.hex_digest, len(put.body), put.body),
                )
            expired, for_space = self._evict(tx, _ms(now))
        self._counted(expired, for_space)
        return ref

    def _evict(self, tx: Tx, now_ms: int) -> tuple[int, int]:
        """Drop the expired refs, then the oldest until both bounds hold: (expired, for space)."""
        count, total, expired = self._sizes(tx, now_ms)
        if expired:
            expired = self._drop_expired(tx, now_ms)
            count, total, _ = self._sizes(tx, now_ms)
        max_entries, max_bytes = self.limits.max_entries, self.limits.max_total_bytes
        dropped = 0
        while count > max_entries or total > max_bytes:
            # The newest ref alone always fits (max_body_bytes <= max_total_bytes), so this stops at it.
            oldest = tx.execute(
                "SELECT digest, session_id FROM artefact_refs ORDER BY seq LIMIT ?", (max(count - max_entries, 1),)
            )
            if not oldest:
                break  # bytes without a ref: not written by this module, not ours to guess about
            for hex_digest, session in oldest:
                if count <= max_entries and total <= max_bytes:
                    break
                tx.execute("DELETE FROM artefact_refs WHERE digest = ? AND session_id = ?", (hex_digest, session))
                count -= 1
                total -= self._drop_unheld_blob(tx, str(hex_digest))
                dropped += 1
        return expired, dropped

    def _drop_expired(self, tx: Tx, now_ms: int) -> int:
        gone = tx.execute("DELETE FROM artefact_refs WHERE expires <= ? RETURNING digest", (now_ms,))
        for hex_digest in {str(r[0]) for r in gone}:
            self._drop_unheld_blob(tx, hex_digest)
        return len(gone)

    @staticmethod
    def _drop_unheld_blob(tx: Tx, hex_digest: str) -> int:
        """Delete the bytes of ``hex_digest`` if no ref holds them; how many bytes went."""
        rows = tx.execute(
            "DELETE FROM artefact_blobs WHERE digest = ?"
            " AND NOT EXISTS (SELECT 1 FROM artefact_refs WHERE digest = ?) RETURNING size",
            (hex_digest, hex_digest),
        )
        return int(rows[0][0]) if rows else 0

    @staticmethod
    def _sizes(tx: Tx, now_ms: int) -> tuple[int, int, int]:
        """(refs, stored bytes, refs expired at ``now_ms``), in one statement: one snapshot."""
        row = tx.execute(
            "SELECT (SELECT COUNT(*) FROM artefact_refs), (SELECT COALESCE(SUM(size), 0) FROM artefact_blobs),"
            " (SELECT COUNT(*) FROM artefact_refs WHERE expires <= ?)",
            (now_ms,),
        )[0]
        return int(row[0]), int(row[1]), int(row[2])  # PostgreSQL's SUM of a BIGINT is a Decimal

    def _drop_expired_refs(self, hex_digest: str, sessions: list[str], now_ms: int) -> None:
        """A read's clean-up of the expired refs it met (the memory index drops them on sight)."""
        with self._store.transaction(lock=STORE_LOCK) as tx:
            # ``expires <= ?`` again: another instance may have refreshed the ref since the read.
            dropped = sum(
                len(
                    tx.execute(
                        "DELETE FROM artefact_refs WHERE digest = ? AND session_id = ? AND expires <= ? RETURNING 1",
                        (hex_digest, session, now_ms),
                    )
                )
                for session in sessions
            )
            self._drop_unheld_blob(tx, hex_digest)
        self._counted(dropped)

    def _purge_expired(self, now_ms: int) -> None:
        # The lock only when there is something to drop: most reads find nothing expired.
        if self._store.execute("SELECT 1 FROM artefact_refs WHERE expires <= ? LIMIT 1", (now_ms,)):
            with self._store.transaction(lock=STORE_LOCK) as tx:
                dropped = self._drop_expired(tx, now_ms)
            self._counted(dropped)

    # -- reading ---------------------------------------------------------------------------------

    def get(self, hex_digest: str, session_id: str | None) -> tuple[FileRef, bytes] | None:
        now_ms = _ms(self.clock())
        expired: list[str] = []
        chosen: str | None = None
        if session_id is None:
            rows = self._store.execute(
                "SELECT session_id, seq, expires, ref FROM artefact_refs WHERE digest = ?", (hex_digest,)
            )
            expired = [str(s) for s, _, until, _ in rows if int(until) <= now_ms]
            live = [(int(seq), str(ref)) for _, seq, until, ref in rows if int(until) > now_ms]
            # Several sessions may hold the digest; the newest put is the most relevant ref.
            chosen = max(live, default=(0, None))[1]
        else:
            rows = self._store.execute(
                "SELECT session_id, expires, ref FROM artefact_refs WHERE digest = ? AND session_id IN (?, ?)",
                (hex_digest, session_id, _NO_SESSION),
            )
            found = {str(s): (int(until), str(ref)) for s, until, ref in rows}
            # Its own ref first; the no-session ref only if that is missing or expired.
            for session in dict.fromkeys((session_id, _NO_SESSION)):
                if session not in found:
                    continue
                until, ref = found[session]
                if until <= now_ms:
                    expired.append(session)
                    continue
                chosen = ref
                break
        if expired:
            self._drop_expired_refs(hex_digest, expired, now_ms)
        if chosen is None:
            return None
        blob = self._store.execute("SELECT body FROM artefact_blobs WHERE digest = ?", (hex_digest,))
        if not blob:
            return None  # evicted by another put since the ref was read
        # bytes(): a driver may load BYTEA or BLOB as a memoryview; callers get bytes, as from memory.
        return FileRef.model_validate_json(chosen), bytes(blob[0][0])

    def refs(self, session_id: str | None) -> list[FileRef]:
        now_ms = _ms(self.clock())
        self._purge_expired(now_ms)
        if session_id is None:
            rows = self._store.execute("SELECT ref FROM artefact_refs WHERE expires > ? ORDER BY seq", (now_ms,))
        else:
            rows = self._store.execute(
                "SELECT r.ref FROM artefact_refs r WHERE r.expires > ? AND (r.session_id = ? OR (r.session_id = ?"
                " AND NOT EXISTS (SELECT 1 FROM artefact_refs o"
                " WHERE o.digest = r.digest AND o.session_id = ? AND o.expires > ?))) ORDER BY r.seq",
                (now_ms, session_id, _NO_SESSION, session_id, now_ms),
            )
        return [FileRef.model_validate_json(r[0]) for r in rows]

    def count(self) -> int:
        return int(self._store.execute("SELECT COUNT(*) FROM artefact_refs")[0][0])

    def total_bytes(self) -> int:
        return int(self._store.execute("SELECT COALESCE(SUM(size), 0) FROM artefact_blobs")[0][0])

    def evictions(self) -> tuple[int, int]:
        with self._counts_lock:
            return self._evicted_expired, self._evicted_for_space


class ArtefactStore:
    """Thread-safe, in memory (the default) or on a shared state store (``store=``): see the
    module docstring. With a store, :attr:`evicted_expired` and :attr:`evicted_for_space` count
    the evictions this instance made, not the fleet's."""

    def __init__(
        self,
        limits: ArtefactLimits | None = None,
        clock: Callable[[], float] = time.time,
        *,
        store: StateStore | None = None,
    ) -> None:
        self.limits = limits or ArtefactLimits()
        self._index: _Index = (
            _MemoryIndex(self.limits, clock) if store is None else _StoredIndex(store, self.limits, clock)
        )

    # -- writing ---------------------------------------------------------------------------------

    def put(
        self,
        data: bytes,
        *,
        mime: str = DEFAULT_MIME,
        display_name: str | None = None,
        session_id: str | None = None,
        tool_call_id: str | None = None,
        correlation_id: str | None = None,
        producer_job_id: str | None = None,
        ttl_s: float | None = None,
        metadata: Mapping[str, MetadataValue] | None = None,
    ) -> FileRef:
        """Store ``data`` and return its ref. The same bytes put again by the same session replace
        that session's ref (new fields, new expiry, newest in eviction order) and are stored and
        counted once. Raises :class:`ArtefactTooLarge` over ``max_body_bytes``, ``ValueError`` for a
        ``ttl_s`` that is not a positive finite number of seconds (or an empty ``session_id`` on a
        shared store)."""
        # bytes() so a caller's bytearray changed after the put cannot change what we serve.
        body = bytes(data)
        if len(body) > self.limits.max_body_bytes:
            raise ArtefactTooLarge(len(body), self.limits.max_body_bytes)
        ttl = self.limits.default_ttl_s if ttl_s is None else ttl_s
        if not (math.isfinite(ttl) and ttl > 0):
            raise ValueError(f"ttl_s must be a positive number of seconds, not {ttl_s!r}")
        return self._index.put(
            _Put(
                hex_digest=hashlib.sha256(body).hexdigest(),
                body=body,
                session_id=session_id,
                ttl=ttl,
                mime=mime,
                display_name=display_name,
                tool_call_id=tool_call_id,
                correlation_id=correlation_id,
                producer_job_id=producer_job_id,
                metadata=dict(metadata or {}),
            )
        )

    parse_uri = staticmethod(parse_uri)

    # -- reading ---------------------------------------------------------------------------------

    def get(self, uri: str, *, session_id: str | None = None) -> tuple[FileRef, bytes] | None:
        """The ref and bytes of ``uri`` as ``session_id`` may see them, else None (unknown,
        malformed, expired, or only another session's). A session reads its own ref first, then a
        ref stored without a session. ``session_id=None`` means the server itself: it reads any
        session's ref (the newest) and must never be used on a client's behalf."""
        hex_digest = parse_uri(uri)
        if hex_digest is None:
            return None
        return self._index.get(hex_digest, session_id)

    def blob_contents(self, uri: str, *, session_id: str | None = None) -> BlobResourceContents | None:
        """The ``resources/read`` contents of ``uri`` (base64 bytes and MIME type), or None as for
        :meth:`get`."""
        found = self.get(uri, session_id=session_id)
        if found is None:
            return None
        ref, body = found
        return BlobResourceContents(uri=ref.uri, mime_type=ref.mime, blob=base64.b64encode(body).decode("ascii"))

    def refs(self, session_id: str | None = None) -> list[FileRef]:
        """Unexpired refs, oldest first: for a session, the ones :meth:`get` would give it (one per
        uri); for ``None`` (the server), every ref of every session."""
        return self._index.refs(session_id)

    # -- size and counters -----------------------------------------------------------------------

    def __len__(self) -> int:
        return self._index.count()

    @property
    def total_bytes(self) -> int:
        return self._index.total_bytes()

    @property
    def evicted_expired(self) -> int:
        return self._index.evictions()[0]

    @property
    def evicted_for_space(self) -> int:
        return self._index.evictions()[1]
