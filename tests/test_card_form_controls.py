"""Form controls and their events in a card: what WeChat's card runtime refuses, skillc reports at
the official rule's severity (V003, an error in the validator), citing the rule.

The official tag pattern is a prefix match, so `<textarea>` (it starts with `text`) slips
through it although the rule's own text lists textarea among the refused controls and the card
runtime does not render it: skillc follows the runtime (an error) and says that the gate lets it
pass. The fixture tests/fixtures/card-builtins/form-skill is a card that is a form.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from skillc.cli import main
from skillc.ir.official_tags import FORM_HINT, v003_refuses_event, v003_slip

FORM = Path(__file__).parent / "fixtures" / "card-builtins" / "form-skill"
WXML = "components/order-form/index.wxml"
EVENTS_HINT = "cards deliver tap (bindtap / catchtap) and, on <image>, load and error"


def _refused(tag: str) -> str:
    return f"<{tag}> is not a card component (official rule V003)"


def _event(attr: str, name: str) -> str:
    return f"{attr}: the {name} event is not delivered to cards (official rule V003)"


# (code, severity, line, column, message, hint) for every control and event of the form.
EXPECTED = [
    ("TPL008", "error", 1, 20, _event("bindlongpress", "longpress"), EVENTS_HINT),
    ("TPL001", "error", 2, 4, _refused("input"), FORM_HINT),
    ("TPL008", "error", 2, 27, _event("bindinput", "input"), EVENTS_HINT),
    (
        "TPL001",
        "error",
        3,
        4,
        "<textarea> is not a card component; the official rule V003 lets it pass (its tag pattern matches the "
        "prefix <text>), but WeChat's cards do not render it",
        FORM_HINT,
    ),
    ("TPL008", "error", 3, 30, _event("bind:input", "input"), EVENTS_HINT),
    ("TPL001", "error", 4, 4, _refused("checkbox-group"), FORM_HINT),
    ("TPL008", "error", 4, 19, _event("bindchange", "change"), EVENTS_HINT),
    ("TPL001", "error", 4, 42, _refused("checkbox"), FORM_HINT),
    ("TPL001", "error", 5, 4, _refused("radio-group"), FORM_HINT),
    ("TPL008", "error", 5, 16, _event("bind:change", "change"), EVENTS_HINT),
    ("TPL001", "error", 5, 38, _refused("radio"), FORM_HINT),
    ("TPL001", "error", 6, 4, _refused("picker"), FORM_HINT),
    ("TPL008", "error", 6, 29, _event("catchchange", "change"), EVENTS_HINT),
    ("TPL008", "error", 7, 9, _event("bind:longtap", "longtap"), EVENTS_HINT),
    ("TPL008", "error", 7, 31, _event("bindtouchstart", "touchstart"), EVENTS_HINT),
    (
        "TPL030",
        "warning",
        8,
        4,
        '<canvas> without type="2d": cards have only the 2d canvas (wx.createCanvasContext is not available), '
        "so this one stays blank",
        'write <canvas type="2d" id="c"> and draw through this.createSelectorQuery()',
    ),
]


def test_check_reports_every_control_and_event_at_the_official_severity() -> None:
    result = CliRunner().invoke(main, ["check", str(FORM), "--format", "json"])
    assert result.exit_code == 1, result.output
    report = json.loads(result.output)
    assert (report["errors"], report["warnings"]) == (15, 1)
    found = [
        (d["code"], d["severity"], d["span"]["line"], d["span"]["column"], d["message"], d.get("hint"))
        for d in report["units"][0]["diagnostics"]
        if d.get("file") == WXML
    ]
    assert found == EXPECTED
    assert [d["file"] for d in report["units"][0]["diagnostics"]] == [WXML] * len(EXPECTED)


def test_run_draws_the_card_and_reports_the_same_findings() -> None:
    # The gate judges, the renderer draws: the controls are errors of check, and the card is
    # still drawn (a control as a node of its own tag, which no backend makes interactive).
    script = FORM / "flows" / "order.json"
    result = CliRunner().invoke(main, ["run", str(FORM), "--script", str(script), "--json"])
    assert result.exit_code == 0, result.output
    (step,) = json.loads(result.output)
    assert step["failed"] is False and step["fallbacks"] == []
    (card,) = step["cards"]
    form = card["document"]["root"]["children"][0]
    assert [child["type"] for child in form["children"]][:5] == [
        "input",
        "textarea",
        "checkbox-group",
        "radio-group",
        "picker",
    ]
    assert [d for d in step["diagnostics"] if d.get("file") == WXML] == []
    found = [
        (d["code"], d["severity"], d["span"]["line"], d["span"]["column"], d["message"], d.get("hint"))
        for d in step["findings"]
        if d.get("file") == WXML
    ]
    assert found == EXPECTED


@pytest.mark.parametrize(
    ("tag", "slip"),
    [
        ("textarea", "text"),
        ("imagex", "image"),
        ("viewer", "view"),
        ("blockquote", "block"),
        ("scroll-view-x", "scroll-view"),
        ("text", None),
        ("canvas", None),
        ("input", None),
        ("collapsible-view", None),
    ],
)
def test_which_tags_slip_the_official_prefix_pattern(tag: str, slip: str | None) -> None:
    assert v003_slip(tag) == slip


@pytest.mark.parametrize(
    ("event", "banned"),
    [
        ("input", True),
        ("change", True),
        ("longpress", True),
        ("longtap", True),
        ("touchstart", True),
        ("touchcancel", True),
        ("submit", True),
        ("confirm", True),
        ("tap", False),
        ("load", False),
        ("animationend", False),
    ],
)
def test_which_events_the_official_rule_names(event: str, banned: bool) -> None:
    assert v003_refuses_event(event) is banned
