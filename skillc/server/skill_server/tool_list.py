"""The tools a skill server lists, in the order tools/list gives them, each with the handler that
answers it: one per served API, the app-only card tools a card view calls (the update tools only
when a component declares scope.dynamic; skillc_consent, the user's answer to an in-card consent
control), and the ui_control tools when they are served."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from mcp.server.context import ServerRequestContext

from skillc.server.catalog import Catalogue
from skillc.server.registry import ToolRegistry, ToolSpec
from skillc.server.skill_server.api_calls import ApiCalls
from skillc.server.skill_server.card_tools import CardTools
from skillc.server.skill_server.consent_card import ConsentCard
from skillc.server.skill_server.ui_control_wiring import UiControlWiring
from skillc.server.tools import (
    card_event_tool,
    card_updates_tool,
    card_view_tool,
    card_visibility_tool,
    consent_tool,
    tool_for,
)


def skill_tools(
    catalogue: Catalogue,
    *,
    strict_output: bool,
    calls: ApiCalls,
    cards: CardTools,
    ui_control: UiControlWiring | None,
    session_of: Callable[[ServerRequestContext[Any]], str],
) -> ToolRegistry:
    """``strict_output``: advertise each API's outputSchema; ``ui_control``: None when not served."""
    tools = ToolRegistry()
    for api in catalogue.apis.values():
        tools.add(ToolSpec(tool_for(api, strict_output=strict_output), partial(calls.call, api)))
    if catalogue.components:
        tools.add(ToolSpec(card_event_tool(), cards.event, app_only=True))
        tools.add(ToolSpec(card_view_tool(), cards.view, app_only=True))
    if any(a.risk.needs_approval and a.resource_uri is not None for a in catalogue.apis.values()):
        # The user's answer to an L3/L4 call's consent control in its card (hosts that cannot elicit).
        consent = ConsentCard(catalogue.apis, calls.consent_policy, calls.run_approved)
        tools.add(ToolSpec(consent_tool(), consent.answer, app_only=True))
    if _has_dynamic_cards(catalogue):
        tools.add(ToolSpec(card_updates_tool(), cards.updates, app_only=True))
        tools.add(ToolSpec(card_visibility_tool(), cards.visibility, app_only=True))
    if ui_control is not None:
        for spec in ui_control.specs(session_of):
            tools.add(spec)
    return tools


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
