"""The MCP server of ``skillc serve``: one low-level ``mcp.server.Server`` for every served skill.

The low-level server (not ``MCPServer``) because the result must be exactly the skill's: its
``content``, its ``structuredContent``, the card in ``_meta``, and an ``isError`` result for
every failure (bad arguments, a JavaScript exception, a deadline, a refusal) instead of a
protocol error. Each skill has its own :class:`ApiRuntime` and :class:`CardHost`; calls run
concurrently on their worker threads.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import time
import warnings
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from contextvars import ContextVar
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar, get_args

from mcp.server import Server
from mcp.server.apps import EXTENSION_ID, client_supports_apps
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_PARAMS,
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
    LoggingLevel,
    PaginatedRequestParams,
    Prompt,
    PromptMessage,
    ReadResourceRequestParams,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    SetLevelRequestParams,
    TextContent,
    TextResourceContents,
)

from skillc import __version__
from skillc.diagnostics import Diagnostic, Span
from skillc.ir.viewport import Viewport
from skillc.runtime.api.api_runtime import ApiRuntime
from skillc.runtime.cards.card_host import CardHost
from skillc.runtime.cards.card_models import TimerFiring
from skillc.runtime.config import RuntimeConfig
from skillc.runtime.contracts import ANONYMOUS_USER_DID, ConsoleEntry
from skillc.runtime.state import open_state, state_url_of
from skillc.runtime.state.keys import shared_key
from skillc.server.artefacts import ArtefactLimits, ArtefactStore, parse_uri
from skillc.server.artefacts import resource_template as artefact_template
from skillc.server.call_trace import CallTrace
from skillc.server.catalog import Catalogue, LoadedSkill
from skillc.server.consent import MODERN_VERSION, ConsentPolicy
from skillc.server.descriptor import DESCRIPTOR_URI, DebugDescriptor, descriptor_read, descriptor_resource
from skillc.server.events import (
    EVENTS_URI_TEMPLATE,
    EventHub,
    EventLimits,
    EventUriError,
    console_level,
    events_uri,
    parse_events_uri,
)
from skillc.server.registry import ToolRegistry, ToolResult, ToolSpec, error_result
from skillc.server.request_log import Outcome, RequestRecord, emit
from skillc.server.results import (
    call_result,
    document_by_reference,
    event_result,
    fallback_data_by_reference,
    updates_result,
    wire_safe,
    with_console,
)
from skillc.server.skill_docs import SKILL_MD_MIME, SkillDoc, instructions, skill_doc
from skillc.server.tools import (
    APP_MIME_TYPE,
    HANDOFF_VIEW,
    CardEventArgs,
    CardUpdatesArgs,
    CardViewArgs,
    CardVisibilityArgs,
    ServedApi,
    card_event_tool,
    card_updates_tool,
    card_view_tool,
    card_visibility_tool,
    tool_for,
)
from skillc.server.ui_control import UiControl, UiControlAuditRecord, ui_control_tools
from skillc.server.view import image_origins, view_html

log = logging.getLogger("skillc.server")

# (skill, "api-vm" | "card-vm", the lines): who sees each call's console (the debug console).
ConsoleObserver = Callable[[str, str, list[ConsoleEntry]], object]


# MCP's logging levels, least severe first (the order the SDK's literal declares).
_LEVELS: tuple[LoggingLevel, ...] = get_args(LoggingLevel)
_RUN_REFUSED = "RUN019"  # an L3/L4 call without consent
_RUN_OUTPUT = "RUN016"  # structuredContent breaks the outputSchema
EVENTS_META = "skillc/events"  # the events:// URI of the caller's session, in every tool result


@dataclass
class _Skill:
    runtime: ApiRuntime
    cards: CardHost
    resource_domains: list[str]
    tool_names: dict[str, str]  # API name -> tool name, for the card view's api/call blocks
    doc: SkillDoc


@dataclass
class _Answer:
    """What the request log says about a tools/call beyond the result itself."""

    trace: CallTrace
    outcome: Outcome = "ok"
    skill: str | None = None
    detail: str | None = None


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
        self._session_key = shared_key(self.state, "session")
        self._skills: dict[str, _Skill] = {}
        for loaded in list(catalogue.skills):
            name = loaded.package.name
            if progress is not None:
                progress(loaded)
            runtime = ApiRuntime(loaded.package, config)
            refusal = _load_refusal(runtime, loaded.display)
            if refusal is not None:
                runtime.close()
                _withdraw(catalogue, name, refusal)
                continue
            cards = CardHost(runtime, viewport=viewport or Viewport())
            cards.on_timer = partial(self._timer_fired, name)
            self._skills[name] = _Skill(
                runtime,
                cards,
                image_origins(loaded.package),
                catalogue.tool_names(name),
                skill_doc(loaded.package),
            )
        self._card_skill: dict[str, str] = {}
        displays = [s.display for s in catalogue.skills]
        self._available = DebugDescriptor(
            state="available" if self._skills else "unavailable",
            port=None,
            skills=displays,
            setup=f"skillc debug {' '.join(displays)} serves these skills with the debug console and the "
            "Debugger MCP (/__wsd_mcp)",
        )
        # Log levels asked for with logging/setLevel, by the connection's initialize params (only a
        # stateful connection, stdio, has them; stateless HTTP asks per request in _meta).
        self._log_levels: OrderedDict[int, tuple[object, LoggingLevel]] = OrderedDict()
        self.console_observers: list[ConsoleObserver] = []
        self.tools = ToolRegistry()
        for api in catalogue.apis.values():
            self.tools.add(ToolSpec(tool_for(api, strict_output=strict_output), partial(self._call_api, api)))
        if catalogue.components:
            self.tools.add(ToolSpec(card_event_tool(), self._card_event, app_only=True))
            self.tools.add(ToolSpec(card_view_tool(), self._card_view, app_only=True))
        if _has_dynamic_cards(catalogue):
            self.tools.add(ToolSpec(card_updates_tool(), self._card_updates, app_only=True))
            self.tools.add(ToolSpec(card_visibility_tool(), self._card_visibility, app_only=True))
        self.ui_control_status = self._ui_control_status(ui_control)
        if self.ui_control_status["status"] == "available":
            control = UiControl(
                cards_of=self.cards,
                skill_of_card=self._skill_of_card,
                owner_of=lambda view: view.session_id,  # a card answers to the session that made it
                run_follow_up=self._ui_follow_up,
                audit=self._ui_audit,
            )
            for spec in ui_control_tools(control, self.session_of):
                self.tools.add(ToolSpec(spec.tool, partial(self._with_ctx, spec.handler)))
        with warnings.catch_warnings():
            # logging/setLevel is deprecated by 2026-07-28 (SEP-2577); 2025-era stdio clients still use it.
            warnings.simplefilter("ignore")
            self.server: Server[Any] = self._mcp_server()
        if catalogue.components:
            self.server.extensions[EXTENSION_ID] = {}

    def _mcp_server(self) -> Server[Any]:
        return Server(
            "skillc",
            version=__version__,
            instructions=instructions([s.doc for s in self._skills.values()]),
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

    def _ui_control_status(self, enabled: bool) -> dict[str, str]:
        if not enabled:
            return {"status": "disabled_by_policy", "reason": "the server was started with --no-ui-control"}
        if not any(s.package.components for s in self.catalogue.skills):
            return {"status": "unavailable", "reason": "no served skill has a card component"}
        return {"status": "available"}

    async def _with_ctx(
        self,
        handler: Callable[[ServerRequestContext[Any], CallToolRequestParams], Awaitable[ToolResult]],
        ctx: ServerRequestContext[Any],
        params: CallToolRequestParams,
    ) -> ToolResult:
        token = _UI_CTX.set(ctx)  # a follow-up of an act runs in the caller's request (consent, session)
        try:
            return await handler(ctx, params)
        finally:
            _UI_CTX.reset(token)

    async def _ui_follow_up(self, skill: str, api_name: str, arguments: dict[str, Any], _caller: str) -> ToolResult:
        """An api/call a card makes when an agent taps it: the same chain as the model's own call
        (inputSchema, consent for L3/L4, audit, the next card)."""
        tool = self.catalogue.tool_names(skill).get(api_name)
        api = self.catalogue.apis.get(tool) if tool is not None else None
        if api is None:
            return error_result(f"{skill} declares no API {api_name}")
        params = CallToolRequestParams(name=api.tool_name, arguments=arguments)
        return await self._call_api(api, _UI_CTX.get(), params)

    def _ui_audit(self, record: UiControlAuditRecord) -> None:
        answer = _ANSWER.get(None)
        if answer is not None:
            verdict = "ok" if record.ok else record.error_code or "failed"
            answer.trace.ui_action(record.action, record.node_id, verdict, record.wire())
        served = self._skills.get(record.skill or "")
        if served is not None:
            try:
                served.runtime.audit.write_ui(record.model_dump_json())
            except Exception:  # a full disk must not turn an agent's tap into an error
                log.exception("the ui_control audit record could not be written")
        log.info("ui_control %s on %s/%s: %s", record.action, record.card_id, record.node_id, record.error_code or "ok")

    async def list_resources(
        self, _ctx: ServerRequestContext[Any], _params: PaginatedRequestParams | None
    ) -> ListResourcesResult:
        resources = [
            descriptor_resource(
                "Whether a debugger is available, listening or connected for these skills, and how to attach one."
            )
        ]
        resources += [
            Resource(
                uri=s.doc.uri,
                name=f"{name}/SKILL.md",
                title=f"{s.doc.title}: SKILL.md",
                description=f"How and when to use the {name} tools (the skill's instructions for the model).",
                mime_type=SKILL_MD_MIME,
                size=len(s.doc.text.encode("utf-8")),
            )
            for name, s in self._skills.items()
        ]
        for uri, (skill, path) in self.catalogue.components.items():
            apis = [a.tool_name for a in self.catalogue.apis.values() if a.resource_uri == uri]
            card = "handoff card" if path == HANDOFF_VIEW else f"{path.split('/')[1]} card"
            resources.append(
                Resource(
                    uri=uri,
                    name=f"{skill}/{path.split('/')[1]}",
                    title=f"{skill} {card}",
                    description=f"The MCP Apps view that shows the results of {', '.join(apis) or 'its tools'} "
                    "as a card and takes taps.",
                    mime_type=APP_MIME_TYPE,
                )
            )
        return ListResourcesResult(resources=resources)

    async def read_resource(
        self, _ctx: ServerRequestContext[Any], params: ReadResourceRequestParams
    ) -> ReadResourceResult:
        uri = str(params.uri)
        try:
            query = parse_events_uri(uri)
        except EventUriError as err:
            raise MCPError(INVALID_PARAMS, f"Bad events URI: {err}", {"uri": uri}) from None
        if query is not None:
            # A session's events are readable only from that session: another id reads as unknown.
            if not hmac.compare_digest(query.session_id, self.session_of(_ctx)):
                raise MCPError(INVALID_PARAMS, f"Unknown resource: {uri}", {"uri": uri})
            page = self.events.page(query)
            text = json.dumps(page.wire(), ensure_ascii=False, separators=(",", ":"))
            return ReadResourceResult(contents=[TextResourceContents(uri=uri, mime_type="application/json", text=text)])
        if parse_uri(uri) is not None:
            blob = self.artefacts.blob_contents(uri, session_id=self.session_of(_ctx))
            if blob is None:  # unknown, expired, or another session's: all read the same
                raise MCPError(INVALID_PARAMS, f"Unknown resource: {uri}", {"uri": uri})
            return ReadResourceResult(contents=[blob])
        if uri == DESCRIPTOR_URI:
            return descriptor_read(self.descriptor())
        doc = next((s.doc for s in self._skills.values() if s.doc.uri == uri), None)
        if doc is not None:
            return ReadResourceResult(contents=[TextResourceContents(uri=uri, mime_type=SKILL_MD_MIME, text=doc.text)])
        found = self.catalogue.components.get(uri)
        if found is None:
            raise MCPError(INVALID_PARAMS, f"Unknown resource: {uri}", {"uri": uri})
        skill, path = found
        ui: dict[str, Any] = {"prefersBorder": True}
        domains = self._skills[skill].resource_domains
        if domains:
            ui["csp"] = {"resourceDomains": domains}
        contents = TextResourceContents(
            uri=uri, mime_type=APP_MIME_TYPE, text=view_html(skill, path, uri), _meta={"ui": ui}
        )
        return ReadResourceResult(contents=[contents])

    async def list_resource_templates(
        self, _ctx: ServerRequestContext[Any], _params: PaginatedRequestParams | None
    ) -> ListResourceTemplatesResult:
        events = ResourceTemplate(
            uri_template=EVENTS_URI_TEMPLATE,
            name="session-events",
            title="Session events",
            description="What ran for this client: console lines, trace (calls, consent, cards) and tool calls, "
            "paged by cursor; every tool result names its session's URI in _meta['skillc/events'].",
            mime_type="application/json",
        )
        return ListResourceTemplatesResult(resource_templates=[events, artefact_template()])

    def session_of(self, ctx: ServerRequestContext[Any]) -> str:
        """The event session of a request: a keyed digest of the client's own description (its
        clientInfo, and ``_meta["skillc/session"]`` when a client wants sessions of its own), so a
        client always lands in its session and cannot name another's without the server key."""
        client = ctx.session.client_params
        info = client.client_info.model_dump(mode="json") if client is not None and client.client_info else None
        meta = ctx.meta or {}
        chosen = meta.get("skillc/session") if isinstance(meta, dict) else None
        seed = json.dumps([info, chosen if isinstance(chosen, str) else None], sort_keys=True, ensure_ascii=False)
        return "s-" + hmac.new(self._session_key, seed.encode(), hashlib.sha256).hexdigest()[:32]

    async def list_prompts(
        self, _ctx: ServerRequestContext[Any], _params: PaginatedRequestParams | None
    ) -> ListPromptsResult:
        prompts = [
            Prompt(name=name, title=s.doc.title, description=s.doc.description) for name, s in self._skills.items()
        ]
        return ListPromptsResult(prompts=prompts)

    async def get_prompt(self, _ctx: ServerRequestContext[Any], params: GetPromptRequestParams) -> GetPromptResult:
        served = self._skills.get(params.name)
        if served is None:
            known = ", ".join(self._skills) or "none"
            raise MCPError(INVALID_PARAMS, f"Unknown prompt: {params.name} (prompts: {known})", {"name": params.name})
        doc = served.doc
        return GetPromptResult(
            description=doc.description,
            messages=[PromptMessage(role="user", content=TextContent(text=doc.text))],
        )

    async def set_logging_level(self, ctx: ServerRequestContext[Any], params: SetLevelRequestParams) -> EmptyResult:
        client = ctx.session.client_params
        if client is not None:
            self._log_levels[id(client)] = (client, params.level)  # the params object keeps its id unique
            self._log_levels.move_to_end(id(client))
            while len(self._log_levels) > 64:
                self._log_levels.popitem(last=False)
        return EmptyResult()

    async def call_tool(self, ctx: ServerRequestContext[Any], params: CallToolRequestParams) -> ToolResult:
        started = time.perf_counter()
        request_id = str(ctx.request_id) if ctx.request_id is not None else None
        trace = CallTrace(self.events, self.session_of(ctx), request_id, params.name)
        trace.started(params.arguments or {})
        answer = _Answer(trace)
        token = _ANSWER.set(answer)
        try:
            result = wire_safe(await self.tools.call(ctx, params))
        finally:
            _ANSWER.reset(token)
        if isinstance(result, InputRequiredResult):
            answer.outcome = "input_required"
        elif result.is_error and answer.outcome == "ok":
            answer.outcome = "error"
            first = next((b.text for b in result.content if isinstance(b, TextContent) and b.text), "")
            if first and answer.detail is None:
                answer.detail = first.splitlines()[0][:200]
        ms = (time.perf_counter() - started) * 1000
        trace.finished(ms, answer.outcome, answer.detail)
        if isinstance(result, CallToolResult):
            meta = dict(result.meta or {})
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

    def _logged(self, method: str, handler: Callable[[ServerRequestContext[Any], Any], Awaitable[Any]]) -> Any:
        """``handler`` with one request-log line per request (a protocol error is logged, then raised)."""

        async def run(ctx: ServerRequestContext[Any], params: Any) -> Any:
            started = time.perf_counter()
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

    def cards(self, skill: str) -> CardHost | None:
        """The card host of a served skill (None for one that is not served)."""
        served = self._skills.get(skill)
        return served.cards if served is not None else None

    def observe(self, skill: str, source: str, lines: list[ConsoleEntry]) -> None:
        if not lines:
            return
        for observer in self.console_observers:
            try:
                observer(skill, source, lines)
            except Exception:  # an observer's bug must not fail the call it watches
                log.exception("a console observer failed")

    # -- calls -----------------------------------------------------------------------------------

    async def _call_api(
        self, api: ServedApi, ctx: ServerRequestContext[Any], params: CallToolRequestParams
    ) -> ToolResult:
        skill = self._skills[api.skill]
        answer = _ANSWER.get(None)
        if answer is not None:
            answer.skill = api.skill
        arguments = params.arguments if params.arguments is not None else {}
        approve = False  # only consulted for L3/L4
        # An anonymous caller is refused by the runtime (RUN060): nobody is asked to consent first.
        if api.risk.needs_approval and skill.runtime.config.identity.user_did != ANONYMOUS_USER_DID:
            decision = self._consent(ctx, api, arguments, params)
            if answer is not None:
                asked = isinstance(decision, InputRequiredResult)
                answer.trace.consent("asked" if asked else "given" if decision else "refused", api.risk.value)
            if isinstance(decision, InputRequiredResult):
                return decision
            approve = decision
        # A card belongs to the session of the client that called: its expiry actions reach that
        # conversation's cards only, and card control answers only to that session.
        session = answer.trace.session_id if answer is not None else self.session_of(ctx)
        context = skill.runtime.context(api.spec.name, session_id=session)
        mount = shows_cards(ctx)
        outcome = await skill.cards.call(api.spec.name, arguments, context, approve=approve, mount=mount)
        self.observe(api.skill, "api-vm", outcome.api.console)
        self.observe(api.skill, "card-vm", outcome.console)
        await self._log_console(ctx, api.skill, [("api-vm", outcome.api.console), ("card-vm", outcome.console)])
        if answer is not None:
            answer.trace.console("api-vm", outcome.api.console)
            answer.trace.console("card-vm", outcome.console)
            answer.trace.call(outcome)
        if outcome.card is not None:
            self._card_skill[outcome.card.card_id] = api.skill
        codes = {d.code for d in outcome.api.diagnostics}
        if answer is not None and _RUN_REFUSED in codes:
            answer.outcome = "refused"
        broken = [d.message for d in outcome.api.diagnostics if d.code == _RUN_OUTPUT]
        if broken:
            log.warning("%s: %s", api.tool_name, "; ".join(broken))
            if answer is not None:
                answer.detail = broken[0]
            if self.strict_output:
                return error_result(
                    f"{api.tool_name} returned a result that breaks its outputSchema: {'; '.join(broken)}"
                )
        result = call_result(outcome, skill.tool_names)
        if answer is not None:
            trace = answer.trace
            result = document_by_reference(
                result,
                self.artefacts,
                self.inline_document_bytes,
                session_id=trace.session_id,
                tool_call_id=trace.tool_call_id,
            )
            result = fallback_data_by_reference(
                result, self.artefacts, session_id=trace.session_id, tool_call_id=trace.tool_call_id
            )
        return with_console(result, [("api-vm", outcome.api.console), ("card-vm", outcome.console)])

    def _consent(
        self, ctx: ServerRequestContext[Any], api: ServedApi, arguments: dict[str, Any], params: CallToolRequestParams
    ) -> bool | InputRequiredResult:
        if self.consent.allows(api):
            return True
        answer = self.consent.answer(api, arguments, params.input_responses, params.request_state)
        if answer is not None:
            return answer
        if self.consent.elicit and ctx.protocol_version == MODERN_VERSION and _can_elicit(ctx):
            return self.consent.ask(api, arguments)
        return False

    async def _log_console(
        self, ctx: ServerRequestContext[Any], skill: str, sources: list[tuple[str, list[ConsoleEntry]]]
    ) -> None:
        """A call's console lines as MCP log notifications, for a client that asked for them: the
        2026-07-28 per-request ``_meta`` level (the SDK applies it), or a 2025-era connection's
        ``logging/setLevel``."""
        if not any(lines for _source, lines in sources):
            return
        floor: LoggingLevel | None = "debug"
        if ctx.protocol_version != MODERN_VERSION:
            client = ctx.session.client_params
            known = self._log_levels.get(id(client)) if client is not None else None
            floor = known[1] if known is not None and known[0] is client else None
        if floor is None:
            return
        lowest = _LEVELS.index(floor)
        for source, lines in sources:
            for line in lines:
                level = console_level(line.level)  # the same mapping as the session events
                if _LEVELS.index(level) < lowest:
                    continue
                data = {
                    "text": line.text,
                    "source": source,
                    **({"file": line.file, "line": line.line} if line.file else {}),
                }
                try:
                    with warnings.catch_warnings():
                        # Deprecated by 2026-07-28 (SEP-2577) but the only log channel hosts show.
                        warnings.simplefilter("ignore")
                        await ctx.session.send_log_message(level, data, logger=f"{skill}/{source}")
                except Exception:  # a client gone mid-call must not fail the call
                    log.debug("a log notification could not be sent", exc_info=True)
                    return

    async def _card_event(self, _ctx: ServerRequestContext[Any], params: CallToolRequestParams) -> ToolResult:
        found = await self._card_skill_for(CardEventArgs.parse(params.arguments))
        if isinstance(found, CallToolResult):
            return found
        args, skill = found
        outcome = await self._skills[skill].cards.event(args.card_id, args.node_id, args.event, args.detail)
        self.observe(skill, "card-vm", outcome.console)
        answer = _ANSWER.get(None)
        if answer is not None:
            answer.trace.console("card-vm", outcome.console)
            answer.trace.event(outcome, args.event, args.node_id)
        return with_console(event_result(outcome), [("card-vm", outcome.console)])

    async def _card_view(self, _ctx: ServerRequestContext[Any], params: CallToolRequestParams) -> ToolResult:
        found = await self._card_skill_for(CardViewArgs.parse(params.arguments))
        if isinstance(found, CallToolResult):
            return found
        args, skill = found
        outcome = await self._skills[skill].cards.restyle(
            args.card_id, color_scheme=args.color_scheme, width=args.width
        )
        return event_result(outcome)

    async def _card_updates(self, _ctx: ServerRequestContext[Any], params: CallToolRequestParams) -> ToolResult:
        found = await self._card_skill_for(CardUpdatesArgs.parse(params.arguments))
        if isinstance(found, CallToolResult):
            return found
        args, skill = found
        view, diags = await self._skills[skill].cards.updates(args.card_id, args.since)
        if view is None:
            return error_result("; ".join(d.message for d in diags))
        return updates_result(view, diags)

    async def _card_visibility(self, _ctx: ServerRequestContext[Any], params: CallToolRequestParams) -> ToolResult:
        found = await self._card_skill_for(CardVisibilityArgs.parse(params.arguments))
        if isinstance(found, CallToolResult):
            return found
        args, skill = found
        cards = self._skills[skill].cards
        _changed, diags = await cards.set_visibility(not args.visible, [args.card_id])
        view, more = await cards.updates(args.card_id, args.since)
        if view is None:
            return error_result("; ".join(d.message for d in diags + more))
        answer = _ANSWER.get(None)
        if answer is not None:
            answer.trace.timers(args.card_id, "resumed" if args.visible else "paused")
        return updates_result(view, diags + more)

    def _timer_fired(self, skill: str, firing: TimerFiring) -> None:
        """A dynamic card's timer ran on its own: its console and a trace line go to the card's
        session (events://), as a tap's do; its patches wait in the card's update stream."""
        outcome = firing.outcome
        self.observe(skill, "card-vm", outcome.console)
        live_session = self._session_of_card(skill, firing.card_id)
        if live_session is None:
            return
        trace = CallTrace(self.events, live_session, None, "timer")
        trace.console("card-vm", outcome.console)
        trace.timer(firing)

    def _session_of_card(self, skill: str, card_id: str) -> str | None:
        served = self._skills.get(skill)
        return served.cards.session_of(card_id) if served is not None else None

    async def _card_skill_for(self, args: CardArgsT | str) -> tuple[CardArgsT, str] | CallToolResult:
        """The arguments of an app-only call and the skill of the card they name, or the error
        result the call answers with (bad arguments, an unknown card)."""
        if isinstance(args, str):
            return error_result(args)
        name = await self._skill_of_card(args.card_id)
        if name is None:
            return error_result(f"no card {args.card_id} is known to this server")
        return args, name

    async def _skill_of_card(self, card_id: str) -> str | None:
        name = self._card_skill.get(card_id)
        if name is None:
            # A card from before a restart: the skill whose store knows it.
            for candidate, skill in self._skills.items():
                if await skill.cards.card(card_id) is not None:
                    name = self._card_skill[card_id] = candidate
                    break
        answer = _ANSWER.get(None)
        if answer is not None and name is not None:
            answer.skill = name
        return name

    async def close(self) -> None:
        for skill in self._skills.values():
            await skill.cards.close()
            skill.runtime.close()


