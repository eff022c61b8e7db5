"""The chat simulator behind the debug console's chat box (and the Debugger MCP's submit_chat_query).

One turn: the user's query -> the planner decides -> each tool call goes to the skills' MCP
endpoint as an MCP client would send it (``/mcp`` of this server by default, so the call runs
the same chain as any host's: inputSchema, consent, the API VM, the card, the audit log) -> the
results go back to the planner -> until it answers (at most ``max_rounds`` rounds of calls).

As DEBUGGER-PROTOCOL.md says of a business MCP endpoint: every tools/list and tools/call builds a
fresh client, which negotiates 2026-07-28 first and falls back to the 2025 handshake, so an
endpoint's era is never cached. Everything the turn did is recorded under its ``requestId``:
trace events (simulator, mcp, runtime) and tool calls, in the wire shapes of
:mod:`skillc.server.debugger.snapshot`.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
import uuid
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mcp.client import Client
from mcp.client.extension import advertise
from mcp.client.streamable_http import streamable_http_client
from mcp.server.apps import APP_MIME_TYPE, EXTENSION_ID
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_types import CallToolResult, TextContent, Tool

from skillc.runtime.api.cancel import CallGroup
from skillc.server.debugger.planner import Decision, Message, PlannedCall, Planner, PlannerError, ToolInfo
from skillc.server.debugger.planner_terms import guide_passages
from skillc.server.debugger.snapshot import ToolCall, TraceEvent
from skillc.server.results import CARD_META
from skillc.server.skill_server.consent_card import CONSENT_META

# The header the turn's requests to the skills' MCP carry: the debug server runs them in the turn's
# CallGroup (turn_scope.TurnScope), so cancelling the turn stops the API calls it caused.
TURN_HEADER = "x-skillc-debug-turn"
MAX_ROUNDS = 4
MAX_MESSAGE = 500  # characters of a result kept in a tool call's message
APPROVAL_RISKS = ("L3", "L4")
# Appended to a refused L3/L4 call: the console has no consent control, the flags approve instead.
_NOT_ASKED = "the debug console cannot ask the user: nothing ran; use --approve TOOL or --approve-all"


class ChatError(Exception):
    """A turn that could not run; ``code`` is the protocol's (CHAT_BUSY, CHAT_SUBMIT_FAILED...)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass
class ToolOutcome:
    """One tool call of a turn and what came back (the result as the MCP client got it)."""

    call_id: str
    tool: str
    skill: str | None
    arguments: dict[str, Any]
    result: CallToolResult | None
    error: str | None = None

    @property
    def card(self) -> dict[str, Any] | None:
        meta = self.result.meta if self.result is not None else None
        card = (meta or {}).get(CARD_META)
        return card if isinstance(card, dict) else None


@dataclass
class Turn:
    request_id: str
    query: str
    planner: str
    messages: list[Message] = field(default_factory=list)
    trace_events: list[TraceEvent] = field(default_factory=list)
    tool_calls: list[ToolCall] = field(default_factory=list)
    outcomes: list[ToolOutcome] = field(default_factory=list)
    completed: bool = False


def _now_ms() -> int:
    return int(time.time() * 1000)


def _text(result: CallToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, TextContent))


