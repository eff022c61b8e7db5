"""``skillc state check``: is the store one this skillc can use, and is what it holds sound?"""

from __future__ import annotations

import json

from pydantic import BaseModel

from skillc.runtime.state.schema import JSON_COLUMNS, SCHEMA_VERSION, TABLES, schema_version
from skillc.runtime.state.sqlite_store import SqliteStore
from skillc.runtime.state.store import StateStore

MAX_PROBLEMS_PER_CHECK = 20  # one bad column of a million rows must not print a million lines


class CheckReport(BaseModel):
    version: int
    rows: int
    problems: list[str]


def check_state(store: StateStore) -> CheckReport:
    """Schema version current, every table there, JSON columns parse, each card row agrees with its
    record; for SQLite also ``PRAGMA integrity_check``. Reads only."""
    problems: list[str] = []
    if isinstance(store, SqliteStore):
        verdict = store.integrity()
        if verdict != ["ok"]:
            problems += [f"integrity_check: {line}" for line in verdict[:MAX_PROBLEMS_PER_CHECK]]
    version = schema_version(store)
    if version != SCHEMA_VERSION:
        problems.append(f"schema version {version}, expected {SCHEMA_VERSION} (run `skillc state migrate`)")
    present = store.table_names()
    missing = [t for t in TABLES if t not in present]
    problems += [f"table {t} is missing" for t in missing]
    rows = 0
    for table, column in JSON_COLUMNS:
        if table in missing:
            continue
        bad = 0
        label, expr = _KEYS.get(table, ("key", "key"))
        for key, text in store.execute(f"SELECT {expr}, {column} FROM {table}"):
            rows += 1
            try:
                json.loads(text)
            except (TypeError, ValueError):
                bad += 1
                if bad <= MAX_PROBLEMS_PER_CHECK:
                    problems.append(f"{table}.{column} of {label}={key!r} is not JSON")
        if bad > MAX_PROBLEMS_PER_CHECK:
            problems.append(f"{table}.{column}: {bad - MAX_PROBLEMS_PER_CHECK} more rows that are not JSON")
    if "cards" not in missing:
        problems += _orphan_cards(store)
    return CheckReport(version=version, rows=rows, problems=problems)


# How a problem names a row: (what the message calls the key, the SQL that reads it).
_KEYS = {
    "cards": ("card_id", "card_id"),
    "audit": ("id", "id"),
    "ui_audit": ("id", "id"),
    "events": ("session_id#id", "session_id || '#' || CAST(id AS TEXT)"),
    "artefact_refs": ("digest@session_id", "digest || '@' || session_id"),
}


def _orphan_cards(store: StateStore) -> list[str]:
    """A card row whose record names another card or session: no tap on it could find its owner."""
    found: list[str] = []
    for card_id, session_id, seq, text in store.execute("SELECT card_id, session_id, seq, record FROM cards"):
        try:
            record = json.loads(text)
        except (TypeError, ValueError):
            continue  # reported above
        if not isinstance(record, dict):
            found.append(f"cards row {card_id!r}: its record is not an object")
            continue
        context = record.get("context")
        owner = context.get("session_id") if isinstance(context, dict) else None
        if record.get("card_id") != card_id or record.get("seq") != seq or owner != session_id:
            found.append(f"cards row {card_id!r}: its record belongs to another card or session (orphan)")
        if len(found) >= MAX_PROBLEMS_PER_CHECK:
            break
    return found
