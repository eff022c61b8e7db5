"""The ui_control contract (RUNTIME-CONTRACTS.md, "ui_control"): limits, tool names, and the
request, answer and audit models, snake_case on the wire. Error codes are data (``ok: false``,
``error_code``) an agent branches on, never a tool error."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from skillc.ir.events import EVENT_NAMES

MAX_NODES = 500
MAX_DEPTH = 40
MAX_LABEL = 80
MAX_TEXT = 500
MAX_MATCHES = 50
MAX_SNAPSHOTS = 64  # per caller
# Callers whose snapshots are kept; past it the least recently active caller's are dropped, so the
# memory is bounded whatever the number of sessions.
MAX_SNAPSHOT_CALLERS = 1024
MAX_WAIT_S = 30.0

SNAPSHOT_TOOL = "ui_control__snapshot"
FIND_TOOL = "ui_control__find"
ACT_TOOL = "ui_control__act"
WAIT_TOOL = "ui_control__wait_for"

UiRole = Literal["button", "image", "text", "scrollable", "group"]
UiErrorCode = Literal["stale_control", "not_found", "denied", "unsupported_action", "timeout", "expired"]
UiWaitKind = Literal["text_equals", "text_contains", "node_present", "node_gone", "card_expired"]
SUPPORTED_ACTIONS: tuple[str, ...] = EVENT_NAMES  # tap, load, error: the events a card delivers


class UiModel(BaseModel):
    """snake_case on the wire (the contract's names); ``wire()`` leaves out absent optional fields."""

    model_config = ConfigDict(extra="forbid")

    def wire(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True)


# -- the tree ------------------------------------------------------------------------------------


class UiControlNode(UiModel):
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


class UiSnapshot(UiModel):
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


class UiSnapshotRequest(UiModel):
    card_id: str = Field(description="the card to observe (the cardId of a skill tool's result)")


class UiFindRequest(UiModel):
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


class UiFindResult(UiModel):
    """Matches, actionable controls first, then the most specific; they carry no children."""

    ok: bool = True
    card_id: str
    snapshot_id: str | None = None
    matches: list[UiControlNode] = Field(default_factory=list)
    truncated: bool = Field(default=False, description=f"more than {MAX_MATCHES} matched")
    error_code: UiErrorCode | None = None
    message: str | None = None


class UiActionRequest(UiModel):
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


class UiFollowUp(UiModel):
    """One api/call of a follow-up message (or a reapplyApiCall) run through the server's call chain."""

    api_name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    status: Literal["ok", "error", "input_required"]
    text: str | None = Field(default=None, description="the start of the result's text content")
    card_id: str | None = Field(default=None, description="the card the call mounted")


class UiActionResult(UiModel):
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


class UiWaitCondition(UiModel):
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


class UiWaitResult(UiModel):
    ok: bool
    card_id: str
    kind: UiWaitKind
    error_code: UiErrorCode | None = None
    message: str | None = None
    elapsed_s: float = 0.0
    observed_text: str | None = Field(default=None, description="the text last seen (text conditions)")


class UiControlAuditRecord(UiModel):
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