_ANSWER: ContextVar[_Answer] = ContextVar("skillc_tool_answer")
CardArgsT = TypeVar("CardArgsT", CardEventArgs, CardViewArgs, CardUpdatesArgs, CardVisibilityArgs)
_UI_CTX: ContextVar[ServerRequestContext[Any]] = ContextVar("skillc_ui_control_ctx")


def shows_cards(ctx: ServerRequestContext[Any]) -> bool:
    """Whether the client can show a card. A 2026-07-28 request declares its client's capabilities,
    so one without the MCP Apps extension gets no card (mounting one is most of a call's cost).
    A 2025-era request over stateless HTTP declares nothing: it may come from a host that shows
    cards, so it gets one."""
    if ctx.protocol_version != MODERN_VERSION:
        caps = ctx.session.client_capabilities
        return caps is None or client_supports_apps(ctx) or getattr(caps, "extensions", None) is None
    return client_supports_apps(ctx)


def _has_dynamic_cards(catalogue: Catalogue) -> bool:
    """Whether a served component declares scope.dynamic (only then are the update tools served)."""
    dynamic = {
        (s.package.name, c.path)
        for s in catalogue.skills
        if s.package.manifest is not None
        for c in s.package.manifest.components
        if c.dynamic
    }
    return any((skill, path) in dynamic for skill, path in catalogue.components.values())


