"""The PostgreSQL store: psycopg 3 with a connection pool, shared by every instance of a fleet.

Faults are named, never raw driver text: a connection that cannot be had within the pool's
acquire timeout is :class:`StateBusy` (SRV051) or, when the pool could not open one,
:class:`StateUnavailable` (SRV050), as is a connection lost mid-statement. A pooled connection
idle for a while is pinged before use and replaced when dead (a restarted server leaves every idle
connection dead); a ``SELECT`` that still meets a dead one is tried once more on another.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from skillc.runtime.state.store import (
    Params,
    PostgresDialect,
    Row,
    StateBusy,
    StateError,
    StateStore,
    StateUnavailable,
    Tx,
    operation_of,
    timed,
)
from skillc.runtime.state.url import StateUrl

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import ConnectionPool

CONNECT_TIMEOUT_S = 10
# A connection back in the pool for longer than this is pinged (an empty query) before it is
# handed out: under load connections are reused within milliseconds and never pay for the ping,
# while a store restarted during a quiet spell is noticed on the first call, not as its failure.
CHECK_IDLE_S = 0.25
# Statements are prepared from their second run on each connection: the hot ones (event appends,
# card reads and writes) skip the parse and plan; one-off statements (migrations) are not kept.
PREPARE_THRESHOLD = 1
# libpq's fallback: an application_name in the URL or $PGAPPNAME (`skillc serve` sets it per
# instance and worker, skillc/server/request_log.py) names the connection first.
APPLICATION_NAME = "skillc"
# Once the pool could not open a connection, later statements wait only this long for one until a
# connection comes back: a call with three store steps answers in one acquire timeout, not three.
DOWN_WAIT_S = 0.05
# While the server is down the pool tries to reconnect this often (psycopg_pool's default backs
# off from 1 s doubling, so a store back after a 10 s outage could wait 8 s more to be used, and
# /readyz would say 503 all that while). A failed attempt is one refused socket: cheap.
RECONNECT_EVERY_S = 0.2


def _tune_reconnects() -> None:
    from psycopg_pool.base import AttemptWithBackoff

    AttemptWithBackoff.INITIAL_DELAY = RECONNECT_EVERY_S
    AttemptWithBackoff.DELAY_BACKOFF = 1.0
    # Each failed attempt is a warning of the pool's; the calls it fails say so with a code.
    logging.getLogger("psycopg.pool").setLevel(logging.ERROR)


def _translate(sql: str, cache: dict[str, str] = {}) -> str:  # noqa: B006 - a deliberate memo
    """``?`` placeholders to psycopg's ``%s`` (a literal ``%`` doubled first)."""
    out = cache.get(sql)
    if out is None:
        out = cache[sql] = sql.replace("%", "%%").replace("?", "%s")
    return out


def _is_read(sql: str) -> bool:
    return operation_of(sql) == "read"


class _PgTx:
    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self._conn = conn

    def execute(self, sql: str, params: Params = ()) -> list[Row]:
        cur = self._conn.execute(_translate(sql), tuple(params))
        result = cur.pgresult  # the field count, not ``description`` (one Column object per field)
        return list(cur.fetchall()) if result is not None and result.nfields else []

    def execute_many(self, sql: str, rows: Sequence[Params]) -> None:
        with self._conn.cursor() as cur:
            cur.executemany(_translate(sql), [tuple(r) for r in rows])


