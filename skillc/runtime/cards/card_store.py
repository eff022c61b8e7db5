"""Card state: each card's ``data`` persisted in the state store, and the LRU of live card instances.

Only ``data`` (with who the card belongs to and whether it expired) survives: a card evicted
from the LRU, or one from before a restart, is rebuilt in a fresh context from this record
(docs/components.md, "Card state").
"""

from __future__ import annotations

import errno
import json
import os
import struct
import threading
import time
import zlib
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext, suppress
from pathlib import Path
from typing import Any, Generic, TypeVar

try:
    import fcntl
except ImportError:  # Windows: no cross-process card lock; versioned writes still keep taps apart
    fcntl = None  # type: ignore[assignment]

from pydantic import BaseModel

from skillc.ir.viewport import Viewport
from skillc.runtime.config import RuntimeConfig
from skillc.runtime.contracts import ApiCallContext
from skillc.runtime.state import StateStore, StateUrl, open_state, state_url_of
from skillc.runtime.state.schema import CARDS_SEQ

# cards.skill_id is the skill scope (ApiCallContext.scope: id and folder digest); a mounted card's
# seq comes from a sequence on PostgreSQL, MAX(seq) from the cards_seq index on SQLite
# (skillc/runtime/state/schema.py), inside its INSERT.
_COLUMNS = ("card_id", "seq", "skill_id", "session_id", "record", "data", "version")
# Bytes of the lock file that name cards: two cards share a byte only by a hash collision, which
# costs a wait or a retry, never a wrong write (writes are checked against the card's version).
_LOCK_SLOTS = 1 << 20


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


class StoredCard(BaseModel):
    """A card as the store holds it: ``version`` moves on with every write."""

    record: CardRecord
    data: dict[str, Any]
    version: int


class CardStore:
    """The ``cards`` table of the state store. Thread-safe."""

    def __init__(self, state: Path | StateUrl) -> None:
        self.store: StateStore = open_state(state)

    @classmethod
    def of(cls, config: RuntimeConfig) -> CardStore:
        return cls(state_url_of(config))

    def insert_new(self, record: CardRecord, data: dict[str, Any] | str) -> None:
        """Insert a new card, its ``seq`` taken from the counter in the same statement (one round
        trip, where reading the counter first took two) and set on ``record``."""
        if not record.created:
            record.created = time.time()
        c = record.context
        d = self.store.dialect
        # An upsert, as insert's: `run` and `render` mount cards under ids they chose before.
        counter = f"(SELECT {d.next_value(CARDS_SEQ, 'cards', 'seq')} AS v) n"
        select = f"SELECT ?, n.v, ?, ?, {d.json_with_number('?', 'seq', 'n.v')}, ?, 1 FROM {counter}"
        rows = self.store.execute(
            d.upsert("cards", _COLUMNS, ("card_id",), rows=select) + " RETURNING seq",
            (record.card_id, c.scope, c.session_id, record.model_dump_json(), _text(data)),
        )
        record.seq = int(rows[0][0])

    def insert(self, record: CardRecord, data: dict[str, Any] | str) -> None:
        if not record.created:
            record.created = time.time()
        c = record.context
        self.store.execute(
            self.store.dialect.upsert("cards", _COLUMNS, ("card_id",)),
            (record.card_id, record.seq, c.scope, c.session_id, record.model_dump_json(), _text(data), 1),
        )

    def save_data(self, card_id: str, data: dict[str, Any] | str) -> None:
        """``data`` as an object, or as the JSON text already made of it."""
        self.store.execute("UPDATE cards SET data = ? WHERE card_id = ?", (_text(data), card_id))

    def save_record(self, record: CardRecord) -> None:
        self.store.execute("UPDATE cards SET record = ? WHERE card_id = ?", (record.model_dump_json(), record.card_id))

    def save(
        self, card_id: str, version: int, *, data: dict[str, Any] | str | None = None, record: CardRecord | None = None
    ) -> int | None:
        """Write the card's data and / or record only if the store still holds ``version`` (the
        one this copy was loaded or last written at): the new version, or None when another
        instance wrote the card since (the caller reloads it and applies its event again)."""
        sets = ["version = version + 1"]
        params: list[Any] = []
        if data is not None:
            sets.append("data = ?")
            params.append(_text(data))
        if record is not None:
            sets.append("record = ?")
            params.append(record.model_dump_json())
        rows = self.store.execute(
            f"UPDATE cards SET {', '.join(sets)} WHERE card_id = ? AND version = ? RETURNING version",
            (*params, card_id, version),
        )
        return int(rows[0][0]) if rows else None

    def version_of(self, card_id: str) -> int | None:
        """The version the store holds (None: no such card): a copy at an older one is stale."""
        rows = self.store.execute("SELECT version FROM cards WHERE card_id = ?", (card_id,))
        return int(rows[0][0]) if rows else None

    def load(self, card_id: str) -> tuple[CardRecord, dict[str, Any]] | None:
        stored = self.load_versioned(card_id)
        return (stored.record, stored.data) if stored is not None else None

    def load_versioned(self, card_id: str) -> StoredCard | None:
        rows = self.store.execute("SELECT record, data, version FROM cards WHERE card_id = ?", (card_id,))
        if not rows:
            return None
        record, data, version = rows[0]
        return StoredCard(record=CardRecord.model_validate_json(record), data=json.loads(data), version=int(version))

    def card_lock(self, card_id: str) -> AbstractContextManager[object]:
        """Held around reload, event and write of one card, on every instance sharing the store,
        so concurrent taps take turns instead of retrying on each other's writes. SQLite: a
        byte-range lock on a file next to the database (the kernel drops it when a process dies);
        PostgreSQL: a transaction-scoped advisory lock."""
        if self.store.kind == "postgresql":
            return self.store.transaction(lock=f"card:{card_id}")
        path = getattr(self.store, "path", None)
        if not isinstance(path, Path) or fcntl is None:
            return nullcontext()
        return _file_lock(path.with_name(path.name + ".cardlock"), zlib.crc32(card_id.encode()) % _LOCK_SLOTS)

    def session_cards(self, skill_id: str, session_id: str) -> list[CardRecord]:
        """The session's cards, oldest first."""
        rows = self.store.execute(
            "SELECT record FROM cards WHERE skill_id = ? AND session_id = ? ORDER BY seq", (skill_id, session_id)
        )
        return [CardRecord.model_validate_json(r[0]) for r in rows]

    def prune(self, skill_id: str, *, keep: set[str], older_than: float, max_rows: int, max_bytes: int) -> int:
        """Delete the skill's expired and evicted rows (those not in ``keep``, the live cards, or
        expired) created before ``older_than``; then, while the skill's rows are more than
        ``max_rows`` or ``max_bytes``, the oldest of them. Returns how many rows were deleted."""
        d = self.store.dialect
        rows = self.store.execute(
            f"SELECT card_id, {d.json_bool('record', 'expired')}, {d.json_real('record', 'created')},"
            f" {d.byte_length('data')} + {d.byte_length('record')} FROM cards WHERE skill_id = ? ORDER BY seq",
            (skill_id,),
        )
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
            self.store.execute(f"DELETE FROM cards WHERE card_id IN ({','.join('?' * len(chunk))})", chunk)
        return len(doomed)


