"""The app-only tools a card view calls (MCP Apps), never the model: a tap or an image's load /
error, a restyle (colour scheme, width), and for a dynamic card its update stream and whether it
is shown (a hidden card's timers pause).

Each answers only to the session that made the card, as ui_control does: the caller's session
(``_meta["skillc/session"]``, which the card view carries from its card) must be the card's, or
the call is refused with ui_control's ``denied`` and nothing runs."""

from __future__ import annotations

import hmac
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
    def __init__(
        self,
        skills: ServedSkills,
        observe: Callable[[str, str, list[ConsoleEntry]], None],
        session_of: Callable[[ServerRequestContext[Any]], str],
        verify_session: Callable[[object], bool] = lambda _value: False,
    ) -> None:
        self._skills = skills
        self._observe = observe
        self._session_of = session_of
        self._verify = verify_session  # whether a session capability is the running caller's

    async def event(self, ctx: ServerRequestContext[Any], params: CallToolRequestParams) -> ToolResult:
        found = await self._card_skill_for(ctx, params.name, CardEventArgs.parse(params.arguments))
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

    async def view(self, ctx: ServerRequestContext[Any], params: CallToolRequestParams) -> ToolResult:
        found = await self._card_skill_for(ctx, params.name, CardViewArgs.parse(params.arguments))
        if isinstance(found, CallToolResult):
            return found
        args, skill = found
        outcome = await self._skills.by_name[skill].cards.restyle(
            args.card_id, color_scheme=args.color_scheme, width=args.width
        )
        return event_result(outcome)

    async def updates(self, ctx: ServerRequestContext[Any], params: CallToolRequestParams) -> ToolResult:
        found = await self._card_skill_for(ctx, params.name, CardUpdatesArgs.parse(params.arguments))
        if isinstance(found, CallToolResult):
            return found
        args, skill = found
        view, diags = await self._skills.by_name[skill].cards.updates(args.card_id, args.since)
        if view is None:
            return error_result("; ".join(d.message for d in diags))
        return updates_result(view, diags)

    async def visibility(self, ctx: ServerRequestContext[Any], params: CallToolRequestParams) -> ToolResult:
        found = await self._card_skill_for(ctx, params.name, CardVisibilityArgs.parse(params.arguments))
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

    async def _card_skill_for(
        self, ctx: ServerRequestContext[Any], tool: str, args: CardArgsT | str
    ) -> tuple[CardArgsT, str] | CallToolResult:
        """The arguments of an app-only call and the skill of the card they name, or the error
        result the call answers with (bad arguments, an unknown card, another session's card:
        ui_control's ``not_found`` and ``denied``, in its words)."""
        if isinstance(args, str):
            return error_result(args)
        name = await self._skills.skill_of_card(args.card_id)
        cards = self._skills.by_name[name].cards if name is not None else None
        owner = cards.session_of(args.card_id) if cards is not None else None
        if cards is not None and owner is None:  # evicted from memory since: its persisted record says
            view = await cards.card(args.card_id)
            owner = view.session_id if view is not None else None
        if name is None or owner is None:
            return error_result(f"no card {args.card_id} is known to this server")
        # The session an argument names counts only when it verifies for this caller, exactly as
        # one in _meta does (a host whose bridge cannot send _meta passes it so).
        session = args.session if args.session is not None and self._verify(args.session) else self._session_of(ctx)
        if not hmac.compare_digest(owner, session):
            return error_result(f"{tool}: denied: card {args.card_id} belongs to another user")
        return args, name
