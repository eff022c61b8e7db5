"""The card event table (skillc.ir.events) is what lowering accepts and how it words TPL008."""

from __future__ import annotations

from types import MappingProxyType

import pytest

from skillc.diagnostics import DiagnosticSink
from skillc.frontend.wxml import parse_wxml
from skillc.ir.events import CARD_EVENTS, EVENT_NAMES, CardEvent, bubbles, default_detail, event_allowed, events_hint
from skillc.ir.lower import lower_document
from skillc.ir.template import Element

FILE = "components/card/index.wxml"


def lower(text: str) -> tuple[Element, DiagnosticSink]:
    sink = DiagnosticSink()
    doc = parse_wxml(text, file=FILE, sink=sink)
    template = lower_document(doc, load={FILE: text}.get, sink=sink)
    el = template.root[0]
    assert isinstance(el, Element)
    return el, sink


def test_the_table_lists_what_cards_deliver() -> None:
    assert EVENT_NAMES == ("tap", "load", "error")
    assert [(e.name, e.tags, e.bubbles) for e in CARD_EVENTS.values()] == [
        ("tap", None, True),
        ("load", frozenset({"image"}), False),
        ("error", frozenset({"image"}), False),
    ]
    assert event_allowed("tap", "view") and event_allowed("load", "image")
    assert not event_allowed("load", "view") and not event_allowed("longpress", "view")
    assert bubbles("tap") and not bubbles("load") and not bubbles("error") and not bubbles("longpress")


def test_default_detail_is_a_fresh_copy() -> None:
    detail = default_detail("tap")
    assert detail == {"x": 0, "y": 0}
    detail["x"] = 5
    assert default_detail("tap") == {"x": 0, "y": 0}
    assert default_detail("load") == {} and default_detail("longpress") == {}


def test_the_hint_keeps_the_text_golden_diagnostics_hold() -> None:
    assert events_hint() == "cards deliver tap (bindtap / catchtap) and, on <image>, load and error"


@pytest.mark.parametrize(("tag", "accepted"), [("view", False), ("image", True)])
def test_bindload_follows_the_tags_of_the_table(tag: str, accepted: bool) -> None:
    el, sink = lower(f'<{tag} src="x" bindload="onLoad"/>')
    if accepted:
        assert list(sink) == []
        assert [(e.name, e.handler) for e in el.events] == [("load", "onLoad")]
    else:
        assert [(d.code, d.message) for d in sink] == [
            ("TPL008", "bindload: the load event is only delivered to <image>")
        ]
        assert el.events == ()


def test_an_event_added_to_the_table_is_accepted(monkeypatch: pytest.MonkeyPatch) -> None:
    el, sink = lower('<view bindlongpress="hold"/>')
    assert [d.code for d in sink] == ["TPL008"] and el.events == ()
    monkeypatch.setitem(CARD_EVENTS, "longpress", CardEvent("longpress", None, True, MappingProxyType({})))
    el, sink = lower('<view bindlongpress="hold" catch:longpress="h2"/>')
    assert list(sink) == []
    assert [(e.name, e.catch, e.handler) for e in el.events] == [
        ("longpress", False, "hold"),
        ("longpress", True, "h2"),
    ]


def test_an_event_taken_from_the_table_is_rejected_with_its_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(CARD_EVENTS, "error")
    el, sink = lower('<image src="x" binderror="oops"/>')
    assert [(d.code, d.message, d.hint) for d in sink] == [
        ("TPL008", "binderror: the error event is not delivered to cards", events_hint())
    ]
    assert el.events == ()
    assert events_hint() == "cards deliver tap (bindtap / catchtap) and, on <image>, load"
