"""What the debug console page posts to ``/__agent_trace``, and the store of the newest one.

The console posts a whole :class:`AgentTraceSnapshot` (camelCase JSON) after every render, console
line, trace event or tool call it wants the debugger to see. The store keeps only the newest; the
query tools read it. A snapshot that carries a ``commandId`` acknowledges the render command of
that id (see :meth:`SnapshotStore.wait_for_command`).
"""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.alias_generators import to_camel

ConsoleTarget = Literal["page", "widget", "app"]
ConsoleLevel = Literal["log", "info", "warn", "error", "debug", "eval"]
TargetType = Literal["page", "widget"]


class Wire(BaseModel):
    """camelCase on the wire, snake_case in Python; unknown fields from a newer console are kept."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")

    def wire(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")


class ViewportSize(Wire):
    width: int = Field(ge=1, le=9999)
    height: int = Field(ge=1, le=9999)


class RuntimeTargetInfo(Wire):
    """The target the console shows: a Widget (a card) or a Page (a mini-program page run with its query)."""

    type: TargetType
    id: str  # widgetId or pageId
    name: str | None = None
    path: str | None = None  # page route, or the component path of a widget
    query: dict[str, Any] | None = None  # a page's query
    viewport: ViewportSize | None = None
    command_id: str | None = None  # the render command that produced it


class PageTarget(Wire):
    page_id: str
    path: str
    name: str
    is_home: bool = False


class WidgetTarget(Wire):
    widget_id: str
    name: str


class RenderTargets(Wire):
    pages: list[PageTarget] = Field(default_factory=list)
    widgets: list[WidgetTarget] = Field(default_factory=list)


class DomNode(Wire):
    """One node of the current target's DOM, as the console collected it. ``uid`` is the Render IR id
    of the node (stable across renders); ``role``, ``name`` and ``events`` are always shown by
    take_snapshot, ``attrs`` in part (all with ``verbose``), ``details`` (``focusable``,
    ``hidden``...) only with ``verbose``."""

    uid: str
    type: str  # the WXML tag (view, text, image...), or "page" / "widget" for the root
    role: str | None = None
    name: str | None = None
    text: str | None = None  # the node's own text
    # The node's event handlers as WXML wrote them: {"bindtap": "onSelect"}, {"catchtap": "stop"}.
    events: dict[str, str] = Field(default_factory=dict)
    attrs: dict[str, str] = Field(default_factory=dict)
    details: dict[str, str | int | float | bool] = Field(default_factory=dict)
    selected: bool = False
    children: list[DomNode] = Field(default_factory=list)


class ConsoleEntry(Wire):
    """One runtime console line (API VM = app, card VM = widget, page preview = page)."""

    msgid: str
    target: ConsoleTarget
    level: ConsoleLevel
    source: str  # "api-vm", "card-vm", "console", "runtime"...
    timestamp: float  # ms since the epoch
    text: str
    url: str | None = None
    line_number: int | None = None
    column_number: int | None = None
    updated_at_ms: int | None = None
    args: list[Any] = Field(default_factory=list)  # raw arguments
    stack: str | None = None


class TraceEvent(Wire):
    """One trace event. ``requestId`` is always a string (DEBUGGER-PROTOCOL.md): a chat turn's
    events carry the turn's id; an event outside any turn (a render, a viewport change) that came
    without one gets ``req-<event id>``, the same every time the console posts it again."""

    source: Literal["simulator", "widget_runtime", "page_runtime"]
    id: str
    timestamp: float
    category: str  # simulator, mcp, runtime...
    event: str
    request_id: str
    payload: Any = None

    @model_validator(mode="before")
    @classmethod
    def _own_request_id(cls, data: Any) -> Any:
        if isinstance(data, dict):
            given = data.get("requestId", data.get("request_id"))
            if not isinstance(given, str) or not given:
                data = {k: v for k, v in data.items() if k != "request_id"}
                data["requestId"] = f"req-{data.get('id')}"
        return data


class ToolCall(Wire):
    id: str
    request_id: str | None = None
    tool_call_id: str | None = None
    tool_name: str
    server_id: str | None = None
    app_key: str | None = None
    status: str  # pending, running, succeeded, failed, rejected...
    created_at_ms: int
    updated_at_ms: int
    requires_user_approval: bool = False
    is_mini_app: bool = True
    message: str | None = None
    query: str | None = None  # the user query of the turn (list_agent_tool_calls filters on it)


class AgentTraceSnapshot(Wire):
    """The debug scene, posted whole by the console. ``mode``: the console's view."""

    updated_at_ms: int
    command_id: str | None = None
    mode: Literal["page", "widget", "chat"] = "widget"
    current_target: RuntimeTargetInfo | None = None
    targets: RenderTargets = Field(default_factory=RenderTargets)
    dom: DomNode | None = None
    console: list[ConsoleEntry] = Field(default_factory=list)
    trace_events: list[TraceEvent] = Field(default_factory=list)
    tool_calls: list[ToolCall] = Field(default_factory=list)
    context: dict[str, Any] = Field(default_factory=dict)  # debug context: chat messages, card data...


