"""The update stream of one dynamic card: every change to its Render IR, numbered, for a view
that was not there when it happened.

A timer fires with no request to answer, so its patches wait here until the MCP Apps view asks for
them (the app-only tool ``skillc_card_updates {cardId, since}``). Taps and restyles of the card go
into the same stream, so the view can always apply patches in the order they were made: a tap's
answer says which cursor its patches follow (``after``), and a view that holds another cursor reads
the stream instead. A cursor is ``<stream>.<seq>``; a cursor of another stream (the card was
rebuilt), ahead of the stream or older than what the bounded stream keeps is answered with a
``reset``: the whole current tree as one ``replaceRoot``.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any, Literal

from skillc.runtime.cards.card_models import ComponentAction

UpdateKind = Literal["timer", "event", "expire", "restyle", "reset"]
MAX_KEPT = 100  # updates kept per card; a view further behind gets a reset


@dataclass
class Update:
    seq: int
    kind: UpdateKind
    patches: list[dict[str, Any]]  # plain JSON, taken when the update was made
    # Objects, not JSON: the card host fills in what an expiry action expired after the card ran.
    actions: list[ComponentAction] = field(default_factory=list)
    timer_id: int | None = None

    def wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {"seq": self.seq, "kind": self.kind, "patches": self.patches}
        if self.timer_id is not None:
            out["timerId"] = self.timer_id
        out["actions"] = [a.wire() for a in self.actions]
        return out


class CardUpdates:
    """Used on the card's thread only (the card host reads it through a card job)."""

    def __init__(self, stream: str, limit: int = MAX_KEPT) -> None:
        self.stream = stream
        self.seq = 0
        self._kept: deque[Update] = deque(maxlen=limit)

    @property
    def cursor(self) -> str:
        return f"{self.stream}.{self.seq}"

    def append(
        self,
        kind: UpdateKind,
        patches: list[dict[str, Any]],
        actions: list[ComponentAction],
        timer_id: int | None = None,
    ) -> str:
        """Record one change; returns the cursor it follows."""
        after = self.cursor
        self.seq += 1
        self._kept.append(Update(self.seq, kind, patches, list(actions), timer_id))
        return after

    def since(self, cursor: str | None) -> list[Update] | None:
        """The updates after ``cursor``, oldest first; None when the cursor cannot be served."""
        if cursor is None:
            return None
        stream, _, number = cursor.rpartition(".")
        if stream != self.stream or not number.isdigit():
            return None
        seq = int(number)
        if seq > self.seq:
            return None
        if seq == self.seq:
            return []
        if not self._kept or self._kept[0].seq > seq + 1:
            return None
        return [u for u in self._kept if u.seq > seq]
