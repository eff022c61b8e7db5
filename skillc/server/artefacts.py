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
client's request.

Bounds. ``max_entries`` counts refs, ``max_total_bytes`` counts stored bytes (each digest once).
After every put the store drops expired refs, then the least recently put refs until both bounds
hold; a blob goes when its last ref goes.
"""

from __future__ import annotations

import base64
import hashlib
import math
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated

from mcp_types import BlobResourceContents, ResourceTemplate
from pydantic import BaseModel, ConfigDict, Field, model_validator

ARTEFACT_URI_TEMPLATE = "artefact://sha256/{digest}"
DEFAULT_MIME = "application/octet-stream"
MiB = 1024 * 1024

# Only lowercase: the uri is an identity, and two spellings of one digest would be two identities.
_URI_RE = re.compile(r"artefact://sha256/([0-9a-f]{64})")
_URI_PATTERN = r"^artefact://sha256/[0-9a-f]{64}$"
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
    """The hex digest of a well-formed ``artefact://sha256/<64 lowercase hex>`` uri, else None."""
    match = _URI_RE.fullmatch(uri)
    return match.group(1) if match else None


def artefact_uri(hex_digest: str) -> str:
    return ARTEFACT_URI_TEMPLATE.format(digest=hex_digest)


def resource_template() -> ResourceTemplate:
    """The ``resources/templates/list`` entry announcing artefact uris."""
    return ResourceTemplate(
        uri_template=ARTEFACT_URI_TEMPLATE,
        name="artefact",
        title="Artefact",
        description=(
            "Bytes of a large or binary tool output (screenshot, build artefact, Render IR document), "
            "addressed by the SHA-256 of its content. Read the uri a tool result's file ref gives."
        ),
        mime_type=DEFAULT_MIME,
    )


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, tz=UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


_Key = tuple[str, str | None]  # (hex digest, session id)


@dataclass(frozen=True)
class _Entry:
    ref: FileRef
    expires: float  # clock seconds; the ref's expires_at is only its rendering
    seq: int  # put order; created_at has millisecond ties


class ArtefactStore:
    """Thread-safe: every public method takes the one lock, so puts and reads from the server's
    request threads and the runner's worker threads see one consistent store."""

    def __init__(self, limits: ArtefactLimits | None = None, clock: Callable[[], float] = time.time) -> None:
        self.limits = limits or ArtefactLimits()
        self._clock = clock
        self._lock = threading.Lock()
        # Oldest first; a refresh moves the ref to the end, so the front is what to evict next.
        self._entries: OrderedDict[_Key, _Entry] = OrderedDict()
        self._blobs: dict[str, bytes] = {}
        self._holders: dict[str, set[str | None]] = {}  # digest -> sessions with a ref to it
        self._total_bytes = 0
        self._evicted_expired = 0
        self._evicted_for_space = 0
        self._seq = 0

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
        ``ttl_s`` that is not a positive finite number of seconds."""
        # bytes() so a caller's bytearray changed after the put cannot change what we serve.
        body = bytes(data)
        if len(body) > self.limits.max_body_bytes:
            raise ArtefactTooLarge(len(body), self.limits.max_body_bytes)
        ttl = self.limits.default_ttl_s if ttl_s is None else ttl_s
        if not (math.isfinite(ttl) and ttl > 0):
            raise ValueError(f"ttl_s must be a positive number of seconds, not {ttl_s!r}")
        hex_digest = hashlib.sha256(body).hexdigest()
        with self._lock:
            now = self._clock()
            try:
                expires_at = _iso(now + ttl)
            except (OverflowError, OSError, ValueError) as exc:
                raise ValueError(f"ttl_s {ttl_s!r} puts the expiry out of range") from exc
            ref = FileRef(
                uri=artefact_uri(hex_digest),
                mime=mime,
                size_bytes=len(body),
                display_name=display_name,
                digest=f"sha256:{hex_digest}",
                producer_job_id=producer_job_id,
                tool_call_id=tool_call_id,
                session_id=session_id,
                correlation_id=correlation_id,
                created_at=_iso(now),
                expires_at=expires_at,
                metadata=dict(metadata or {}),
            )
            key: _Key = (hex_digest, session_id)
            self._entries.pop(key, None)
            self._seq += 1
            self._entries[key] = _Entry(ref, now + ttl, self._seq)
            self._holders.setdefault(hex_digest, set()).add(session_id)
            if hex_digest not in self._blobs:
                self._blobs[hex_digest] = body
                self._total_bytes += len(body)
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
        with self._lock:
            now = self._clock()
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
        with self._lock:
            self._drop_expired(self._clock())
            if session_id is None:
                return [e.ref for e in self._entries.values()]
            return [
                e.ref
                for (d, s), e in self._entries.items()
                if s == session_id or (s is None and (d, session_id) not in self._entries)
            ]

    # -- size and counters -----------------------------------------------------------------------

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    @property
    def total_bytes(self) -> int:
        with self._lock:
            return self._total_bytes

    @property
    def evicted_expired(self) -> int:
        with self._lock:
            return self._evicted_expired

    @property
    def evicted_for_space(self) -> int:
        with self._lock:
            return self._evicted_for_space
