"""The state database file (storage, cards, audit) and its per-thread connections."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path


def connect(path: Path) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, timeout=30.0, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")  # the CLI, the server and guard processes share the file
    conn.execute("PRAGMA synchronous=NORMAL")
    return conn


class StateDb:
    """One connection per thread to one database file: sqlite3 connections must not be shared
    between threads, and card and API work runs on worker threads."""

    def __init__(self, path: Path, schema: str) -> None:
        self.path = path
        self._local = threading.local()
        self.conn().executescript(schema)

    def conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = connect(self.path)
        return conn
