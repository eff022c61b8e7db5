"""The html backend's accessibility: from WXML through the real frontend and evaluator to the exact
attributes of each element (roles, tabindex, names, image alt, aria-* passed through)."""

from __future__ import annotations

from typing import Any

from skillc.backends.html_backend import render_html_fragment
from skillc.diagnostics import DiagnosticSink
from skillc.frontend.wxml import parse_wxml
from skillc.ir.component import CompiledComponent
from skillc.ir.evaluate import CardRenderer
from skillc.ir.lower import lower_document
from tests.test_backends_html import by_uid, parse


def render(wxml: str, data: dict[str, Any] | None = None) -> str:
    """The html fragment of a one-file card, through the real frontend and evaluator."""
    sink = DiagnosticSink()
    template = lower_document(parse_wxml(wxml, file="t.wxml", sink=sink), load=lambda _: None, sink=sink)
    assert list(sink) == []  # aria-* and alt are attributes the frontend takes as they are
    return render_html_fragment(CardRenderer(CompiledComponent("t", template, None)).render(data or {}))


def attrs(wxml: str, data: dict[str, Any] | None = None) -> dict[str, dict[str, str | None]]:
    """Every element's attributes by uid, minus the ids themselves and the style."""
    parsed = parse(render(wxml, data))
    out = {}
    for element in parsed.elements:
        uid = element.attrs["data-uid"]
        assert uid is not None
        out[uid] = {k: v for k, v in element.attrs.items() if k not in ("data-uid", "style")}
    assert by_uid(parsed, "root")
    return out


def test_a_tappable_view_is_a_named_focusable_button() -> None:
    got = attrs('<view bindtap="onPick" data-id="d01"><text>拿铁 Latte</text><text> ¥28 </text></view>')
    assert got["0"] == {
        "data-type": "view",
        "role": "button",
        "tabindex": "0",
        "aria-label": "拿铁 Latte ¥28",  # its text runs, whitespace collapsed, joined by spaces
        "data-bind-tap": "onPick",
        "data-dataset": '{"id":"d01"}',
    }
    assert "role" not in got["0.0"] and "tabindex" not in got["0.0"]  # only the node with the handler


def test_catchtap_and_the_wxml_label_and_role_win() -> None:
    got = attrs('<view catchtap="go" aria-label="{{label}}" aria-role="link">Open</view>', {"label": "Open the menu"})
    assert got["0"] == {
        "data-type": "view",
        "role": "link",
        "tabindex": "0",
        "aria-label": "Open the menu",  # the author's, not the text's
        "data-catch-tap": "go",
        "data-dataset": "{}",
    }


def test_an_empty_wxml_label_leaves_the_text_as_the_name() -> None:
    got = attrs('<view bindtap="go" aria-label="{{label}}">Open</view>', {"label": " "})
    assert got["0"]["aria-label"] == "Open"
    html = render('<view bindtap="go" aria-label="{{label}}">Open</view>', {"label": ""})
    assert html.count("aria-label=") == 1  # one attribute, not an empty one beside it


def test_a_button_is_a_button_already() -> None:
    got = attrs('<button bindtap="pay">Pay</button>')
    assert got["0"] == {"data-type": "button", "type": "button", "data-bind-tap": "pay", "data-dataset": "{}"}


def test_images_are_named_by_wxml_then_by_the_text_near_them() -> None:
    got = attrs(
        "<view>"
        '<view bindtap="pick"><text>Hot</text><image src="a.png"/><text>拿铁 Latte</text></view>'
        '<view bindtap="pick"><text>Oat Latte</text><image src="b.png"/></view>'
        '<image src="c.png" alt="Our café"/>'
        '<image src="d.png" aria-label="{{n}} stars"/>'
        '<image src="e.png" aria-hidden="true"/>'
        '<image src="f.png" aria-role="presentation"/>'
        '<view><image src="g.png"/><text>Shop front</text></view>'
        "</view>",
        {"n": 5},
    )
    alt = {uid: a.get("alt") for uid, a in got.items() if a["data-type"] == "image"}
    assert alt == {
        "0.0.1": "拿铁 Latte",  # the first text after it in its tappable item
        "0.1.1": "Oat Latte",  # else the last before it
        "0.2": "Our café",  # WXML alt
        "0.3": "5 stars",  # WXML aria-label, bound
        "0.4": "",  # decorative by WXML's own marking, and only then empty
        "0.5": "",
        "0.6.0": "Shop front",  # in no tappable item: its parent's text
    }
    assert got["0.3"]["aria-label"] == "5 stars" and got["0.4"]["aria-hidden"] == "true"
    assert got["0.5"]["role"] == "presentation"
    assert not any(k.startswith("data-prop-a") for a in got.values() for k in a)  # no data-prop-alt / -aria-*


def test_an_image_with_no_text_anywhere_still_has_a_name() -> None:
    assert attrs('<view><image src="a.png"/></view>')["0.0"]["alt"] == "image"


def test_aria_attributes_pass_through_with_their_values_as_text() -> None:
    got = attrs(
        '<view aria-expanded="{{open}}" aria-level="{{2}}" aria-busy aria-describedby="note" aria-Bad="x">'
        '<text aria-live="polite">hi</text></view>',
        {"open": False},
    )
    assert got["0"] == {
        "data-type": "view",
        "aria-busy": "true",  # written bare
        "aria-describedby": "note",
        "aria-expanded": "false",  # a bound boolean
        "aria-level": "2",  # a bound number
        "data-prop-aria-bad": "x",  # not an ARIA name: stays data (WXML lower-cases nothing)
    }
    assert got["0.0"]["aria-live"] == "polite"


def test_hostile_labels_stay_inside_their_attribute() -> None:
    bad = '"><img src=x onerror=alert(1)>'
    got = attrs(
        '<view bindtap="t" aria-describedby="{{bad}}"><image src="a.png"/><text>{{bad}}</text></view>', {"bad": bad}
    )
    assert got["0"]["aria-label"] == bad and got["0"]["aria-describedby"] == bad
    assert got["0.0"]["alt"] == bad
    assert [a["data-type"] for a in got.values()] == ["view", "view", "image", "text"]  # no injected element
