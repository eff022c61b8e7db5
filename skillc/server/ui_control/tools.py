"""The four ui_control MCP tools: their definitions (schemas from the contract models, read-only
and timeout hints), argument checking (bad arguments are ``isError``; every other outcome,
error codes included, is data) and the text each answer reads as."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from mcp.server.context import ServerRequestContext
from mcp_types import (
    CallToolRequestParams,
    CallToolResult,
    TextContent,
    Tool,
    ToolAnnotations,
    ToolExecution,
)
from pydantic import BaseModel, ValidationError

from skillc.server.registry import ToolHandler, ToolResult, ToolSpec, error_result
from skillc.server.snapshot_text import quote, token
from skillc.server.ui_control.control import UiControl
from skillc.server.ui_control.models import (
    ACT_TOOL,
    FIND_TOOL,
    MAX_WAIT_S,
    SNAPSHOT_TOOL,
    WAIT_TOOL,
    UiActionRequest,
    UiActionResult,
    UiFindRequest,
    UiFindResult,
    UiModel,
    UiSnapshot,
    UiSnapshotRequest,
    UiWaitCondition,
    UiWaitResult,
)
from skillc.server.ui_control.tree import flatten

CallerOf = Callable[[ServerRequestContext[Any]], str]


def _schema(model: type[BaseModel]) -> dict[str, Any]:
    return model.model_json_schema(mode="validation")


def _invalid(tool: str, err: ValidationError) -> CallToolResult:
    problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in err.errors())
    return error_result(f"invalid arguments for {tool}: {problems}")


def _result(model: UiModel, text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(text=text)], structured_content=model.wire(), is_error=False)


def _failure(tool: str, code: str | None, message: str | None) -> str:
    return f"{tool}: {code}: {message or ''}".rstrip(": ")


def _snapshot_text(snap: UiSnapshot) -> str:
    if not snap.ok or snap.root is None:
        return _failure(SNAPSHOT_TOOL, snap.error_code, snap.message)
    taps = [n for n in flatten(snap.root) if n.events]
    # labels are card text and ids carry wx:key values: quoted, so the card cannot write this line
    shown = ", ".join(f"{token(n.id)} {quote(n.label or n.role)}" for n in taps[:10])
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
    request: type[UiModel]
    answer: type[UiModel]
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
