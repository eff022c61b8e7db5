"""The session event buffer: what ran for a client (console lines, trace, tool calls), by cursor.

A client reads ``events://session/<id>?cursor=N&limit=M[&drain=true]``; every page carries
``next_cursor``, so a client that polls with it never sees an event twice and never misses one
that is still retained (``oldest_cursor > cursor + 1`` tells it that some were dropped). Each
session keeps at most ``max_events`` events, each message at most ``max_message_bytes`` (cut at a
UTF-8 boundary, with a ``truncation`` record), each event's ``metadata`` at most
``max_metadata_bytes`` as JSON (its largest values replaced by a truncation marker, see
:func:`bound_metadata`); at most ``max_sessions`` sessions are kept, the least recently written
dropped first. ``drain`` removes what it returned.

The buffers live in this process's memory (one instance), or in the state store's
``event_sessions`` / ``events`` tables when instances behind a load balancer share a store: then
whichever instance answers a client reads the same ids and cursors (see :class:`_StoredBuffers`).

Shapes follow RUNTIME-CONTRACTS.md ("Session events"): snake_case fields, optional ones omitted.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypedDict
from urllib.parse import parse_qs, unquote, urlsplit

from pydantic import BaseModel, ConfigDict, Field

from skillc.runtime.state.schema import EVENTS_TOUCH_SEQ
from skillc.runtime.state.store import StateError, StateStore, Tx
from skillc.server import metrics
from skillc.server.group_commit import GroupWriter

if TYPE_CHECKING:
    from typing_extensions import Unpack  # typing.Unpack from Python 3.12

log = logging.getLogger("skillc.server")

EventLevel = Literal["trace", "debug", "info", "warning", "error"]


class EventFields(TypedDict, total=False):
    """What an event may carry beside its source, stream, level and message."""

    tool_call_id: str | None
    correlation_id: str | None
    metadata: dict[str, Any] | None


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
    max_metadata_bytes: int = Field(
        default=16_384, ge=1024, le=1_048_576, description="UTF-8 bytes of one event's metadata as JSON"
    )


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


TRUNCATED = "$truncated"  # the key of a metadata value's truncation marker
_PREVIEW_BYTES = 256
_ID_MAX_BYTES = 256


def _cut(message: str, limit: int) -> tuple[str, Truncation | None]:
    raw = message.encode("utf-8", "replace")
    if len(raw) <= limit:
        # The re-decoded text, not ``message``: a lone surrogate (a client can send one as a JSON
        # escape) cannot be serialised, and the stored buffers serialise every event.
        return raw.decode("utf-8"), None
    kept = raw[:limit].decode("utf-8", "ignore")  # a cut inside a character drops the partial one
    return kept, Truncation(original_size=len(raw), truncated_size=len(kept.encode("utf-8")), max_size=limit)


def _json_text(value: Any) -> str | None:
    """``value`` as JSON text that UTF-8 can hold (lone surrogates become ``?``), or None when it
    cannot be serialised at all (nested past the interpreter's recursion limit)."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (RecursionError, ValueError, TypeError):
        return None
    return text.encode("utf-8", "replace").decode("utf-8")


def _marker(text: str | None, limit: int) -> dict[str, Any]:
    if text is None:  # nothing to measure or preview: only that it was cut
        return {TRUNCATED: {"max_size": limit}}
    raw = text.encode("utf-8")
    preview = raw[:_PREVIEW_BYTES].decode("utf-8", "ignore")
    return {TRUNCATED: {"original_size": len(raw), "max_size": limit, "preview": preview}}


def bound_metadata(metadata: dict[str, Any], limit: int) -> dict[str, Any]:
    """``metadata`` as it is kept: JSON-safe, and at most ``limit`` UTF-8 bytes as JSON.

    A client chooses a tool call's arguments, so an event that kept them whole would let every
    call grow the buffers (and the state store behind them) by whatever the client sent. Keys are
    kept; the largest values are replaced, one at a time, by ``{"$truncated": {"original_size",
    "max_size", "preview"}}`` until the rest fits. Should the markers alone not fit (thousands of
    keys), the whole metadata becomes one marker."""
    small = _small_plain_copy(metadata, limit)
    if small is not None:
        return small
    texts = {str(k)[:_ID_MAX_BYTES]: _json_text(v) for k, v in metadata.items()}
    sizes = {k: len(t.encode("utf-8")) if t is not None else limit + 1 for k, t in texts.items()}
    kept = dict(texts)
    total = sum(sizes.values())
    for key in sorted(sizes, key=sizes.__getitem__, reverse=True):
        if total <= limit and kept[key] is not None:
            break
        marker = json.dumps(_marker(texts[key], limit), ensure_ascii=False)
        if kept[key] is None or len(marker.encode("utf-8")) < sizes[key]:
            kept[key] = marker
            total += len(marker.encode("utf-8")) - sizes[key]
    bounded = {k: json.loads(t) for k, t in kept.items() if t is not None}
    # The sum above leaves out the keys and punctuation: the bound is checked on the real text.
    if len(json.dumps(bounded, ensure_ascii=False).encode("utf-8")) > limit:
        return _marker(_json_text(metadata), limit)
    return bounded


_PLAIN_DEPTH = 8  # deeper values take the general path (which also survives recursion limits)
_BIG_INT = 10**30  # a longer int may not fit its 36 bytes (or be printable at all: int_max_str_digits)


def _small_plain_copy(metadata: dict[str, Any], limit: int) -> dict[str, Any] | None:
    """A copy of ``metadata`` when it surely fits ``limit`` as it is: every key a short ``str``,
    every value plain JSON (exact str without lone surrogates, int, float, bool, None, and lists
    and dicts of them, not deeper than ``_PLAIN_DEPTH``), and an upper bound of its JSON size
    within the limit. None: :func:`bound_metadata`'s general path decides.

    Most events carry a few short fields (a tool name, a duration, a card id): for them this is
    what the general path would return, without a JSON round trip per value. The size bound
    counts 6 bytes per character of a string or key (the longest a JSON escape makes of one) plus
    6 for its quotes and punctuation, 36 per number, 4 per container: never below the real size.
    """
    budget = [limit]

    def copy(value: Any, depth: int) -> Any:
        kind = type(value)
        if kind is str:
            if not value.isascii():
                try:
                    value.encode("utf-8")
                except UnicodeEncodeError:  # a lone surrogate: the general path makes it "?"
                    raise _NotPlain from None
            budget[0] -= 6 * len(value) + 6
        elif kind is float or kind is bool or value is None or (kind is int and -_BIG_INT < value < _BIG_INT):
            budget[0] -= 36
        elif depth >= _PLAIN_DEPTH:
            raise _NotPlain
        elif kind is dict:
            budget[0] -= 4
            out = {}
            for key, item in value.items():
                if type(key) is not str or len(key) > _ID_MAX_BYTES // 4:
                    raise _NotPlain
                budget[0] -= 6 * len(key) + 6
                out[key] = copy(item, depth + 1)
            value = out
        elif kind is list:
            budget[0] -= 4
            value = [copy(item, depth + 1) for item in value]
        else:
            raise _NotPlain
        if budget[0] < 0:
            raise _NotPlain
        return value

    try:
        kept: dict[str, Any] = copy(metadata, 0)
    except _NotPlain:
        return None
    return kept


class _NotPlain(Exception):
    """Raised inside :func:`_small_plain_copy`'s walk: the value needs the general path."""


@dataclass(frozen=True)
class _Pending:
    """An event waiting for its id: ``make`` builds it once the backend has given one."""

    session_id: str
    make: Callable[[int], SessionEvent]


class _Buffers(Protocol):
    """Where the buffers live. Each backend gives ids in the order of ``pending``."""

    def append_many(self, pending: Sequence[_Pending]) -> list[SessionEvent]: ...

    async def append_async(self, pending: Sequence[_Pending]) -> list[SessionEvent]: ...

    def close(self) -> None: ...

    def page(self, query: EventQuery) -> EventPage: ...

    def sessions(self) -> list[str]: ...


def _empty_page(query: EventQuery) -> EventPage:
    return EventPage(cursor=query.cursor, next_cursor=query.cursor, retained_count=0, dropped_count=0, events=[])


def _page_of(query: EventQuery, events: list[SessionEvent], first: int, last: int, dropped: int) -> EventPage:
    """A page of a session whose retained events are ids ``first..last`` (none when last < first)."""
    retained = last - first + 1
    return EventPage(
        cursor=query.cursor,
        next_cursor=events[-1].id if events else max(query.cursor, 0),
        oldest_cursor=first if retained > 0 else None,
        newest_cursor=last if retained > 0 else None,
        retained_count=max(retained, 0),
        dropped_count=dropped,
        events=events,
    )


class _Session:
    def __init__(self) -> None:
        self.events: deque[SessionEvent] = deque()
        self.next_id = 1
        self.dropped = 0


class _MemoryBuffers:
    """This process's buffers: one instance, nothing shared, no I/O."""

    def __init__(self, limits: EventLimits) -> None:
        self.limits = limits
        self._sessions: OrderedDict[str, _Session] = OrderedDict()
        self._lock = threading.Lock()

    def append_many(self, pending: Sequence[_Pending]) -> list[SessionEvent]:
        return [self._append(p.session_id, p.make) for p in pending]

    async def append_async(self, pending: Sequence[_Pending]) -> list[SessionEvent]:
        return self.append_many(pending)  # no I/O: nothing to wait for

    def close(self) -> None:
        pass

    def _append(self, session_id: str, make: Callable[[int], SessionEvent]) -> SessionEvent:
        with self._lock:
            session = self._sessions.get(session_id)
            if session is None:
                session = self._sessions[session_id] = _Session()
                while len(self._sessions) > self.limits.max_sessions:
                    self._sessions.popitem(last=False)
            self._sessions.move_to_end(session_id)
            event = make(session.next_id)
            session.next_id += 1
            session.events.append(event)
            while len(session.events) > self.limits.max_events:
                session.events.popleft()
                session.dropped += 1
                metrics.EVENTS_DROPPED.labels("overflow").inc()
            return event

    def page(self, query: EventQuery) -> EventPage:
        with self._lock:
            session = self._sessions.get(query.session_id)
            if session is None:
                return _empty_page(query)
            events = [e for e in session.events if e.id > query.cursor][: query.limit]
            if query.drain and events:
                while session.events and session.events[0].id <= events[-1].id:
                    session.events.popleft()
                    session.dropped += 1
            first = session.events[0].id if session.events else session.next_id
            return _page_of(query, events, first, session.next_id - 1, session.dropped)

    def sessions(self) -> list[str]:
        with self._lock:
            return list(self._sessions)


# Events are only ever removed from the front of a session (drop-oldest, drain up to the page's
# end), so a session's retained events are exactly ids dropped+1 .. next_id-1: the session row
# alone answers oldest / newest / retained without counting rows.

# The LIMIT inside the derived table lets both engines walk the primary key from the cursor and
# stop, instead of reading every retained event after it and sorting.
_PAGE = (
    "SELECT s.next_id, s.dropped, e.event FROM event_sessions s LEFT JOIN"
    " (SELECT id, event FROM events WHERE session_id = ? AND id > ? ORDER BY id LIMIT ?) e ON 1 = 1"
    " WHERE s.session_id = ? ORDER BY e.id"
)
_EVENTS_AFTER = "SELECT event FROM events WHERE session_id = ? AND id > ? ORDER BY id LIMIT ?"
# ``touched`` orders sessions by their last write, for dropping the least recently written: a
# counter every instance shares (a sequence on PostgreSQL, the index's largest value + 1 on
# SQLite), not a clock, since instances' clocks need not agree.
# One statement takes ``n`` ids for a session, creating its row if it has none, and drops the
# oldest beyond max_events (SET reads the old values). RETURNING gives the first id taken and the
# new ``dropped``: a first id of 1 means the row was made now.
_TAKE_IDS = (
    "INSERT INTO event_sessions (session_id, next_id, dropped, touched) VALUES (?, ? + 1, ?, {touch})"
    " ON CONFLICT (session_id) DO UPDATE SET next_id = event_sessions.next_id + ?, touched = excluded.touched,"
    " dropped = CASE WHEN event_sessions.next_id + ? - 1 - event_sessions.dropped > ?"
    " THEN event_sessions.next_id + ? - 1 - ? ELSE event_sessions.dropped END"
    " RETURNING next_id - ?, dropped"
)
_INSERT_EVENT = "INSERT INTO events (session_id, id, event) VALUES (?, ?, ?)"
# PostgreSQL: a whole group of appends in one statement, so one round trip (a statement in
# autocommit is its own transaction: all of it or none). The ids come from the session rows inside
# the statement, so each event's JSON is sent without its id (the text after ``{"id":0``) and the
# id is put back in front. The rows are taken in session-id order: one lock order for every writer
# (the trim locks in the same order). ``set_config(..., true)`` turns synchronous_commit off for
# this statement's transaction alone: its COMMIT does not wait for the WAL flush (see the class).
_PG_WRITE = (
    "WITH c AS (SELECT set_config('synchronous_commit', 'off', true)),"
    " i AS (SELECT sid, n FROM unnest(?::text[], ?::bigint[]) AS i (sid, n)),"
    " taken AS (INSERT INTO event_sessions AS s (session_id, next_id, dropped, touched)"
    " SELECT sid, n + 1, GREATEST(n - ?, 0), {touch} FROM i, c ORDER BY sid"
    " ON CONFLICT (session_id) DO UPDATE SET next_id = s.next_id + excluded.next_id - 1,"
    " touched = excluded.touched, dropped = CASE WHEN s.next_id + excluded.next_id - 2 - s.dropped > ?"
    " THEN s.next_id + excluded.next_id - 2 - ? ELSE s.dropped END"
    " RETURNING s.session_id, s.next_id, s.dropped),"
    " ids AS (SELECT t.session_id, t.next_id - i.n AS first, t.dropped FROM taken t JOIN i ON i.sid = t.session_id),"
    " gone AS (DELETE FROM events e USING ids WHERE e.session_id = ids.session_id AND e.id <= ids.dropped),"
    " put AS (INSERT INTO events (session_id, id, event)"
    " SELECT u.sid, ids.first + u.ord - 1, '{\"id\":' || (ids.first + u.ord - 1) || u.rest"
    " FROM unnest(?::text[], ?::bigint[], ?::text[]) AS u (sid, ord, rest) JOIN ids ON ids.session_id = u.sid"
    " WHERE ids.first + u.ord - 1 > ids.dropped)"
    " SELECT session_id, first, dropped FROM ids"
)
_NO_ID = '{"id":0'  # how an event made with id 0 starts as JSON: the id goes first
_HOLD_ROW = "UPDATE event_sessions SET dropped = dropped WHERE session_id = ? RETURNING next_id, dropped"
# How many sessions a process makes between two trims: 1/16 of the bound (the overshoot it allows
# per instance), at most 64 (the sessions one trim drops, under a lock the fleet shares), at least
# 1 (a small bound stays exact).
_TRIM_SHARE = 16
_TRIM_MAX = 64


def trim_every(max_sessions: int) -> int:
    return max(1, min(max_sessions // _TRIM_SHARE, _TRIM_MAX))


_MAX_ID = 2**63 - 1  # BIGINT: a larger cursor (the URI takes any number) reads as this one
_CHUNK = 500  # session ids per DELETE ... IN (...), well under every engine's parameter limit


class _StoredBuffers:
    """The buffers in the state store's event_sessions / events tables, shared by every instance
    on that store.

    Appends are written by one writer thread per process, which commits every append waiting at
    that moment in one transaction (group commit, skillc/server/group_commit.py): a call's events
    cost one transaction at most, and under load many calls share one. A session's ids come from
    its row, whose lock (held to COMMIT on PostgreSQL; SQLite's writers hold the file) orders its
    writes; a transaction locks its sessions' rows in session-id order, so two never wait on each
    other in a cycle. A page without drain is one SELECT: one snapshot on both engines, no lock
    taken.

    Sessions beyond ``max_sessions`` (the least recently written) are dropped under
    ``events:sessions`` in a transaction of their own, a lock every instance shares: so not after
    every session made (a client without a session capability gets a new one per request, and
    each trim would queue the fleet's writers on that lock) but once this process has made
    :func:`trim_every` of them since its last trim, and when it closes. Each instance can thus
    leave at most ``trim_every - 1`` sessions above the bound between trims.

    On PostgreSQL a group is written by one statement (``_PG_WRITE``: one round trip, where a
    transaction of statements costs one per statement and one each for BEGIN and COMMIT), whose
    commit does not wait for the WAL to reach the disk (``synchronous_commit`` off for it alone):
    every reader sees the events as soon as the writer is answered, but a crash of the database
    server can lose the last fraction of a second of them. Events are what calls did, for a client
    to read next, not records the server promises to keep through a crash (SQLite's commits here
    are ``synchronous=NORMAL``: a crash of the machine can lose the last ones too)."""

    SESSIONS_LOCK = "events:sessions"

    def __init__(self, limits: EventLimits, store: StateStore) -> None:
        self.limits = limits
        self.store = store
        touch = store.dialect.next_value(EVENTS_TOUCH_SEQ, "event_sessions", "touched")
        self._take_ids = _TAKE_IDS.format(touch=touch)
        self._pg_write = _PG_WRITE.replace("{touch}", touch)
        self._trim_every = trim_every(limits.max_sessions)
        self._made = 0  # sessions this process made since its last trim
        self._made_lock = threading.Lock()
        self._writer: GroupWriter[Sequence[_Pending], list[SessionEvent]] = GroupWriter(
            self._write_group, name="skillc-events"
        )

    def append_many(self, pending: Sequence[_Pending]) -> list[SessionEvent]:
        # Written at once, in a transaction on both engines: an event is made (and stamped) once
        # its session row is locked, so timestamps follow ids. Calls' batches, stamped when their
        # events happened, take the writer thread's one statement instead.
        written, made = self._write_transaction([pending])
        if self._trim_due(made):
            self._trim()
        return written[0]

    async def append_async(self, pending: Sequence[_Pending]) -> list[SessionEvent]:
        return await asyncio.wrap_future(self._writer.submit(pending))

    def close(self) -> None:
        self._writer.close()
        with self._made_lock:
            made, self._made = self._made, 0
        if made:  # what this process left above the bound
            try:
                self._trim()
            except Exception:
                log.warning("dropping the least recently written event sessions failed", exc_info=True)

    def _trim_due(self, made: int) -> bool:
        """Count ``made`` new sessions; whether this process is due to trim (the count restarts)."""
        if not made:
            return False
        with self._made_lock:
            self._made += made
            if self._made < self._trim_every:
                return False
            self._made = 0
            return True

    def _write_group(self, group: Sequence[Sequence[_Pending]]) -> list[list[SessionEvent] | BaseException]:
        answers: list[list[SessionEvent] | BaseException] = []
        try:
            written, made = self._write_all(group)
            answers.extend(written)
        except StateError:
            raise  # the store is unreachable: every caller in the group hears it
        except Exception:
            # One bad append must not cost the others theirs: each in a transaction of its own.
            answers = []
            for pending in group:
                try:
                    answers.append(self.append_many(pending))
                except Exception as err:
                    answers.append(err)
            return answers
        if self._trim_due(made):
            try:
                self._trim()
            except Exception:  # the events are written; the bound is restored by the next trim
                log.warning("dropping the least recently written event sessions failed", exc_info=True)
        return answers

    def _write_all(self, group: Sequence[Sequence[_Pending]]) -> tuple[list[list[SessionEvent]], int]:
        """Write every append of ``group`` together; their events, and how many sessions were made."""
        if self.store.kind == "postgresql":
            return self._write_statement(group)
        return self._write_transaction(group)  # in-process: a statement costs no round trip

    def _write_transaction(self, group: Sequence[Sequence[_Pending]]) -> tuple[list[list[SessionEvent]], int]:
        """:meth:`_write_all` as a transaction of statements, ids taken per session (:meth:`_write`)."""
        written: list[list[SessionEvent]] = []
        made = 0
        with self.store.transaction() as tx:
            for pending in group:
                events, created = self._write(tx, pending)
                written.append(events)
                made += created
        return written, made

    def _write_statement(self, group: Sequence[Sequence[_Pending]]) -> tuple[list[list[SessionEvent]], int]:
        """:meth:`_write_all` in one statement (PostgreSQL, ``_PG_WRITE``)."""
        limit = self.limits.max_events
        counts: dict[str, int] = {}  # events per session, in the order they were handed over
        made_events: list[list[tuple[SessionEvent, int]]] = []
        sids: list[str] = []
        ordinals: list[int] = []
        rests: list[str] = []
        for pending in group:
            of_append: list[tuple[SessionEvent, int]] = []
            for p in pending:
                ordinal = counts[p.session_id] = counts.get(p.session_id, 0) + 1
                event = p.make(0)
                text = event.model_dump_json(exclude_none=True)
                if not text.startswith(_NO_ID):
                    raise AssertionError(f"an event's JSON must start with its id: {text[:20]!r}")
                sids.append(p.session_id)
                ordinals.append(ordinal)
                rests.append(text[len(_NO_ID) :])
                of_append.append((event, ordinal))
            made_events.append(of_append)
        names = sorted(counts)
        rows = self.store.execute(
            self._pg_write, ([*names], [counts[n] for n in names], limit, limit, limit, sids, ordinals, rests)
        )
        taken = {str(r[0]): (int(r[1]), int(r[2])) for r in rows}
        made = 0
        for name, n in counts.items():
            first, dropped = taken[name]
            made += first == 1
            if dropped > 0 and dropped == first + n - 1 - limit:  # as in :meth:`_write`
                metrics.EVENTS_DROPPED.labels("overflow").inc(dropped - max(first - 1 - limit, 0))
        written: list[list[SessionEvent]] = []
        for of_append in made_events:
            written.append(
                [e.model_copy(update={"id": taken[e.session_id][0] + ordinal - 1}) for e, ordinal in of_append]
            )
        return written, made

    def _write(self, tx: Tx, pending: Sequence[_Pending]) -> tuple[list[SessionEvent], int]:
        """Give ``pending`` their ids and insert them; how many session rows were made."""
        limit = self.limits.max_events
        by_session: dict[str, list[int]] = {}
        for at, p in enumerate(pending):
            by_session.setdefault(p.session_id, []).append(at)
        events: list[SessionEvent | None] = [None] * len(pending)
        rows: list[tuple[str, int, str]] = []
        created = 0
        for session_id in sorted(by_session):  # one lock order for every writer
            ats = by_session[session_id]
            n = len(ats)
            taken = tx.execute(self._take_ids, (session_id, n, max(n - limit, 0), n, n, limit, n, limit, n))
            first, dropped = int(taken[0][0]), int(taken[0][1])
            created += first == 1
            for offset, at in enumerate(ats):
                event = events[at] = pending[at].make(first + offset)
                if event.id > dropped:  # a batch larger than max_events keeps only its newest
                    rows.append((session_id, event.id, event.model_dump_json(exclude_none=True)))
            # dropped = last - max_events: this append dropped the oldest (or, with exactly
            # max_events retained, nothing, and the DELETE finds no row).
            if dropped > 0 and dropped == first + n - 1 - limit:
                # Those this batch pushed out: the session had dropped everything up to first-1-limit.
                metrics.EVENTS_DROPPED.labels("overflow").inc(dropped - max(first - 1 - limit, 0))
                tx.execute("DELETE FROM events WHERE session_id = ? AND id <= ?", (session_id, dropped))
        if rows:
            tx.execute_many(_INSERT_EVENT, rows)
        return [e for e in events if e is not None], created

    def _trim(self) -> None:
        """Drop the least recently written sessions beyond max_sessions (their rows first, then
        their events). Under the sessions lock, so the bound is exact however many instances
        made sessions at once: each trim counts what the ones before it left."""
        with self.store.transaction(lock=self.SESSIONS_LOCK) as tx:
            excess = int(tx.execute("SELECT COUNT(*) FROM event_sessions")[0][0]) - self.limits.max_sessions
            if excess <= 0:
                return
            victims = [
                str(r[0])
                for r in tx.execute(
                    "SELECT session_id FROM event_sessions ORDER BY touched, session_id LIMIT ?", (excess,)
                )
            ]
            for at in range(0, len(victims), _CHUNK):
                chunk = sorted(victims[at : at + _CHUNK])
                marks = ", ".join("?" * len(chunk))
                if self.store.kind == "postgresql":
                    # Rows locked in session-id order, as the writers lock theirs: no cycle.
                    tx.execute(
                        f"SELECT session_id FROM event_sessions WHERE session_id IN ({marks})"
                        " ORDER BY session_id FOR UPDATE",
                        chunk,
                    )
                # The row first: a write to that session already under way holds it, so this waits
                # for the write to commit and the DELETE of its events below sees what it wrote.
                tx.execute(f"DELETE FROM event_sessions WHERE session_id IN ({marks})", chunk)
                tx.execute(f"DELETE FROM events WHERE session_id IN ({marks})", chunk)

    def page(self, query: EventQuery) -> EventPage:
        if query.drain:
            return self._drain(query)
        sid = query.session_id
        rows = self.store.execute(_PAGE, (sid, min(query.cursor, _MAX_ID), query.limit, sid))
        if not rows:
            return _empty_page(query)
        next_id, dropped = int(rows[0][0]), int(rows[0][1])
        events = [SessionEvent.model_validate_json(r[2]) for r in rows if r[2] is not None]
        return _page_of(query, events, dropped + 1, next_id - 1, dropped)

    def _drain(self, query: EventQuery) -> EventPage:
        sid = query.session_id
        with self.store.transaction() as tx:
            held = tx.execute(_HOLD_ROW, (sid,))
            if not held:
                return _empty_page(query)
            next_id, dropped = int(held[0][0]), int(held[0][1])
            rows = tx.execute(_EVENTS_AFTER, (sid, min(query.cursor, _MAX_ID), query.limit))
            events = [SessionEvent.model_validate_json(r[0]) for r in rows]
            if events:
                # Everything up to the page's end goes, as in memory: also ids at or below the
                # cursor that this page did not return.
                dropped = events[-1].id
                tx.execute("DELETE FROM events WHERE session_id = ? AND id <= ?", (sid, dropped))
                tx.execute("UPDATE event_sessions SET dropped = ? WHERE session_id = ?", (dropped, sid))
            return _page_of(query, events, dropped + 1, next_id - 1, dropped)

    def sessions(self) -> list[str]:
        return [
            str(r[0]) for r in self.store.execute("SELECT session_id FROM event_sessions ORDER BY touched, session_id")
        ]


class EventHub:
    """Every session's buffer, thread-safe (calls append from several worker threads).

    Without ``store`` the buffers are this process's memory (the fastest, for one process).
    With one, they are the store's event_sessions / events tables, so every instance of a fleet
    on that store reads and writes the same buffers, with the same ids, cursors and bounds.

    A tools/call collects its events in a :class:`EventBatch` and commits them together before it
    answers (one transaction at most, off the event loop): a client told about its call can read
    every event of it, on any instance. Events a store fault kept out are counted in ``lost``."""

    def __init__(
        self,
        limits: EventLimits | None = None,
        *,
        clock_ns: Callable[[], int] = time.time_ns,
        store: StateStore | None = None,
    ) -> None:
        self.limits = limits or EventLimits()
        self._clock_ns = clock_ns
        self._memory = store is None
        self._buffers: _Buffers = _MemoryBuffers(self.limits) if store is None else _StoredBuffers(self.limits, store)
        self._lost = 0
        self._lost_lock = threading.Lock()

    def _pending(
        self,
        session_id: str,
        source: str,
        stream: str,
        level: EventLevel,
        message: str,
        at_ns: int | None,
        **fields: Unpack[EventFields],
    ) -> _Pending:
        tool_call_id = fields.get("tool_call_id")
        correlation_id = fields.get("correlation_id")
        metadata = fields.get("metadata")
        text, cut = _cut(message, self.limits.max_message_bytes)
        kept = bound_metadata(metadata, self.limits.max_metadata_bytes) if metadata else {}
        # The request id a client chose: cut so it cannot carry the bulk the metadata bound keeps out.
        call_id = None if tool_call_id is None else _cut(tool_call_id, _ID_MAX_BYTES)[0]
        correlation = None if correlation_id is None else _cut(correlation_id, _ID_MAX_BYTES)[0]

        def make(event_id: int) -> SessionEvent:
            return SessionEvent(
                id=event_id,
                # An event written at once is stamped under the backend's lock (timestamps follow
                # ids); one of a batch when it happened, not when the batch was committed.
                timestamp_ns=int(self._clock_ns()) if at_ns is None else at_ns,
                session_id=session_id,
                source=source,
                stream=stream,
                level=level,
                message=text,
                tool_call_id=call_id,
                correlation_id=correlation,
                truncation=cut,
                metadata=kept,
            )

        return _Pending(session_id, make)

    def append(
        self, session_id: str, source: str, stream: str, level: EventLevel, message: str, **fields: Unpack[EventFields]
    ) -> SessionEvent:
        """Write one event now (in its own transaction on a store)."""
        pending = self._pending(session_id, source, stream, level, message, None, **fields)
        return self._buffers.append_many([pending])[0]

    def batch(self) -> EventBatch:
        """A batch of appends written together by :meth:`EventBatch.commit`."""
        return EventBatch(self)

    @property
    def lost(self) -> int:
        """Events a store fault kept out of the buffers since the server started."""
        with self._lost_lock:
            return self._lost

    def _count_lost(self, count: int) -> None:
        with self._lost_lock:
            self._lost += count
        metrics.EVENTS_DROPPED.labels("lost").inc(count)

    def page(self, query: EventQuery) -> EventPage:
        """Events with ``id > cursor``, oldest first, at most ``limit``; an unknown session is empty."""
        return self._buffers.page(query)

    def sessions(self) -> list[str]:
        """The sessions kept, the least recently written first."""
        return self._buffers.sessions()

    def close(self) -> None:
        """Write what is still queued, then stop the writer (a server shutting down)."""
        self._buffers.close()


class EventBatch:
    """The events of one call. In memory they are appended at once (nothing to wait for); on a
    store they wait in the batch until :meth:`commit` writes them in one transaction."""

    def __init__(self, hub: EventHub) -> None:
        self._hub = hub
        self._pending: list[_Pending] = []

    def append(
        self, session_id: str, source: str, stream: str, level: EventLevel, message: str, **fields: Unpack[EventFields]
    ) -> None:
        hub = self._hub
        if hub._memory:
            hub.append(session_id, source, stream, level, message, **fields)
            return
        self._pending.append(hub._pending(session_id, source, stream, level, message, int(hub._clock_ns()), **fields))

    async def commit(self, what: str = "a call") -> int:
        """Write the batch (awaited: the caller answers only once its events can be read). A
        store fault is not raised: the events it kept out are counted, logged with ``what``, and
        their number returned, so a call that ran still answers with its outcome."""
        pending, self._pending = self._pending, []
        if not pending:
            return 0
        try:
            await self._hub._buffers.append_async(pending)
        except Exception as err:
            self._hub._count_lost(len(pending))
            code = err.code if isinstance(err, StateError) else "SRV052"
            log.warning("SRV052 %d events of %s were not written (%s): %s", len(pending), what, code, err)
            return len(pending)
        return 0
