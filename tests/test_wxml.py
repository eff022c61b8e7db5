"""The WXML parser: AST goldens for each feature, one exact diagnostic per defect, deep and large input."""

from __future__ import annotations

import pytest
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.json import JSONSnapshotExtension

from skillc.diagnostics import DiagnosticSink, render_text
from skillc.frontend.wxml import MAX_DEPTH, MAX_RESTARTS, Element, Text, decode_entities, document_to_json, parse_wxml

from .conftest import COFFEE

FILE = "components/card/index.wxml"


@pytest.fixture
def json_snapshot(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    return snapshot.use_extension(JSONSnapshotExtension)


def parse(text: str) -> tuple[dict[str, object], DiagnosticSink]:
    sink = DiagnosticSink()
    doc = parse_wxml(text, file=FILE, sink=sink)
    return document_to_json(doc), sink


FEATURES = {
    "elements": '<view class="a">\n  <text>hi</text>\n  <image src="x.png"/>\n</view>\n',
    "attributes": '<view a="1" b=\'2\' hidden c = "{{x}}" d="a {{b}} c" data-order-id=\'{{o.id}}\'></view>',
    "text_mustaches": "<text>Hello, {{name}}! {{a}}{{b}}</text>",
    "mustache_quotes": "<text>{{ \"}}\" }} {{ '{{' }}</text><view title=\"{{ '}}' }}\" alt='{{ \"x\" }}'/>",
    "mustache_lt": '<text>{{a < b ? "x" : "y"}}</text><view hidden="{{a<b}}"/>',
    "entities": '<text>&lt;&gt;&amp;&quot;&apos;&nbsp;&#65;&#x42;&unknown;&#0;</text><view title="&lt;b&gt;"/>',
    "comments": "<view><!-- a <view> in a comment --><text>x</text></view>",
    "wxs": '<wxs module="m">var s = "</view>" + (1 < 2);\nmodule.exports = { s: s };</wxs>'
    '<wxs src="./m.wxs" module="n"/>',
    "multiline": '<view\n  class="a"\n  title="{{\n    x\n  }}"\n>\n  text\n</view>',
    "whitespace_between_tags": "<view>\n  <text> a </text>\n  <text>  </text>\n</view>",
    "close_tag_spaces": "<view >x</ view >",
    "directives": '<view wx:for="{{list}}" wx:key="id" bind:tap="on" catchtap="c">{{item}}</view>',
}


@pytest.mark.parametrize("name", sorted(FEATURES))
def test_feature_ast(name: str, json_snapshot: SnapshotAssertion) -> None:
    tree, sink = parse(FEATURES[name])
    assert [d.code for d in sink] == []
    assert tree == json_snapshot


@pytest.mark.parametrize("card", ["drink-list", "order-confirm", "payment-result"])
def test_coffee_card_ast(card: str, json_snapshot: SnapshotAssertion) -> None:
    sink = DiagnosticSink()
    file = f"components/{card}/index.wxml"
    doc = parse_wxml((COFFEE / file).read_text(encoding="utf-8"), file=file, sink=sink)
    assert list(sink) == []
    assert document_to_json(doc) == json_snapshot


# Each defect gives exactly one diagnostic, with this code, and the parser returns a tree.
DEFECTS = {
    "mismatched_close": ("<view>\n  <text>a</view>", "WXML002"),
    "stray_close": ("<view></view></text>", "WXML003"),
    "stray_close_inside": ("<view></text></view>", "WXML003"),
    "unclosed_at_eof": ("<view>\n  <text>a</text>", "WXML004"),
    "unterminated_quote": ('<view class="a>\n  <text>b</text>\n</view>', "WXML005"),
    "unterminated_comment": ("<view></view><!-- never closed <text/>", "WXML006"),
    "unterminated_mustache_text": ("<view>{{ name </view>", "WXML007"),
    "unterminated_mustache_attr": ('<view class="{{a">x</view>', "WXML007"),
    "lt_in_text": ("<view>a < b</view>", "WXML008"),
    "unquoted_value": ("<view class=abc>x</view>", "WXML009"),
    "missing_gt": ('<view class="a"</view>', "WXML010"),
    "bad_char_in_tag": ('<view class="a" = >x</view>', "WXML001"),
    "unclosed_wxs": ('<wxs module="m">var a = 1;', "WXML011"),
}


@pytest.mark.parametrize("name", sorted(DEFECTS))
def test_defect_has_one_precise_diagnostic(name: str, snapshot: SnapshotAssertion) -> None:
    text, code = DEFECTS[name]
    tree, sink = parse(text)
    assert [d.code for d in sink] == [code]
    assert render_text(sink, {FILE: text}) == snapshot
    assert isinstance(tree["children"], list)


def test_mismatched_close_names_the_open_tag() -> None:
    _, sink = parse("<view>\n  <text>a</view>")
    (diag,) = list(sink)
    assert diag.message == "close tag </view> does not match <text> opened at line 2, column 3"
    assert diag.span is not None and (diag.span.line, diag.span.column, diag.span.end_column) == (2, 10, 17)


def test_mismatched_close_recovers_the_tree() -> None:
    sink = DiagnosticSink()
    doc = parse_wxml("<view><text>a</view><image/>", file=FILE, sink=sink)
    assert [type(n).__name__ for n in doc.children] == ["Element", "Element"]
    first, second = doc.children
    assert isinstance(first, Element) and isinstance(second, Element)
    assert (first.tag, second.tag) == ("view", "image")
    assert isinstance(first.children[0], Element) and first.children[0].tag == "text"


def test_unterminated_quote_at_eof_also_leaves_the_element_open() -> None:
    _, sink = parse('<view class="a')
    assert [(d.code, d.span.column if d.span else 0) for d in sink] == [("WXML005", 13), ("WXML004", 1)]


def test_unquoted_attribute_keeps_value() -> None:
    sink = DiagnosticSink()
    doc = parse_wxml("<view class=abc>x</view>", file=FILE, sink=sink)
    el = doc.children[0]
    assert isinstance(el, Element) and el.attributes[0].value == ("abc",)


def test_positions_of_attribute_name_and_value() -> None:
    sink = DiagnosticSink()
    doc = parse_wxml('<view\n   class="a {{b}}"/>', file=FILE, sink=sink)
    el = doc.children[0]
    assert isinstance(el, Element)
    attr = el.attributes[0]
    assert attr.name_loc.to_json() == "2:4-2:9"
    assert attr.value_loc is not None and attr.value_loc.to_json() == "2:10-2:19"
    mustache = attr.value[1] if attr.value else None
    assert mustache is not None and not isinstance(mustache, str)
    assert (mustache.loc.to_json(), mustache.source_column) == ("2:13-2:18", 15)


def test_entities() -> None:
    assert decode_entities("&lt;a&gt; &amp;amp; &#20320;&#x597D; &nbsp;&copy;") == "<a> &amp; 你好 \u00a0&copy;"


def test_deep_nesting_is_a_diagnostic_not_a_recursion_error() -> None:
    text = "<view>" * 2000 + "x" + "</view>" * 2000
    tree, sink = parse(text)
    assert [d.code for d in sink] == ["WXML012"]
    depth, node = 0, tree["children"][0]  # type: ignore[index]
    while isinstance(node, dict) and node.get("children"):
        depth += 1
        node = node["children"][0]  # type: ignore[index]
    assert depth == MAX_DEPTH - 1


def test_one_megabyte_template_parses() -> None:
    unit = (COFFEE / "components/drink-list/index.wxml").read_text(encoding="utf-8")
    text = unit * (1_000_000 // len(unit.encode()) + 1)
    sink = DiagnosticSink()
    doc = parse_wxml(text, file=FILE, sink=sink)
    assert list(sink) == []
    assert sum(isinstance(n, Element) for n in doc.children) == text.count('<view class="card">')


def test_many_errors_stop_with_a_diagnostic() -> None:
    text = '<view a="1" = >' * 150
    _, sink = parse(text)
    codes = [d.code for d in sink]
    assert codes.count("WXML013") == 1
    assert codes.count("WXML001") == MAX_RESTARTS + 1  # the first run, then one per restart


def test_text_keeps_whitespace_inside_text() -> None:
    sink = DiagnosticSink()
    doc = parse_wxml("<text>  a  {{b}}  </text>", file=FILE, sink=sink)
    el = doc.children[0]
    assert isinstance(el, Element)
    text = el.children[0]
    assert isinstance(text, Text)
    assert text.parts[0] == "  a  " and text.parts[2] == "  "
