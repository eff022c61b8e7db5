"""The state-store interface: what storage, cards, audit and logins need from a database.

Every store speaks one SQL: written with ``?`` placeholders and the few constructs the dialects
differ in (upsert, byte length, a JSON field) taken from :attr:`StateStore.dialect`. Each
``execute`` outside a transaction commits on its own, as SQLite's autocommit mode does.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any, Literal, Protocol

from skillc.runtime.state.url import StateUrl

Row = tuple[Any, ...]
Params = Sequence[Any]


# Told how long each store operation took: (engine, operation, seconds), operation one of "read",
# "write" (one statement in its own transaction) or "transaction". The server's /metrics installs
# one (the runtime does not import the server); without one, timing costs nothing.
StoreObserver = Callable[[str, str, float], None]
_observers: list[StoreObserver] = []


def observe_store(observer: StoreObserver) -> None:
    """Call ``observer`` after every store operation of this process, as it ends (also on failure)."""
    if observer not in _observers:
        _observers.append(observer)


@contextmanager
def timed(engine: str, operation: str) -> Iterator[None]:
    """Report the body's duration to the observers (if any)."""
    if not _observers:
        yield
        return
    started = time.perf_counter()
    try:
        yield
    finally:
        elapsed = time.perf_counter() - started
        for observer in _observers:
            observer(engine, operation, elapsed)


def operation_of(sql: str) -> str:
    """``read`` for a statement that only reads (a SELECT), else ``write``."""
    return "read" if sql.lstrip()[:6].upper() == "SELECT" else "write"


class StateError(Exception):
    """The store cannot be reached or is not in a state this skillc can use. ``code`` names the
    fault in answers and log lines (skillc/diagnostics.py)."""

    code = "SRV050"


class StateUnavailable(StateError):
    """The store did not answer: it is down, restarting, or dropped the connection mid-statement
    (a write may or may not have been applied)."""

    code = "SRV050"


class StateBusy(StateError):
    """Every pooled connection is in use and none came free within the acquire timeout."""

    code = "SRV051"


class Tx(Protocol):
    """A transaction's statements: the same ``execute`` as the store's."""

    def execute(self, sql: str, params: Params = ()) -> list[Row]: ...

    def execute_many(self, sql: str, rows: Sequence[Params]) -> None:
        """``sql`` once for each of ``rows`` (PostgreSQL: pipelined, one round trip)."""
        ...


class Dialect(ABC):
    """The SQL the two engines write differently."""

    name: Literal["sqlite", "postgresql"]

    @abstractmethod
    def upsert(self, table: str, columns: Sequence[str], keys: Sequence[str], rows: str | None = None) -> str:
        """INSERT of ``columns`` that replaces the row with the same ``keys``. ``rows``: what to
        insert, a SELECT of the columns in order (default: VALUES, a placeholder per column)."""

    @abstractmethod
    def insert_absent(self, table: str, columns: Sequence[str], keys: Sequence[str]) -> str:
        """INSERT of ``columns`` that does nothing when a row with the same ``keys`` exists."""

    @abstractmethod
    def byte_length(self, expr: str) -> str:
        """The UTF-8 length of a TEXT expression, in bytes."""

    @abstractmethod
    def binary_order(self, expr: str) -> str:
        """``expr`` compared byte by byte (SQLite's default; PostgreSQL's follows the locale)."""

    @abstractmethod
    def json_bool(self, column: str, key: str) -> str:
        """A top-level boolean of the JSON text in ``column`` (truthy in Python when true)."""

    @abstractmethod
    def json_real(self, column: str, key: str) -> str:
        """A top-level number of the JSON text in ``column``."""

    @abstractmethod
    def json_with_number(self, expr: str, key: str, value: str) -> str:
        """The JSON text ``expr`` with its top-level ``key`` set to the number ``value`` (an SQL
        expression), as TEXT (key order and spacing may differ from ``expr``'s)."""

    @abstractmethod
    def next_value(self, sequence: str, table: str, column: str) -> str:
        """An expression for the next value of a counter that orders ``table`` by ``column``:
        PostgreSQL's sequence ``sequence`` (no scan, no row lock); on SQLite, one above the
        column's largest value, read from its index while the writer holds the file's lock."""


