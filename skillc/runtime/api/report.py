"""Readable text for an :class:`ApiCallOutcome` (what ``skillc call`` prints without ``--json``)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from skillc.diagnostics import render_text
from skillc.runtime.api.result import handoff_of
from skillc.runtime.contracts import ApiCallOutcome, ConsoleEntry


def render_outcome(outcome: ApiCallOutcome, sources: dict[str, str] | None = None) -> str:
    result = outcome.result
    status = "error" if result.is_error else "ok"
    lines = [f"{outcome.api_name}: {status} (risk {outcome.risk.value}, {outcome.duration_ms:.1f} ms)"]
    for block in result.content:
        if block.type == "text" and block.text is not None:
            lines.extend("  " + t for t in block.text.splitlines() or [""])
        else:
            lines.append(f"  [{block.type} block]")
    if result.structured_content is not None:
        lines.append("structuredContent:")
        text = json.dumps(result.structured_content, ensure_ascii=False, indent=2)
        lines.extend("  " + t for t in text.splitlines())
    if result.meta:
        lines.append(f"_meta: {json.dumps(result.meta, ensure_ascii=False)}")
    handoff = handoff_of(result)
    if handoff is not None:
        lines.append(f"handoff: open {handoff.url or '(no page)'} in the mini program")
        if handoff.payload is not None:
            lines.append(f"  payload: {json.dumps(handoff.payload, ensure_ascii=False)}")
    for action in outcome.card_actions:
        lines.append(f"card action: {json.dumps(action.wire(), ensure_ascii=False)}")
    if outcome.console:
        lines.append("console:")
        lines.extend(console_lines(outcome.console, "  "))
    if outcome.audit is not None:
        a = outcome.audit
        lines.append(f"audit: {a.outcome.value} by {a.user_did} at {a.time} ({a.arguments_digest[:19]}...)")
    for a in outcome.stand_in_audit or []:
        detail = f": {a.detail}" if a.detail else ""
        lines.append(f"audit: {a.wx_api} {a.outcome.value} (risk {a.risk.value}){detail}")
    text = "\n".join(lines) + "\n"
    if outcome.diagnostics:
        text += render_text(outcome.diagnostics, sources or {})
    return text


def console_lines(entries: list[ConsoleEntry], indent: str = "") -> list[str]:
    """One line per console entry: time, level, file:line where the VM knows it, the text (its
    further lines indented below). What ``call``, ``run`` and ``render`` print alike."""
    lines: list[str] = []
    for entry in entries:
        stamp = datetime.fromtimestamp(entry.timestamp / 1000, UTC).strftime("%H:%M:%S.%f")[:-3]
        where = f" {entry.file}:{entry.line}" if entry.file and entry.line else ""
        first, *rest = entry.text.splitlines() or [""]
        lines.append(f"{indent}{stamp} {entry.level:5}{where}  {first}")
        lines.extend(f"{indent}    " + t for t in rest)
    return lines
