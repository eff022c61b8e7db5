"""An event's metadata as it is kept: the short way for small plain values gives exactly what the
general way (a JSON round trip per value, largest values cut first) gives."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from skillc.server import events
from skillc.server.events import bound_metadata

_CHARS = ["a", "é", "中", "😀", "\n", '"', "\\", "\x00", "\ud800", " "]


def _general(metadata: dict[str, Any], limit: int, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    with monkeypatch.context() as m:
        m.setattr(events, "_small_plain_copy", lambda _metadata, _limit: None)
        return bound_metadata(metadata, limit)


def _value(rnd: random.Random, depth: int) -> Any:
    r = rnd.random()
    if depth < 4 and r < 0.15:
        return {"".join(rnd.choices(_CHARS[:7], k=rnd.randint(0, 5))): _value(rnd, depth + 1) for _ in range(4)}
    if depth < 4 and r < 0.3:
        return [_value(rnd, depth + 1) for _ in range(rnd.randint(0, 6))]
    if r < 0.4:
        return rnd.randint(-(10**35), 10**35) if rnd.random() < 0.1 else rnd.randint(-1000, 1000)
    if r < 0.5:
        return rnd.random() * rnd.choice([1, 1e300, -1e-300])
    if r < 0.55:
        return rnd.choice([True, False, None, float("inf")])
    if r < 0.6:
        return (1, "a")
    return "".join(rnd.choices(_CHARS, k=rnd.choice([0, 3, 50, 400, 3000])))


def test_the_short_way_keeps_what_the_general_way_keeps(monkeypatch: pytest.MonkeyPatch) -> None:
    rnd = random.Random(7)
    took_short = 0
    for _ in range(3000):
        metadata = {"".join(rnd.choices(_CHARS[:4], k=rnd.randint(1, 8))): _value(rnd, 0) for _ in range(3)}
        limit = rnd.choice([1024, 2048, 16_384])
        kept = bound_metadata(metadata, limit)
        assert json.dumps(kept, sort_keys=True) == json.dumps(_general(metadata, limit, monkeypatch), sort_keys=True)
        assert len(json.dumps(kept, ensure_ascii=False).encode("utf-8")) <= limit
        took_short += events._small_plain_copy(metadata, limit) is not None
    assert 100 < took_short < 2900  # both ways were exercised


def test_what_the_short_way_leaves_to_the_general_way() -> None:
    small = events._small_plain_copy
    assert small({"tool": "t", "ms": 1.5, "ok": True, "args": {"k": ["v", None]}}, 1024) == {
        "tool": "t",
        "ms": 1.5,
        "ok": True,
        "args": {"k": ["v", None]},
    }
    assert small({"k": "a\ud800"}, 1024) is None  # a lone surrogate becomes "?"
    assert small({"k": 10**40}, 1024) is None  # may not fit its bound, or print at all
    assert small({"k": (1, 2)}, 1024) is None  # a tuple becomes a list
    assert small({"k": {1: "a"}}, 1024) is None  # a key that is not a string becomes one
    assert small({"k": "x" * 170}, 1024) is None  # 6 bytes a character: past the bound, cut or not
    nested: Any = "x"
    for _ in range(9):
        nested = [nested]
    assert small({"k": nested}, 1024) is None


def test_the_short_way_copies() -> None:
    arguments = {"keyword": "latte", "tags": ["hot"]}
    kept = bound_metadata({"arguments": arguments}, 1024)
    arguments["tags"].append("iced")
    assert kept == {"arguments": {"keyword": "latte", "tags": ["hot"]}}
