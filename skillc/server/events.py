"""The session event buffer: what ran for a client (console lines, trace, tool calls), by cursor.

A client reads ``events://session/<id>?cursor=N&limit=M[&drain=true]``; every page carries
``next_cursor``, so a client that polls with it never sees an event twice and never misses one
that is still retained (``oldest_cursor > cursor + 1`` tells it that some were dropped). Each
session keeps at most ``max_events`` events, each message at most ``max_message_bytes`` (cut at a
UTF-8 boundary, with a ``truncation`` record); at most ``max_sessions`` sessions are kept, the
least recently written dropped first. ``drain`` removes what it returned.

Shapes follow RUNTIME-CONTRACTS.md ("Session events"): snake_case fields, optional ones omitted.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict, deque
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import parse_qs, unquote, urlsplit

from pydantic import BaseModel, ConfigDict, Field

EventLevel = Literal["trace", "debug", "info", "warning", "error"]
# The levels a console line maps to: in both the event levels and MCP's logging levels.
ConsoleEventLevel = Literal["debug", "info", "warning", "error"]
EVENTS_SCHEME = "events"
EVENTS_URI_TEMPLATE = "events://session/{session_id}{?cursor,limit,drain}"
DEFAULT_LIMIT = 100
MAX_LIMIT = 1000

_CONSOLE_LEVELS: dict[str, ConsoleEventLevel] = {"debug": "debug", "log": "info", "info": "info", "warn": "warning"}


def console_level(level: str) -> ConsoleEventLevel:
    """The event level of a ``console.*`` level (``console.error`` and anything unknown: error)."""
    return _CONSOLE_LEVELS.get(level, "error")


class _Wire(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    def wire(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True)


class Truncation(_Wire):
    original_size: int
    truncated_size: int
    max_size: int


class SessionEvent(_Wire):
    id: int = Field(description="1 for a session's first event, then +1; never reused")
    timestamp_ns: int
    session_id: str
    source: str = Field(description="api-vm, card-vm, trace, mcp")
    stream: str = Field(description="console, trace, tool_call")
    level: EventLevel
    message: str
    tool_call_id: str | None = None
    correlation_id: str | None = None
    truncation: Truncation | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class EventPage(_Wire):
    cursor: int
    next_cursor: int
    oldest_cursor: int | None = None
    newest_cursor: int | None = None
    retained_count: int
    dropped_count: int
    events: list[SessionEvent]


class EventLimits(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    max_events: int = Field(default=1000, ge=1, le=1_000_000, description="events kept per session")
    max_message_bytes: int = Field(default=4096, ge=64, le=1_048_576, description="UTF-8 bytes of one message")
    max_sessions: int = Field(default=256, ge=1, le=100_000, description="sessions kept")


@dataclass(frozen=True)
class EventQuery:
    session_id: str
    cursor: int = 0
    limit: int = DEFAULT_LIMIT
    drain: bool = False


class EventUriError(ValueError):
    """An ``events://`` URI that does not name a session page (the message says which part)."""


def events_uri(session_id: str) -> str:
    return f"{EVENTS_SCHEME}://session/{session_id}"


def parse_events_uri(uri: str) -> EventQuery | None:
    """None when ``uri`` is not an events URI at all; :class:`EventUriError` when it is a bad one."""
    parts = urlsplit(uri)
    if parts.scheme != EVENTS_SCHEME:
        return None
    session = unquote(parts.path.lstrip("/"))
    if parts.netloc != "session" or not session or "/" in session:
        raise EventUriError(f"expected events://session/<id>, got {uri}")
    query = parse_qs(parts.query, keep_blank_values=True)
    unknown = sorted(set(query) - {"cursor", "limit", "drain"})
    if unknown:
        raise EventUriError(f"unknown query parameter {unknown[0]!r} (cursor, limit, drain)")

    def number(name: str, default: int) -> int:
        values = query.get(name)
        if not values:
            return default
        if not values[-1].isdecimal():
            raise EventUriError(f"{name} must be a non-negative integer, got {values[-1]!r}")
        return int(values[-1])

    limit = number("limit", DEFAULT_LIMIT) or DEFAULT_LIMIT  # 0 asks for the default
    drain = (query.get("drain") or ["false"])[-1].lower() in ("1", "true", "yes")
    return EventQuery(session, number("cursor", 0), min(limit, MAX_LIMIT), drain)


def _cut(message: str, limit: int) -> tuple[str, Truncation | None]:
    raw = message.encode("utf-8", "replace")
    if len(raw) <= limit:
        return message, None
    kept = raw[:limit].decode("utf-8", "ignore")  # a cut inside a character drops the partial one
    return kept, Truncation(original_size=len(raw), truncated_size=len(kept.encode("utf-8")), max_size=limit)


class _Session:
    def __init__(self) -> None:
        self.events: deque[SessionEvent] = deque()
        self.next_id = 1
        self.dropped = 0


class EventHub:
    """Every session's buffer. Thread-safe: calls append from several worker threads."""

    def __init__(self, limits: EventLimits | None = None, *, clock_ns: Any = time.time_ns) -> None:
        self.limits = limits or EventLimits()
        self._clock_ns = clock_ns
        self._sessions: OrderedDict[str, _Session] = OrderedDict()
        self._lock = threading.Lock()

    def append(
        self,
        session_id: str,
        source: str,
        stream: str,
        level: EventLevel,
        message: str,
        *,
        tool_call_id: str | None = None,
        correlation_id: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> SessionEvent:
        text, cut = _cut(message, self.limits.max_message_bytes)
        with self._lock:
            session = self._sessions.get(session_id)
            if session is None:
                session = self._sessions[session_id] = _Session()
                while len(self._sessions) > self.limits.max_sessions:
                    self._sessions.popitem(last=False)
            self._sessions.move_to_end(session_id)
            event = SessionEvent(
                id=session.next_id,
                timestamp_ns=int(self._clock_ns()),
                session_id=session_id,
                source=source,
                stream=stream,
                level=level,
                message=text,
                tool_call_id=tool_call_id,
                correlation_id=correlation_id,
                truncation=cut,
                metadata=metadata or {},
            )
            session.next_id += 1
            session.events.append(event)
            while len(session.events) > self.limits.max_events:
                session.events.popleft()
                session.dropped += 1
            return event

    def page(self, query: EventQuery) -> EventPage:
        """Events with ``id > cursor``, oldest first, at most ``limit``; an unknown session is empty."""
        with self._lock:
            session = self._sessions.get(query.session_id)
            if session is None:
                return EventPage(
                    cursor=query.cursor, next_cursor=query.cursor, retained_count=0, dropped_count=0, events=[]
                )
            events = [e for e in session.events if e.id > query.cursor][: query.limit]
            next_cursor = events[-1].id if events else max(query.cursor, 0)
            if query.drain and events:
                while session.events and session.events[0].id <= next_cursor:
                    session.events.popleft()
                    session.dropped += 1
            retained = list(session.events)
            return EventPage(
                cursor=query.cursor,
                next_cursor=next_cursor,
                oldest_cursor=retained[0].id if retained else None,
                newest_cursor=retained[-1].id if retained else None,
                retained_count=len(retained),
                dropped_count=session.dropped,
                events=events,
            )

    def sessions(self) -> list[str]:
        with self._lock:
            return list(self._sessions)
