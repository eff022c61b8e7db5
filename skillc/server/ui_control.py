"""ui_control: scoped automation of live cards for agents (RUNTIME-CONTRACTS.md, "ui_control").

The "window" is one live card: its controls are the Render IR nodes of the card's document, and
the only actions are the card's own events (a tap, bubbling to the nearest handlers; load / error
on an image that binds them). Every action goes through :meth:`CardHost.event` (the Component VM,
as a user's tap does), and the api/call blocks of a follow-up message (or a reapplyApiCall) go
through the server's own call chain, consent included. There are no coordinates anywhere.

The agent loop: ``snapshot`` (a bounded tree and a ``snapshot_id``) -> ``find`` (a control id by
query, role, label or id) -> ``act`` (with the snapshot id: a control that changed since is
``stale_control`` and gets no event) -> ``wait_for`` (polls inside the call) -> ``snapshot``.

Scope: a card belongs to one user (``owner_of``); another caller gets ``denied``. Error codes
are data (``ok: false``, ``error_code``), never a tool error; only bad arguments are ``isError``.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import json
import logging
import time
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from mcp.server.context import ServerRequestContext
from mcp_types import (
    CallToolRequestParams,
    CallToolResult,
    InputRequiredResult,
    TextContent,
    Tool,
    ToolAnnotations,
    ToolExecution,
)
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from skillc.ir.events import EVENT_NAMES, bubbles
from skillc.ir.render import TEXT, RenderNode
from skillc.runtime.cards.card_host import CardHost
from skillc.runtime.cards.card_models import ApiCallAction, CardView, SendFollowUpMessage
from skillc.server.registry import ToolHandler, ToolResult, ToolSpec, error_result

log = logging.getLogger("skillc.server.ui_control")

MAX_NODES = 500
MAX_DEPTH = 40
MAX_LABEL = 80
MAX_TEXT = 500
MAX_MATCHES = 50
MAX_SNAPSHOTS = 64
MAX_WAIT_S = 30.0

SNAPSHOT_TOOL = "ui_control__snapshot"
FIND_TOOL = "ui_control__find"
ACT_TOOL = "ui_control__act"
WAIT_TOOL = "ui_control__wait_for"

UiRole = Literal["button", "image", "text", "scrollable", "group"]
UiErrorCode = Literal["stale_control", "not_found", "denied", "unsupported_action", "timeout", "expired"]
UiWaitKind = Literal["text_equals", "text_contains", "node_present", "node_gone", "card_expired"]
SUPPORTED_ACTIONS: tuple[str, ...] = EVENT_NAMES  # tap, load, error: the events a card delivers

STALE_HINT = "control is stale; refresh the UI snapshot"


class _Model(BaseModel):
    """snake_case on the wire (the contract's names); ``wire()`` leaves out absent optional fields."""

    model_config = ConfigDict(extra="forbid")

    def wire(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True)


# -- the tree ------------------------------------------------------------------------------------


class UiControlNode(_Model):
    """One control: a Render IR node. ``events``: the card events bound on the node itself (a tap
    on a descendant bubbles to them)."""

    id: str = Field(description="the Render IR node id, stable across renders")
    role: UiRole
    label: str | None = Field(
        default=None, description=f"the text content, at most {MAX_LABEL} characters; an image's file"
    )
    text: str | None = Field(default=None, description="the full text of a text node (up to 500 characters)")
    events: list[str] = Field(default_factory=list, description="card events bound on this node")
    enabled: bool = True
    visible: bool = True
    children: list[UiControlNode] = Field(default_factory=list)


class UiSnapshot(_Model):
    """A bounded tree of one card (at most 500 nodes, 40 levels; ``truncated`` when cut)."""

    ok: bool = True
    card_id: str
    snapshot_id: str | None = Field(default=None, description="pass it to ui_control__act")
    root: UiControlNode | None = None
    truncated: bool = False
    node_count: int = 0
    expired: bool = False
    error_code: UiErrorCode | None = None
    message: str | None = None


class UiSnapshotRequest(_Model):
    card_id: str = Field(description="the card to observe (the cardId of a skill tool's result)")


class UiFindRequest(_Model):
    """Locate controls; every criterion given must hold. Without ``snapshot_id`` a new snapshot is
    taken (and returned); with it, the controls of that snapshot are searched."""

    card_id: str
    snapshot_id: str | None = None
    query: str | None = Field(default=None, description="words the label or text contains (case-insensitive)")
    role: UiRole | None = None
    label: str | None = Field(default=None, description="the exact label (case-insensitive)")
    node_id: str | None = Field(default=None, description="the exact node id")

    @model_validator(mode="after")
    def _some_criterion(self) -> UiFindRequest:
        if self.query is None and self.role is None and self.label is None and self.node_id is None:
            raise ValueError("give at least one of query, role, label, node_id")
        return self


class UiFindResult(_Model):
    """Matches, actionable controls first, then the most specific; they carry no children."""

    ok: bool = True
    card_id: str
    snapshot_id: str | None = None
    matches: list[UiControlNode] = Field(default_factory=list)
    truncated: bool = Field(default=False, description=f"more than {MAX_MATCHES} matched")
    error_code: UiErrorCode | None = None
    message: str | None = None


class UiActionRequest(_Model):
    card_id: str
    node_id: str
    snapshot_id: str = Field(description="the snapshot the node id came from")
    action: str = Field(
        description="tap (bubbles to the nearest tap handlers), or load / error on an image that binds them; "
        "anything else is unsupported_action",
        examples=list(SUPPORTED_ACTIONS),
    )
    detail: dict[str, Any] | None = Field(
        default=None, description="event.detail (image size for load, errMsg for error)"
    )


class UiFollowUp(_Model):
    """One api/call of a follow-up message (or a reapplyApiCall) run through the server's call chain."""

    api_name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    status: Literal["ok", "error", "input_required"]
    text: str | None = Field(default=None, description="the start of the result's text content")
    card_id: str | None = Field(default=None, description="the card the call mounted")


class UiActionResult(_Model):
    """``ok``: the event was delivered to the card; ``handled`` says which handlers ran."""

    ok: bool
    card_id: str
    node_id: str
    action: str
    error_code: UiErrorCode | None = None
    message: str | None = None
    handled: list[str] = Field(default_factory=list, description="the handlers that ran, innermost first")
    messages: list[str] = Field(default_factory=list, description="the text of follow-up messages the card sent")
    actions: list[str] = Field(default_factory=list, description="the types of the component actions")
    follow_up: list[UiFollowUp] = Field(default_factory=list)
    diagnostics: list[str] = Field(default_factory=list)


class UiWaitCondition(_Model):
    """text_equals / text_contains: ``text`` against the node's text (the card's without ``node_id``);
    node_present / node_gone: ``node_id``; card_expired: nothing else."""

    card_id: str
    kind: UiWaitKind
    node_id: str | None = None
    text: str | None = None
    timeout_s: float = Field(default=5.0, gt=0, le=MAX_WAIT_S)
    poll_s: float = Field(default=0.1, ge=0.01, le=5.0)

    @model_validator(mode="after")
    def _complete(self) -> UiWaitCondition:
        if self.kind in ("text_equals", "text_contains") and self.text is None:
            raise ValueError(f"{self.kind} needs text")
        if self.kind in ("node_present", "node_gone") and self.node_id is None:
            raise ValueError(f"{self.kind} needs node_id")
        return self


class UiWaitResult(_Model):
    ok: bool
    card_id: str
    kind: UiWaitKind
    error_code: UiErrorCode | None = None
    message: str | None = None
    elapsed_s: float = 0.0
    observed_text: str | None = Field(default=None, description="the text last seen (text conditions)")


class UiControlAuditRecord(_Model):
    """One act: who, on which control, the card's digest before and after, and how it went. The
    card's content is not recorded; the label is at most 80 characters."""

    at: str = Field(description="ISO 8601, UTC")
    user: str
    skill: str | None = None
    card_id: str
    action: str
    node_id: str
    role: UiRole | None = None
    label: str | None = None
    before: str | None = Field(default=None, description="digest of the card's document before the act")
    after: str | None = Field(default=None, description="digest of the card's document after the act")
    ok: bool
    error_code: UiErrorCode | None = None


# -- Render IR -> controls --------------------------------------------------------------------


def _runs(node: RenderNode) -> Iterator[str]:
    for n in node.walk():
        if n.type == TEXT and n.text:
            yield n.text


def _spaced_text(node: RenderNode, limit: int) -> str:
    """The text runs joined by single spaces, read only as far as ``limit`` needs."""
    parts: list[str] = []
    size = 0
    for run in _runs(node):
        words = " ".join(run.split())
        if words:
            parts.append(words)
            size += len(words) + 1
            if size > limit:
                break
    return " ".join(parts)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _role(node: RenderNode) -> UiRole:
    kind = node.type
    if kind == "button":
        return "button"
    if kind == "image":
        return "image"
    if kind in ("text", TEXT):
        return "text"
    if kind == "scroll-view":
        return "scrollable"
    if node.events and "tap" in node.events:
        return "button"
    return "group"


def _label(node: RenderNode) -> str | None:
    aria = node.props.get("aria-label")
    if isinstance(aria, str) and aria.strip():
        return _cut(" ".join(aria.split()), MAX_LABEL)
    if node.type == "image":
        src = node.props.get("src")
        if isinstance(src, str) and src:
            name = src.split("?", 1)[0].split("#", 1)[0].rstrip("/").rsplit("/", 1)[-1]
            return _cut(name, MAX_LABEL) if name and not name.startswith("data:") else None
        return None
    text = _spaced_text(node, MAX_LABEL)
    return _cut(text, MAX_LABEL) if text else None


def _enabled(node: RenderNode) -> bool:
    return node.props.get("disabled") not in (True, "true")


def _shown(node: RenderNode) -> bool:
    style = node.style
    return not (
        style.get("display") == "none"
        or style.get("visibility") == "hidden"
        or node.props.get("hidden") in (True, "true")
    )


def _control(node: RenderNode, visible: bool) -> UiControlNode:
    role = _role(node)
    text = _cut(node.text_content(), MAX_TEXT) if role == "text" else None
    return UiControlNode(
        id=node.id,
        role=role,
        label=_label(node),
        text=text,
        events=sorted(node.events) if node.events else [],
        enabled=_enabled(node),
        visible=visible,
    )


def _fingerprints(root: RenderNode) -> dict[str, str]:
    """A digest per node of its type, props, events and, through its children's digests, its
    whole subtree (ids, props, text); styles do not count. One pass, children before parents."""
    order = list(root.walk())
    out: dict[str, str] = {}
    for node in reversed(order):
        events = {k: [e.handler, e.catch, e.dataset] for k, e in sorted(node.events.items())} if node.events else None
        children = [[c.id, out.get(c.id, "")] for c in node.children or []]
        blob = json.dumps([node.id, node.type, node.props, events, children], sort_keys=True, default=str)
        out[node.id] = hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return out


def _shallow(node: RenderNode) -> str:
    """A digest of the node alone (type, props, events): what a handler on it receives."""
    events = {k: [e.handler, e.catch, e.dataset] for k, e in sorted(node.events.items())} if node.events else None
    blob = json.dumps([node.id, node.type, node.props, events], sort_keys=True, default=str)
    return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _digest(view: CardView | None) -> str | None:
    if view is None:
        return None
    return _fingerprints(view.document.root).get(view.document.root.id)


@dataclass
class _Tree:
    root: UiControlNode
    node_count: int
    truncated: bool
    fingerprints: dict[str, tuple[str, str]]  # id -> (the subtree's digest, the node's own)


def build_tree(root: RenderNode, *, max_nodes: int = MAX_NODES, max_depth: int = MAX_DEPTH) -> _Tree:
    """The bounded control tree of a document (pre-order: a cut keeps the top of the card)."""
    all_prints = _fingerprints(root)
    prints: dict[str, tuple[str, str]] = {}
    count = 0
    truncated = False

    def visit(node: RenderNode, depth: int, visible: bool) -> UiControlNode | None:
        nonlocal count, truncated
        if count >= max_nodes or depth >= max_depth:
            truncated = True
            return None
        shown = visible and _shown(node)
        control = _control(node, shown)
        count += 1
        prints[node.id] = (all_prints[node.id], _shallow(node))
        for child in node.children or []:
            sub = visit(child, depth + 1, shown)
            if sub is None:
                if count >= max_nodes:
                    break
                continue
            control.children.append(sub)
        return control

    top = visit(root, 0, True)
    assert top is not None  # max_nodes and max_depth are at least 1
    return _Tree(top, count, truncated, prints)


def _flatten(root: UiControlNode) -> Iterator[UiControlNode]:
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(node.children))