def _request_detail(params: Any) -> str | None:
    for field in ("uri", "name", "level"):
        value = getattr(params, field, None)
        if value is not None:
            return str(value)
    return None


def _load_refusal(runtime: ApiRuntime, display: str) -> Diagnostic | None:
    """SRV004 when the skill's index.js cannot load: every call would fail with RUN001, so its tools
    would only advertise what cannot run."""
    # A thread of its own: the server may be built inside a running event loop (tests, embedders).
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="skillc-load-check") as pool:
        report = pool.submit(asyncio.run, runtime.load()).result()
    failed = next((d for d in report.diagnostics if d.code == "RUN001"), None)
    if failed is None:
        return None
    where = next((c for c in report.console if c.level == "error" and c.file and c.line), None)
    span = Span.point(where.line, where.column or 1) if where is not None and where.line else None
    file = where.file if where is not None else failed.file
    return Diagnostic.make(
        "SRV004",
        f"{runtime.package.name} is not served: {failed.message}; none of its tools are advertised",
        file=f"{display}/{file}" if file else display,
        span=span,
        hint=f"run `skillc check {display}`",
    )


def _withdraw(catalogue: Catalogue, skill: str, refusal: Diagnostic) -> None:
    """Take a skill that cannot load out of the catalogue the server (and `skillc serve`) reads."""
    log.warning("%s", refusal.message)
    catalogue.skills = [s for s in catalogue.skills if s.package.name != skill]
    catalogue.apis = {t: a for t, a in catalogue.apis.items() if a.skill != skill}
    catalogue.components = {u: c for u, c in catalogue.components.items() if c[0] != skill}
    catalogue.diagnostics.append(refusal)


def _can_elicit(ctx: ServerRequestContext[Any]) -> bool:
    caps = getattr(ctx.session, "client_capabilities", None)
    return caps is not None and getattr(caps, "elicitation", None) is not None
