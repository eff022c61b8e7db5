"""SkillServer: builds the parts of the skill server, answers tools/list and tools/call (the trace,
the request-log line and the events URI of every call), and wires the MCP request handlers."""

from __future__ import annotations

import logging
import time
import warnings
from collections.abc import Awaitable, Callable
from typing import Any

from mcp.server import Server
from mcp.server.apps import EXTENSION_ID
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import (
    CallToolRequestParams,
    CallToolResult,
    EmptyResult,
    GetPromptRequestParams,
    GetPromptResult,
    InputRequiredResult,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListToolsResult,
    PaginatedRequestParams,
    ReadResourceRequestParams,
    ReadResourceResult,
    SetLevelRequestParams,
    TextContent,
)

from skillc import __version__
from skillc.ir.viewport import Viewport
from skillc.runtime.cards.card_host import CardHost
from skillc.runtime.cards.card_models import TimerFiring
from skillc.runtime.config import RuntimeConfig
from skillc.runtime.contracts import ConsoleEntry
from skillc.runtime.state import StateError, open_state, state_url_of
from skillc.runtime.state.keys import shared_key
from skillc.server.artefacts import ArtefactLimits, ArtefactStore
from skillc.server.call_trace import CallTrace
from skillc.server.catalog import Catalogue, LoadedSkill
from skillc.server.consent import ConsentPolicy
from skillc.server.descriptor import DebugDescriptor
from skillc.server.events import EventHub, EventLimits, events_uri
from skillc.server.registry import ToolResult, store_fault
from skillc.server.request_log import RequestRecord, bind_trace, emit
from skillc.server.results import wire_safe
from skillc.server.sessions import SESSION_META, SessionBinder, SessionKeys
from skillc.server.skill_docs import instructions, server_identity
from skillc.server.skill_files import skill_entry
from skillc.server.skill_icon import skill_icons
from skillc.server.skill_server.answer import CallAnswer, answering
from skillc.server.skill_server.api_calls import ApiCalls
from skillc.server.skill_server.card_tools import CardTools
from skillc.server.skill_server.client_log import ClientLog
from skillc.server.skill_server.resources import SkillResources
from skillc.server.skill_server.served import ServedSkills
from skillc.server.skill_server.tool_list import skill_tools
from skillc.server.skill_server.ui_control_wiring import UiControlWiring, ui_control_status
from skillc.server.skills_ext import SkillsExtension

log = logging.getLogger("skillc.server")

# (skill, "api-vm" | "card-vm", the lines): who sees each call's console (the debug console).
ConsoleObserver = Callable[[str, str, list[ConsoleEntry]], object]

EVENTS_META = "skillc/events"  # the events:// URI of the caller's session, in every tool result
# SESSION_META ("skillc/session"): the session capability a call ran in, in every tool result; a
# client sends it back in its next request's _meta to continue that session.


