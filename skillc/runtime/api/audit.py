"""The audit log: one row per call of an API at risk level L2 or above, in the state store."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from skillc.runtime.config import RuntimeConfig
from skillc.runtime.contracts import ApiCallContext, AuditOutcome, AuditRecord, RiskLevel
from skillc.runtime.host.standins import StandInUse
from skillc.runtime.state import StateStore, StateUrl, open_state, state_url_of


def arguments_digest(arguments: Any) -> str:
    """sha256 of the canonical JSON (sorted keys, no spaces): the log proves what ran without storing it."""
    canonical = json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


def call_record(
    context: ApiCallContext,
    *,
    api_name: str,
    risk: RiskLevel,
    arguments: Any,
    outcome: AuditOutcome,
    detail: str | None,
    duration_ms: float,
    time: str | None = None,
    wx_api: str | None = None,
) -> AuditRecord:
    """The audit record of a call made in ``context`` (who, for which merchant and skill, in which
    session); ``time`` defaults to now."""
    return AuditRecord(
        time=time or datetime.now(UTC).isoformat(timespec="milliseconds"),
        user_did=context.user_did,
        agent_did=context.agent_did,
        merchant_did=context.merchant_did,
        skill_id=context.skill_id,
        session_id=context.session_id,
        api_name=api_name,
        risk=risk,
        arguments_digest=arguments_digest(arguments),
        outcome=outcome,
        detail=detail,
        duration_ms=duration_ms,
        wx_api=wx_api,
    )


def stand_in_record(context: ApiCallContext, use: StandInUse) -> AuditRecord:
    """The audit record of one use of a wx stand-in (wx.requestPayment, ...) by the API ``context`` calls."""
    return call_record(
        context,
        api_name=context.api_name,
        risk=use.risk,
        arguments=use.arguments,
        outcome=use.outcome,
        detail=use.detail,
        duration_ms=use.duration_ms,
        time=use.time,
        wx_api=use.wx_api,
    )


class AuditLog:
    """The ``audit`` and ``ui_audit`` tables of the state store (a state file's path, or its URL)."""

    def __init__(self, state: Path | StateUrl) -> None:
        self.store: StateStore = open_state(state)

    @classmethod
    def of(cls, config: RuntimeConfig) -> AuditLog:
        return cls(state_url_of(config))

    def write(self, record: AuditRecord) -> None:
        self.store.execute("INSERT INTO audit (record) VALUES (?)", (record.model_dump_json(by_alias=True),))

    def stand_in_writer(self, context: ApiCallContext) -> Callable[[StandInUse], AuditRecord]:
        """What the host calls for each stand-in use of a call: written at once, so a payment is
        on record even when the call then times out."""

        def write(use: StandInUse) -> AuditRecord:
            record = stand_in_record(context, use)
            self.write(record)
            return record

        return write

    def write_ui(self, record_json: str) -> None:
        """One action an agent took on a card (the server's ui_control audit record, as JSON)."""
        self.store.execute("INSERT INTO ui_audit (record) VALUES (?)", (record_json,))

    def ui_records(self, *, limit: int = 1000) -> list[str]:
        rows = self.store.execute("SELECT record FROM ui_audit ORDER BY id DESC LIMIT ?", (limit,))
        return [str(r[0]) for r in reversed(rows)]

    def records(self, *, limit: int = 1000) -> list[AuditRecord]:
        """The newest ``limit`` records, oldest first."""
        rows = self.store.execute("SELECT record FROM audit ORDER BY id DESC LIMIT ?", (limit,))
        return [AuditRecord.model_validate_json(r[0]) for r in reversed(rows)]
