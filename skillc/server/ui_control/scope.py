"""What a caller may operate: a card it owns (anyone else's is ``denied``, an unknown one
``not_found``), and the snapshots it took, kept so that an act can tell a stale control."""

from __future__ import annotations

import inspect
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from skillc.runtime.cards.card_host import CardHost
from skillc.runtime.cards.card_models import CardView
from skillc.server.ui_control.models import (
    MAX_DEPTH,
    MAX_NODES,
    MAX_SNAPSHOT_CALLERS,
    MAX_SNAPSHOTS,
    UiControlNode,
    UiErrorCode,
    UiSnapshot,
)
from skillc.server.ui_control.tree import build_tree

CardsOf = Callable[[str], CardHost | None]
SkillOfCard = Callable[[str], Awaitable[str | None]]
OwnerOf = Callable[[CardView], str | Awaitable[str]]

STALE_HINT = "control is stale; refresh the UI snapshot"


@dataclass
class Stored:
    card_id: str
    caller: str
    root: UiControlNode
    fingerprints: dict[str, tuple[str, str]]


@dataclass
class Found:
    skill: str
    host: CardHost
    view: CardView


@dataclass
class Refusal:
    code: UiErrorCode
    message: str


class CardScope:
    """The cards of one caller, as the server knows them: ``cards_of(skill)`` (the skill's
    CardHost, None when not served), ``skill_of_card(card_id)`` (None when unknown) and
    ``owner_of(view)`` (the user a card belongs to, sync or async). Each caller keeps its own
    ``max_snapshots`` (oldest evicted first), so one busy client never evicts another's; past
    ``max_callers`` the least recently active caller's snapshots go."""

    def __init__(
        self,
        *,
        cards_of: CardsOf,
        skill_of_card: SkillOfCard,
        owner_of: OwnerOf,
        max_snapshots: int = MAX_SNAPSHOTS,
        max_callers: int = MAX_SNAPSHOT_CALLERS,
        max_nodes: int = MAX_NODES,
        max_depth: int = MAX_DEPTH,
    ) -> None:
        self._cards_of = cards_of
        self._skill_of_card = skill_of_card
        self._owner_of = owner_of
        self._max_snapshots = max(1, max_snapshots)
        self._max_callers = max(1, max_callers)
        self._max_nodes = max(1, max_nodes)
        self._max_depth = max(1, max_depth)
        self._snapshots: OrderedDict[str, OrderedDict[str, Stored]] = OrderedDict()

    async def card(self, card_id: str, caller: str) -> Found | Refusal:
        skill = await self._skill_of_card(card_id)
        host = self._cards_of(skill) if skill is not None else None
        view = await host.card(card_id) if host is not None else None
        if skill is None or host is None or view is None:
            return Refusal("not_found", f"no card {card_id} is known to this server")
        owner = self._owner_of(view)
        if inspect.isawaitable(owner):
            owner = await owner
        if owner != caller:
            return Refusal("denied", f"card {card_id} belongs to another user")
        return Found(skill, host, view)

    def snapshot(self, view: CardView, caller: str) -> UiSnapshot:
        tree = build_tree(view.document.root, max_nodes=self._max_nodes, max_depth=self._max_depth)
        snapshot_id = f"snap-{uuid.uuid4().hex[:16]}"
        mine = self._snapshots.setdefault(caller, OrderedDict())
        self._snapshots.move_to_end(caller)
        mine[snapshot_id] = Stored(view.card_id, caller, tree.root, tree.fingerprints)
        while len(mine) > self._max_snapshots:
            mine.popitem(last=False)
        while len(self._snapshots) > self._max_callers:
            self._snapshots.popitem(last=False)
        return UiSnapshot(
            card_id=view.card_id,
            snapshot_id=snapshot_id,
            root=tree.root,
            truncated=tree.truncated,
            node_count=tree.node_count,
            expired=view.expired,
        )

    def stored(self, snapshot_id: str, card_id: str, caller: str) -> Stored | Refusal:
        mine = self._snapshots.get(caller)
        stored = mine.get(snapshot_id) if mine is not None else None
        if mine is None or stored is None or stored.caller != caller:
            return Refusal("stale_control", f"snapshot {snapshot_id} is unknown or evicted; {STALE_HINT}")
        if stored.card_id != card_id:
            return Refusal("stale_control", f"snapshot {snapshot_id} is of card {stored.card_id}, not {card_id}")
        mine.move_to_end(snapshot_id)
        self._snapshots.move_to_end(caller)
        return stored
