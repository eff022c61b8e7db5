"""The acting half of ui_control: ``act`` delivers one card event (a tap, bubbling to the nearest
handlers; load / error on an image that binds them) through the card's :class:`CardHost`, as a
user's tap does, and runs the api/call blocks it sends through the server's call chain."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

from mcp_types import InputRequiredResult, TextContent

from skillc.ir.delivery import chain_to, reached
from skillc.ir.events import bubbles
from skillc.ir.render import RenderNode
from skillc.runtime.cards.card_models import ApiCallAction, SendFollowUpMessage
from skillc.server.registry import ToolResult
from skillc.server.ui_control.models import (
    MAX_TEXT,
    SUPPORTED_ACTIONS,
    UiActionRequest,
    UiActionResult,
    UiControlAuditRecord,
    UiErrorCode,
    UiFollowUp,
)
from skillc.server.ui_control.scope import STALE_HINT, CardScope, Refusal
from skillc.server.ui_control.tree import (
    card_digest,
    cut,
    fingerprints,
    is_enabled,
    is_shown,
    label_of,
    role_of,
    shallow_digest,
)

log = logging.getLogger("skillc.server.ui_control")

RunFollowUp = Callable[[str, str, dict[str, Any], str], Awaitable[ToolResult]]
Audit = Callable[[UiControlAuditRecord], None]


async def act(
    scope: CardScope, req: UiActionRequest, caller: str, *, run_follow_up: RunFollowUp, audit: Audit
) -> UiActionResult:
    """One card event on a control, refused without an event when the control is stale,
    unsupported or not the caller's; one audit record whatever the outcome."""
    record = UiControlAuditRecord(
        at=datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        user=caller,
        card_id=req.card_id,
        action=req.action,
        node_id=req.node_id,
        ok=False,
    )
    result = await _act(scope, req, caller, record, run_follow_up)
    record.ok, record.error_code = result.ok, result.error_code
    if not result.ok:
        record.after = record.before  # nothing was delivered
    try:
        audit(record)
    except Exception:  # the act happened; a broken audit sink is the server's to report
        log.exception("the ui_control audit record could not be written")
    return result


async def _act(
    scope: CardScope, req: UiActionRequest, caller: str, record: UiControlAuditRecord, run_follow_up: RunFollowUp
) -> UiActionResult:
    def refuse(code: UiErrorCode, message: str) -> UiActionResult:
        return UiActionResult(
            ok=False, card_id=req.card_id, node_id=req.node_id, action=req.action, error_code=code, message=message
        )

    found = await scope.card(req.card_id, caller)
    if isinstance(found, Refusal):
        return refuse(found.code, found.message)
    view = found.view
    record.skill = found.skill
    record.before = card_digest(view)
    current = view.document.root.find(req.node_id)
    if current is not None:
        record.role, record.label = role_of(current), label_of(current)
    if req.action not in SUPPORTED_ACTIONS:
        supported = ", ".join(SUPPORTED_ACTIONS)
        return refuse("unsupported_action", f"{req.action!r} is not a card event; a card takes {supported}")
    if view.expired:
        return refuse("expired", f"card {req.card_id} has expired ({view.expired_text or 'expired'})")
    stored = scope.stored(req.snapshot_id, found, caller)
    if isinstance(stored, Refusal):
        return refuse(stored.code, stored.message)
    seen = stored.fingerprints.get(req.node_id)
    if current is None:
        if seen is not None:
            return refuse("stale_control", f"{req.node_id} is no longer on the card; {STALE_HINT}")
        return refuse("not_found", f"card {req.card_id} has no node {req.node_id!r}")
    if seen is None:
        return refuse("stale_control", f"snapshot {req.snapshot_id} does not show {req.node_id}; {STALE_HINT}")
    if fingerprints(current)[current.id] != seen[0]:
        return refuse("stale_control", f"{req.node_id} changed since snapshot {req.snapshot_id}; {STALE_HINT}")
    changed = _changed_handler(view.document.root, req.node_id, req.action, stored.fingerprints)
    if changed is not None:
        return refuse("stale_control", f"{changed}, whose handler takes the {req.action}, changed; {STALE_HINT}")
    unsupported = _unsupported(view.document.root, req.node_id, req.action)
    if unsupported is not None:
        return refuse("unsupported_action", unsupported)
    outcome = await found.host.event(req.card_id, req.node_id, req.action, req.detail)
    after = await found.host.card(req.card_id)
    record.after = card_digest(after)
    result = UiActionResult(
        ok=True,
        card_id=req.card_id,
        node_id=req.node_id,
        action=req.action,
        handled=outcome.handled,
        actions=[a.type for a in outcome.actions],
        diagnostics=[f"{d.code}: {d.message}" for d in outcome.diagnostics],
    )
    if not outcome.handled:
        result.message = "no handler ran" + (f": {outcome.diagnostics[0].message}" if outcome.diagnostics else "")
    for action in outcome.actions:
        if isinstance(action, SendFollowUpMessage):
            if action.text:
                result.messages.append(action.text)
            for call in action.api_calls():
                result.follow_up.append(await _follow(run_follow_up, found.skill, call.name, call.arguments, caller))
        elif isinstance(action, ApiCallAction):
            result.follow_up.append(await _follow(run_follow_up, found.skill, action.name, action.arguments, caller))
    return result


async def _follow(
    run_follow_up: RunFollowUp, skill: str, api_name: str, arguments: dict[str, Any], caller: str
) -> UiFollowUp:
    try:
        answer = await run_follow_up(skill, api_name, arguments, caller)
    except Exception as err:  # the tap happened; the follow-up's failure is part of the answer
        log.exception("the follow-up %s of a ui_control act failed", api_name)
        return UiFollowUp(api_name=api_name, arguments=arguments, status="error", text=f"{type(err).__name__}")
    if isinstance(answer, InputRequiredResult):
        asked = f"{api_name} needs the user's consent; call its tool to answer"
        return UiFollowUp(api_name=api_name, arguments=arguments, status="input_required", text=asked)
    text = next((b.text for b in answer.content if isinstance(b, TextContent) and b.text), None)
    card = (answer.meta or {}).get("skillc/card")
    card_id = card.get("cardId") if isinstance(card, dict) else None
    return UiFollowUp(
        api_name=api_name,
        arguments=arguments,
        status="error" if answer.is_error else "ok",
        text=cut(text, MAX_TEXT) if text else None,
        card_id=card_id if isinstance(card_id, str) else None,
    )


def _unsupported(root: RenderNode, node_id: str, action: str) -> str | None:
    """Why the card does not take ``action`` on the node (None when it does)."""
    chain = chain_to(root, node_id)
    if chain is None:
        return f"there is no node {node_id!r}"
    target = chain[-1]
    if not all(is_shown(n) for n in chain):
        return f"{node_id} is hidden"
    if not is_enabled(target):
        return f"{node_id} is disabled"
    if next(reached(chain, action), None) is not None:
        return None
    if action == "tap":
        return f"neither {node_id} nor an ancestor has a tap handler"
    return f"{node_id} does not bind {action} (only an image's own load / error)"


def _changed_handler(root: RenderNode, node_id: str, action: str, prints: dict[str, tuple[str, str]]) -> str | None:
    """An ancestor whose handler the event reaches and which changed itself (its props, events or
    dataset) since the snapshot, or vanished from it; None when they are as observed."""
    chain = chain_to(root, node_id) or []
    if not bubbles(action):
        return None
    for node in chain[:-1]:
        if node.events and action in node.events:
            seen = prints.get(node.id)
            if seen is None or seen[1] != shallow_digest(node):
                return node.id
    return None