class SqliteDialect(Dialect):
    name: Literal["sqlite", "postgresql"] = "sqlite"

    def upsert(self, table: str, columns: Sequence[str], keys: Sequence[str], rows: str | None = None) -> str:
        rows = rows or f"VALUES ({', '.join('?' * len(columns))})"
        return f"INSERT OR REPLACE INTO {table} ({', '.join(columns)}) {rows}"

    def insert_absent(self, table: str, columns: Sequence[str], keys: Sequence[str]) -> str:
        marks = ", ".join("?" * len(columns))
        return f"INSERT OR IGNORE INTO {table} ({', '.join(columns)}) VALUES ({marks})"

    def byte_length(self, expr: str) -> str:
        return f"LENGTH(CAST({expr} AS BLOB))"

    def binary_order(self, expr: str) -> str:
        return expr

    def json_bool(self, column: str, key: str) -> str:
        return f"json_extract({column}, '$.{key}')"

    def json_real(self, column: str, key: str) -> str:
        return f"json_extract({column}, '$.{key}')"

    def json_with_number(self, expr: str, key: str, value: str) -> str:
        return f"json_set({expr}, '$.{key}', {value})"

    def next_value(self, sequence: str, table: str, column: str) -> str:
        return f"(SELECT COALESCE(MAX({column}), 0) + 1 FROM {table})"


class PostgresDialect(Dialect):
    name: Literal["sqlite", "postgresql"] = "postgresql"

    def upsert(self, table: str, columns: Sequence[str], keys: Sequence[str], rows: str | None = None) -> str:
        rows = rows or f"VALUES ({', '.join('?' * len(columns))})"
        rest = [c for c in columns if c not in keys]
        update = ", ".join(f"{c} = EXCLUDED.{c}" for c in rest)
        action = f"DO UPDATE SET {update}" if rest else "DO NOTHING"
        return f"INSERT INTO {table} ({', '.join(columns)}) {rows} ON CONFLICT ({', '.join(keys)}) {action}"

    def insert_absent(self, table: str, columns: Sequence[str], keys: Sequence[str]) -> str:
        marks = ", ".join("?" * len(columns))
        return f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks}) ON CONFLICT ({', '.join(keys)}) DO NOTHING"

    def byte_length(self, expr: str) -> str:
        return f"octet_length({expr})"

    def binary_order(self, expr: str) -> str:
        return f'{expr} COLLATE "C"'

    def json_bool(self, column: str, key: str) -> str:
        return f"(({column})::jsonb -> '{key}')::boolean"

    def json_real(self, column: str, key: str) -> str:
        return f"(({column})::jsonb ->> '{key}')::double precision"

    def json_with_number(self, expr: str, key: str, value: str) -> str:
        return f"CAST(jsonb_set(CAST({expr} AS jsonb), '{{{key}}}', to_jsonb({value})) AS text)"

    def next_value(self, sequence: str, table: str, column: str) -> str:
        return f"nextval('{sequence}')"


class StateStore(ABC):
    """One state database. Thread-safe: the SQLite store keeps a connection per thread, the
    PostgreSQL store a pool."""

    url: StateUrl
    dialect: Dialect

    @property
    def kind(self) -> Literal["sqlite", "postgresql"]:
        return self.url.kind

    @abstractmethod
    def execute(self, sql: str, params: Params = ()) -> list[Row]:
        """Run one statement in its own transaction; the rows it returns (none for a write).
        A ``SELECT`` that meets a dropped connection is tried once more on another (reads are
        idempotent); a write is not, and raises :class:`StateUnavailable`."""

    @abstractmethod
    def transaction(self, lock: str | None = None) -> AbstractContextManager[Tx]:
        """Statements that commit together (roll back on an exception). With ``lock``, concurrent
        transactions naming the same lock run one after the other, on every instance."""

    @abstractmethod
    def table_names(self) -> set[str]:
        """The tables in the store (in the default schema for PostgreSQL)."""

    def prepare(self) -> None:  # noqa: B027 - SQLite's file is made by its first connection
        """Make the place the tables go (before the first migration)."""

    def ping(self) -> None:
        """Raise :class:`StateError` unless the store answers a query."""
        try:
            self.execute("SELECT 1")
        except StateError:
            raise
        except Exception as err:
            raise StateError(f"the state store {self.url.redacted()} does not answer: {err}") from err

    def close(self) -> None:  # noqa: B027 - a store without resources of its own has nothing to close
        """Give back connections (a closed pool cannot be used again)."""
