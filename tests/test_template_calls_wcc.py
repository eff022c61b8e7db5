"""Calls in {{ }} across a whole card, against WeChat's compiler (wcc).

wcc compiles a call and evaluates it to undefined (a card has no WXS functions), so the card
renders with the call's part empty. skillc must agree: EXPR006 is a warning at the call's span,
and the Render IR holds what wcc's virtual tree holds, in text, in lone and mixed attributes, in
`class`, in wx:if / wx:elif, in wx:for, in ternaries, `||`, `+` and `.length` of a call result.
Every case is compiled by wcc in one node process and rendered once.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from skillc.diagnostics import DiagnosticSink, Severity
from skillc.frontend.wxml import parse_wxml
from skillc.frontend.wxss import parse_wxss
from skillc.ir.component import CompiledComponent
from skillc.ir.evaluate import CardRenderer
from skillc.ir.lower import lower_document
from skillc.ir.render import TEXT, RenderNode
from skillc.ir.styles import compile_stylesheet
from tests.expr_expected import WCC_RUNNER_HEAD, encode

pytestmark = pytest.mark.node

FILE = "components/card/index.wxml"
DATA: dict[str, Any] = {
    "s": "abc",
    "price": 12.5,
    "items": [{"name": "latte", "tags": ["hot", "milk", "new"]}, {"name": "mocha", "tags": []}],
    "t": True,
    "n": 0,
}
# Classes are not props in the Render IR; each one sets a distinct style, so the resolved style
# shows which class tokens an element ended up with.
WXSS = ".a { color: #111111; } .b { font-size: 21px; } .aundefined { color: #999999; } .undefined { opacity: 0.5; }"

CASES: dict[str, str] = {
    "text": "<view>{{s.slice(1)}}</view>",
    "text_mixed": "<view>[{{price.toFixed(1)}}] {{s}}</view>",
    "inside_text_tag": "<text>x{{s.toUpperCase()}}y</text>",
    "lone_attr": '<view title="{{s.slice(1)}}">t</view>',
    "mixed_attr": '<view title="a {{s.slice(1)}} b">t</view>',
    "image_src": "<image src=\"{{s.concat('.png')}}\"/>",
    "class_mixed": '<view class="a {{s.f()}}">c</view>',
    "class_glued": '<view class="a{{s.f()}}">c</view>',
    "class_two": '<view class="a {{s.f()}} b">c</view>',
    "class_lone": '<view class="{{s.f()}}">c</view>',
    "if_call": "<view wx:if=\"{{s.includes('a')}}\">if</view><view wx:else>else</view>",
    "elif_call": '<view wx:if="{{n}}">1</view><view wx:elif="{{s.f()}}">2</view><view wx:else>3</view>',
    "if_not_call": '<view wx:if="{{!s.f()}}">shown</view>',
    "for_call": '<view wx:for="{{items.slice(0, 1)}}" wx:key="name">F{{item.name}}</view><view>after</view>',
    "for_item_call": '<view wx:for="{{items}}" wx:key="name">{{item.name}}:{{item.tags.slice(0, 2)}}</view>',
    "for_item_join": '<view wx:for="{{items}}" wx:key="name">{{item.tags.join(\'/\')}}|{{item.tags}}</view>',
    "ternary": "<view>{{t ? s.slice(1) : 'no'}}|{{n ? 'yes' : s.f()}}</view>",
    "or_default": "<view>{{s.f() || 'default'}}</view>",
    "and": "<view>{{s && s.f()}}</view>",
    "concat": "<view>{{'p' + s.f()}}</view>",
    "arith": "<view>{{price.toFixed(1) * 2}}</view>",
    "length_of_call": "<view>{{s.slice(1).length}}|{{items.slice(0).length}}</view>",
    "index_by_call": "<view>{{items[s.f()]}}</view>",
    "call_of_call": "<view>{{s.f()()}}</view>",
    "compare": "<view>{{s.f() == null}} {{s.f() === undefined}}</view>",
    "hidden_attr": '<view hidden="{{s.f()}}">visible</view>',
}


_RUNNER = (
    WCC_RUNNER_HEAD
    + r"""
