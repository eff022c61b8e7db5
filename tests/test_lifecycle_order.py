"""A card's lifecycle in WeChat's order: created, attached, then the Input and Result notifications.

Real cards set fallback data in ``attached`` and override it from the Result notification; with
the notifications first, the fallbacks would win and the card would show "Loading" for ever.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

from skillc.diagnostics import DiagnosticSink
from skillc.frontend.package import load_skill
from skillc.ir.render import RenderNode
from skillc.runtime.api.api_runtime import ApiRuntime
from skillc.runtime.cards.card_host import CardHost
from skillc.runtime.cards.card_models import CallOutcome
from skillc.runtime.config import RuntimeConfig

from .conftest import FIXTURES

SKILL = FIXTURES / "runtime-lifecycle" / "order-skill"


@pytest.fixture
def outcome(tmp_path: Path) -> Iterator[CallOutcome]:
    pkg = load_skill(SKILL, DiagnosticSink())
    assert pkg is not None
    runtime = ApiRuntime(pkg, RuntimeConfig(state_dir=tmp_path))
    ids = itertools.count(1)
    host = CardHost(runtime, card_ids=lambda: f"card-{next(ids)}")
    loop = asyncio.new_event_loop()
    try:
        ctx = runtime.context(session_id="s1")
        yield loop.run_until_complete(host.call("showOrder", {"orderId": "A7"}, ctx))
    finally:
        loop.run_until_complete(host.close())
        runtime.close()
        loop.close()


def texts(root: RenderNode) -> list[str]:
    return [str(n.props["text"]) for n in root.walk() if n.type == "#text"]


def test_attached_runs_before_the_notifications(outcome: CallOutcome) -> None:
    # Input and Result see the status attached set: they run after it.
    assert [c.text for c in outcome.console] == ["created", "attached", "input waiting", "result waiting"]
    assert [(c.file, c.line) for c in outcome.console] == [
        ("components/order-card/index.js", 5),
        ("components/order-card/index.js", 19),
        ("components/order-card/index.js", 9),
        ("components/order-card/index.js", 13),
    ]


def test_the_result_overrides_the_fallbacks_of_attached(outcome: CallOutcome) -> None:
    assert outcome.fallback is None
    assert outcome.card is not None
    assert outcome.card.data == {"title": "Order A7", "status": "ready", "orderId": "A7"}
    assert texts(outcome.card.document.root) == ["Order A7", "ready A7"]
    assert outcome.diagnostics == []
