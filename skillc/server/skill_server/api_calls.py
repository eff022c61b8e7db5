"""tools/call of a skill's API: consent for L3/L4, the card host's call (a card mounted only for a
client that can show one), its console to the observers, the trace and the client's log, and the
result with a large Render IR document or fallback data by reference."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from mcp.server.apps import client_supports_apps
from mcp.server.context import ServerRequestContext
from mcp_types import CallToolRequestParams, InputRequiredResult

from skillc.runtime.contracts import ANONYMOUS_USER_DID, ConsoleEntry
from skillc.server.artefacts import ArtefactStore
from skillc.server.caller import current_caller
from skillc.server.consent import MODERN_VERSION, ConsentPolicy
from skillc.server.registry import ToolResult, error_result
from skillc.server.results import call_result, document_by_reference, fallback_data_by_reference, with_console
from skillc.server.skill_server.answer import current_answer
from skillc.server.skill_server.client_log import ClientLog
from skillc.server.skill_server.served import ServedSkills
from skillc.server.tools import ServedApi

log = logging.getLogger("skillc.server")

_RUN_REFUSED = "RUN019"  # an L3/L4 call without consent
_RUN_OUTPUT = "RUN016"  # structuredContent breaks the outputSchema

SessionOf = Callable[[ServerRequestContext[Any]], str]
# (skill, "api-vm" | "card-vm", the lines): who sees each call's console (the debug console).
Observe = Callable[[str, str, list[ConsoleEntry]], None]


class ApiCalls:
    """``strict_output``: a result that breaks its outputSchema is an ``isError`` result (otherwise
    a warning); a card whose Render IR is over ``inline_document_bytes`` as JSON goes by reference
    to ``artefacts``."""

    def __init__(
        self,
        skills: ServedSkills,
        consent: ConsentPolicy,
        artefacts: ArtefactStore,
        client_log: ClientLog,
        *,
        strict_output: bool,
        inline_document_bytes: int,
        session_of: SessionOf,
        observe: Observe,
    ) -> None:
        self._skills = skills
        self._consent_policy = consent
        self._artefacts = artefacts
        self._client_log = client_log
        self._strict_output = strict_output
        self._inline_document_bytes = inline_document_bytes
        self._session_of = session_of
        self._observe = observe

    async def call(self, api: ServedApi, ctx: ServerRequestContext[Any], params: CallToolRequestParams) -> ToolResult:
        skill = self._skills.by_name[api.skill]
        answer = current_answer()
        if answer is not None:
            answer.skill = api.skill
        arguments = params.arguments if params.arguments is not None else {}
        approve = False  # only consulted for L3/L4
        # The call runs as its caller: storage, logins, consent and the audit line are that user's.
        # Without auth (no caller bound) it is the server's one configured user.
        caller = current_caller()
        user_did = caller.did if caller is not None else skill.runtime.config.identity.user_did
        # An anonymous caller is refused by the runtime (RUN060): nobody is asked to consent first.
        if api.risk.needs_approval and user_did != ANONYMOUS_USER_DID:
            decision = self._consent(ctx, api, arguments, params)
            if answer is not None:
                asked = isinstance(decision, InputRequiredResult)
                answer.trace.consent("asked" if asked else "given" if decision else "refused", api.risk.value)
            if isinstance(decision, InputRequiredResult):
                return decision
            approve = decision
        # A card belongs to the session of the client that called: its expiry actions reach that
        # conversation's cards only, and card control answers only to that session.
        session = answer.trace.session_id if answer is not None else self._session_of(ctx)
        context = skill.runtime.context(api.spec.name, session_id=session, user_did=user_did)
        mount = shows_cards(ctx)
        outcome = await skill.cards.call(api.spec.name, arguments, context, approve=approve, mount=mount)
        self._observe(api.skill, "api-vm", outcome.api.console)
        self._observe(api.skill, "card-vm", outcome.console)
        await self._client_log.send(ctx, api.skill, [("api-vm", outcome.api.console), ("card-vm", outcome.console)])
        if answer is not None:
            answer.trace.console("api-vm", outcome.api.console)
            answer.trace.console("card-vm", outcome.console)
            answer.trace.call(outcome)
        if outcome.card is not None:
            self._skills.mounted(outcome.card.card_id, api.skill)
        codes = {d.code for d in outcome.api.diagnostics}
        if answer is not None and _RUN_REFUSED in codes:
            answer.outcome = "refused"
        broken = [d.message for d in outcome.api.diagnostics if d.code == _RUN_OUTPUT]
        if broken:
            log.warning("%s: %s", api.tool_name, "; ".join(broken))
            if answer is not None:
                answer.detail = broken[0]
            if self._strict_output:
                return error_result(
                    f"{api.tool_name} returned a result that breaks its outputSchema: {'; '.join(broken)}"
                )
        result = call_result(outcome, skill.tool_names)
        if answer is not None:
            trace = answer.trace
            result = document_by_reference(
                result,
                self._artefacts,
                self._inline_document_bytes,
                session_id=trace.session_id,
                tool_call_id=trace.tool_call_id,
            )
            result = fallback_data_by_reference(
                result, self._artefacts, session_id=trace.session_id, tool_call_id=trace.tool_call_id
            )
        return with_console(result, [("api-vm", outcome.api.console), ("card-vm", outcome.console)])

    def _consent(
        self, ctx: ServerRequestContext[Any], api: ServedApi, arguments: dict[str, Any], params: CallToolRequestParams
    ) -> bool | InputRequiredResult:
        policy = self._consent_policy
        if policy.allows(api):
            return True
        answer = policy.answer(api, arguments, params.input_responses, params.request_state)
        if answer is not None:
            return answer
        if policy.elicit and ctx.protocol_version == MODERN_VERSION and _can_elicit(ctx):
            return policy.ask(api, arguments)
        return False


def shows_cards(ctx: ServerRequestContext[Any]) -> bool:
    """Whether the client can show a card. A 2026-07-28 request declares its client's capabilities,
    so one without the MCP Apps extension gets no card (mounting one is most of a call's cost).
    A 2025-era request over stateless HTTP declares nothing: it may come from a host that shows
    cards, so it gets one."""
    if ctx.protocol_version != MODERN_VERSION:
        caps = ctx.session.client_capabilities
        return caps is None or client_supports_apps(ctx) or getattr(caps, "extensions", None) is None
    return client_supports_apps(ctx)


def _can_elicit(ctx: ServerRequestContext[Any]) -> bool:
    caps = getattr(ctx.session, "client_capabilities", None)
    return caps is not None and getattr(caps, "elicitation", None) is not None
