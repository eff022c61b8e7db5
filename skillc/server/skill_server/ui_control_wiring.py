"""ui_control on the skill server: whether it is served (the listing's diagnostics), cards scoped
to the session that made them, a tapped card's api/calls through the same chain as the model's
own calls, and each act's audit record in the caller's session and the skill's audit log."""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextvars import ContextVar
from functools import partial
from typing import Any

from mcp.server.context import ServerRequestContext
from mcp_types import CallToolRequestParams

from skillc.runtime.state import StateStore
from skillc.runtime.state.keys import shared_key
from skillc.server.catalog import Catalogue
from skillc.server.registry import ToolHandler, ToolResult, ToolSpec, error_result
from skillc.server.skill_server.answer import current_answer
from skillc.server.skill_server.api_calls import ApiCalls
from skillc.server.skill_server.served import ServedSkills
from skillc.server.ui_control import SNAPSHOT_KEY, UiControl, UiControlAuditRecord, ui_control_tools

log = logging.getLogger("skillc.server")

# The request an act runs in: its follow-up api/calls need it (consent, session), and UiControl
# hands the follow-up runner only the skill, the API and the caller.
_UI_CTX: ContextVar[ServerRequestContext[Any]] = ContextVar("skillc_ui_control_ctx")


def ui_control_status(catalogue: Catalogue, enabled: bool) -> dict[str, str]:
    if not enabled:
        return {"status": "disabled_by_policy", "reason": "the server was started with --no-ui-control"}
    if not any(s.package.components for s in catalogue.skills):
        return {"status": "unavailable", "reason": "no served skill has a card component"}
    return {"status": "available"}


class UiControlWiring:
    def __init__(self, catalogue: Catalogue, skills: ServedSkills, calls: ApiCalls, state: StateStore) -> None:
        self._catalogue = catalogue
        self._skills = skills
        self._calls = calls
        self._state = state  # its ui_snapshot key signs snapshot ids alike on every instance

    def specs(self, session_of: Callable[[ServerRequestContext[Any]], str]) -> list[ToolSpec]:
        control = UiControl(
            cards_of=self._skills.cards,
            skill_of_card=self._skills.skill_of_card,
            owner_of=lambda view: view.session_id,  # a card answers to the session that made it
            run_follow_up=self._follow_up,
            audit=self._audit,
            snapshot_key=lambda: shared_key(self._state, SNAPSHOT_KEY),
        )
        return [ToolSpec(spec.tool, partial(_with_ctx, spec.handler)) for spec in ui_control_tools(control, session_of)]

    async def _follow_up(self, skill: str, api_name: str, arguments: dict[str, Any], _caller: str) -> ToolResult:
        """An api/call a card makes when an agent taps it: the same chain as the model's own call
        (inputSchema, consent for L3/L4, audit, the next card)."""
        tool = self._catalogue.tool_names(skill).get(api_name)
        api = self._catalogue.apis.get(tool) if tool is not None else None
        if api is None:
            return error_result(f"{skill} declares no API {api_name}")
        params = CallToolRequestParams(name=api.tool_name, arguments=arguments)
        return await self._calls.call(api, _UI_CTX.get(), params)

    def _audit(self, record: UiControlAuditRecord) -> None:
        answer = current_answer()
        if answer is not None:
            verdict = "ok" if record.ok else record.error_code or "failed"
            answer.trace.ui_action(record.action, record.node_id, verdict, record.wire())
        served = self._skills.by_name.get(record.skill or "")
        if served is not None:
            try:
                served.runtime.audit.write_ui(record.model_dump_json())
            except Exception:  # a full disk must not turn an agent's tap into an error
                log.exception("the ui_control audit record could not be written")
        log.info("ui_control %s on %s/%s: %s", record.action, record.card_id, record.node_id, record.error_code or "ok")


async def _with_ctx(
    handler: ToolHandler,
    ctx: ServerRequestContext[Any],
    params: CallToolRequestParams,
) -> ToolResult:
    token = _UI_CTX.set(ctx)  # a follow-up of an act runs in the caller's request (consent, session)
    try:
        return await handler(ctx, params)
    finally:
        _UI_CTX.reset(token)
