"""An otherwise good card with calls in {{ }} (tests/fixtures/templates-call-card) is not refused.

`skillc check` reports one warning per call at its span and no error; at run time the API's
card renders, each call's part empty (what wcc renders), the rest of the card intact.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from skillc.check import check_skill
from skillc.diagnostics import Severity
from skillc.ir.render import TEXT
from tests.test_component_vm import Harness

FIXTURE = Path(__file__).parent / "fixtures" / "templates-call-card"
WXML = "components/menu/index.wxml"
MESSAGE = "function calls are not supported in WXML expressions; WeChat renders them as empty"


def test_check_warns_at_each_call_and_reports_no_error() -> None:
    report = check_skill(FIXTURE)
    found = [
        (d.code, d.severity, d.file, d.span.line, d.span.column, d.span.end_column, d.message)
        for d in report.diagnostics
        if d.severity is not Severity.INFO and d.span is not None
    ]
    assert found == [
        ("EXPR006", Severity.WARNING, WXML, 4, 27, 48, MESSAGE),  # item.tags.slice(0, 2)
        ("EXPR006", Severity.WARNING, WXML, 6, 31, 47, MESSAGE),  # price.toFixed(1)
    ]
    assert report.counts.errors == 0
    assert all(
        d.hint == "compute it in setData (or in the API result) and bind the computed field"
        for d in report.diagnostics
        if d.code == "EXPR006"
    )


@pytest.fixture
def h(tmp_path: Path) -> Iterator[Harness]:
    harness = Harness(FIXTURE, tmp_path / "state")
    yield harness
    harness.close()


def test_the_card_renders_with_the_calls_empty(h: Harness) -> None:
    out = h.call("getMenu")
    assert out.fallback is None and out.card is not None
    assert [d for d in out.diagnostics if d.severity is Severity.ERROR] == []
    root = out.card.document.root
    texts = [n.text for n in root.walk() if n.type == TEXT]
    # The calls render as undefined, which text shows as nothing: "[]" and "from ¥".
    assert texts == ["Latte", "[]", "Green tea", "[]", "from ¥"]
