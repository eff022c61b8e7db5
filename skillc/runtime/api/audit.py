"""The audit log: one row per call of an API at risk level L2 or above, in the state database."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any

from skillc.runtime.contracts import AuditRecord
from skillc.runtime.host.statedb import StateDb

_SCHEMA = """
CREATE TABLE IF NOT EXISTS audit (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  record TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS ui_audit (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  record TEXT NOT NULL
);
"""


def arguments_digest(arguments: Any) -> str:
    """sha256 of the canonical JSON (sorted keys, no spaces): the log proves what ran without storing it."""
    canonical = json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


class AuditLog:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._db = StateDb(path, _SCHEMA)

    def _conn(self) -> sqlite3.Connection:
        return self._db.conn()

    def write(self, record: AuditRecord) -> None:
        self._conn().execute("INSERT INTO audit (record) VALUES (?)", (record.model_dump_json(by_alias=True),))

    def write_ui(self, record_json: str) -> None:
        """One action an agent took on a card (the server's ui_control audit record, as JSON)."""
        self._conn().execute("INSERT INTO ui_audit (record) VALUES (?)", (record_json,))

    def ui_records(self, *, limit: int = 1000) -> list[str]:
        rows = self._conn().execute("SELECT record FROM ui_audit ORDER BY id DESC LIMIT ?", (limit,)).fetchall()
        return [str(r[0]) for r in reversed(rows)]

    def records(self, *, limit: int = 1000) -> list[AuditRecord]:
        """The newest ``limit`` records, oldest first."""
        rows = self._conn().execute("SELECT record FROM audit ORDER BY id DESC LIMIT ?", (limit,)).fetchall()
        return [AuditRecord.model_validate_json(r[0]) for r in reversed(rows)]
