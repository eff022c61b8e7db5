"""Card state: each card's ``data`` persisted in SQLite, and the LRU of live card instances.

Only ``data`` (with who the card belongs to and whether it expired) survives: a card evicted
from the LRU, or one from before a restart, is rebuilt in a fresh context from this record
(docs/components.md, "Card state").
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from skillc.ir.viewport import Viewport
from skillc.runtime.contracts import ApiCallContext
from skillc.runtime.host.statedb import StateDb

_SCHEMA = """
CREATE TABLE IF NOT EXISTS cards (
  card_id TEXT PRIMARY KEY,
  seq INTEGER NOT NULL,
  skill_id TEXT NOT NULL, -- the skill scope (ApiCallContext.scope: id and folder digest)
  session_id TEXT NOT NULL,
  record TEXT NOT NULL,
  data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS cards_session ON cards (skill_id, session_id, seq);
-- next_seq runs once per mounted card: MAX(seq) from this index, not a scan of up to max_rows rows.
CREATE INDEX IF NOT EXISTS cards_seq ON cards (seq);
"""


class CardRecord(BaseModel):
    """Everything but ``data``: who the card belongs to and what it shows."""

    card_id: str
    seq: int
    component_path: str
    api_name: str
    context: ApiCallContext
    expired: bool = False
    expired_text: str | None = None
    created: float = 0.0
    # Set once the host restyled the card (theme, container width): a rebuilt card looks the same.
    viewport: Viewport | None = None


class CardStore:
    """The ``cards`` table of the state database. Thread-safe: one connection per thread."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db = StateDb(path, _SCHEMA)

    def _conn(self) -> sqlite3.Connection:
        return self._db.conn()

    def next_seq(self) -> int:
        row = self._conn().execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM cards").fetchone()
        return int(row[0])

    def insert(self, record: CardRecord, data: dict[str, Any] | str) -> None:
        if not record.created:
            record.created = time.time()
        c = record.context
        self._conn().execute(
            "INSERT OR REPLACE INTO cards (card_id, seq, skill_id, session_id, record, data) VALUES (?, ?, ?, ?, ?, ?)",
            (record.card_id, record.seq, c.scope, c.session_id, record.model_dump_json(), _text(data)),
        )

    def save_data(self, card_id: str, data: dict[str, Any] | str) -> None:
        """``data`` as an object, or as the JSON text already made of it."""
        self._conn().execute("UPDATE cards SET data = ? WHERE card_id = ?", (_text(data), card_id))

    def save_record(self, record: CardRecord) -> None:
        self._conn().execute(
            "UPDATE cards SET record = ? WHERE card_id = ?", (record.model_dump_json(), record.card_id)
        )

    def load(self, card_id: str) -> tuple[CardRecord, dict[str, Any]] | None:
        row = self._conn().execute("SELECT record, data FROM cards WHERE card_id = ?", (card_id,)).fetchone()
        if row is None:
            return None
        return CardRecord.model_validate_json(row[0]), json.loads(row[1])

    def session_cards(self, skill_id: str, session_id: str) -> list[CardRecord]:
        """The session's cards, oldest first."""
        rows = (
            self._conn()
            .execute(
                "SELECT record FROM cards WHERE skill_id = ? AND session_id = ? ORDER BY seq", (skill_id, session_id)
            )
            .fetchall()
        )
        return [CardRecord.model_validate_json(r[0]) for r in rows]

    def prune(self, skill_id: str, *, keep: set[str], older_than: float, max_rows: int, max_bytes: int) -> int:
        """Delete the skill's expired and evicted rows (those not in ``keep``, the live cards, or
        expired) created before ``older_than``; then, while the skill's rows are more than
        ``max_rows`` or ``max_bytes``, the oldest of them. Returns how many rows were deleted."""
        conn = self._conn()
        rows = conn.execute(
            "SELECT card_id, json_extract(record, '$.expired'), json_extract(record, '$.created'),"
            " length(CAST(data AS BLOB)) + length(CAST(record AS BLOB)) FROM cards WHERE skill_id = ? ORDER BY seq",
            (skill_id,),
        ).fetchall()
        total_rows = len(rows)
        total_bytes = sum(int(r[3] or 0) for r in rows)
        doomed: list[str] = []
        for card_id, expired, created, size in rows:  # oldest first
            if card_id in keep and not expired:
                continue
            old = float(created or 0) < older_than
            if old or total_rows > max_rows or total_bytes > max_bytes:
                doomed.append(card_id)
                total_rows -= 1
                total_bytes -= int(size or 0)
        for i in range(0, len(doomed), 500):
            chunk = doomed[i : i + 500]
            conn.execute(f"DELETE FROM cards WHERE card_id IN ({','.join('?' * len(chunk))})", chunk)
        return len(doomed)


def _text(data: dict[str, Any] | str) -> str:
    return data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, separators=(",", ":"))


K = TypeVar("K")
V = TypeVar("V")


class Lru(Generic[K, V]):
    """A bounded map; inserting past the bound hands the least recently used entry to ``evict``."""

    def __init__(self, bound: int, evict: Callable[[K, V], None]) -> None:
        self.bound = max(bound, 1)
        self._items: OrderedDict[K, V] = OrderedDict()
        self._evict = evict

    def get(self, key: K) -> V | None:
        value = self._items.get(key)
        if value is not None:
            self._items.move_to_end(key)
        return value

    def peek(self, key: K) -> V | None:
        """The entry without counting it as a use (a card's own timers do not keep it live)."""
        return self._items.get(key)

    def put(self, key: K, value: V) -> None:
        self._items[key] = value
        self._items.move_to_end(key)
        while len(self._items) > self.bound:
            old_key, old = self._items.popitem(last=False)
            self._evict(old_key, old)

    def pop(self, key: K) -> V | None:
        return self._items.pop(key, None)

    def values(self) -> list[V]:
        return list(self._items.values())

    def keys(self) -> list[K]:
        return list(self._items.keys())

    def __len__(self) -> int:
        return len(self._items)
