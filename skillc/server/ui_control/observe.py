"""The read-only half of ui_control: ``snapshot`` (a bounded tree and a snapshot id), ``find``
(controls by query, role, label or id) and ``wait_for`` (polling inside the call until a state
holds, or ``timeout``)."""

from __future__ import annotations

import asyncio
import time

from skillc.runtime.cards.card_models import CardView
from skillc.server.ui_control.models import (
    MAX_MATCHES,
    UiControlNode,
    UiErrorCode,
    UiFindRequest,
    UiFindResult,
    UiSnapshot,
    UiWaitCondition,
    UiWaitResult,
)
from skillc.server.ui_control.scope import CardScope, Refusal
from skillc.server.ui_control.tree import cut, flatten, joined_text


async def snapshot(scope: CardScope, card_id: str, caller: str) -> UiSnapshot:
    found = await scope.card(card_id, caller)
    if isinstance(found, Refusal):
        return UiSnapshot(ok=False, card_id=card_id, error_code=found.code, message=found.message)
    return scope.snapshot(found, caller)


async def find(scope: CardScope, req: UiFindRequest, caller: str) -> UiFindResult:
    found = await scope.card(req.card_id, caller)
    if isinstance(found, Refusal):
        return UiFindResult(ok=False, card_id=req.card_id, error_code=found.code, message=found.message)
    if req.snapshot_id is None:
        snap = scope.snapshot(found, caller)
        assert snap.root is not None and snap.snapshot_id is not None
        root, snapshot_id = snap.root, snap.snapshot_id
    else:
        stored = scope.stored(req.snapshot_id, found, caller)
        if isinstance(stored, Refusal):
            return UiFindResult(ok=False, card_id=req.card_id, error_code=stored.code, message=stored.message)
        root, snapshot_id = stored.root, req.snapshot_id
    hits = [n for n in flatten(root) if _matches(n, req)]
    hits.sort(key=lambda n: (0 if n.events else 1, 0 if _exact(n, req) else 1, len(n.label or n.text or "")))
    matches = [n.model_copy(update={"children": []}) for n in hits[:MAX_MATCHES]]
    message = None if matches else "no control matches; take a snapshot to see the card"
    return UiFindResult(
        card_id=req.card_id,
        snapshot_id=snapshot_id,
        matches=matches,
        truncated=len(hits) > MAX_MATCHES,
        message=message,
    )


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def _matches(node: UiControlNode, req: UiFindRequest) -> bool:
    if req.node_id is not None and node.id != req.node_id:
        return False
    if req.role is not None and node.role != req.role:
        return False
    if req.label is not None and _norm(node.label or "") != _norm(req.label):
        return False
    if req.query is not None:
        words = _norm(req.query)
        return words in _norm(node.label or "") or words in _norm(node.text or "")
    return True


def _exact(node: UiControlNode, req: UiFindRequest) -> bool:
    wanted = req.label if req.label is not None else req.query
    return wanted is not None and _norm(node.label or "") == _norm(wanted)


async def wait_for(scope: CardScope, cond: UiWaitCondition, caller: str) -> UiWaitResult:
    started = time.monotonic()
    found = await scope.card(cond.card_id, caller)
    if isinstance(found, Refusal):
        return UiWaitResult(
            ok=False, card_id=cond.card_id, kind=cond.kind, error_code=found.code, message=found.message
        )
    view: CardView | None = found.view
    observed: str | None = None

    def failed(code: UiErrorCode, message: str) -> UiWaitResult:
        return UiWaitResult(
            ok=False,
            card_id=cond.card_id,
            kind=cond.kind,
            error_code=code,
            message=message,
            elapsed_s=round(time.monotonic() - started, 3),
            observed_text=observed,
        )

    while True:
        if view is None:
            return failed("not_found", f"card {cond.card_id} is gone")
        met, observed = _holds(cond, view)
        if met:
            elapsed = round(time.monotonic() - started, 3)
            return UiWaitResult(
                ok=True, card_id=cond.card_id, kind=cond.kind, elapsed_s=elapsed, observed_text=observed
            )
        if view.expired:  # an expired card no longer changes
            return failed("expired", f"card {cond.card_id} expired before {cond.kind} held")
        left = cond.timeout_s - (time.monotonic() - started)
        if left <= 0:
            seen = "nothing" if observed is None else repr(cut(observed, 200))
            return failed(
                "timeout", f"{cond.kind} did not hold within {cond.timeout_s:g} s; last observed text: {seen}"
            )
        await asyncio.sleep(min(cond.poll_s, left))
        view = await found.host.card(cond.card_id)


def _holds(cond: UiWaitCondition, view: CardView) -> tuple[bool, str | None]:
    root = view.document.root
    if cond.kind == "card_expired":
        return view.expired, None
    node = root.find(cond.node_id) if cond.node_id is not None else root
    if cond.kind == "node_present":
        return node is not None, None
    if cond.kind == "node_gone":
        return node is None, None
    if node is None:
        return False, None
    raw, spaced = joined_text(node)
    wanted = cond.text or ""
    if cond.kind == "text_equals":
        target = wanted.strip()
        return raw == target or spaced == " ".join(target.split()), spaced
    return wanted in raw or wanted in spaced, spaced