def _chain(root: RenderNode, node_id: str) -> list[RenderNode] | None:
    """The nodes from the root to ``node_id``."""
    path: list[RenderNode] = []

    def down(node: RenderNode) -> bool:
        path.append(node)
        if node.id == node_id:
            return True
        if any(down(c) for c in node.children or []):
            return True
        path.pop()
        return False

    return path if down(root) else None


def _joined(node: RenderNode) -> tuple[str, str]:
    """A node's text as rendered (runs run on) and with a space between runs."""
    return node.text_content().strip(), _spaced_text(node, 1 << 30)


# -- the control ------------------------------------------------------------------------------

CardsOf = Callable[[str], CardHost | None]
SkillOfCard = Callable[[str], Awaitable[str | None]]
OwnerOf = Callable[[CardView], str | Awaitable[str]]
RunFollowUp = Callable[[str, str, dict[str, Any], str], Awaitable[ToolResult]]
Audit = Callable[[UiControlAuditRecord], None]


@dataclass
class _Stored:
    card_id: str
    caller: str
    root: UiControlNode
    fingerprints: dict[str, tuple[str, str]]


@dataclass
class _Found:
    skill: str
    host: CardHost
    view: CardView


@dataclass
class _Refusal:
    code: UiErrorCode
    message: str


