"""TPL codes against wcc: what wcc compiles is a warning and renders as wcc renders it; what wcc
refuses to compile stays an error.

The accepted cases render in one node process (as in test_template_calls_wcc.py); each refused
case is compiled alone, since wcc stops at the first error.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from skillc.diagnostics import DiagnosticSink, Severity
from skillc.frontend.wxml import parse_wxml
from skillc.ir.component import CompiledComponent
from skillc.ir.evaluate import CardRenderer
from skillc.ir.lower import lower_document
from skillc.ir.render import RenderNode
from tests.test_template_calls_wcc import _RUNNER, _ours, _theirs

pytestmark = pytest.mark.node

FILE = "components/card/index.wxml"
DATA: dict[str, Any] = {"list": [1, 2], "x": "data-x", "a": "data-a", "n": "nope", "q": "data-q"}
W, E = Severity.WARNING, Severity.ERROR

# name -> (wxml, the codes skillc reports with their severity)
ACCEPTED: dict[str, tuple[str, set[tuple[str, Severity]]]] = {
    "duplicate_template_last_wins": (
        '<template name="t"><view>first</view></template><template name="t"><view>last</view></template>'
        '<template is="t"/>',
        {("TPL016", W)},
    ),
    "call_before_both_definitions": (
        '<template is="t"/><template name="t"><view>1</view></template><template name="t"><view>2</view></template>',
        {("TPL016", W)},
    ),
    "unknown_static_template": ('<template is="nope"/><view>after</view>', {("TPL015", W)}),
    "unknown_dynamic_template": ('<template is="{{n}}"/><view>after</view>', {("RND002", W)}),
    "template_without_name_or_is": ("<template><view>t</view></template><view>after</view>", {("TPL016", W)}),
    "data_mustache_and_text": (
        '<template name="t"><view>[{{q}}]</view></template><template is="t" data="{{q: 1}} x"/>',
        {("TPL016", W)},
    ),
    "missing_include": ('<include src="./nope.wxml"/><view>after</view>', {("TPL013", W), ("TPL020", E)}),
    "missing_import": ('<import src="./nope.wxml"/><view>after</view>', {("TPL013", W), ("TPL020", E)}),
    "bound_include_src": ('<include src="{{x}}"/><view>after</view>', {("TPL013", W), ("TPL020", E)}),
    "for_item_mustache": (
        '<view wx:for="{{list}}" wx:for-item="{{x}}" wx:key="*this">[{{item}}|{{x}}]</view>',
        {("TPL012", W)},
    ),
    "for_item_with_space": (
        '<view wx:for="{{list}}" wx:for-item="a b" wx:key="*this">[{{item}}|{{a}}]</view>',
        {("TPL012", W)},
    ),
    "for_index_digit": (
        '<view wx:for="{{list}}" wx:for-index="1i" wx:key="*this">[{{index}}]</view>',
        {("TPL012", W)},
    ),
    "key_expression": ('<view wx:for="{{list}}" wx:key="{{item}}">{{item}}</view>', {("TPL012", W)}),
    "unknown_directive": ('<view wx:show="{{x}}">shown</view>', {("TPL012", W)}),
    # escapes wcc takes in an attribute value: \t and \\ decode, an unknown one loses its backslash
    "attr_escape_tab": ("<view title=\"{{'a\\tb'}}\">t</view>", {("EXPR013", W)}),
    "attr_escape_backslash": ("<view title=\"{{'a\\\\b'}}\">t</view>", {("EXPR013", W)}),
    "attr_escape_unknown": ("<view title=\"{{'a\\qb'}}\">t</view>", {("EXPR013", W)}),
    "text_escape_quote": ("<view>{{'it\\'s' ? 1 : 2}}</view>", {("EXPR013", W)}),
}

# name -> (wxml, the one error skillc reports)
REFUSED: dict[str, tuple[str, str]] = {
    "elif_alone": ('<view wx:elif="{{a}}">e</view>', "TPL011"),
    "else_alone": ("<view wx:else>e</view>", "TPL011"),
    "data_without_mustache": ('<template name="t"><view/></template><template is="t" data="x"/>', "TPL016"),
    "data_two_mustaches": ('<template name="t"><view/></template><template is="t" data="{{a: 1}}{{b: 2}}"/>', "TPL016"),
    "attr_escape_quote": ("<view title=\"{{'it\\'s'}}\"/>", "EXPR013"),
    "attr_escape_double_quote": ('<view title=\'{{"a\\"b"}}\'/>', "EXPR013"),
    "attr_escape_newline": ("<view title=\"{{'a\\nb'}}\"/>", "EXPR013"),
    "object_closing_braces": ("<view>{{ {a: {b: 1}} }}</view>", "EXPR001"),  # WXML ends it at the first }}
}

_REJECTS = r"""
const fs = require('fs'), path = require('path');
const job = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const wcc = require(path.join(job.compiler, 'src', 'wcc.js'));
const out = {};
for (const [name, wxml] of Object.entries(job.cases)) {
  const dir = path.join(job.root, name);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'r.wxml'), wxml);
  try { wcc(dir, ['r'], [], {}); out[name] = null; }
  catch (e) { out[name] = String(e.message).split('\n')[0]; }
}
process.stdout.write(JSON.stringify(out));
"""


def _node(node_bin: str, script: str, job: dict[str, Any], root: Path) -> Any:
    (root / "job.json").write_text(json.dumps(job), encoding="utf-8")
    (root / "run.js").write_text(script, encoding="utf-8")
    proc = subprocess.run(
        [node_bin, str(root / "run.js"), str(root / "job.json")], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def compiler(peers_dir: Path) -> Path:
    path = peers_dir / "miniprogram-compiler"
    assert (path / "bin" / "linux" / "wcc").exists(), "miniprogram-compiler is missing its wcc binary"
    return path


@pytest.fixture(scope="module")
def wcc_trees(node_bin: str, compiler: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("wcc-tpl")
    for name, (wxml, _) in ACCEPTED.items():
        (root / f"{name}.wxml").write_text(wxml, encoding="utf-8")
    job = {"compiler": str(compiler), "root": str(root), "cases": list(ACCEPTED), "data": json.dumps(DATA)}
    trees: dict[str, Any] = _node(node_bin, _RUNNER, job, root)
    return trees


@pytest.fixture(scope="module")
def wcc_rejects(node_bin: str, compiler: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str | None]:
    root = tmp_path_factory.mktemp("wcc-tpl-rejects")
    job = {"compiler": str(compiler), "root": str(root), "cases": {k: v for k, (v, _) in REFUSED.items()}}
    rejects: dict[str, str | None] = _node(node_bin, _REJECTS, job, root)
    return rejects


def _no_file(path: str) -> str | None:
    return None


def _skillc(wxml: str) -> tuple[RenderNode, DiagnosticSink]:
    sink = DiagnosticSink()
    doc = parse_wxml(wxml, file=FILE, sink=sink)
    template = lower_document(doc, load=_no_file, sink=sink)
    render_sink = DiagnosticSink()
    root = CardRenderer(CompiledComponent("card", template, None), sink=render_sink).render(DATA).root
    sink.extend(render_sink)
    return root, sink


@pytest.mark.parametrize("name", list(ACCEPTED))
def test_what_wcc_compiles_renders_alike_with_warnings(name: str, wcc_trees: dict[str, Any]) -> None:
    wxml, codes = ACCEPTED[name]
    root, sink = _skillc(wxml)
    assert _ours(root) == _theirs(wcc_trees[name])
    assert {(d.code, d.severity) for d in sink} == codes


@pytest.mark.parametrize("name", list(REFUSED))
def test_what_wcc_refuses_stays_an_error(name: str, wcc_rejects: dict[str, str | None]) -> None:
    wxml, code = REFUSED[name]
    assert wcc_rejects[name] is not None, f"wcc now compiles {wxml!r}: make {code} a warning there"
    _, sink = _skillc(wxml)
    assert [(d.code, d.severity) for d in sink] == [(code, E)]


def test_duplicate_definition_message_names_the_rule() -> None:
    _, sink = _skillc('<template name="t"><view/></template><template name="t"><view/></template>')
    assert [(d.code, d.message, d.span.column if d.span else 0) for d in sink] == [
        ("TPL016", 'template "t" is defined twice in this file; the last definition is used', 48)
    ]


@pytest.mark.parametrize(
    ("wxml", "expected"),
    [
        (
            "<view>{{" + "1" * 320 + "}}</view>",
            ("EXPR016", W, 9, "number literal of 320 characters (more than 300); WeChat reads it as Infinity"),
        ),
        (
            "<view>{{0." + "0" * 300 + "1}}</view>",
            ("EXPR016", W, 9, "number literal of 303 characters (more than 300); WeChat reads it as 1e-301"),
        ),
        ("<view>{{f(a,)}}</view>", ("EXPR001", E, 12, "trailing comma in a call")),
        (
            "<view title=\"{{'it\\'s'}}\"/>",
            (
                "EXPR013",
                E,
                16,
                "backslash escape \"\\\\'\" in a string literal of an attribute value: WeChat's compiler refuses it",
            ),
        ),
    ],
)
def test_exact_expression_messages(wxml: str, expected: tuple[str, Severity, int, str]) -> None:
    _, sink = _skillc(wxml)
    assert [(d.code, d.severity, d.span.column if d.span else 0, d.message) for d in sink] == [expected]