class SkillServer:
    """Tools, prompts, resources and calls for a :class:`Catalogue`. Close it to stop the runtimes.

    A skill whose index.js cannot load is withdrawn from the catalogue (its tools and cards are
    not advertised) with an SRV004 diagnostic in ``catalogue.diagnostics``; the others are served.

    ``strict_output``: advertise each tool's outputSchema and turn a result that breaks it into an
    ``isError`` result; otherwise the schema is not advertised and a mismatch is a warning.
    ``progress`` hears of each skill just before its runtime boots (the slow part of start-up).
    ``events`` bounds the session event buffers (``events://session/<id>``), ``artefacts`` the
    artefact store (``artefact://sha256/<hex>``); a card whose Render IR is over
    ``inline_document_bytes`` as JSON goes by reference to the store. ``ui_control``: serve the
    ``ui_control__*`` tools (an agent operating cards as their user would); off: the listing says
    ``disabled_by_policy``. ``shared_state``: keep the session events and the artefacts in the state
    store, for the other workers and instances to read (False: in this process's memory).
    """

    def __init__(
        self,
        catalogue: Catalogue,
        config: RuntimeConfig,
        *,
        consent: ConsentPolicy | None = None,
        viewport: Viewport | None = None,
        strict_output: bool = False,
        progress: Callable[[LoadedSkill], object] | None = None,
        events: EventLimits | None = None,
        artefacts: ArtefactLimits | None = None,
        inline_document_bytes: int = 256 * 1024,
        ui_control: bool = True,
        shared_state: bool = True,
    ) -> None:
        self.catalogue = catalogue
        # Keys and spent consents live in the state store, so that every instance of a fleet names
        # a client's session alike and accepts a consent another instance asked for.
        self.state = open_state(state_url_of(config))
        self.consent = (consent or ConsentPolicy()).shared(self.state)
        self.strict_output = strict_output
        # Session events and artefacts in the store too: a client's next request may reach another
        # worker or instance (in memory, one process alone serves them a little faster).
        shared = self.state if shared_state else None
        self.events = EventHub(events, store=shared)
        self.artefacts = ArtefactStore(artefacts, store=shared)
        self.inline_document_bytes = inline_document_bytes
        # What a debugger attach looks like: `skillc debug` replaces this with its own live descriptor
        # (listening, client_connected); plain `serve` says one is available and how to start it.
        self.descriptor: Callable[[], DebugDescriptor] = lambda: self._available
        # One key for the fleet: a session one instance minted verifies on any other.
        self.sessions = SessionBinder(SessionKeys(shared_key(self.state, "session")))
        self.console_observers: list[ConsoleObserver] = []
        self._skills = ServedSkills(
            catalogue, config, viewport=viewport or Viewport(), progress=progress, on_timer=self._timer_fired
        )
        displays = [s.display for s in catalogue.skills]
        self._available = DebugDescriptor(
            state="available" if self._skills.by_name else "unavailable",
            port=None,
            skills=displays,
            setup=f"skillc debug {' '.join(displays)} serves these skills with the debug console and the "
            "Debugger MCP (/__wsd_mcp)",
        )
        self._client_log = ClientLog()
        # MCP Skills (skills/list, skills/get): each served skill's files, read once now.
        served = self._skills.by_name
        self.skills = SkillsExtension([skill_entry(s.package, served[s.package.name].doc) for s in catalogue.skills])
        self._calls = ApiCalls(
            self._skills,
            self.consent,
            self.artefacts,
            self._client_log,
            strict_output=strict_output,
            inline_document_bytes=inline_document_bytes,
            session_of=self.session_of,
            observe=self.observe,
        )
        self._resources = SkillResources(
            catalogue,
            self._skills,
            self.events,
            self.artefacts,
            session_of=self.session_of,
            verify_session=self.sessions.verify,
            descriptor=lambda: self.descriptor(),  # looked up at each read: `skillc debug` swaps it in later
            skill_files=self.skills,
        )
        self.ui_control_status = ui_control_status(catalogue, ui_control)
        available = self.ui_control_status["status"] == "available"
        self.tools = skill_tools(
            catalogue,
            strict_output=strict_output,
            calls=self._calls,
            cards=CardTools(self._skills, self.observe, self.session_of, self.sessions.verify),
            ui_control=UiControlWiring(catalogue, self._skills, self._calls, self.state) if available else None,
            session_of=self.session_of,
        )
        with warnings.catch_warnings():
            # logging/setLevel is deprecated by 2026-07-28 (SEP-2577); 2025-era stdio clients still use it.
            warnings.simplefilter("ignore")
            self.server: Server[Any] = self._mcp_server()
        if catalogue.components:
            self.server.extensions[EXTENSION_ID] = {}
        self.skills.install(self.server, self._logged)

    def _mcp_server(self) -> Server[Any]:
        name, title = server_identity(list(self._skills.by_name), __version__)
        only = self.catalogue.skills[0].package.root if len(self.catalogue.skills) == 1 else None
        return Server(
            name,
            version=__version__,
            title=title,
            icons=(skill_icons(only) or None) if only is not None else None,
            instructions=instructions([s.doc for s in self._skills.by_name.values()]),
            # Every caller is listed the same tools, so a lookup answers what a listing would.
            get_tool_input_schema=self.tools.input_schema,
            on_list_tools=self._logged("tools/list", self.list_tools),
            on_call_tool=self.call_tool,
            on_list_resources=self._logged("resources/list", self.list_resources),
            on_list_resource_templates=self._logged("resources/templates/list", self.list_resource_templates),
            on_read_resource=self._logged("resources/read", self.read_resource),
            on_list_prompts=self._logged("prompts/list", self.list_prompts),
            on_get_prompt=self._logged("prompts/get", self.get_prompt),
            on_set_logging_level=self._logged("logging/setLevel", self.set_logging_level),
        )

    # -- handlers --------------------------------------------------------------------------------

    async def list_tools(
        self, _ctx: ServerRequestContext[Any], _params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        return ListToolsResult(tools=self.tools.tools(), _meta={"diagnostics": {"ui_control": self.ui_control_status}})

    async def call_tool(self, ctx: ServerRequestContext[Any], params: CallToolRequestParams) -> ToolResult:
        started = time.perf_counter()
        bind_trace(ctx.meta)
        request_id = str(ctx.request_id) if ctx.request_id is not None else None
        trace = CallTrace(self.events, self.session_of(ctx), request_id, params.name, batch=self.events.batch())
        trace.started(params.arguments or {})
        answer = CallAnswer(trace)
        with answering(answer):
            try:
                result = wire_safe(await self.tools.call(ctx, params))
            except StateError as err:
                # The store failed before the tool could finish: an answer with the fault's code,
                # not a JSON-RPC error carrying the driver's text.
                result = store_fault(err)
                answer.detail = str(err).splitlines()[0][:200]
            except BaseException:
                await trace.flush()  # what the call did before it failed
                raise
        if isinstance(result, InputRequiredResult):
            answer.outcome = "input_required"
        elif result.is_error and answer.outcome == "ok":
            answer.outcome = "error"
            first = next((b.text for b in result.content if isinstance(b, TextContent) and b.text), "")
            if first and answer.detail is None:
                answer.detail = first.splitlines()[0][:200]
        ms = (time.perf_counter() - started) * 1000
        trace.finished(ms, answer.outcome, answer.detail)
        # Written before the answer leaves: a client can read every event of its call at once.
        # A store fault here never fails a call that ran; the events it lost are counted.
        await trace.flush()
        # Both answers name the session the call ran in: a client continues it by sending the
        # capability back, and one that never does still holds its events URI (a capability too).
        meta = dict(result.meta or {})
        meta[SESSION_META] = trace.session_id
        if isinstance(result, CallToolResult):
            meta[EVENTS_META] = events_uri(trace.session_id)
        result = result.model_copy(update={"meta": meta})
        emit(
            RequestRecord(
                "tools/call",
                ms,
                answer.outcome,
                tool=params.name,
                skill=answer.skill,
                protocol=ctx.protocol_version,
                detail=answer.detail,
            )
        )
        return result

    async def list_resources(
        self, ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListResourcesResult:
        return await self._resources.list_resources(ctx, params)

    async def read_resource(
        self, ctx: ServerRequestContext[Any], params: ReadResourceRequestParams
    ) -> ReadResourceResult:
        return await self._resources.read_resource(ctx, params)

    async def list_resource_templates(
        self, ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListResourceTemplatesResult:
        return await self._resources.list_resource_templates(ctx, params)

    async def list_prompts(
        self, ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListPromptsResult:
        return await self._resources.list_prompts(ctx, params)

    async def get_prompt(self, ctx: ServerRequestContext[Any], params: GetPromptRequestParams) -> GetPromptResult:
        return await self._resources.get_prompt(ctx, params)

    async def set_logging_level(self, ctx: ServerRequestContext[Any], params: SetLevelRequestParams) -> EmptyResult:
        return await self._client_log.set_level(ctx, params)

    def _logged(self, method: str, handler: Callable[[ServerRequestContext[Any], Any], Awaitable[Any]]) -> Any:
        """``handler`` with one request-log line per request (a protocol error is logged, then raised)."""

        async def run(ctx: ServerRequestContext[Any], params: Any) -> Any:
            started = time.perf_counter()
            bind_trace(ctx.meta)
            detail = _request_detail(params)
            try:
                result = await handler(ctx, params)
            except MCPError as err:
                ms = (time.perf_counter() - started) * 1000
                emit(RequestRecord(method, ms, "protocol_error", protocol=ctx.protocol_version, detail=str(err)))
                raise
            ms = (time.perf_counter() - started) * 1000
            emit(RequestRecord(method, ms, "ok", protocol=ctx.protocol_version, detail=detail))
            return result

        return run

    # -- sessions, cards, console ----------------------------------------------------------------

    def session_of(self, ctx: ServerRequestContext[Any]) -> str:
        """The session a request runs in (skillc/server/sessions.py): the capability in its
        ``_meta["skillc/session"]`` when that verifies for the caller; otherwise the connection's
        own fresh one (stateless HTTP: this request's; stdio: the process's), never another's."""
        return self.sessions.session(ctx.session, ctx.meta)

    def cards(self, skill: str) -> CardHost | None:
        """The card host of a served skill (None for one that is not served)."""
        return self._skills.cards(skill)

    def observe(self, skill: str, source: str, lines: list[ConsoleEntry]) -> None:
        if not lines:
            return
        for observer in self.console_observers:
            try:
                observer(skill, source, lines)
            except Exception:  # an observer's bug must not fail the call it watches
                log.exception("a console observer failed")

    def _timer_fired(self, skill: str, firing: TimerFiring) -> None:
        """A dynamic card's timer ran on its own: its console and a trace line go to the card's
        session (events://), as a tap's do; its patches wait in the card's update stream."""
        outcome = firing.outcome
        self.observe(skill, "card-vm", outcome.console)
        live_session = self._skills.session_of_card(skill, firing.card_id)
        if live_session is None:
            return
        trace = CallTrace(self.events, live_session, None, "timer")
        trace.console("card-vm", outcome.console)
        trace.timer(firing)

    async def close(self) -> None:
        await self._skills.close()
        self.events.close()  # what is still queued is written first


def _request_detail(params: Any) -> str | None:
    for field in ("uri", "name", "level"):
        value = getattr(params, field, None)
        if value is not None:
            return str(value)
    return None