class UiControl:
    """Scoped card automation. It knows the server only through these callables:

    - ``cards_of(skill)``: the skill's CardHost (None when not served);
    - ``skill_of_card(card_id)``: the skill a card belongs to (None when unknown);
    - ``owner_of(view)``: the user a card belongs to (its context's user DID), sync or async;
    - ``run_follow_up(skill, api_name, arguments, caller)``: the server's call chain, consent included;
    - ``audit(record)``: one record per act.
    """

    def __init__(
        self,
        *,
        cards_of: CardsOf,
        skill_of_card: SkillOfCard,
        owner_of: OwnerOf,
        run_follow_up: RunFollowUp,
        audit: Audit,
        max_snapshots: int = MAX_SNAPSHOTS,
        max_nodes: int = MAX_NODES,
        max_depth: int = MAX_DEPTH,
    ) -> None:
        self._cards_of = cards_of
        self._skill_of_card = skill_of_card
        self._owner_of = owner_of
        self._run_follow_up = run_follow_up
        self._audit = audit
        self._max_snapshots = max(1, max_snapshots)
        self._max_nodes = max(1, max_nodes)
        self._max_depth = max(1, max_depth)
        self._snapshots: OrderedDict[str, _Stored] = OrderedDict()

    # -- observe ---------------------------------------------------------------------------------

    async def snapshot(self, card_id: str, caller: str) -> UiSnapshot:
        found = await self._find_card(card_id, caller)
        if isinstance(found, _Refusal):
            return UiSnapshot(ok=False, card_id=card_id, error_code=found.code, message=found.message)
        return self._snapshot_of(found.view, caller)

    def _snapshot_of(self, view: CardView, caller: str) -> UiSnapshot:
        tree = build_tree(view.document.root, max_nodes=self._max_nodes, max_depth=self._max_depth)
        snapshot_id = f"snap-{uuid.uuid4().hex[:16]}"
        self._snapshots[snapshot_id] = _Stored(view.card_id, caller, tree.root, tree.fingerprints)
        while len(self._snapshots) > self._max_snapshots:
            self._snapshots.popitem(last=False)
        return UiSnapshot(
            card_id=view.card_id,
            snapshot_id=snapshot_id,
            root=tree.root,
            truncated=tree.truncated,
            node_count=tree.node_count,
            expired=view.expired,
        )

    async def find(self, req: UiFindRequest, caller: str) -> UiFindResult:
        found = await self._find_card(req.card_id, caller)
        if isinstance(found, _Refusal):
            return UiFindResult(ok=False, card_id=req.card_id, error_code=found.code, message=found.message)
        if req.snapshot_id is None:
            snap = self._snapshot_of(found.view, caller)
            assert snap.root is not None and snap.snapshot_id is not None
            root, snapshot_id = snap.root, snap.snapshot_id
        else:
            stored = self._stored(req.snapshot_id, req.card_id, caller)
            if isinstance(stored, _Refusal):
                return UiFindResult(ok=False, card_id=req.card_id, error_code=stored.code, message=stored.message)
            root, snapshot_id = stored.root, req.snapshot_id
        hits = [n for n in _flatten(root) if _matches(n, req)]
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

    # -- act -------------------------------------------------------------------------------------

    async def act(self, req: UiActionRequest, caller: str) -> UiActionResult:
        audit = UiControlAuditRecord(
            at=datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            user=caller,
            card_id=req.card_id,
            action=req.action,
            node_id=req.node_id,
            ok=False,
        )
        result = await self._act(req, caller, audit)
        audit.ok, audit.error_code = result.ok, result.error_code
        if not result.ok:
            audit.after = audit.before  # nothing was delivered
        try:
            self._audit(audit)
        except Exception:  # the act happened; a broken audit sink is the server's to report
            log.exception("the ui_control audit record could not be written")
        return result

    async def _act(self, req: UiActionRequest, caller: str, audit: UiControlAuditRecord) -> UiActionResult:
        def refuse(code: UiErrorCode, message: str) -> UiActionResult:
            return UiActionResult(
                ok=False, card_id=req.card_id, node_id=req.node_id, action=req.action, error_code=code, message=message
            )

        found = await self._find_card(req.card_id, caller)
        if isinstance(found, _Refusal):
            return refuse(found.code, found.message)
        view = found.view
        audit.skill = found.skill
        audit.before = _digest(view)
        current = view.document.root.find(req.node_id)
        if current is not None:
            audit.role, audit.label = _role(current), _label(current)
        if req.action not in SUPPORTED_ACTIONS:
            supported = ", ".join(SUPPORTED_ACTIONS)
            return refuse("unsupported_action", f"{req.action!r} is not a card event; a card takes {supported}")
        if view.expired:
            return refuse("expired", f"card {req.card_id} has expired ({view.expired_text or 'expired'})")
        stored = self._stored(req.snapshot_id, req.card_id, caller)
        if isinstance(stored, _Refusal):
            return refuse(stored.code, stored.message)
        seen = stored.fingerprints.get(req.node_id)
        if current is None:
            if seen is not None:
                return refuse("stale_control", f"{req.node_id} is no longer on the card; {STALE_HINT}")
            return refuse("not_found", f"card {req.card_id} has no node {req.node_id!r}")
        if seen is None:
            return refuse("stale_control", f"snapshot {req.snapshot_id} does not show {req.node_id}; {STALE_HINT}")
        if _fingerprints(current)[current.id] != seen[0]:
            return refuse("stale_control", f"{req.node_id} changed since snapshot {req.snapshot_id}; {STALE_HINT}")
        changed = _changed_handler(view.document.root, req.node_id, req.action, stored.fingerprints)
        if changed is not None:
            return refuse("stale_control", f"{changed}, whose handler takes the {req.action}, changed; {STALE_HINT}")
        unsupported = _unsupported(view.document.root, req.node_id, req.action)
        if unsupported is not None:
            return refuse("unsupported_action", unsupported)
        outcome = await found.host.event(req.card_id, req.node_id, req.action, req.detail)
        after = await found.host.card(req.card_id)
        audit.after = _digest(after)
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
                    result.follow_up.append(await self._follow(found.skill, call.name, call.arguments, caller))
            elif isinstance(action, ApiCallAction):
                result.follow_up.append(await self._follow(found.skill, action.name, action.arguments, caller))
        return result

    async def _follow(self, skill: str, api_name: str, arguments: dict[str, Any], caller: str) -> UiFollowUp:
        try:
            answer = await self._run_follow_up(skill, api_name, arguments, caller)
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
            text=_cut(text, MAX_TEXT) if text else None,
            card_id=card_id if isinstance(card_id, str) else None,
        )

    # -- wait ------------------------------------------------------------------------------------

    async def wait_for(self, cond: UiWaitCondition, caller: str) -> UiWaitResult:
        started = time.monotonic()
        found = await self._find_card(cond.card_id, caller)
        if isinstance(found, _Refusal):
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
                seen = "nothing" if observed is None else repr(_cut(observed, 200))
                return failed(
                    "timeout", f"{cond.kind} did not hold within {cond.timeout_s:g} s; last observed text: {seen}"
                )
            await asyncio.sleep(min(cond.poll_s, left))
            view = await found.host.card(cond.card_id)

    # -- scope -----------------------------------------------------------------------------------

    async def _find_card(self, card_id: str, caller: str) -> _Found | _Refusal:
        skill = await self._skill_of_card(card_id)
        host = self._cards_of(skill) if skill is not None else None
        view = await host.card(card_id) if host is not None else None
        if skill is None or host is None or view is None:
            return _Refusal("not_found", f"no card {card_id} is known to this server")
        owner = self._owner_of(view)
        if inspect.isawaitable(owner):
            owner = await owner
        if owner != caller:
            return _Refusal("denied", f"card {card_id} belongs to another user")
        return _Found(skill, host, view)

    def _stored(self, snapshot_id: str, card_id: str, caller: str) -> _Stored | _Refusal:
        stored = self._snapshots.get(snapshot_id)
        if stored is None or stored.caller != caller:
            return _Refusal("stale_control", f"snapshot {snapshot_id} is unknown or evicted; {STALE_HINT}")
        if stored.card_id != card_id:
            return _Refusal("stale_control", f"snapshot {snapshot_id} is of card {stored.card_id}, not {card_id}")
        self._snapshots.move_to_end(snapshot_id)
        return stored


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


