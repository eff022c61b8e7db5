"""UiControl: the four ui_control operations over one server's cards, as the server builds it."""

from __future__ import annotations

from skillc.server.ui_control import observe
from skillc.server.ui_control.act import Audit, RunFollowUp, act
from skillc.server.ui_control.models import (
    MAX_DEPTH,
    MAX_NODES,
    MAX_SNAPSHOT_CALLERS,
    MAX_SNAPSHOTS,
    UiActionRequest,
    UiActionResult,
    UiFindRequest,
    UiFindResult,
    UiSnapshot,
    UiWaitCondition,
    UiWaitResult,
)
from skillc.server.ui_control.scope import CardScope, CardsOf, OwnerOf, SkillOfCard, SnapshotKey


class UiControl:
    """Scoped card automation. It knows the server only through these callables:

    - ``cards_of(skill)``: the skill's CardHost (None when not served);
    - ``skill_of_card(card_id)``: the skill a card belongs to (None when unknown);
    - ``owner_of(view)``: the user a card belongs to (its context's user DID), sync or async;
    - ``run_follow_up(skill, api_name, arguments, caller)``: the server's call chain, consent included;
    - ``audit(record)``: one record per act;
    - ``snapshot_key()``: the key snapshot ids are signed with, alike on every process of a fleet
      (the state store's); without it, a snapshot is good only in the process that took it.
    """

    def __init__(
        self,
        *,
        cards_of: CardsOf,
        skill_of_card: SkillOfCard,
        owner_of: OwnerOf,
        run_follow_up: RunFollowUp,
        audit: Audit,
        max_snapshots: int = MAX_SNAPSHOTS,
        max_callers: int = MAX_SNAPSHOT_CALLERS,
        max_nodes: int = MAX_NODES,
        max_depth: int = MAX_DEPTH,
        snapshot_key: SnapshotKey | None = None,
    ) -> None:
        self._scope = CardScope(
            cards_of=cards_of,
            skill_of_card=skill_of_card,
            owner_of=owner_of,
            max_snapshots=max_snapshots,
            max_callers=max_callers,
            max_nodes=max_nodes,
            max_depth=max_depth,
            snapshot_key=snapshot_key,
        )
        self._run_follow_up = run_follow_up
        self._audit = audit

    async def snapshot(self, card_id: str, caller: str) -> UiSnapshot:
        return await observe.snapshot(self._scope, card_id, caller)

    async def find(self, req: UiFindRequest, caller: str) -> UiFindResult:
        return await observe.find(self._scope, req, caller)

    async def act(self, req: UiActionRequest, caller: str) -> UiActionResult:
        # Looked up at each act rather than bound into the scope: a runner swapped on a live control
        # takes effect.
        return await act(self._scope, req, caller, run_follow_up=self._run_follow_up, audit=self._audit)

    async def wait_for(self, cond: UiWaitCondition, caller: str) -> UiWaitResult:
        return await observe.wait_for(self._scope, cond, caller)
