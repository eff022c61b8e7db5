"""wx storage persisted in the state store, scoped by (userDid, merchantDid, skillId).

The scope comes from the call context Python built, never from JS, so no skill or user can
name another's keys. Values are stored as the JSON the skill passed. Limits follow the
mini-program: 1 MB per key, 10 MB per scope (both configurable).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from skillc.diagnostics import Diagnostic
from skillc.frontend.jsonsrc import JObject, parse_json_input
from skillc.runtime.config import RuntimeConfig
from skillc.runtime.state import StateStore, StateUrl, open_state, state_url_of

_SCOPE = "user_did=? AND merchant_did=? AND skill_id=?"


class StorageInfo(BaseModel):
    """What getStorageInfo answers; sizes in KB like the mini-program."""

    keys: list[str]
    currentSize: int
    limitSize: int


class StorageError(Exception):
    """A storage request the skill made is not allowed (too big, a bad key); becomes a wx ``fail``."""


def check_key(key: str) -> None:
    """Refuses a key some store cannot hold, the same way on every store, before any store sees it:
    a lone surrogate is no UTF-8 (neither SQLite nor PostgreSQL can encode it) and PostgreSQL's
    text cannot hold NUL, so a key SQLite took would be lost on a move to PostgreSQL."""
    for at, char in enumerate(key):
        if char == "\x00":
            raise StorageError(f"invalid key: NUL character at index {at}")
        if "\ud800" <= char <= "\udfff":
            raise StorageError(f"invalid key: lone surrogate U+{ord(char):04X} at index {at}")


def _value_json(value_json: str) -> str:
    """``value_json`` as UTF-8 can hold it: a lone surrogate inside a JSON string is written as its
    ``\\uXXXX`` escape, which reads back as the same string."""
    try:
        value_json.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(json.loads(value_json))
    return value_json


class Storage:
    """The ``storage`` table of the state store. Thread-safe."""

    def __init__(
        self,
        state: Path | StateUrl,
        *,
        key_max_bytes: int = 1 << 20,
        total_max_bytes: int = 10 << 20,
        seed: Mapping[str, Any] | None = None,
    ) -> None:
        self.key_max_bytes = key_max_bytes
        self.total_max_bytes = total_max_bytes
        self.store: StateStore = open_state(state)
        # --storage FILE: keys written into each scope before its first call in this process, so a
        # skill that only answers once a key is set (a preview mode) runs with one flag.
        self._seed = {key: json.dumps(value, ensure_ascii=False) for key, value in (seed or {}).items()}
        self._seeded: set[tuple[str, str, str]] = set()
        self._seed_lock = threading.Lock()

    @classmethod
    def of(cls, config: RuntimeConfig) -> Storage:
        """The storage of the configured state file, with the configured limits and seed."""
        return cls(
            state_url_of(config),
            key_max_bytes=config.storage_key_max_bytes,
            total_max_bytes=config.storage_total_max_bytes,
            seed=config.storage_seed,
        )

    def scope(self, user_did: str, merchant_did: str, skill_id: str) -> StorageScope:
        scope = StorageScope(self, (user_did, merchant_did, skill_id))
        if self._seed and scope.owner not in self._seeded:
            with self._seed_lock:
                if scope.owner not in self._seeded:
                    for key, value_json in self._seed.items():
                        scope.set(key, value_json)  # within the limits: read_storage_seed checked them
                    self._seeded.add(scope.owner)
        return scope


@dataclass(frozen=True)
class StorageScope:
    """The keys of one (user, merchant, skill)."""

    storage: Storage
    owner: tuple[str, str, str]

    def get(self, key: str) -> str | None:
        check_key(key)
        rows = self.storage.store.execute(f"SELECT value FROM storage WHERE {_SCOPE} AND key=?", (*self.owner, key))
        return str(rows[0][0]) if rows else None

    def set(self, key: str, value_json: str) -> None:
        check_key(key)
        value_json = _value_json(value_json)
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
        check_key(key)
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


def load_storage_seed(
    text: str, file: str, *, key_max_bytes: int = 1 << 20, total_max_bytes: int = 10 << 20
) -> tuple[dict[str, Any] | None, list[Diagnostic]]:
    """The ``--storage`` file: a JSON object of key -> value (any JSON, stored as wx.setStorage would
    store it), within the storage limits; or None and why, each problem at its line and column."""
    root, syntax = parse_json_input(text, file, "RUN105", "the storage file")
    if root is None:
        return None, syntax
    if not isinstance(root, JObject):
        message = "storage /: expected an object of key -> value, as wx.setStorageSync(key, value) would store them"
        return None, [Diagnostic.make("RUN105", message, file=file, span=root.span)]
    seed: dict[str, Any] = {m.key: m.value.to_python() for m in root.members}
    problems: list[Diagnostic] = []
    total = 0
    for key, value in seed.items():
        try:
            check_key(key)
        except StorageError as err:
            span = next(m.key_span for m in reversed(root.members) if m.key == key)
            problems.append(Diagnostic.make("RUN105", f"storage key {key!r}: {err}", file=file, span=span))
            continue
        size = len(key.encode()) + len(_value_json(json.dumps(value, ensure_ascii=False)).encode())
        total += size
        if size > key_max_bytes:
            span = next(m.key_span for m in reversed(root.members) if m.key == key)
            message = f"storage key {key!r}: {size} bytes, over the {key_max_bytes} bytes one key may hold"
            problems.append(Diagnostic.make("RUN105", message, file=file, span=span))
    if total > total_max_bytes:
        message = f"storage: {total} bytes in all, over the {total_max_bytes} bytes one scope may hold"
        problems.append(Diagnostic.make("RUN105", message, file=file, span=root.span))
    return (None, problems) if problems else (seed, [])


def read_storage_seed(path: Path) -> tuple[dict[str, Any] | None, list[Diagnostic], str]:
    """:func:`load_storage_seed` of a file; the third item is its text (for rendering the diagnostics)."""
    try:
        text = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as err:
        reason = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
        return None, [Diagnostic.make("RUN105", f"cannot read the storage file: {reason}", file=str(path))], ""
    seed, diags = load_storage_seed(text, str(path))
    return seed, diags, text