def _unsupported(root: RenderNode, node_id: str, action: str) -> str | None:
    """Why the card does not take ``action`` on the node (None when it does)."""
    chain = _chain(root, node_id)
    if chain is None:
        return f"there is no node {node_id!r}"
    target = chain[-1]
    if not all(_shown(n) for n in chain):
        return f"{node_id} is hidden"
    if not _enabled(target):
        return f"{node_id} is disabled"
    candidates = reversed(chain) if bubbles(action) else [target]
    if any(n.events and action in n.events for n in candidates):
        return None
    if action == "tap":
        return f"neither {node_id} nor an ancestor has a tap handler"
    return f"{node_id} does not bind {action} (only an image's own load / error)"


def _changed_handler(root: RenderNode, node_id: str, action: str, prints: dict[str, tuple[str, str]]) -> str | None:
    """An ancestor whose handler the event reaches and which changed itself (its props, events or
    dataset) since the snapshot, or vanished from it; None when they are as observed."""
    chain = _chain(root, node_id) or []
    if not bubbles(action):
        return None
    for node in chain[:-1]:
        if node.events and action in node.events:
            seen = prints.get(node.id)
            if seen is None or seen[1] != _shallow(node):
                return node.id
    return None


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
    raw, spaced = _joined(node)
    wanted = cond.text or ""
    if cond.kind == "text_equals":
        target = wanted.strip()
        return raw == target or spaced == " ".join(target.split()), spaced
    return wanted in raw or wanted in spaced, spaced


