"""The state store: everything that must outlive a request (storage, cards, audit, logins), in
SQLite (the default) or PostgreSQL. See docs/deploy.md, "The state store"."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from skillc.runtime.state.schema import SCHEMA_VERSION, migrate
from skillc.runtime.state.store import StateBusy, StateError, StateStore, StateUnavailable
from skillc.runtime.state.url import StateUrl, StateUrlError, parse_state_url, state_url_of

__all__ = [
    "SCHEMA_VERSION",
    "StateBusy",
    "StateError",
    "StateStore",
    "StateUnavailable",
    "StateUrl",
    "StateUrlError",
    "connect_state",
    "open_state",
    "parse_state_url",
    "state_url_of",
]

_pools: dict[tuple[StateUrl, int], StateStore] = {}
_pools_lock = threading.Lock()


def connect_state(url: StateUrl) -> StateStore:
    """A new store for ``url``, not migrated (``skillc state check`` must not change what it checks)."""
    if url.kind == "sqlite":
        from skillc.runtime.state.sqlite_store import SqliteStore

        return SqliteStore(url)
    from skillc.runtime.state.postgres_store import PostgresStore

    return PostgresStore(url)


def open_state(target: Path | StateUrl) -> StateStore:
    """The store ``target`` names, at the current schema version.

    SQLite: a new store each time (its connections are per thread and cheap), migrated on open as
    the tables were created on open before versioning. PostgreSQL: one pool per database for the
    process (a forked child gets its own), migrated on first open."""
    url = target if isinstance(target, StateUrl) else StateUrl.sqlite(target)
    if url.kind == "sqlite":
        store = connect_state(url)
        migrate(store)
        return store
    key = (url, os.getpid())
    with _pools_lock:
        pooled = _pools.get(key)
        if pooled is None:
            pooled = connect_state(url)
            try:
                migrate(pooled)
            except BaseException:
                pooled.close()
                raise
            _pools[key] = pooled
        return pooled


def close_pools(url: StateUrl | None = None) -> None:
    """Close this process's PostgreSQL pools (a server shutting down), or the one of ``url`` (a
    test dropping its schema while other stores stay in use)."""
    with _pools_lock:
        keys = [k for k in _pools if k[1] == os.getpid() and url in (None, k[0])]
        stores = [_pools.pop(k) for k in keys]
    for store in stores:
        store.close()