_lock_files: dict[Path, int] = {}
_lock_files_guard = threading.Lock()
_thread_files = threading.local()
# Open-file-description locks (Linux): owned by a descriptor, not the process, so the card threads
# of one process exclude each other too, and the kernel's per-process deadlock check (which sees a
# false cycle when two processes' threads hold and wait on two cards) does not apply.
_OFD_SETLKW: int | None = getattr(fcntl, "F_OFD_SETLKW", None) if fcntl is not None else None


class _ThreadFds:
    """A thread's lock-file descriptors, closed when the thread ends (its locals are dropped):
    card threads come and go with their card hosts."""

    def __init__(self) -> None:
        self.fds: dict[Path, int] = {}

    def __del__(self) -> None:
        for fd in self.fds.values():
            with suppress(OSError):
                os.close(fd)


def _lock_fd(path: Path) -> int:
    """With OFD locks one descriptor per thread; otherwise one for the process, never closed
    (closing any descriptor of a file drops every POSIX lock the process holds on it)."""
    if _OFD_SETLKW is not None:
        files: _ThreadFds | None = getattr(_thread_files, "fds", None)
        if files is None:
            files = _thread_files.fds = _ThreadFds()
        fd = files.fds.get(path)
        if fd is None:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = files.fds[path] = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        return fd
    with _lock_files_guard:
        fd = _lock_files.get(path)
        if fd is None:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = _lock_files[path] = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        return fd


def _flock(kind: int, slot: int) -> bytes:
    # struct flock: l_type, l_whence, l_start, l_len, l_pid (0 for OFD locks).
    return struct.pack("hhqqi4x", kind, os.SEEK_SET, slot, 1, 0)


@contextmanager
def _file_lock(path: Path, slot: int) -> Iterator[object]:
    assert fcntl is not None
    fd = _lock_fd(path)
    if _OFD_SETLKW is not None:
        fcntl.fcntl(fd, _OFD_SETLKW, _flock(fcntl.F_WRLCK, slot))
        try:
            yield None
        finally:
            fcntl.fcntl(fd, _OFD_SETLKW, _flock(fcntl.F_UNLCK, slot))
        return
    while True:
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX, 1, slot)
            break
        except OSError as err:  # a false cycle of per-process locks: the holder finishes, try again
            if err.errno != errno.EDEADLK:
                raise
            time.sleep(0.005)
    try:
        yield None
    finally:
        fcntl.lockf(fd, fcntl.LOCK_UN, 1, slot)


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

    def make_room(self, coming: int = 1) -> tuple[K, V] | None:
        """The least recently used entry, taken out, when ``coming`` more entries would go past
        the bound (the caller evicts it itself); None when they fit."""
        if not self._items or len(self._items) + coming <= self.bound:
            return None
        return self._items.popitem(last=False)

    def values(self) -> list[V]:
        return list(self._items.values())

    def keys(self) -> list[K]:
        return list(self._items.keys())

    def __len__(self) -> int:
        return len(self._items)