# -- MCP tools --------------------------------------------------------------------------------

CallerOf = Callable[[ServerRequestContext[Any]], str]


def _schema(model: type[BaseModel]) -> dict[str, Any]:
    return model.model_json_schema(mode="validation")


def _invalid(tool: str, err: ValidationError) -> CallToolResult:
    problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in err.errors())
    return error_result(f"invalid arguments for {tool}: {problems}")


def _result(model: _Model, text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(text=text)], structured_content=model.wire(), is_error=False)


def _failure(tool: str, code: str | None, message: str | None) -> str:
    return f"{tool}: {code}: {message or ''}".rstrip(": ")


def _snapshot_text(snap: UiSnapshot) -> str:
    if not snap.ok or snap.root is None:
        return _failure(SNAPSHOT_TOOL, snap.error_code, snap.message)
    taps = [n for n in _flatten(snap.root) if n.events]
    shown = ", ".join(f"{n.id} {n.label or n.role!r}" for n in taps[:10])
    more = f" (+{len(taps) - 10})" if len(taps) > 10 else ""
    cut = ", truncated" if snap.truncated else ""
    gone = ", expired" if snap.expired else ""
    return (
        f"card {snap.card_id}: {snap.node_count} controls{cut}{gone}, snapshot {snap.snapshot_id}; "
        f"controls with events: {shown or 'none'}{more}"
    )


