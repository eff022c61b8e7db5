"""The SQLite store: one file in WAL mode, one connection per thread (the default)."""

from __future__ import annotations

import sqlite3
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from skillc.runtime.state.store import Params, Row, SqliteDialect, StateError, StateStore, Tx, operation_of, timed
from skillc.runtime.state.url import StateUrl

BUSY_TIMEOUT_S = 30.0  # how long a statement waits for another process's lock


def connect(path: Path) -> sqlite3.Connection:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        _wal(conn)  # the CLI, the server and guard processes share the file
        conn.execute("PRAGMA synchronous=NORMAL")
    except (OSError, sqlite3.Error) as err:
        # A state dir under a regular file, a read-only disk, a file that is not a database: one
        # line that names the file, not a traceback (the CLI prints StateError as an error).
        reason = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
        raise StateError(f"cannot open the state store {path}: {reason}") from err
    return conn


def _wal(conn: sqlite3.Connection) -> None:
    """Switch to WAL. Processes that open a new file at once (the workers of `serve --workers N`)
    can meet SQLITE_BUSY here without the busy handler being asked (the switch needs the file to
    itself), so a locked file is retried until the busy timeout, as any other statement waits."""
    give_up = time.monotonic() + BUSY_TIMEOUT_S
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as err:
            if "locked" not in str(err) or time.monotonic() >= give_up:
                raise
            time.sleep(0.05)


class _SqliteTx:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def execute(self, sql: str, params: Params = ()) -> list[Row]:
        return self._conn.execute(sql, params).fetchall()

    def execute_many(self, sql: str, rows: Sequence[Params]) -> None:
        self._conn.executemany(sql, rows)


class SqliteStore(StateStore):
    """sqlite3 connections must not be shared between threads, and card and API work runs on
    worker threads: each thread opens its own (``statedb.connect``: WAL, 30 s busy timeout)."""

    def __init__(self, url: StateUrl) -> None:
        assert url.kind == "sqlite" and url.path is not None
        self.url = url
        self.path = url.path
        self.dialect = SqliteDialect()
        self._local = threading.local()

    def conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            # Looked up on the module so a test can trace every connection (tests/test_request_path.py).
            conn = self._local.conn = sys.modules[__name__].connect(self.path)
        return conn

    def execute(self, sql: str, params: Params = ()) -> list[Row]:
        with timed("sqlite", operation_of(sql)):
            return self.conn().execute(sql, params).fetchall()

    @contextmanager
    def transaction(self, lock: str | None = None) -> Iterator[Tx]:
        # BEGIN IMMEDIATE takes the file's write lock at once: every writer waits its turn, so
        # the lock name is not needed to serialise.
        with timed("sqlite", "transaction"):
            conn = self.conn()
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield _SqliteTx(conn)
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def table_names(self) -> set[str]:
        return {str(r[0]) for r in self.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}

    def integrity(self) -> list[str]:
        """``PRAGMA integrity_check``: ``["ok"]`` for a sound file."""
        return [str(r[0]) for r in self.execute("PRAGMA integrity_check")]
