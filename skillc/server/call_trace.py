"""What one request did, written to its session's event buffer (skillc.server.events).

The server calls these at the points a user of the buffer cares about: a tool call starts and
finishes (with its duration and outcome), consent is asked, given or refused, the call's console
lines, a card is rendered, patched, expired or replaced by a fallback. Each is one event; the
message is a readable line, the details are in ``metadata``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from skillc.runtime.cards.card_models import (
    CallOutcome,
    EventOutcome,
    ExpireAllCards,
    ExpirePreviousCards,
    TimerFiring,
)
from skillc.runtime.contracts import ConsoleEntry
from skillc.server import metrics
from skillc.server.events import EventBatch, EventHub, EventLevel, console_level


@dataclass
class CallTrace:
    """``batch``: collect the events and write them together at :meth:`flush` (a tools/call);
    None: each event is written at once (a card timer, with no request to answer)."""

    hub: EventHub
    session_id: str
    tool_call_id: str | None
    tool: str
    batch: EventBatch | None = None

    async def flush(self) -> int:
        """Write the batch; the number of events a store fault kept out (counted and logged)."""
        if self.batch is None:
            return 0
        return await self.batch.commit(f"tools/call {self.tool} (request {self.tool_call_id})")

    def _add(self, source: str, stream: str, level: EventLevel, message: str, **metadata: Any) -> None:
        (self.batch or self.hub).append(
            self.session_id,
            source,
            stream,
            level,
            message,
            tool_call_id=self.tool_call_id,
            metadata={k: v for k, v in metadata.items() if v is not None},
        )

    def started(self, arguments: dict[str, Any]) -> None:
        self._add("mcp", "tool_call", "info", f"tools/call {self.tool} started", tool=self.tool, arguments=arguments)

    def finished(self, ms: float, outcome: str, detail: str | None) -> None:
        level: EventLevel = "info" if outcome in ("ok", "input_required") else "warning"
        line = f"tools/call {self.tool} finished: {outcome} in {ms:.1f} ms" + (f" ({detail})" if detail else "")
        self._add("mcp", "tool_call", level, line, tool=self.tool, outcome=outcome, duration_ms=round(ms, 3))

    def consent(self, decision: str, risk: str, tool: str | None = None) -> None:
        """``decision``: asked, given, declined (by the user, in the card) or refused. ``tool``: the
        call it is for, when this request is the user's answer (skillc_consent) rather than the call."""
        metrics.CONSENT.labels(decision).inc()
        level: EventLevel = "warning" if decision == "refused" else "info"
        line = f"consent {decision} for {tool or self.tool} (risk {risk})"
        self._add("trace", "trace", level, line, consent=decision)

    def console(self, source: str, lines: list[ConsoleEntry]) -> None:
        for line in lines:
            where = f"{line.file}:{line.line}" if line.file and line.line else None
            self._add(source, "console", console_level(line.level), line.text, console=line.level, at=where)

    def call(self, outcome: CallOutcome) -> None:
        if outcome.card is not None:
            card = outcome.card
            metrics.CARD_MOUNTS.labels(metrics.tool_label(self.tool), "mounted").inc()
            self._add(
                "trace",
                "trace",
                "info",
                f"card {card.card_id} rendered ({card.component_path})",
                card_id=card.card_id,
                component_path=card.component_path,
                content_height=card.content_height,
            )
        if outcome.fallback is not None:
            metrics.CARD_MOUNTS.labels(metrics.tool_label(self.tool), "fallback").inc()
            self._add("trace", "trace", "warning", f"fallback card: {outcome.fallback.reason}")
        self._expired([a for a in outcome.actions if isinstance(a, ExpirePreviousCards | ExpireAllCards)])

    def event(self, outcome: EventOutcome, kind: str, node_id: str) -> None:
        handled = ", ".join(outcome.handled) or "no handler"
        self._add(
            "trace",
            "trace",
            "info",
            f"card {outcome.card_id} {kind} on {node_id}: {handled}, {len(outcome.patches)} patches",
            card_id=outcome.card_id,
            node_id=node_id,
            patches=len(outcome.patches),
        )
        self._expired([a for a in outcome.actions if isinstance(a, ExpirePreviousCards | ExpireAllCards)])

    def timer(self, firing: TimerFiring) -> None:
        """A dynamic card's timer callback ran on its own (no request: tool_call_id is None)."""
        outcome = firing.outcome
        self._add(
            "trace",
            "trace",
            "info",
            f"card {firing.card_id} timer {firing.timer_id}: {len(outcome.patches)} patches",
            card_id=firing.card_id,
            timer_id=firing.timer_id,
            patches=len(outcome.patches),
        )
        self._expired([a for a in outcome.actions if isinstance(a, ExpirePreviousCards | ExpireAllCards)])

    def timers(self, card_id: str, verb: str) -> None:
        """The view hid or showed a dynamic card: its timers ``paused`` or ``resumed``."""
        self._add("trace", "trace", "info", f"card {card_id} timers {verb}", card_id=card_id)

    def ui_action(self, action: str, node_id: str, verdict: str, record: dict[str, Any]) -> None:
        """An agent operated a card (ui_control__act): the audit record, in the caller's session."""
        level: EventLevel = "info" if verdict == "ok" else "warning"
        self._add("ui_control", "audit", level, f"ui_control {action} on {node_id}: {verdict}", audit=record)

    def _expired(self, actions: list[ExpirePreviousCards | ExpireAllCards]) -> None:
        for action in actions:
            for card_id in action.expired:
                self._add("trace", "trace", "info", f"card {card_id} expired ({action.type})", card_id=card_id)
