"""The PostgreSQL store: psycopg 3 with a connection pool, shared by every instance of a fleet."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from skillc.runtime.state.store import Params, PostgresDialect, Row, StateError, StateStore, Tx
from skillc.runtime.state.url import StateUrl

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import ConnectionPool

POOL_MAX = 10
POOL_TIMEOUT_S = 30.0
CONNECT_TIMEOUT_S = 10


def _translate(sql: str, cache: dict[str, str] = {}) -> str:  # noqa: B006 - a deliberate memo
    """``?`` placeholders to psycopg's ``%s`` (a literal ``%`` doubled first)."""
    out = cache.get(sql)
    if out is None:
        out = cache[sql] = sql.replace("%", "%%").replace("?", "%s")
    return out


class _PgTx:
    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self._conn = conn

    def execute(self, sql: str, params: Params = ()) -> list[Row]:
        cur = self._conn.execute(_translate(sql), tuple(params))
        return list(cur.fetchall()) if cur.description is not None else []


class PostgresStore(StateStore):
    """Autocommit connections from a pool; a transaction holds one connection until it ends."""

    def __init__(self, url: StateUrl, *, max_size: int = POOL_MAX) -> None:
        assert url.kind == "postgresql" and url.dsn is not None
        try:
            import psycopg
            from psycopg_pool import ConnectionPool
        except ImportError as err:  # pragma: no cover - a dependency of skillc
            raise StateError(f"PostgreSQL needs psycopg and psycopg-pool: {err}") from err
        # One plain connection first: an unreachable server is one clear error now, not a pool
        # retrying in the background until its timeout.
        try:
            psycopg.connect(url.dsn, connect_timeout=CONNECT_TIMEOUT_S).close()
        except psycopg.Error as err:
            raise StateError(f"cannot connect to the state store {url.redacted()}: {_reason(err)}") from err
        self.url = url
        self.dialect = PostgresDialect()
        self._lock = threading.Lock()
        self._pool: ConnectionPool[Any] = ConnectionPool(
            url.dsn,
            min_size=1,
            max_size=max_size,
            timeout=POOL_TIMEOUT_S,
            kwargs={"autocommit": True},
            open=False,
            name="skillc-state",
        )
        try:
            self._pool.open(wait=True, timeout=POOL_TIMEOUT_S)
        except Exception as err:
            self._pool.close()
            raise StateError(f"cannot connect to the state store {url.redacted()}: {_reason(err)}") from err

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        import psycopg_pool

        try:
            with self._pool.connection() as conn:
                yield conn
        except psycopg_pool.PoolTimeout as err:
            raise StateError(f"the state store {self.url.redacted()} gave no connection: {_reason(err)}") from err

    def execute(self, sql: str, params: Params = ()) -> list[Row]:
        with self._connection() as conn:
            return _PgTx(conn).execute(sql, params)

    @contextmanager
    def transaction(self, lock: str | None = None) -> Iterator[Tx]:
        with self._connection() as conn, conn.transaction():
            tx = _PgTx(conn)
            if lock is not None:
                # Held until COMMIT: the same lock on another instance waits for it.
                tx.execute("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", (lock,))
            yield tx

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

    def close(self) -> None:
        self._pool.close()


def _reason(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return text[0] if text else type(err).__name__
