"""The MCP server of ``skillc serve``: one low-level ``mcp.server.Server`` for every served skill.

The low-level server (not ``MCPServer``) because the result must be exactly the skill's: its
``content``, its ``structuredContent``, the card in ``_meta``, and an ``isError`` result for
every failure (bad arguments, a JavaScript exception, a deadline, a refusal) instead of a
protocol error. Each skill has its own :class:`ApiRuntime` and :class:`CardHost`; calls run
concurrently on their worker threads.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from typing import Any

from mcp.server import Server
from mcp.server.apps import EXTENSION_ID
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_PARAMS,
    CallToolRequestParams,
    InputRequiredResult,
    ListResourcesResult,
    ListToolsResult,
    PaginatedRequestParams,
    ReadResourceRequestParams,
    ReadResourceResult,
    Resource,
    TextResourceContents,
)

from skillc import __version__
from skillc.diagnostics import Diagnostic, Span
from skillc.ir.viewport import Viewport
from skillc.runtime.api.api_runtime import ApiRuntime
from skillc.runtime.cards.card_host import CardHost
from skillc.runtime.config import RuntimeConfig
from skillc.runtime.contracts import ConsoleEntry
from skillc.server.catalog import Catalogue
from skillc.server.consent import MODERN_VERSION, ConsentPolicy
from skillc.server.registry import ToolRegistry, ToolResult, ToolSpec, error_result
from skillc.server.results import call_result, event_result, wire_safe
from skillc.server.tools import APP_MIME_TYPE, CardEventArgs, ServedApi, card_event_tool, tool_for
from skillc.server.view import image_origins, view_html

log = logging.getLogger("skillc.server")

# (skill, "api-vm" | "card-vm", the lines): who sees each call's console (the debug console).
ConsoleObserver = Callable[[str, str, list[ConsoleEntry]], object]


@dataclass
class _Skill:
    runtime: ApiRuntime
    cards: CardHost
    resource_domains: list[str]
    tool_names: dict[str, str]  # API name -> tool name, for the card view's api/call blocks


class SkillServer:
    """Tools, resources and calls for a :class:`Catalogue`. Close it to stop the runtimes.

    A skill whose index.js cannot load is withdrawn from the catalogue (its tools and cards are
    not advertised) with an SRV004 diagnostic in ``catalogue.diagnostics``; the others are served.
    """

    def __init__(
        self,
        catalogue: Catalogue,
        config: RuntimeConfig,
        *,
        consent: ConsentPolicy | None = None,
        viewport: Viewport | None = None,
    ) -> None:
        self.catalogue = catalogue
        self.consent = consent or ConsentPolicy()
        self.session_id = f"serve-{uuid.uuid4().hex[:16]}"
        self._skills: dict[str, _Skill] = {}
        for loaded in list(catalogue.skills):
            name = loaded.package.name
            runtime = ApiRuntime(loaded.package, config)
            refusal = _load_refusal(runtime, loaded.display)
            if refusal is not None:
                runtime.close()
                _withdraw(catalogue, name, refusal)
                continue
            cards = CardHost(runtime, viewport=viewport or Viewport())
            self._skills[name] = _Skill(runtime, cards, image_origins(loaded.package), catalogue.tool_names(name))
        self._card_skill: dict[str, str] = {}
        self.console_observers: list[ConsoleObserver] = []
        self.tools = ToolRegistry()
        for api in catalogue.apis.values():
            self.tools.add(ToolSpec(tool_for(api), partial(self._call_api, api)))
        if catalogue.components:
            self.tools.add(ToolSpec(card_event_tool(), self._card_event, app_only=True))
        self.server: Server[Any] = Server(
            "skillc",
            version=__version__,
            instructions=self._instructions(),
            on_list_tools=self.list_tools,
            on_call_tool=self.call_tool,
            on_list_resources=self.list_resources,
            on_read_resource=self.read_resource,
        )
        if catalogue.components:
            self.server.extensions[EXTENSION_ID] = {}

    def _instructions(self) -> str:
        names = ", ".join(s.package.name for s in self.catalogue.skills) or "none"
        return (
            f"Skills served: {names}. Each tool is an atomic API of a WeChat mini-program skill; "
            "tools at risk L3/L4 run only with the user's consent."
        )

    # -- handlers --------------------------------------------------------------------------------

    async def list_tools(
        self, _ctx: ServerRequestContext[Any], _params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        return ListToolsResult(tools=self.tools.tools())

    async def list_resources(
        self, _ctx: ServerRequestContext[Any], _params: PaginatedRequestParams | None
    ) -> ListResourcesResult:
        resources = [
            Resource(
                uri=uri,
                name=f"{skill}/{path.split('/')[1]}",
                title=f"{skill} card {path}",
                mime_type=APP_MIME_TYPE,
            )
            for uri, (skill, path) in self.catalogue.components.items()
        ]
        return ListResourcesResult(resources=resources)

    async def read_resource(
        self, _ctx: ServerRequestContext[Any], params: ReadResourceRequestParams
    ) -> ReadResourceResult:
        uri = str(params.uri)
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

    async def call_tool(self, ctx: ServerRequestContext[Any], params: CallToolRequestParams) -> ToolResult:
        return wire_safe(await self.tools.call(ctx, params))

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
        arguments = params.arguments if params.arguments is not None else {}
        approve = False  # only consulted for L3/L4
        if api.risk.needs_approval:
            decision = self._consent(ctx, api, arguments, params)
            if isinstance(decision, InputRequiredResult):
                return decision
            approve = decision
        context = skill.runtime.context(api.spec.name, session_id=self.session_id)
        outcome = await skill.cards.call(api.spec.name, arguments, context, approve=approve)
        self.observe(api.skill, "api-vm", outcome.api.console)
        self.observe(api.skill, "card-vm", outcome.console)
        if outcome.card is not None:
            self._card_skill[outcome.card.card_id] = api.skill
        return call_result(outcome, skill.tool_names)

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

    async def _card_event(self, _ctx: ServerRequestContext[Any], params: CallToolRequestParams) -> ToolResult:
        args = CardEventArgs.parse(params.arguments)
        if isinstance(args, str):
            return error_result(args)
        card_id = args.card_id
        name = self._card_skill.get(card_id)
        if name is None:
            # A card from before a restart: the skill whose store knows it.
            for candidate, skill in self._skills.items():
                if await skill.cards.card(card_id) is not None:
                    name = self._card_skill[card_id] = candidate
                    break
        if name is None:
            return error_result(f"no card {card_id} is known to this server")
        outcome = await self._skills[name].cards.event(card_id, args.node_id, args.event, args.detail)
        self.observe(name, "card-vm", outcome.console)
        return event_result(outcome)

    async def close(self) -> None:
        for skill in self._skills.values():
            await skill.cards.close()
            skill.runtime.close()


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
