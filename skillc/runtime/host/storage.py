"""wx storage persisted in SQLite, scoped by (userDid, merchantDid, skillId).

The scope comes from the call context Python built, never from JS, so no skill or user can
name another's keys. Values are stored as the JSON the skill passed. Limits follow the
mini-program: 1 MB per key, 10 MB per scope (both configurable).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel

from skillc.runtime.config import RuntimeConfig
from skillc.runtime.host.statedb import StateDb

_SCHEMA = """
CREATE TABLE IF NOT EXISTS storage (
  user_did TEXT NOT NULL, merchant_did TEXT NOT NULL, skill_id TEXT NOT NULL,
  key TEXT NOT NULL, value TEXT NOT NULL,
  PRIMARY KEY (user_did, merchant_did, skill_id, key)
);
"""


class StorageInfo(BaseModel):
    """What getStorageInfo answers; sizes in KB like the mini-program."""

    keys: list[str]
    currentSize: int
    limitSize: int


class StorageError(Exception):
    """A storage request the skill made is not allowed (too big); becomes a wx ``fail``."""


class Storage:
    """The storage database. Thread-safe: one connection per thread."""

    def __init__(self, path: Path, *, key_max_bytes: int = 1 << 20, total_max_bytes: int = 10 << 20) -> None:
        self.path = path
        self.key_max_bytes = key_max_bytes
        self.total_max_bytes = total_max_bytes
        self._db = StateDb(path, _SCHEMA)

    @classmethod
    def of(cls, config: RuntimeConfig) -> Storage:
        """The storage of the configured state file, with the configured limits."""
        return cls(
            config.state_file,
            key_max_bytes=config.storage_key_max_bytes,
            total_max_bytes=config.storage_total_max_bytes,
        )

    def _conn(self) -> sqlite3.Connection:
        return self._db.conn()

    def scope(self, user_did: str, merchant_did: str, skill_id: str) -> StorageScope:
        return StorageScope(self, (user_did, merchant_did, skill_id))


@dataclass(frozen=True)
class StorageScope:
    """The keys of one (user, merchant, skill)."""

    storage: Storage
    owner: tuple[str, str, str]

    def get(self, key: str) -> str | None:
        row = (
            self.storage._conn()
            .execute(
                "SELECT value FROM storage WHERE user_did=? AND merchant_did=? AND skill_id=? AND key=?",
                (*self.owner, key),
            )
            .fetchone()
        )
        return None if row is None else str(row[0])

    def set(self, key: str, value_json: str) -> None:
        size = len(key.encode()) + len(value_json.encode())
        if size > self.storage.key_max_bytes:
            raise StorageError(f"entry size {size} bytes exceeds the limit of {self.storage.key_max_bytes} bytes")
        conn = self.storage._conn()
        conn.execute("BEGIN IMMEDIATE")
        try:
            used = conn.execute(
                "SELECT COALESCE(SUM(LENGTH(CAST(key AS BLOB)) + LENGTH(CAST(value AS BLOB))), 0) FROM storage"
                " WHERE user_did=? AND merchant_did=? AND skill_id=? AND key<>?",
                (*self.owner, key),
            ).fetchone()[0]
            if used + size > self.storage.total_max_bytes:
                raise StorageError(f"exceed storage max size {self.storage.total_max_bytes // (1 << 20)}MB")
            conn.execute(
                "INSERT OR REPLACE INTO storage (user_did, merchant_did, skill_id, key, value) VALUES (?,?,?,?,?)",
                (*self.owner, key, value_json),
            )
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def remove(self, key: str) -> None:
        self.storage._conn().execute(
            "DELETE FROM storage WHERE user_did=? AND merchant_did=? AND skill_id=? AND key=?", (*self.owner, key)
        )

    def clear(self) -> None:
        self.storage._conn().execute(
            "DELETE FROM storage WHERE user_did=? AND merchant_did=? AND skill_id=?", self.owner
        )

    def info(self) -> StorageInfo:
        rows = (
            self.storage._conn()
            .execute(
                "SELECT key, LENGTH(CAST(key AS BLOB)) + LENGTH(CAST(value AS BLOB)) FROM storage"
                " WHERE user_did=? AND merchant_did=? AND skill_id=? ORDER BY key",
                self.owner,
            )
            .fetchall()
        )
        used = sum(int(r[1]) for r in rows)
        return StorageInfo(
            keys=[str(r[0]) for r in rows],
            currentSize=(used + 1023) // 1024,
            limitSize=self.storage.total_max_bytes // 1024,
        )
