"""The app-only tools a card view calls (MCP Apps), never the model: a tap or an image's load /
error, a restyle (colour scheme, width), and for a dynamic card its update stream and whether it
is shown (a hidden card's timers pause)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from mcp.server.context import ServerRequestContext
from mcp_types import CallToolRequestParams, CallToolResult

from skillc.runtime.contracts import ConsoleEntry
from skillc.server.registry import ToolResult, error_result
from skillc.server.results import event_result, updates_result, with_console
from skillc.server.skill_server.answer import current_answer
from skillc.server.skill_server.served import ServedSkills
from skillc.server.tools import CardEventArgs, CardUpdatesArgs, CardViewArgs, CardVisibilityArgs

CardArgsT = TypeVar("CardArgsT", CardEventArgs, CardViewArgs, CardUpdatesArgs, CardVisibilityArgs)


class CardTools:
    def __init__(self, skills: ServedSkills, observe: Callable[[str, str, list[ConsoleEntry]], None]) -> None:
        self._skills = skills
        self._observe = observe

    async def event(self, _ctx: ServerRequestContext[Any], params: CallToolRequestParams) -> ToolResult:
        found = await self._card_skill_for(CardEventArgs.parse(params.arguments))
        if isinstance(found, CallToolResult):
            return found
        args, skill = found
        outcome = await self._skills.by_name[skill].cards.event(args.card_id, args.node_id, args.event, args.detail)
        self._observe(skill, "card-vm", outcome.console)
        answer = current_answer()
        if answer is not None:
            answer.trace.console("card-vm", outcome.console)
            answer.trace.event(outcome, args.event, args.node_id)
        return with_console(event_result(outcome), [("card-vm", outcome.console)])

    async def view(self, _ctx: ServerRequestContext[Any], params: CallToolRequestParams) -> ToolResult:
        found = await self._card_skill_for(CardViewArgs.parse(params.arguments))
        if isinstance(found, CallToolResult):
            return found
        args, skill = found
        outcome = await self._skills.by_name[skill].cards.restyle(
            args.card_id, color_scheme=args.color_scheme, width=args.width
        )
        return event_result(outcome)

    async def updates(self, _ctx: ServerRequestContext[Any], params: CallToolRequestParams) -> ToolResult:
        found = await self._card_skill_for(CardUpdatesArgs.parse(params.arguments))
        if isinstance(found, CallToolResult):
            return found
        args, skill = found
        view, diags = await self._skills.by_name[skill].cards.updates(args.card_id, args.since)
        if view is None:
            return error_result("; ".join(d.message for d in diags))
        return updates_result(view, diags)

    async def visibility(self, _ctx: ServerRequestContext[Any], params: CallToolRequestParams) -> ToolResult:
        found = await self._card_skill_for(CardVisibilityArgs.parse(params.arguments))
        if isinstance(found, CallToolResult):
            return found
        args, skill = found
        cards = self._skills.by_name[skill].cards
        _changed, diags = await cards.set_visibility(not args.visible, [args.card_id])
        view, more = await cards.updates(args.card_id, args.since)
        if view is None:
            return error_result("; ".join(d.message for d in diags + more))
        answer = current_answer()
        if answer is not None:
            answer.trace.timers(args.card_id, "resumed" if args.visible else "paused")
        return updates_result(view, diags + more)

    async def _card_skill_for(self, args: CardArgsT | str) -> tuple[CardArgsT, str] | CallToolResult:
        """The arguments of an app-only call and the skill of the card they name, or the error
        result the call answers with (bad arguments, an unknown card)."""
        if isinstance(args, str):
            return error_result(args)
        name = await self._skills.skill_of_card(args.card_id)
        if name is None:
            return error_result(f"no card {args.card_id} is known to this server")
        return args, name