def _tool(
    name: str, title: str, description: str, args: type[BaseModel], out: type[BaseModel], *, read_only: bool, ms: int
) -> Tool:
    return Tool(
        name=name,
        title=title,
        description=description,
        input_schema=_schema(args),
        output_schema=out.model_json_schema(mode="serialization"),
        annotations=ToolAnnotations(
            read_only_hint=read_only, destructive_hint=False, idempotent_hint=read_only, open_world_hint=False
        ),
        execution=ToolExecution(task_support="forbidden"),
        _meta={"skillc/timeoutMs": ms},
    )


@dataclass(frozen=True)
class _UiTool:
    """One ui_control tool: its MCP definition, what it runs and how its answer reads as text."""

    name: str
    title: str
    description: str
    request: type[_Model]
    answer: type[_Model]
    read_only: bool
    timeout_ms: int
    run: Callable[[UiControl, Any, str], Awaitable[Any]]
    describe: Callable[[Any, Any], str]


def _find_text(req: UiFindRequest, res: UiFindResult) -> str:
    if not res.ok:
        return _failure(FIND_TOOL, res.error_code, res.message)
    first = ", ".join(f"{n.id} ({n.role}) {n.label or ''}".strip() for n in res.matches[:5])
    return f"{len(res.matches)} match(es) in snapshot {res.snapshot_id}" + (f": {first}" if first else "")