class PostgresStore(StateStore):
    """Autocommit connections from a pool; a transaction holds one connection until it ends."""

    def __init__(self, url: StateUrl) -> None:
        assert url.kind == "postgresql" and url.dsn is not None
        try:
            import psycopg
            from psycopg_pool import ConnectionPool
        except ImportError as err:  # pragma: no cover - a dependency of skillc
            raise StateError(f"PostgreSQL needs psycopg and psycopg-pool: {err}") from err
        _tune_reconnects()
        # One plain connection first: an unreachable server is one clear error now, not a pool
        # retrying in the background until its timeout.
        try:
            psycopg.connect(
                url.dsn, connect_timeout=CONNECT_TIMEOUT_S, fallback_application_name=APPLICATION_NAME
            ).close()
        except psycopg.Error as err:
            raise StateUnavailable(f"cannot connect to the state store {url.redacted()}: {_reason(err)}") from err
        self.url = url
        self.dialect = PostgresDialect()
        self._lock = threading.Lock()
        # When each connection went back to the pool (keyed by id: psycopg connections take no
        # attributes of ours); a connection never returned is new and needs no ping.
        self._returned: dict[int, float] = {}
        # Connections handed out now: at the acquire timeout, all of them in use means the pool is
        # saturated (SRV051); fewer means it could not open more (SRV050).
        self._in_use = 0
        self._down = False  # the last acquire found the server refusing or gone
        # When a statement last met a dropped connection: every connection last used before then
        # is suspect (a restart drops them all) and is pinged before it is handed out.
        self._dropped_at = 0.0
        settings = url.pool
        self._pool: ConnectionPool[Any] = ConnectionPool(
            url.dsn,
            min_size=min(settings.min_size, settings.max_size),
            max_size=settings.max_size,
            timeout=settings.timeout_s,
            kwargs={
                "autocommit": True,
                "prepare_threshold": PREPARE_THRESHOLD,
                "fallback_application_name": APPLICATION_NAME,
                "connect_timeout": CONNECT_TIMEOUT_S,
            },
            configure=_configure,
            reset=self._stamp,
            # A store that stays down: the pool keeps trying in the background (calls fail fast
            # with SRV050 meanwhile) instead of giving up after its default five minutes.
            reconnect_timeout=365 * 86400.0,
            open=False,
            name="skillc-state",
        )
        try:
            self._pool.open(wait=True, timeout=max(settings.timeout_s, CONNECT_TIMEOUT_S))
        except Exception as err:
            self._pool.close()
            raise StateUnavailable(f"cannot connect to the state store {url.redacted()}: {_reason(err)}") from err

    def _stamp(self, conn: psycopg.Connection[Any]) -> None:
        self._returned[id(conn)] = time.monotonic()

    def _checkout(self) -> psycopg.Connection[Any]:
        """A live connection: idle ones are pinged first, and a dead one is dropped for the next
        (without the pool's back-off between tries: a restarted server leaves many dead at once)."""
        import psycopg_pool

        deadline = time.monotonic() + (DOWN_WAIT_S if self._down else self.url.pool.timeout_s)
        while True:
            try:
                conn: psycopg.Connection[Any] = self._pool.getconn(timeout=max(deadline - time.monotonic(), 0.001))
            except psycopg_pool.PoolTimeout as err:
                fault = self._no_connection(err, waited=not self._down)
                self._down = isinstance(fault, StateUnavailable)
                raise fault from err
            returned = self._returned.pop(id(conn), None)
            if returned is not None and (returned <= self._dropped_at or time.monotonic() - returned >= CHECK_IDLE_S):
                try:
                    conn.execute("")
                except Exception:
                    self._pool.putconn(conn)  # broken: the pool closes it and opens another
                    continue
            with self._lock:
                self._in_use += 1
            self._down = False
            return conn

    def _checkin(self, conn: psycopg.Connection[Any]) -> None:
        with self._lock:
            self._in_use -= 1
        self._pool.putconn(conn)

    def _no_connection(self, err: BaseException, *, waited: bool) -> StateError:
        where = self.url.redacted()
        if not waited:  # already known down: no new wait, the same answer
            return StateUnavailable(f"SRV050 the state store {where} is unreachable: no connection since the last try")
        waited_s = f"{self.url.pool.timeout_s:g} s"
        if self._in_use >= self.url.pool.max_size:
            return StateBusy(
                f"SRV051 the state store {where} gave no connection within {waited_s}: all"
                f" {self.url.pool.max_size} of this process's connections are in use (--state-pool-max)"
            )
        return StateUnavailable(
            f"SRV050 the state store {where} gave no connection within {waited_s}: it refuses or does not"
            f" answer new connections ({_reason(err)})"
        )

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        conn = self._checkout()
        try:
            yield conn
        finally:
            self._checkin(conn)

    def execute(self, sql: str, params: Params = ()) -> list[Row]:
        import psycopg

        read = _is_read(sql)
        tries = 2 if read else 1
        with timed("postgresql", "read" if read else "write"):
            for attempt in range(tries):
                with self._connection() as conn:
                    try:
                        return _PgTx(conn).execute(sql, params)
                    except psycopg.OperationalError as err:
                        if not _lost(conn):
                            raise
                        if attempt + 1 < tries:
                            self._dropped_at = time.monotonic()
                            continue
                        raise self._lost_error(err) from err
        raise AssertionError("unreachable")  # pragma: no cover

    @contextmanager
    def transaction(self, lock: str | None = None) -> Iterator[Tx]:
        import psycopg

        with timed("postgresql", "transaction"), self._connection() as conn:
            try:
                with conn.transaction():
                    tx = _PgTx(conn)
                    if lock is not None:
                        # Held until COMMIT: the same lock on another instance waits for it.
                        tx.execute("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", (lock,))
                    yield tx
            except psycopg.OperationalError as err:
                if not _lost(conn):
                    raise
                raise self._lost_error(err) from err

    def _lost_error(self, err: BaseException) -> StateUnavailable:
        self._dropped_at = time.monotonic()
        return StateUnavailable(f"SRV050 the state store {self.url.redacted()} dropped the connection: {_reason(err)}")

    def prepare(self) -> None:
        """Create the schema the URL's search_path names first when none of its schemas exists
        (``?options=-csearch_path%3Dskillc`` keeps skillc's tables in a schema of their own)."""
        import psycopg

        if self.execute("SELECT current_schema()")[0][0] is not None:
            return
        path = str(self.execute("SHOW search_path")[0][0])
        names = [n.strip() for n in path.split(",") if n.strip() and n.strip() != '"$user"']
        if not names:
            raise StateError(f"the state store {self.url.redacted()} names no schema to keep its tables in")
        first = names[0]
        name = first[1:-1].replace('""', '"') if first.startswith('"') else first.lower()
        quoted = '"' + name.replace('"', '""') + '"'
        try:
            # Under the migration lock: two instances starting at once would otherwise race on the
            # catalogue's unique index even with IF NOT EXISTS.
            with self.transaction("skillc_schema") as tx:
                tx.execute(f"CREATE SCHEMA IF NOT EXISTS {quoted}")
        except psycopg.Error as err:
            raise StateError(
                f"cannot create schema {name!r} in the state store {self.url.redacted()}: {_reason(err)}"
            ) from err

    def table_names(self) -> set[str]:
        rows = self.execute("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")
        return {str(r[0]) for r in rows}

    def pool_stats(self) -> dict[str, int]:
        """The pool's counters (psycopg_pool's names): pool_size, pool_available, requests_waiting..."""
        return dict(self._pool.get_stats())

    def close(self) -> None:
        self._pool.close()


def _configure(conn: psycopg.Connection[Any]) -> None:
    """A list parameter (an array: the event appends send theirs as arrays) goes in PostgreSQL's
    binary format: the text format quotes and escapes every element with a regex, which cost
    ~0.1 ms per kilobyte of event JSON.

    Generic plans from the first execution: by default PostgreSQL plans a prepared statement
    afresh at each of its first five binds and then only while a custom plan looks cheaper, and
    for the events CTE it kept re-planning (0.4 ms of the server's CPU per call against 0.05 for
    binding a generic plan). Every statement here looks rows up by key, which one plan serves."""
    from psycopg.types.array import ListBinaryDumper

    conn.adapters.register_dumper(list, ListBinaryDumper)
    if conn.info.server_version >= 120000:  # the setting is PostgreSQL 12's; older servers plan as they did
        conn.execute("SET plan_cache_mode = force_generic_plan")


def _lost(conn: psycopg.Connection[Any]) -> bool:
    """Whether the error left the connection unusable (the server went away), as opposed to a
    statement the server refused on a live connection."""
    return bool(conn.closed or conn.broken)


def _reason(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return text[0] if text else type(err).__name__