function tree(n) {
  if (typeof n === 'string') return n;
  const attr = {};
  for (const k of Object.keys(n.attr || {})) attr[k] = enc(n.attr[k]);
  return { tag: n.tag, attr, children: (n.children || []).map(tree) };
}
const quiet = { log() {}, warn() {}, error() {}, info() {} };
const ctx = vm.createContext({ console: quiet, __wxAppCode__: {}, __vd_version_info__: {} });
ctx.window = ctx;
ctx.__code = wxmlToJs(job.root);
vm.runInContext('var __gwx = new Function("global", __code + ";return $gwx;")({});', ctx);
const out = {};
ctx.__data = job.data;
for (const name of job.cases) {
  ctx.__name = name + '.wxml';
  out[name] = tree(vm.runInContext('__gwx(__name)(JSON.parse(__data))', ctx));
}
process.stdout.write(JSON.stringify(out));
"""
)


@pytest.fixture(scope="module")
def wcc_trees(node_bin: str, peers_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    compiler = peers_dir / "miniprogram-compiler"
    assert (compiler / "bin" / "linux" / "wcc").exists(), "miniprogram-compiler is missing its wcc binary"
    root = tmp_path_factory.mktemp("wcc-calls")
    for name, wxml in CASES.items():
        (root / f"{name}.wxml").write_text(wxml, encoding="utf-8")
    job = root / "job.json"
    job.write_text(
        json.dumps({"compiler": str(compiler), "root": str(root), "cases": list(CASES), "data": json.dumps(DATA)}),
        encoding="utf-8",
    )
    runner = root / "runner.js"
    runner.write_text(_RUNNER, encoding="utf-8")
    proc = subprocess.run([node_bin, str(runner), str(job)], capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    trees: dict[str, Any] = json.loads(proc.stdout)
    return trees


def _no_file(path: str) -> str | None:
    return None


def _skillc(wxml: str) -> tuple[RenderNode, DiagnosticSink]:
    sink = DiagnosticSink()
    doc = parse_wxml(wxml, file=FILE, sink=sink)
    template = lower_document(doc, load=_no_file, sink=sink)
    sheet = compile_stylesheet(parse_wxss(WXSS, file="components/card/index.wxss", sink=DiagnosticSink()))
    renderer = CardRenderer(CompiledComponent("card", template, sheet))
    return renderer.render(DATA).root, sink


def _classes_from_style(style: dict[str, str]) -> list[str]:
    marks = {"a": ("color", "#111111"), "b": ("font-size", "21px"), "aundefined": ("color", "#999999")}
    found = [name for name, (prop, value) in marks.items() if style.get(prop) == value]
    return found + (["undefined"] if style.get("opacity") == "0.5" else [])


def _ours(node: RenderNode) -> list[dict[str, Any]]:
    """Elements in document order: tag, bound props (title, src, hidden), classes, own text."""
    out: list[dict[str, Any]] = []
    for child in node.children or []:
        if child.type == TEXT:
            continue
        kids = child.children or []
        props = {k: encode(v) for k, v in child.props.items() if k in ("title", "src", "hidden")}
        out.append(
            {
                "tag": child.type,
                "props": props,
                "classes": _classes_from_style(dict(child.style)),
                "text": "".join(k.text or "" for k in kids if k.type == TEXT),
            }
        )
        out.extend(_ours(child))
    return out


def _theirs(node: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for child in node["children"]:
        if isinstance(child, str):
            continue
        attr = child["attr"]
        # The Render IR leaves out an attribute whose value is undefined, as a host would.
        props = {k: v for k, v in attr.items() if k in ("title", "src", "hidden") and v != ["u"]}
        classes: list[str] = []
        if "class" in attr:
            tagged = attr["class"]
            text = tagged[1] if tagged[0] == "s" else ""
            classes = [c for c in ("a", "b", "aundefined", "undefined") if c in text.split()]
        out.append(
            {
                "tag": child["tag"].removeprefix("wx-"),
                "props": props,
                "classes": classes,
                "text": "".join(c for c in child["children"] if isinstance(c, str)),
            }
        )
        out.extend(_theirs(child))
    return out


@pytest.mark.parametrize("name", list(CASES))
def test_card_with_calls_renders_what_wcc_renders(name: str, wcc_trees: dict[str, Any]) -> None:
    root, sink = _skillc(CASES[name])
    assert _ours(root) == _theirs(wcc_trees[name])
    codes = {(d.code, d.severity) for d in sink if d.code != "TPL010"}
    assert codes == {("EXPR006", Severity.WARNING)}
    assert not sink.has_errors


def test_the_warning_points_at_the_call() -> None:
    _, sink = _skillc('<view class="a {{item.tags.slice(0, 2)}}">\n  {{price.toFixed(1)}}</view>')
    diags = [d for d in sink if d.code == "EXPR006"]
    assert [(d.message, d.severity) for d in diags] == [
        ("function calls are not supported in WXML expressions; WeChat renders them as empty", Severity.WARNING)
    ] * 2
    spans = [(d.span.line, d.span.column, d.span.end_line, d.span.end_column) for d in diags if d.span]
    # `item.tags.slice(0, 2)` on line 1 from column 18; `price.toFixed(1)` on line 2 from column 5.
    assert spans == [(1, 18, 1, 39), (2, 5, 2, 21)]
    assert all(d.file == FILE for d in diags)