def _act_text(req: UiActionRequest, res: UiActionResult) -> str:
    if not res.ok:
        return _failure(ACT_TOOL, res.error_code, res.message)
    ran = ", ".join(res.handled) or "no handler"
    calls = ", ".join(f"{f.api_name}: {f.status}" for f in res.follow_up)
    return f"{req.action} on {req.node_id}: {ran} ran" + (f"; follow-up {calls}" if calls else "")


def _wait_text(cond: UiWaitCondition, res: UiWaitResult) -> str:
    if res.ok:
        return f"{cond.kind} held after {res.elapsed_s:g} s"
    return _failure(WAIT_TOOL, res.error_code, res.message)


_LOOP_NOTE = "Use the skill's own tools first; ui_control is for what only the card shows."
_TOOLS = (
    _UiTool(
        SNAPSHOT_TOOL,
        "UI snapshot of a card",
        "Observe one live card as a bounded control tree (roles, labels, events) and get a "
        f"snapshot_id for ui_control__act. {_LOOP_NOTE}",
        UiSnapshotRequest,
        UiSnapshot,
        True,
        10_000,
        lambda control, req, caller: control.snapshot(req.card_id, caller),
        lambda _req, snap: _snapshot_text(snap),
    ),
    _UiTool(
        FIND_TOOL,
        "Find card controls",
        "Locate controls of a card by query, role, label or node id; returns their ids and a snapshot_id.",
        UiFindRequest,
        UiFindResult,
        True,
        10_000,
        lambda control, req, caller: control.find(req, caller),
        _find_text,
    ),
    _UiTool(
        ACT_TOOL,
        "Act on a card control",
        "Perform one card event (tap; load / error on an image) on a control, as the user's tap would, "
        "with the snapshot_id it came from: a control changed since is stale_control. Follow-up api "
        "calls the card makes run through the skill's tools, consent included.",
        UiActionRequest,
        UiActionResult,
        False,
        60_000,
        lambda control, req, caller: control.act(req, caller),
        _act_text,
    ),
    _UiTool(
        WAIT_TOOL,
        "Wait for a card state",
        "Poll a card inside the call until a text equals / contains a value, a node appears or goes, "
        f"or the card expires; timeout after timeout_s (at most {MAX_WAIT_S:g} s).",
        UiWaitCondition,
        UiWaitResult,
        True,
        int(MAX_WAIT_S * 1000) + 5_000,
        lambda control, cond, caller: control.wait_for(cond, caller),
        _wait_text,
    ),
)


def ui_control_tools(control: UiControl, caller_of: CallerOf) -> list[ToolSpec]:
    """``ui_control__snapshot``, ``__find``, ``__act``, ``__wait_for``; ``caller_of(ctx)`` is the
    calling user's id (compared with each card's owner). Bad arguments are ``isError`` results;
    every other outcome, error codes included, is data the agent branches on."""

    def handler(spec: _UiTool) -> ToolHandler:
        async def handle(ctx: ServerRequestContext[Any], params: CallToolRequestParams) -> ToolResult:
            try:
                req = spec.request.model_validate(params.arguments or {})
            except ValidationError as err:
                return _invalid(spec.name, err)
            res = await spec.run(control, req, caller_of(ctx))
            return _result(res, spec.describe(req, res))

        return handle

    return [
        ToolSpec(
            _tool(
                t.name,
                t.title,
                t.description,
                t.request,
                t.answer,
                read_only=t.read_only,
                ms=t.timeout_ms,
            ),
            handler(t),
        )
        for t in _TOOLS
    ]
