"""Mounts shared by the cards mounted on the same notifications.

A mount runs the component's code in a fresh context: index.js, created, attached, then the Input
and Result notifications. When that code reached nothing outside its context (no host call but a
replayable one, no console line, no clock, no randomness, no render query, no timer, nothing left
to run: the session and component_vm.js note each) and the component has no detached lifetime,
the data it ended with is a function of the component, the viewport and the two notifications. A
later card mounted on the same notifications takes that data and starts without a context; it
builds one, by running the same mount again, only when something needs the component's code: a
tap, or an Expire it listens to. Most cards are never touched, so most never build one, and a card
evicted without a context has nothing to detach.

Kept on the first such mount, bounded in count and size, oldest out first; the card threads share
one per card host.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

from skillc.runtime.cards.shared_memo import SharedMemo

MountKey = tuple[str, Hashable, str, str]  # component path, viewport, Input and Result payloads as JSON


@dataclass(frozen=True)
class KeptMount:
    data_text: str  # the data as the component's JSON.stringify gave it (first renders key on it)
    data_json: str  # the same data as the card table stores it (card.dump_data)
    listening: frozenset[str]  # the notification types the component handles


class KeptMounts(SharedMemo[MountKey, KeptMount]):
    """``max_bytes``: a mount whose notifications and data are bigger is not kept (a key that long
    is rarely seen twice, and its memory is better spent on the live cards)."""

    def __init__(self, bound: int = 128, max_bytes: int = 64 * 1024) -> None:
        super().__init__(bound)
        self.max_bytes = max_bytes

    def keep(self, key: MountKey, mount: KeptMount) -> None:
        if len(key[2]) + len(key[3]) + len(mount.data_text) + len(mount.data_json) <= self.max_bytes:
            self.put(key, mount)
