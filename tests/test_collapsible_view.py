"""collapsible-view, the official card built-in whose overflow opens in a half-screen view.

Lowering accepts it (no TPL002: that note is for the map and canvas previews only), the Render IR keeps it
as its own node type with the `slot="button"` child marked in props, and each backend renders
it: JSON as is, HTML clipped with the button slot kept in view, CardSpec as a Container with an
id and an Action.ToggleVisibility of it.
"""

from __future__ import annotations

import json
from typing import Any

from skillc.backends.cardspec_backend import render_card
from skillc.backends.html_backend import BASE_CSS, COLLAPSIBLE_CSS, render_html, render_html_fragment
from skillc.backends.json_backend import JsonBackend
from skillc.diagnostics import DiagnosticSink, Severity
from skillc.frontend.wxml import parse_wxml
from skillc.ir.component import CompiledComponent
from skillc.ir.evaluate import CardRenderer
from skillc.ir.lower import lower_document
from skillc.ir.render import RenderDocument, to_plain
from tests.test_backends_cardspec import assert_valid

FILE = "components/menu/index.wxml"
WXML = (
    '<collapsible-view class="box">'
    '<view wx:for="{{items}}" wx:key="id">{{item.name}}</view>'
    '<button slot="button" bindtap="onMore">全部 {{items.length}} 项</button>'
    "</collapsible-view>"
)
DATA = {"items": [{"id": "a", "name": "Latte"}, {"id": "b", "name": "Mocha"}]}


def _no_file(path: str) -> str | None:
    return None


def _render(wxml: str = WXML, data: dict[str, Any] | None = None) -> tuple[RenderDocument, DiagnosticSink]:
    sink = DiagnosticSink()
    doc = parse_wxml(wxml, file=FILE, sink=sink)
    template = lower_document(doc, load=_no_file, sink=sink)
    return CardRenderer(CompiledComponent("menu", template, None)).render(DATA if data is None else data), sink


def test_lowering_accepts_it_and_tpl002_is_for_map_and_canvas_only() -> None:
    _, sink = _render()
    assert list(sink) == []
    _, sink = _render('<map/><canvas type="2d"/><collapsible-view/>', {})
    assert [(d.code, d.severity) for d in sink] == [("TPL002", Severity.INFO), ("TPL002", Severity.INFO)]
    assert [d.message.split(" is shown")[0] for d in sink] == ["<map>", "<canvas>"]


def test_render_ir_keeps_the_node_type_and_marks_the_button_slot() -> None:
    doc, _ = _render()
    box = to_plain(doc)["root"]["children"][0]
    assert box["type"] == "collapsible-view"
    kids = box["children"]
    assert [k["type"] for k in kids] == ["view", "view", "button"]
    assert [k["props"] for k in kids] == [{}, {}, {"slot": "button"}]
    assert kids[2]["events"]["tap"]["handler"] == "onMore"
    assert JsonBackend().render(doc).count('"collapsible-view"') == 1


def test_html_clips_the_content_and_pins_the_button_slot() -> None:
    doc, _ = _render()
    html = render_html_fragment(doc)
    assert '<div data-uid="0" data-type="collapsible-view"\n>' in html
    assert 'type="button" data-bind-tap="onMore" data-dataset="{}" data-prop-slot="button"\n>全部 2 项</button' in html
    # The clip and the pinned button come from COLLAPSIBLE_CSS, by data-type / data-prop-slot only,
    # and only a document holding a collapsible-view carries it (other cards' HTML is unchanged).
    assert COLLAPSIBLE_CSS == (
        ":where([data-type=collapsible-view]){display:block;position:relative;overflow:hidden;max-height:100vw}\n"
        ":where([data-type=collapsible-view]>[data-prop-slot=button]){position:absolute;left:0;right:0;bottom:0}\n"
    )
    assert f"<style>\n{BASE_CSS}{COLLAPSIBLE_CSS}</style>" in render_html(doc)
    plain, _ = _render("<view>x</view>", {})
    assert f"<style>\n{BASE_CSS}</style>" in render_html(plain)


def test_cardspec_is_a_container_toggled_by_the_button_slot() -> None:
    doc, _ = _render()
    card = render_card(doc)
    assert_valid(card)
    assert card["body"] == [
        {
            "type": "Container",
            "id": "collapsible-0",
            "items": [
                {"type": "TextBlock", "text": "Latte", "wrap": True},
                {"type": "TextBlock", "text": "Mocha", "wrap": True},
            ],
        },
        {
            "type": "ActionSet",
            "actions": [{"type": "Action.ToggleVisibility", "title": "全部 2 项", "targetElements": ["collapsible-0"]}],
        },
    ]
    assert card["fallbackText"] == "Latte\nMocha\n全部 2 项"


def test_cardspec_without_a_button_slot_or_content() -> None:
    doc, _ = _render("<collapsible-view><text>Only</text></collapsible-view>", {})
    card = render_card(doc)
    assert_valid(card)
    assert card["body"] == [
        {"type": "Container", "id": "collapsible-0", "items": [{"type": "TextBlock", "text": "Only", "wrap": True}]}
    ]
    doc, _ = _render('<collapsible-view><button slot="button">More</button></collapsible-view>', {})
    assert render_card(doc)["body"] == []
    assert json.loads(JsonBackend().render(doc))["root"]["children"][0]["type"] == "collapsible-view"
