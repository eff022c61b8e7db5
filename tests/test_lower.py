"""Lowering WXML to the template IR: IR goldens per feature, card rules, import/include, `skillc check`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.json import JSONSnapshotExtension

from skillc.cli import main
from skillc.diagnostics import DiagnosticSink, render_text
from skillc.frontend.package import load_skill
from skillc.frontend.wxml import parse_wxml
from skillc.ir.lower import dataset_key, lower_component, lower_document
from skillc.ir.template import Element, For, IfChain, Template, TemplateCall, node_json

from .conftest import COFFEE, FIXTURES, ROOT

FILE = "components/card/index.wxml"
BROKEN = FIXTURES / "broken-templates"


@pytest.fixture
def json_snapshot(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    return snapshot.use_extension(JSONSnapshotExtension)


def lower(text: str, files: dict[str, str] | None = None) -> tuple[Template, DiagnosticSink]:
    sink = DiagnosticSink()
    sources = {FILE: text, **(files or {})}
    doc = parse_wxml(text, file=FILE, sink=sink)
    return lower_document(doc, load=sources.get, sink=sink), sink


FEATURES: dict[str, tuple[str, dict[str, str]]] = {
    "element_attrs": (
        '<view class="a {{b}}" style="color: red" hidden="{{h}}" hover-class="pressed" data-order-id="{{o.id}}" '
        'data-kind="x" disabled>t</view>',
        {},
    ),
    "events": (
        '<view bindtap="a" bind:tap="b" catchtap="c" catch:tap="{{handler}}"><image src="x" bindload="l" '
        'binderror="e"/></view>',
        {},
    ),
    "if_chain": (
        '<view wx:if="{{a}}">1</view>\n<!-- c -->\n<view wx:elif="{{b}}">2</view>\n'
        "<view wx:else>3</view><text>after</text>",
        {},
    ),
    "for_key": (
        '<view wx:for="{{list}}" wx:key="id">{{index}}: {{item.name}}</view>'
        '<text wx:for="{{tags}}" wx:for-item="tag" wx:for-index="i" wx:key="*this">{{tag}}</text>',
        {},
    ),
    "for_with_if": ('<view wx:for="{{list}}" wx:key="id" wx:if="{{item.show}}">{{item.name}}</view>', {}),
    "block": ('<block wx:if="{{ok}}"><text>a</text><text>b</text></block><block><text>c</text></block>', {}),
    "text_parts": ("<text>¥{{price}} × {{qty}} = {{price * qty}}</text>", {}),
    "template_static": (
        '<template name="row"><text>{{label}}: {{value}}</text></template>'
        '<view><template is="row" data="{{label: \'a\', value}}"/></view>',
        {},
    ),
    "template_computed": (
        '<template name="a"><text>A</text></template><template name="b"><text>B</text></template>'
        '<template is="{{kind}}" data="{{...item}}"/>',
        {},
    ),
    "template_recursive": (
        '<template name="tree"><text>{{label}}</text><block wx:for="{{children}}" wx:key="id">'
        '<template is="tree" data="{{...item}}"/></block></template><template is="tree" data="{{...root}}"/>',
        {},
    ),
    "import": (
        '<import src="./rows.wxml"/><template is="row" data="{{x}}"/>',
        {"components/card/rows.wxml": '<template name="row"><text>{{x}}</text></template>'},
    ),
    "include": (
        '<view><text>before</text><include src="/shared/header.wxml"/><text>after</text></view>',
        {
            "shared/header.wxml": '<template name="t"><text/></template>'
            '<view class="header">{{title}}</view><text>h</text>'
        },
    ),
}


@pytest.mark.parametrize("name", sorted(FEATURES))
def test_feature_ir(name: str, json_snapshot: SnapshotAssertion) -> None:
    text, files = FEATURES[name]
    template, sink = lower(text, files)
    # <import>/<include> lower fully; TPL020 (the official gate refuses them) is tested in
    # tests/test_official_rules_wxml.py.
    assert [d.code for d in sink if d.code != "TPL020"] == []
    assert template.to_json() == json_snapshot


@pytest.mark.parametrize("card", ["drink-list", "order-confirm", "payment-result"])
def test_coffee_card_ir(card: str, json_snapshot: SnapshotAssertion) -> None:
    sink = DiagnosticSink()
    pkg = load_skill(COFFEE, sink)
    assert pkg is not None
    template = lower_component(pkg, card, sink)
    assert template is not None and list(sink) == []
    assert template.to_json() == json_snapshot


# Each rejected feature: exactly one diagnostic with this code (the golden holds its text).
REJECTED: dict[str, tuple[str, str, dict[str, str]]] = {
    "custom_tag": ("<view><price-tag/></view>", "TPL001", {}),
    "input_tag": ("<input value='x'/>", "TPL001", {}),
    "map_tag": ("<map latitude='1'/>", "TPL002", {}),
    "wxs": ('<wxs module="m">module.exports = {}</wxs><view/>', "TPL003", {}),
    "slot": ("<view><slot/></view>", "TPL004", {}),
    "scroll_view_no_x": ("<scroll-view><text>a</text></scroll-view>", "TPL005", {}),
    "scroll_view_x_false": ('<scroll-view scroll-x="{{false}}"/>', "TPL005", {}),
    "scroll_view_y": ('<scroll-view scroll-x scroll-y="{{true}}"/>', "TPL006", {}),
    "open_type": ('<button open-type="getPhoneNumber">x</button>', "TPL007", {}),
    "bindinput": ('<view bindinput="i"/>', "TPL008", {}),
    "load_on_view": ('<view bindload="l"/>', "TPL008", {}),
    "capture_bind": ('<view capture-bind:tap="t"/>', "TPL008", {}),
    "longpress": ('<view bindlongpress="t"/>', "TPL008", {}),
    "for_without_key": ('<view wx:for="{{list}}">{{item}}</view>', "TPL010", {}),
    "else_alone": ("<view wx:else>x</view>", "TPL011", {}),
    "elif_after_else": ('<view wx:if="{{a}}"/><view wx:else/><view wx:elif="{{b}}"/>', "TPL011", {}),
    "unknown_directive": ('<view wx:show="{{a}}"/>', "TPL012", {}),
    "key_expression": ('<view wx:for="{{l}}" wx:key="{{item.id}}"/>', "TPL012", {}),
    "bad_for_item": ('<view wx:for="{{l}}" wx:key="id" wx:for-item="a.b"/>', "TPL012", {}),
    "missing_include": ('<include src="./nope.wxml"/>', "TPL013", {}),
    "include_outside": ('<include src="../../../x.wxml"/>', "TPL013", {}),
    "import_computed_src": ('<import src="{{x}}"/>', "TPL013", {}),
    "include_cycle": (
        '<include src="./a.wxml"/>',
        "TPL014",
        {"components/card/a.wxml": '<include src="./b.wxml"/>', "components/card/b.wxml": '<include src="./a.wxml"/>'},
    ),
    "include_self": ('<include src="./index.wxml"/>', "TPL014", {}),
    "unknown_template": ('<template is="nope"/>', "TPL015", {}),
    "import_not_transitive": (
        '<import src="./a.wxml"/><template is="fromB"/>',
        "TPL015",
        {
            "components/card/a.wxml": '<import src="./b.wxml"/><template name="fromA"/>',
            "components/card/b.wxml": '<template name="fromB"><text/></template>',
        },
    ),
    "template_no_name": ("<template><text/></template>", "TPL016", {}),
    "template_data_mixed": ('<template name="t"/><template is="t" data="a{{b}}"/>', "TPL016", {}),
    "template_duplicate": ('<template name="t"/><template name="t"/>', "TPL016", {}),
    "if_plain_string": ('<view wx:if="false"/>', "TPL017", {}),
    "function_call": ("<text>{{format(price)}}</text>", "EXPR006", {}),
}


@pytest.mark.parametrize("name", sorted(REJECTED))
def test_rejected_feature(name: str, snapshot: SnapshotAssertion) -> None:
    text, code, files = REJECTED[name]
    _, sink = lower(text, files)
    assert [d.code for d in sink if d.code != "TPL020"] == [code]
    assert render_text(sink, {FILE: text, **files}) == snapshot


def test_dataset_keys() -> None:
    assert dataset_key("data-order-id") == "orderId"
    assert dataset_key("data-id") == "id"
    assert dataset_key("data-OrderId") == "orderid"
    assert dataset_key("data-a-b-c") == "aBC"


def test_event_normalisation() -> None:
    template, _ = lower('<view bind:tap="a" catchtap="b" catch:tap="{{h}}"/>')
    el = template.root[0]
    events = getattr(el, "events", ())
    assert [(e.name, e.catch, e.attribute) for e in events] == [
        ("tap", False, "bind:tap"),
        ("tap", True, "catchtap"),
        ("tap", True, "catch:tap"),
    ]
    assert [e.handler for e in events][:2] == ["a", "b"]


def test_paths_are_positions() -> None:
    template, _ = lower('<view><text>a</text><view wx:if="{{x}}"/><view wx:for="{{l}}" wx:key="id"/></view>')
    root = template.root[0]
    children = getattr(root, "children", [])
    assert [c.path for c in children] == ["0.0", "0.1", "0.2"]
    chain, loop = children[1], children[2]
    assert isinstance(chain, IfChain) and chain.branches[0].node.path == "0.1.0"
    assert isinstance(loop, For) and loop.body.path == "0.2.0"


def test_include_is_numbered_in_place() -> None:
    files = {"components/card/h.wxml": "<text>1</text><text>2</text>"}
    template, _ = lower('<view><text>0</text><include src="h.wxml"/><text>3</text></view>', files)
    children = getattr(template.root[0], "children", [])
    assert [c.path for c in children] == ["0.0", "0.1", "0.2", "0.3"]
    assert template.dependencies == ["components/card/h.wxml"]


def test_recursive_template_is_resolved_at_render_time() -> None:
    text, files = FEATURES["template_recursive"]
    template, _ = lower(text, files)
    call = template.root[0]
    assert isinstance(call, TemplateCall) and call.body is not None
    assert "tree" in template.templates


def test_template_defect_reported_once_when_expanded_twice() -> None:
    _, sink = lower('<template name="t"><input/></template><template is="t"/><template is="t"/>')
    assert [d.code for d in sink] == ["TPL001"]


def test_deep_template_is_a_diagnostic() -> None:
    text = "<view>" * 2000 + "</view>" * 2000
    template, sink = lower(text)
    assert [d.code for d in sink] == ["WXML012"]
    assert template.to_json()["version"] == 1


def test_coffee_check_is_clean() -> None:
    result = CliRunner().invoke(main, ["check", str(COFFEE)])
    assert result.exit_code == 0
    assert result.output.endswith("0 errors, 0 warnings (ok)\n")


def test_broken_templates_one_diagnostic_per_component(
    snapshot: SnapshotAssertion, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)  # the golden shows the path as given on the command line
    result = CliRunner().invoke(main, ["check", "tests/fixtures/broken-templates"])
    assert result.exit_code == 1
    components = sorted(p.name for p in (BROKEN / "components").iterdir())
    assert len(components) >= 12
    # TPL020 (the official gate refuses <import>/<include>) comes on top of each import fixture's own defect.
    lines = [
        line
        for line in result.output.splitlines()
        if (": error[" in line or ": warning[" in line) and "[TPL020]" not in line
    ]
    per_component = [line.split("/components/")[1].split("/")[0] for line in lines]
    assert sorted(per_component) == components  # exactly one each
    assert result.output == snapshot


def test_check_json_reports_template_codes() -> None:
    result = CliRunner().invoke(main, ["check", "--format", "json", str(BROKEN)])
    assert "TPL006" in result.output and "WXML002" in result.output


def test_lower_component_without_wxml_is_none(tmp_path: Path) -> None:
    sink = DiagnosticSink()
    pkg = load_skill(COFFEE, sink)
    assert pkg is not None
    assert lower_component(pkg, "no-such-card", sink) is None


def _calls(nodes: Sequence[object]) -> list[TemplateCall]:
    """Every TemplateCall under ``nodes``, in document order."""
    found: list[TemplateCall] = []
    pending: list[object] = list(reversed(nodes))
    while pending:
        node = pending.pop()
        if isinstance(node, TemplateCall):
            found.append(node)
        for child in reversed(getattr(node, "children", None) or []):
            pending.append(child)
    return found


def test_a_template_body_is_lowered_per_depth_and_copied_per_call() -> None:
    # A body is lowered once per context and copied to each call: a call nested deep enough to
    # cross the depth limit must still get its own, cut-off body, and each call its own paths
    # and its own nodes.
    body = '<view class="a"><view><text>{{x}}</text></view></view>'
    deep = "<view>" * 198 + '<template is="t"/>' + "</view>" * 198
    text = f'<template name="t">{body}</template><template is="t"/><template is="t"/>{deep}'
    template, sink = lower(text)
    first, second, nested = _calls(template.root)
    assert first.path == "0" and second.path == "1"
    assert [n.path for n in first.body or []] == ["0.0"] and [n.path for n in second.body or []] == ["1.0"]
    assert first.body is not None and second.body is not None
    assert first.body[0] is not second.body[0] and first.body[0] is not template.templates["t"].children[0]
    assert first.body[0].attrs is not second.body[0].attrs  # type: ignore[union-attr]
    shallow = [n["element"] for n in _elements(first.body)]
    cut = [n["element"] for n in _elements(nested.body or [])]
    assert shallow == ["view", "view", "text"]
    assert cut != shallow
    assert [d.code for d in sink].count("TPL018") == 1


def _elements(nodes: Sequence[object]) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    pending: list[object] = list(reversed(nodes))
    while pending:
        node = pending.pop()
        if isinstance(node, Element):
            out.append(node_json(node))
            pending.extend(reversed(node.children))
    return out
