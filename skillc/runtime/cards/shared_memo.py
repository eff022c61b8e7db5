"""A memo the card threads of one card host share: bounded in count, oldest out first.

What cards on the same content share (first_renders.py, kept_mounts.py, card_layout.FirstHeights)
is kept in one of these: reads take no lock (a dict lookup is atomic), writes take one.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class SharedMemo(Generic[K, V]):
    def __init__(self, bound: int) -> None:
        self.bound = max(bound, 1)
        self._values: dict[K, V] = {}
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        return self._values.get(key)

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._values[key] = value
            while len(self._values) > self.bound:
                del self._values[next(iter(self._values))]

    def __len__(self) -> int:
        return len(self._values)
