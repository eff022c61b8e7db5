"""What a caller may operate: a card it owns (anyone else's is ``denied``, an unknown one
``not_found``), and the snapshots it took, kept so that an act can tell a stale control.

Every read goes through the card's store version (:meth:`CardHost.card_at`), so a card tapped
on another worker or instance reads the same here. A snapshot id names the process that took it,
the card's store version then, and a keyed digest (``snapshot_key``: the store's ``ui_snapshot``
key, alike on every instance) of both with the caller and the card: a process that never saw the snapshot (the next
request landed on another worker) accepts it while the card is still at that version, the tree
then being the tree now, and calls it stale once the card moved on.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import inspect
import re
import secrets
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
SnapshotKey = Callable[[], bytes]  # may read the store: called once, off the event loop

STALE_HINT = "control is stale; refresh the UI snapshot"
SNAPSHOT_KEY = "ui_snapshot"
# snap-<process 8 hex><nonce 8 hex>.<card version>.<digest 16 hex>
_SNAPSHOT_ID = re.compile(r"^snap-([0-9a-f]{8})([0-9a-f]{8})\.(-?\d{1,18})\.([0-9a-f]{16})$")


@dataclass
class Stored:
    card_id: str
    caller: str
    root: UiControlNode
    fingerprints: dict[str, tuple[str, str]]
    version: int = 0


@dataclass
class Found:
    skill: str
    host: CardHost
    view: CardView
    version: int  # the card's store version this view shows
    key: bytes  # signs and checks snapshot ids (the store's ui_snapshot key)


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
        snapshot_key: SnapshotKey | None = None,
    ) -> None:
        self._cards_of = cards_of
        self._skill_of_card = skill_of_card
        self._owner_of = owner_of
        self._max_snapshots = max(1, max_snapshots)
        self._max_callers = max(1, max_callers)
        self._max_nodes = max(1, max_nodes)
        self._max_depth = max(1, max_depth)
        self._snapshots: OrderedDict[str, OrderedDict[str, Stored]] = OrderedDict()
        self._origin = secrets.token_hex(4)  # names this process in the snapshot ids it makes
        self._snapshot_key = snapshot_key
        self._key: bytes | None = None

    async def card(self, card_id: str, caller: str) -> Found | Refusal:
        skill = await self._skill_of_card(card_id)
        host = self._cards_of(skill) if skill is not None else None
        got = await host.card_at(card_id) if host is not None else None
        if skill is None or host is None or got is None:
            return Refusal("not_found", f"no card {card_id} is known to this server")
        view, version = got
        owner = self._owner_of(view)
        if inspect.isawaitable(owner):
            owner = await owner
        if owner != caller:
            return Refusal("denied", f"card {card_id} belongs to another user")
        return Found(skill, host, view, version, await self._signing_key())

    async def _signing_key(self) -> bytes:
        if self._key is None:
            make = self._snapshot_key
            # Without a shared key, one of this process only: other processes' ids never check.
            self._key = await asyncio.to_thread(make) if make is not None else secrets.token_bytes(32)
        return self._key

    def snapshot(self, found: Found, caller: str) -> UiSnapshot:
        view = found.view
        tree = build_tree(view.document.root, max_nodes=self._max_nodes, max_depth=self._max_depth)
        name = f"{self._origin}{secrets.token_hex(4)}.{found.version}"
        snapshot_id = f"snap-{name}.{_digest(found.key, caller, view.card_id, name)}"
        self._keep(caller, snapshot_id, Stored(view.card_id, caller, tree.root, tree.fingerprints, found.version))
        return UiSnapshot(
            card_id=view.card_id,
            snapshot_id=snapshot_id,
            root=tree.root,
            truncated=tree.truncated,
            node_count=tree.node_count,
            expired=view.expired,
        )

    def _keep(self, caller: str, snapshot_id: str, stored: Stored) -> None:
        mine = self._snapshots.setdefault(caller, OrderedDict())
        self._snapshots.move_to_end(caller)
        mine[snapshot_id] = stored
        while len(mine) > self._max_snapshots:
            mine.popitem(last=False)
        while len(self._snapshots) > self._max_callers:
            self._snapshots.popitem(last=False)

    def stored(self, snapshot_id: str, found: Found, caller: str) -> Stored | Refusal:
        """The snapshot as the caller saw it: kept here, or taken by another process of the fleet
        while the card was at the version it is now at (then its tree is the tree now)."""
        card_id = found.view.card_id
        mine = self._snapshots.get(caller)
        stored = mine.get(snapshot_id) if mine is not None else None
        if mine is None or stored is None or stored.caller != caller:
            return self._elsewhere(snapshot_id, found, caller)
        if stored.card_id != card_id:
            return Refusal("stale_control", f"snapshot {snapshot_id} is of card {stored.card_id}, not {card_id}")
        mine.move_to_end(snapshot_id)
        self._snapshots.move_to_end(caller)
        return stored

    def _elsewhere(self, snapshot_id: str, found: Found, caller: str) -> Stored | Refusal:
        card_id = found.view.card_id
        unknown = Refusal("stale_control", f"snapshot {snapshot_id} is unknown or evicted; {STALE_HINT}")
        parts = _SNAPSHOT_ID.match(snapshot_id)
        # This process's own id that it no longer holds was evicted; a digest that does not check
        # was made for another caller or card, or up.
        if parts is None or parts.group(1) == self._origin:
            return unknown
        name = snapshot_id[len("snap-") : snapshot_id.rindex(".")]
        if not hmac.compare_digest(parts.group(4), _digest(found.key, caller, card_id, name)):
            return unknown
        if int(parts.group(3)) != found.version:
            return Refusal("stale_control", f"card {card_id} changed since snapshot {snapshot_id}; {STALE_HINT}")
        tree = build_tree(found.view.document.root, max_nodes=self._max_nodes, max_depth=self._max_depth)
        stored = Stored(card_id, caller, tree.root, tree.fingerprints, found.version)
        self._keep(caller, snapshot_id, stored)
        return stored


def _digest(key: bytes, caller: str, card_id: str, name: str) -> str:
    message = "\n".join((caller, card_id, name)).encode()
    return hmac.new(key, message, hashlib.sha256).hexdigest()[:16]
