"""wx storage persisted in the state store, scoped by (userDid, merchantDid, skillId).

The scope comes from the call context Python built, never from JS, so no skill or user can
name another's keys. Values are stored as the JSON the skill passed. Limits follow the
mini-program: 1 MB per key, 10 MB per scope (both configurable).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel

from skillc.runtime.config import RuntimeConfig
from skillc.runtime.state import StateStore, StateUrl, open_state, state_url_of

_SCOPE = "user_did=? AND merchant_did=? AND skill_id=?"


class StorageInfo(BaseModel):
    """What getStorageInfo answers; sizes in KB like the mini-program."""

    keys: list[str]
    currentSize: int
    limitSize: int


class StorageError(Exception):
    """A storage request the skill made is not allowed (too big); becomes a wx ``fail``."""


class Storage:
    """The ``storage`` table of the state store. Thread-safe."""

    def __init__(
        self, state: Path | StateUrl, *, key_max_bytes: int = 1 << 20, total_max_bytes: int = 10 << 20
    ) -> None:
        self.key_max_bytes = key_max_bytes
        self.total_max_bytes = total_max_bytes
        self.store: StateStore = open_state(state)

    @classmethod
    def of(cls, config: RuntimeConfig) -> Storage:
        """The storage of the configured state file, with the configured limits."""
        return cls(
            state_url_of(config),
            key_max_bytes=config.storage_key_max_bytes,
            total_max_bytes=config.storage_total_max_bytes,
        )

    def scope(self, user_did: str, merchant_did: str, skill_id: str) -> StorageScope:
        return StorageScope(self, (user_did, merchant_did, skill_id))


@dataclass(frozen=True)
class StorageScope:
    """The keys of one (user, merchant, skill)."""

    storage: Storage
    owner: tuple[str, str, str]

    def get(self, key: str) -> str | None:
        rows = self.storage.store.execute(f"SELECT value FROM storage WHERE {_SCOPE} AND key=?", (*self.owner, key))
        return str(rows[0][0]) if rows else None

    def set(self, key: str, value_json: str) -> None:
        size = len(key.encode()) + len(value_json.encode())
        if size > self.storage.key_max_bytes:
            raise StorageError(f"entry size {size} bytes exceeds the limit of {self.storage.key_max_bytes} bytes")
        store = self.storage.store
        d = store.dialect
        # The quota check and the write in one transaction, one writer per scope at a time (on
        # every instance sharing the store), so two concurrent sets cannot both fit.
        with store.transaction(lock="storage:" + "\x1f".join(self.owner)) as tx:
            used = tx.execute(
                f"SELECT COALESCE(SUM({d.byte_length('key')} + {d.byte_length('value')}), 0) FROM storage"
                f" WHERE {_SCOPE} AND key<>?",
                (*self.owner, key),
            )[0][0]
            if int(used) + size > self.storage.total_max_bytes:
                raise StorageError(f"exceed storage max size {self.storage.total_max_bytes // (1 << 20)}MB")
            columns = ("user_did", "merchant_did", "skill_id", "key", "value")
            tx.execute(d.upsert("storage", columns, columns[:4]), (*self.owner, key, value_json))

    def remove(self, key: str) -> None:
        self.storage.store.execute(f"DELETE FROM storage WHERE {_SCOPE} AND key=?", (*self.owner, key))

    def clear(self) -> None:
        self.storage.store.execute(f"DELETE FROM storage WHERE {_SCOPE}", self.owner)

    def info(self) -> StorageInfo:
        d = self.storage.store.dialect
        rows = self.storage.store.execute(
            f"SELECT key, {d.byte_length('key')} + {d.byte_length('value')} FROM storage WHERE {_SCOPE}"
            f" ORDER BY {d.binary_order('key')}",
            self.owner,
        )
        used = sum(int(r[1]) for r in rows)
        return StorageInfo(
            keys=[str(r[0]) for r in rows],
            currentSize=(used + 1023) // 1024,
            limitSize=self.storage.total_max_bytes // 1024,
        )