class ChatSimulator:
    """Runs turns one at a time (a second query while one runs is ``CHAT_BUSY``). :meth:`cancel`
    ends the running turn at once: its task, its requests, and through the turn's
    :class:`CallGroup` the API calls they run in the skills' server (their VM deadlines trip)."""

    def __init__(
        self,
        endpoint: Callable[[], str | None],
        planner: Planner,
        *,
        max_rounds: int = MAX_ROUNDS,
        server_id: str = "skills",
        guides: Mapping[str, str] | None = None,
    ) -> None:
        self.endpoint = endpoint  # the skills' MCP URL, known once the server listens
        self.planner = planner
        # skill name -> its SKILL.md: the planner reads the passages that name a tool
        self.guides = dict(guides or {})
        self.max_rounds = max_rounds
        self.server_id = server_id
        self._lock = asyncio.Lock()
        self._ids = itertools.count(1)
        # The console's conversation is one session: each call sends back the one the last result
        # named (docs/serve.md, "Sessions"), as a host does.
        self._session: str | None = None
        self.groups: dict[str, CallGroup] = {}  # requestId of a running turn -> its API calls
        self._task: asyncio.Task[Turn] | None = None

    @property
    def busy(self) -> bool:
        return self._lock.locked()

    async def turn(self, query: str) -> Turn:
        if not query.strip():
            raise ChatError("CHAT_SUBMIT_FAILED", "the query is empty")
        url = self.endpoint()
        if url is None:
            raise ChatError("CHAT_NOT_READY", "the skills' MCP endpoint is not listening yet")
        if self._lock.locked():
            raise ChatError("CHAT_BUSY", "a chat turn is still running; wait for it to end")
        async with self._lock:
            turn = Turn(request_id=f"req-{uuid.uuid4().hex[:12]}", query=query, planner=self.planner.name)
            group = self.groups[turn.request_id] = CallGroup()
            self._task = asyncio.ensure_future(self._run(turn, url))
            try:
                return await asyncio.shield(self._task)
            except asyncio.CancelledError as err:
                if not self._task.cancelled():  # our caller went away, not cancel(): end the turn too
                    self._task.cancel()
                    group.cancel()
                    raise
                raise ChatError("CHAT_TIMEOUT", "the chat turn was cancelled (it ran past its timeout)") from err
            finally:
                group.cancel()  # a call the turn left behind stops now
                self.groups.pop(turn.request_id, None)
                self._task = None

    def cancel(self) -> bool:
        """End the running turn now (its command timed out, or the server shuts down)."""
        task = self._task
        for group in list(self.groups.values()):
            group.cancel()
        if task is None or task.done():
            return False
        task.cancel()
        return True

    async def _run(self, turn: Turn, url: str) -> Turn:
        self._trace(turn, "simulator", "turn_start", {"query": turn.query, "planner": self.planner.name})
        turn.messages.append(Message(role="user", text=turn.query))
        tools = await self._list_tools(turn, url)
        by_name = {t.name: t for t in tools}
        infos = [ToolInfo(t.name, t.description or "", dict(t.input_schema), self._guide(t)) for t in tools]
        for round_no in range(self.max_rounds + 1):
            decision = await self._decide(turn, infos)
            if not decision.calls or round_no == self.max_rounds:
                text = decision.text or ("" if not decision.calls else "(stopped: too many rounds of tool calls)")
                turn.messages.append(Message(role="assistant", text=text))
                break
            turn.messages.append(Message(role="assistant", text=decision.text, calls=decision.calls))
            for planned in decision.calls:
                outcome = await self._call(turn, url, by_name.get(planned.tool), planned)
                turn.outcomes.append(outcome)
                text = _text(outcome.result) if outcome.result is not None else f"error: {outcome.error}"
                turn.messages.append(Message(role="tool", text=text, call_id=planned.id, tool=planned.tool))
        turn.completed = True
        self._trace(turn, "simulator", "turn_end", {"messages": len(turn.messages), "calls": len(turn.outcomes)})
        return turn

    # -- steps ---------------------------------------------------------------------------------

    def _guide(self, tool: Tool) -> str:
        """The passages of the tool's SKILL.md that name it (by the API name the skill knows it by)."""
        meta = tool.meta or {}
        skill, api = meta.get("skillc/skill"), meta.get("skillc/api")
        text = self.guides.get(skill) if isinstance(skill, str) else None
        return guide_passages(text, api if isinstance(api, str) else tool.name) if text else ""

    async def _list_tools(self, turn: Turn, url: str) -> list[Tool]:
        try:
            async with _client(url, turn.request_id) as client:
                listed = await client.list_tools()
                version = client.protocol_version
        except Exception as err:
            self._trace(turn, "mcp", "tools_list_failed", {"url": url, "error": f"{type(err).__name__}: {err}"})
            raise ChatError("CHAT_SUBMIT_FAILED", f"tools/list at {url} failed: {type(err).__name__}: {err}") from err
        # Tools only a card view calls are never the model's.
        tools = [t for t in listed.tools if "model" in _visibility(t)]
        self._trace(turn, "mcp", "tools_list", {"url": url, "protocolVersion": version, "tools": len(tools)})
        return tools

    async def _decide(self, turn: Turn, tools: list[ToolInfo]) -> Decision:
        try:
            decision = await self.planner.step(list(turn.messages), tools)
        except PlannerError as err:
            self._trace(turn, "simulator", "planner_failed", {"error": str(err)})
            raise ChatError("CHAT_SUBMIT_FAILED", f"the planner failed: {err}") from err
        payload: dict[str, Any] = {
            "planner": self.planner.name,
            "note": decision.note,
            "calls": [c.tool for c in decision.calls],
            "arguments": [c.arguments for c in decision.calls],
        }
        if decision.choice is not None:
            payload["why"] = decision.choice.wire()
        self._trace(turn, "simulator", "planner_decision", payload)
        return decision

    async def _call(self, turn: Turn, url: str, tool: Tool | None, planned: PlannedCall) -> ToolOutcome:
        name = planned.tool
        meta = (tool.meta or {}) if tool is not None else {}
        skill = meta.get("skillc/skill") if isinstance(meta.get("skillc/skill"), str) else None
        risky = meta.get("skillc/risk") in APPROVAL_RISKS
        record = ToolCall(
            id=f"tc-{next(self._ids)}",
            request_id=turn.request_id,
            tool_call_id=planned.id,
            tool_name=name,
            server_id=self.server_id,
            app_key=skill,
            status="running",
            created_at_ms=_now_ms(),
            updated_at_ms=_now_ms(),
            requires_user_approval=risky,
            is_mini_app=skill is not None,
            query=turn.query,
        )
        turn.tool_calls.append(record)
        asked = {"toolName": name, "toolCallId": planned.id, "arguments": planned.arguments}
        self._trace(turn, "mcp", "tools_call", asked)
        outcome = ToolOutcome(planned.id, name, skill, planned.arguments, None)
        try:
            async with _client(url, turn.request_id) as client:
                carried = {"skillc/session": self._session} if self._session is not None else None
                outcome.result = await client.call_tool(name, planned.arguments, meta=carried)  # type: ignore[arg-type]
            named = (outcome.result.meta or {}).get("skillc/session")
            if isinstance(named, str):
                self._session = named
        except Exception as err:
            outcome.error = f"{type(err).__name__}: {err}"
        result = outcome.result
        if result is None:
            record.status, record.message = "failed", outcome.error
        else:
            text = _text(result)
            refused = result.is_error and risky and "approv" in text.lower()  # RUN019: not approved
            asked_in_card = CONSENT_META in (result.meta or {})
            if refused or asked_in_card:
                # The console draws no consent control and asks no one, so the call did not run;
                # `skillc debug --approve TOOL` / `--approve-all` approve as the user would.
                refused = True
                text += f" ({_NOT_ASKED})"
            record.status = "rejected" if refused else "failed" if result.is_error else "succeeded"
            record.message = text[:MAX_MESSAGE]
        record.updated_at_ms = _now_ms()
        done = {"toolName": name, "toolCallId": planned.id, "status": record.status}
        self._trace(turn, "mcp", "tools_call_result", done)
        card = outcome.card
        if card is not None:
            card_payload = {"toolName": name, "cardId": card.get("cardId"), "componentPath": card.get("componentPath")}
            self._trace(turn, "runtime", "card_mounted", card_payload)
        return outcome

    def _trace(self, turn: Turn, category: str, event: str, payload: dict[str, Any]) -> None:
        turn.trace_events.append(
            TraceEvent(
                source="simulator",
                id=f"ev-{turn.request_id}-{len(turn.trace_events) + 1}",
                timestamp=_now_ms(),
                category=category,
                event=event,
                request_id=turn.request_id,
                payload=payload,
            )
        )


def _visibility(tool: Tool) -> list[str]:
    ui = (tool.meta or {}).get("ui")
    visibility = ui.get("visibility") if isinstance(ui, dict) else None
    return visibility if isinstance(visibility, list) else ["model", "app"]


@contextlib.asynccontextmanager
async def _client(url: str, request_id: str) -> AsyncIterator[Client]:
    # The console shows the cards, so the simulated host says it is an MCP Apps host (a 2026-07-28
    # request without the extension gets no card). Every request names its turn (TURN_HEADER).
    async with create_mcp_http_client(headers={TURN_HEADER: request_id}) as http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, extensions=[advertise(EXTENSION_ID, {"mimeTypes": [APP_MIME_TYPE]})]) as client:
            yield client