class Stored(BaseModel):
    snapshot: AgentTraceSnapshot
    stored_at: str  # ISO 8601 UTC, when the server received it
    stored_at_ms: int


def _now_ms() -> int:
    return int(time.time() * 1000)


class SnapshotStore:
    """The newest snapshot, in memory. Used from the server's event loop only."""

    def __init__(self) -> None:
        self.current: Stored | None = None
        self.updated_at_ms: int | None = None  # known even when no usable snapshot is held
        self.seq = 0  # how many snapshots were put
        self.last_command: tuple[int, Stored] | None = None  # the newest put carrying a commandId, with its seq
        self._waiters: dict[str, list[asyncio.Future[Stored]]] = {}

    def put(self, snapshot: AgentTraceSnapshot) -> Stored:
        now = _now_ms()
        stored = Stored(
            snapshot=snapshot,
            stored_at=datetime.fromtimestamp(now / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            stored_at_ms=now,
        )
        self.current = stored
        self.updated_at_ms = snapshot.updated_at_ms
        self.seq += 1
        if snapshot.command_id is not None:
            self.last_command = (self.seq, stored)
            for fut in self._waiters.pop(snapshot.command_id, []):
                if not fut.done():
                    fut.set_result(stored)
        return stored

    def clear(self) -> None:
        """Forget the snapshot (the console went away); ``updatedAtMs`` stays known."""
        self.current = None

    def command_snapshot_since(self, seq: int) -> Stored | None:
        """The newest snapshot carrying a command id put after ``seq`` (commands of a console run one at
        a time, so during a render command that is the command's own, whichever id the channel used)."""
        if self.last_command is not None and self.last_command[0] > seq:
            return self.last_command[1]
        return None

    async def wait_for_command(self, command_id: str, timeout_s: float) -> Stored:
        """The snapshot carrying ``command_id`` (already stored, or the next one). ``TimeoutError`` if none."""
        if self.current is not None and self.current.snapshot.command_id == command_id:
            return self.current
        fut: asyncio.Future[Stored] = asyncio.get_running_loop().create_future()
        self._waiters.setdefault(command_id, []).append(fut)
        try:
            return await asyncio.wait_for(fut, timeout_s)
        finally:
            waiting = self._waiters.get(command_id)
            if waiting is not None and fut in waiting:
                waiting.remove(fut)
                if not waiting:
                    del self._waiters[command_id]

    def header(self) -> dict[str, Any]:
        """``stored`` / ``storedAt`` / ``updatedAtMs``: how every snapshot tool's result starts."""
        if self.current is None:
            return not_stored(self.updated_at_ms)
        return {"stored": True, "storedAt": self.current.stored_at, "updatedAtMs": self.current.snapshot.updated_at_ms}


def not_stored(updated_at_ms: int | None) -> dict[str, Any]:
    out: dict[str, Any] = {"stored": False}
    if updated_at_ms is not None:
        out["updatedAtMs"] = updated_at_ms
    return out
