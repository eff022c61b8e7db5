"""tools/call of a skill's API: consent for L3/L4, the card host's call (a card mounted only for a
client that can show one), its console to the observers, the trace and the client's log, and the
result with a large Render IR document or fallback data by reference."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from mcp.server.apps import client_supports_apps
from mcp.server.context import ServerRequestContext
from mcp_types import CallToolRequestParams, CallToolResult, InputRequiredResult, TextContent

from skillc.runtime.contracts import ANONYMOUS_USER_DID, ConsoleEntry
from skillc.server.artefacts import ArtefactStore
from skillc.server.caller import current_caller
from skillc.server.consent import MODERN_VERSION, Consent, ConsentPolicy, Refusal
from skillc.server.registry import ToolResult, error_result
from skillc.server.results import call_result, document_by_reference, fallback_data_by_reference, with_console
from skillc.server.skill_server.answer import current_answer
from skillc.server.skill_server.client_log import ClientLog
from skillc.server.skill_server.consent_card import ask_in_card, refused_result
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
        user_did = _user_did(skill.runtime.config.identity.user_did)
        session: str | None = None  # the session a consent was asked in, when the call runs on it
        # An anonymous caller is refused by the runtime (RUN060): nobody is asked to consent first.
        # A call its arguments refuse (RUN010) is refused so, without asking anyone to approve it.
        refused_args = api.risk.needs_approval and skill.runtime.refuses_arguments(api.spec.name, arguments)
        if api.risk.needs_approval and user_did != ANONYMOUS_USER_DID and not refused_args:
            decision = self._consent(ctx, api, arguments, params)
            if answer is not None:
                asked = isinstance(decision, InputRequiredResult | CallToolResult) and not _refusal(decision)
                given = (isinstance(decision, Consent) and decision.approved) or decision is True
                answer.trace.consent("asked" if asked else "given" if given else "refused", api.risk.value)
            if isinstance(decision, InputRequiredResult | CallToolResult):
                if answer is not None and _refusal(decision):
                    answer.outcome, answer.detail = "refused", _first_text(decision)
                elif answer is not None and isinstance(decision, CallToolResult):
                    # Asked in the card: like an elicitation, the call waits for the user's answer.
                    answer.outcome = "input_required"
                return decision
            if isinstance(decision, Consent):
                approve, session = decision.approved, decision.session
            else:
                approve = decision
        return await self.run(api, ctx, arguments, approve=approve, session=session)

    async def run(
        self,
        api: ServedApi,
        ctx: ServerRequestContext[Any],
        arguments: dict[str, Any],
        *,
        approve: bool,
        session: str | None = None,
    ) -> ToolResult:
        """Run the call, its consent decided (``approve``). ``session``: the session the user's
        consent was asked in (a retry, or the card's answer, may come from another), which the
        call, its card and its events then belong to; None: the request's own."""
        skill = self._skills.by_name[api.skill]
        answer = current_answer()
        if answer is not None:
            answer.skill = api.skill
            if session:
                # The rest of this request's trace (and the events URI of its result) goes to the
                # conversation that asked, where the card is.
                answer.trace.session_id = session
        # A card belongs to the session of the client that called: its expiry actions reach that
        # conversation's cards only, and card control answers only to that session.
        if not session:
            session = answer.trace.session_id if answer is not None else self._session_of(ctx)
        user_did = _user_did(skill.runtime.config.identity.user_did)
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
                document_bytes=outcome.card.document_bytes if outcome.card is not None else None,
            )
            result = fallback_data_by_reference(
                result, self._artefacts, session_id=trace.session_id, tool_call_id=trace.tool_call_id
            )
        return with_console(result, [("api-vm", outcome.api.console), ("card-vm", outcome.console)])

    @property
    def consent_policy(self) -> ConsentPolicy:
        return self._consent_policy

    async def run_approved(
        self, api: ServedApi, ctx: ServerRequestContext[Any], arguments: dict[str, Any], session: str
    ) -> ToolResult:
        """An L3/L4 call the user approved in the card (skillc_consent), in the session it was asked in."""
        return await self.run(api, ctx, arguments, approve=True, session=session)

    def _consent(
        self, ctx: ServerRequestContext[Any], api: ServedApi, arguments: dict[str, Any], params: CallToolRequestParams
    ) -> bool | Consent | InputRequiredResult | CallToolResult:
        """Approved (True, or the user's elicited answer with the session it was asked in), not
        (False: the runtime refuses and audits it), the user asked (by elicitation, or in the
        card), or a consent that is none for this call (a named isError result)."""
        policy = self._consent_policy
        if policy.allows(api):
            return True
        answered = policy.answered(api, arguments, params.input_responses, params.request_state)
        if isinstance(answered, Refusal):
            return refused_result(api, answered)
        if answered is not None:
            return answered
        if not policy.elicit:
            return False
        answer = current_answer()
        session = answer.trace.session_id if answer is not None else self._session_of(ctx)
        if ctx.protocol_version == MODERN_VERSION and _can_elicit(ctx):
            return policy.ask(api, arguments, session)
        # A host that cannot elicit but shows this tool's card: the user answers in the card. Only
        # for a tools/call of the tool itself (the model's, or a card view's through the host): an
        # agent's ui_control tap gets the result, and no user would see the control.
        own_call = answer is None or answer.trace.tool == api.tool_name
        if own_call and api.resource_uri is not None and shows_cards(ctx):
            return ask_in_card(policy, api, arguments, session)
        return False


def _user_did(configured: str) -> str:
    """Who the call runs as: its authenticated caller, so storage, logins, consent and the audit
    line are that user's; without auth (no caller bound), the server's one configured user."""
    caller = current_caller()
    return caller.did if caller is not None else configured


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


def _refusal(result: InputRequiredResult | CallToolResult) -> bool:
    return isinstance(result, CallToolResult) and bool(result.is_error)


def _first_text(result: InputRequiredResult | CallToolResult) -> str | None:
    blocks = result.content if isinstance(result, CallToolResult) else []
    return next((b.text.splitlines()[0][:200] for b in blocks if isinstance(b, TextContent) and b.text), None)
