"""Readable text for a replayed flow (what ``skillc run`` prints), and the compact Render IR outline."""

from __future__ import annotations

import json
from typing import Any

from skillc.diagnostics import render_text
from skillc.ir.diff import Patch, patches_to_plain
from skillc.ir.previews import canvas_drawing, drawing_summary, preview_summary
from skillc.ir.render import TEXT, RenderNode
from skillc.runtime.api.report import console_lines
from skillc.runtime.api.result import Handoff
from skillc.runtime.cards.card_models import ComponentAction, SendFollowUpMessage
from skillc.runtime.flows.flow import StepRecord

MAX_OUTLINE_LINES = 40


def outline(root: RenderNode, *, limit: int = MAX_OUTLINE_LINES) -> list[str]:
    """One line per element: type, id, its own text, its handlers; text runs fold into their parent."""
    lines: list[str] = []

    def visit(node: RenderNode, depth: int) -> None:
        if len(lines) > limit:
            return
        kids = node.children or []
        text = "".join(k.text or "" for k in kids if k.type == TEXT).strip()
        line = "  " * depth + f"{node.type} {node.id}"
        if text:
            line += f" {json.dumps(text, ensure_ascii=False)}"
        preview = preview_summary(node.type, node.props)
        if preview is not None:
            line += f" [{preview}]"
        for name, binding in (node.events or {}).items():
            line += f" @{name}={binding.handler}"
        lines.append(line)
        for kid in kids:
            if kid.type != TEXT:
                visit(kid, depth + 1)

    visit(root, 0)
    if len(lines) > limit:
        lines[limit:] = ["..."]
    return lines


def patch_line(patch: Patch) -> str:
    plain = patches_to_plain([patch])[0]
    op = plain.pop("op")
    if op == "insert":
        return f"insert {plain['node']['id']} into {plain['parent']} at {plain['index']}"
    if op == "replaceRoot":
        return "replaceRoot"
    target = plain.pop("id", "")
    if op == "setProp" and plain.get("name") == "drawing":
        # A canvas picture is kilobytes of base64: the report says what it is instead.
        value = plain["value"]
        drawing = canvas_drawing({"drawing": value}) if isinstance(value, dict) else None
        return f"setProp {target} drawing: {drawing_summary(drawing)}"
    rest = json.dumps(plain, ensure_ascii=False, sort_keys=True)
    return f"{op} {target} {rest}"


def action_line(action: ComponentAction) -> str:
    if isinstance(action, SendFollowUpMessage):
        parts = [action.text]
        parts += [
            f"api/call {c.name} {json.dumps(c.arguments, ensure_ascii=False, sort_keys=True)}"
            for c in action.api_calls()
        ]
        return f"sendFollowUpMessage from {action.card_id}: " + " + ".join(parts)
    data = action.wire()
    kind = data.pop("type")
    return f"{kind} " + json.dumps(data, ensure_ascii=False, sort_keys=True)


def render_flow(records: list[StepRecord], sources: dict[str, str] | None = None) -> str:
    out: list[str] = []
    for r in records:
        status = " FAILED" if r.failed else ""
        out.append(f"[{r.index}] {r.title}{status}")
        for api in r.api:
            res = api.result
            approval = "" if api.approved is None else (" approved" if api.approved else " not approved")
            out.append(f"  {api.api_name}: {'error' if res.is_error else 'ok'} (risk {api.risk.value}{approval})")
            out.extend("    " + t for t in res.text.splitlines())
            if api.console:
                out.append("    console:")
                out.extend(console_lines(api.console, "      "))
            for used in api.stand_in_audit or []:
                out.append(f"    {used.wx_api}: {used.outcome.value} (risk {used.risk.value})")
        for card in r.cards:
            doc = card.document
            nodes = sum(1 for _ in doc.root.walk())
            dims = card.dimensions
            out.append(
                f"  card {card.card_id} {card.component_path}: {nodes} nodes, "
                f"~{card.content_height:.0f}px (max {dims.max_height}px)"
                + (_live_timers(card.pending_timers) if card.cursor is not None else "")
            )
            out.extend("    " + line for line in outline(doc.root))
        if r.console:
            out.append("  card console:")
            out.extend(console_lines(r.console, "    "))
        for handoff in r.handoffs:
            out.extend(handoff_lines(handoff))
        for i, fb in enumerate(r.fallbacks):
            out.append(f"  fallback card ({fb.reason})")
            if i < len(r.fallback_cards):
                out.append(f"    {_card_summary(r.fallback_cards[i])}")
        if r.handled:
            out.append(f"  handled: {', '.join(r.handled)}")
        if r.kind in ("tap", "expire"):
            out.append(f"  patches ({len(r.patches)}):")
            out.extend("    " + patch_line(p) for p in r.patches)
        if r.kind == "wait":
            out.extend(timer_lines(r))
        if r.kind == "visibility" and not r.failed:
            verb = "paused" if r.title.startswith("visibility hidden") else "resumed"
            out.append(f"  timers {verb}: {', '.join(r.visibility)}" if r.visibility else "  no dynamic card")
        for action in r.actions:
            out.append(f"  action {action_line(action)}")
        if r.diagnostics:
            text = render_text(r.diagnostics, sources or {})
            out.extend("  " + line for line in text.rstrip("\n").splitlines())
        if r.findings:
            out.append(f"  the card is drawn; skillc check finds ({len(r.findings)}):")
            text = render_text(r.findings, sources or {})
            out.extend("    " + line for line in text.rstrip("\n").splitlines())
    return "\n".join(out) + "\n"


def _live_timers(n: int) -> str:
    return f", {n} live timer" + ("" if n == 1 else "s")


def timer_lines(record: StepRecord) -> list[str]:
    """Each timer callback of a wait: which timer of which card, when, and its patches."""
    if not record.timers:
        return ["  no timer fell due"]
    lines = []
    for f in record.timers:
        patches = f.outcome.patches
        lines.append(f"  timer {f.timer_id} on {f.card_id} at {f.at_ms:g} ms: patches ({len(patches)}):")
        lines.extend("    " + patch_line(p) for p in patches)
        if f.outcome.console:
            lines.append("    console:")
            lines.extend(console_lines(f.outcome.console, "      "))
    return lines


def handoff_lines(handoff: Handoff) -> list[str]:
    """A handoff card as text: the route with its query, the payload, the action a user takes."""
    lines = [f"  handoff card: {handoff.url or '(no page)'}"]
    if handoff.params:
        lines.append("    query " + json.dumps(handoff.params, ensure_ascii=False, sort_keys=True))
    if handoff.payload is not None:
        lines.append("    payload " + json.dumps(handoff.payload, ensure_ascii=False, sort_keys=True))
    if handoff.path:
        lines.append(f"    [open in mini program] opens {handoff.path} with onLoad(query)")
    return lines


def _card_summary(card: dict[str, Any]) -> str:
    body = card.get("body") or []
    return f"Adaptive Card {card.get('version', '')}: {len(body)} body elements"
