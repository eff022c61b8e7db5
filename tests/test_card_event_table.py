"""The card-event table of ir/events.py drives the runtime, flows and the server's event tool:
an event added there is accepted everywhere, one not there is refused everywhere."""

from __future__ import annotations

from types import MappingProxyType

import pytest
from pydantic import ValidationError

from skillc.ir import events
from skillc.ir.events import CARD_EVENTS, EVENT_NAMES, CardEvent
from skillc.runtime.flows.flow import TapStep
from skillc.server.tools import CARD_EVENT_TOOL, CardEventArgs, card_event_tool


def test_the_event_tool_schema_lists_the_table() -> None:
    schema = card_event_tool().input_schema
    assert schema["properties"]["event"]["enum"] == list(EVENT_NAMES) == ["tap", "load", "error"]
    assert schema["required"] == ["cardId", "nodeId"]
    assert schema["additionalProperties"] is False


def test_the_event_tool_output_schema_is_the_view_shape() -> None:
    out = card_event_tool().output_schema
    assert out is not None
    assert set(out["properties"]) == {"cardId", "handled", "patches", "actions", "contentHeight"}


def test_an_unknown_event_is_refused_by_the_tool_and_by_flows() -> None:
    assert CardEventArgs.parse({"cardId": "c", "nodeId": "n", "event": "longpress"}) == (
        f"invalid arguments for {CARD_EVENT_TOOL}: cardId and nodeId must be strings, event one of tap, load, error"
    )
    with pytest.raises(ValidationError, match="a card delivers only tap, load, error"):
        TapStep.model_validate({"tap": {"handler": "h"}, "event": "longpress"})


def test_a_new_table_entry_is_accepted_by_the_tool_and_by_flows(monkeypatch: pytest.MonkeyPatch) -> None:
    row = CardEvent("longpress", None, True, MappingProxyType({}))
    monkeypatch.setitem(CARD_EVENTS, row.name, row)
    args = CardEventArgs.parse({"cardId": "c", "nodeId": "n", "event": "longpress"})
    assert isinstance(args, CardEventArgs) and args.event == "longpress"
    assert TapStep.model_validate({"tap": {"handler": "h"}, "event": "longpress"}).event == "longpress"
    assert events.bubbles("longpress")


def test_bubbling_and_default_detail_come_from_the_table() -> None:
    assert events.bubbles("tap") and not events.bubbles("load") and not events.bubbles("error")
    assert events.default_detail("tap") == {"x": 0, "y": 0}
    detail = events.default_detail("tap")
    detail["x"] = 5  # a handler's detail is a copy: the table is shared
    assert events.default_detail("tap") == {"x": 0, "y": 0}
