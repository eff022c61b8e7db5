"""{{ }} cases whose expected values were recorded from WeChat's compiler (wcc), kept as plain data.

tests/expr_table.py is checked against wcc only where node runs; this table lets the semantics be
checked everywhere. CASES lists the contents; tests/expr_expected.json holds, for each, the value
wcc gives the lone mustache bound to an attribute and the text it renders, on DATA.

- tests/test_expr_semantics.py compares our evaluator with the stored values (no node);
- tests/test_expr_expected_wcc.py re-derives them from wcc and fails if the file differs.

To re-record after changing CASES or DATA (needs node and `make peers`):

    .venv/bin/python -m tests.expr_expected

Values are tagged so JSON keeps what it cannot hold: ["u"] undefined, ["z"] null, ["b", bool],
["n", JavaScript's String(number)] (so NaN, Infinity and -0 survive), ["s", str], ["a", [...]],
["o", {...}]. A stored value of null means wcc set no attribute at all.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from skillc.diagnostics import DiagnosticSink, Severity
from skillc.frontend.expr import Mustache, split_mustaches
from skillc.ir.expreval import Scope, evaluate
from skillc.ir.jsvalue import UNDEFINED, JSValue, number_to_string, to_text

TABLE = Path(__file__).with_name("expr_expected.json")

# Every JSON value is a distinct object, so o and o2 are equal-looking but not the same object.
DATA: dict[str, Any] = {
    "n": None,
    "z": 0,
    "a": 1,
    "b": 2,
    "f": 1.5,
    "big": 12345678901,
    "one": "1",
    "zs": "0",
    "e": "",
    "sp": " 12 ",
    "s": "abc",
    "zh": "咖啡",
    "emoji": "a😀b",
    "t": True,
    "fa": False,
    "empty": [],
    "arr0": [0],
    "arr1": [1],
    "arr": [1, 2],
    "nested": [1, [2, None]],
    "o": {"x": 1, "y": {"z": 2}},
    "o2": {"x": 1, "y": {"z": 2}},
    "items": [{"name": "latte"}],
    "k": "x",
    "i": 1,
}

# One operand of each kind; "u" is not in DATA, so it is undefined. (0 / 0) is NaN.
OPERANDS = [
    "n", "u", "z", "a", "f", "one", "zs", "e", "s", "t", "fa",
    "empty", "arr0", "arr1", "arr", "o", "o2", "(0 / 0)",
]  # fmt: skip
FEW = ["n", "u", "z", "one", "e", "t", "empty", "arr1", "o", "(0 / 0)"]

ARITHMETIC = [
    "a + b", "a - b", "b * f", "a / b", "7 % 3", "-7 % 2", "7 % -3", "5.5 % 2", "0.1 + 0.2", "1 / 3",
    "1 / 0", "-1 / 0", "0 / 0", "z * -1", "-z", "big * big", "one * 2", "one - 1", "sp * 1", "s * 1",
    "e * 1", "zs - 1", "t + t", "fa - 1", "t * 3", "n + 1", "n * 2", "u + 1", "u * 2", "empty * 1",
    "arr0 * 2", "arr1 + 1", "arr * 2", "o - 1", "'5' * '2'", "-one", "-s", "-t", "-n", "-empty",
    "1 + 2 * 3", "(1 + 2) * 3", "a - b - a", "f * 2 - 0.5",
]  # fmt: skip

CONCATENATION = [
    "'a' + 'b'", "s + a", "a + s", "s + f", "'x' + n", "'x' + u", "n + 'x'", "u + 'x'", "s + t",
    "s + fa", "s + empty", "s + arr", "s + nested", "s + o", "'x' + (0 / 0)", "'x' + 1 / 0",
    "1 + 2 + 's'", "'s' + 1 + 2", "one + 1", "1 + one", "one + one", "e + 0", "zh + 1", "emoji + e",
    "arr + arr", "empty + empty", "o + o", "arr + 1", "o + 1", "t + 1", "t + 'x'", "n + n",
    "u + u", "n + u", "empty + n", "'' + big", "'' + 0.000001", "'' + 0.0000001",
    "'' + 100000000000000000000", "'' + 1000000000000000000000",
]  # fmt: skip

TERNARIES = [
    "a ? 'y' : 'n'", "z ? 'y' : 'n'", "e ? 'y' : 'n'", "n ? 'y' : 'n'", "u ? 'y' : 'n'",
    "fa ? 'y' : 'n'", "(0 / 0) ? 'y' : 'n'", "empty ? 'y' : 'n'", "o ? 'y' : 'n'", "zs ? 'y' : 'n'",
    "sp ? 'y' : 'n'", "a ? z ? 1 : 2 : 3", "z ? 1 : a ? 2 : 3", "z ? 1 : n ? 2 : 3",
    "n == u ? 'eq' : 'ne'", "n === u ? 'eq' : 'ne'", "a > z ? s : e", "a ? n : u", "z ? n : u",
    "t ? arr : o", "fa ? arr : o", "a || z ? 'c' : 'd'", "a ? b : z || 'w'", "!a ? 'x' : 'y'",
    "one == 1 ? one + 1 : 0",
]  # fmt: skip

MEMBERS = [
    "o.x", "o['x']", "o[k]", "o.y.z", "o.y", "o.w", "o.w.z", "o.x.y", "o.length", "arr[0]",
    "arr[1]", "arr[2]", "arr[i]", "arr['1']", "arr[-1]", "arr.length", "empty.length", "nested[1][0]",
    "nested[1][1]", "nested[1][5]", "s.length", "s[0]", "s[3]", "zh.length", "emoji.length",
    "items[0].name", "items[1]", "items[1].name", "n.x", "u.x", "u.x.y", "t.length", "a.length",
    "[a, b][1]", "{x: a, y: n}",
]  # fmt: skip

# Whole contents (text around mustaches): how null, undefined and objects render in text.
TEXTS = [
    "{{ n }}", "{{ u }}", "{{ e }}", "x{{ n }}y", "x{{ u }}y", "{{ n }}{{ u }}", "[{{ arr }}]", "({{ o }})",
    "{{ [n, u, 1] }}",
    "{{ nested }}", "a{{ empty }}b", "{{ t }}/{{ fa }}", "{{ 0 / 0 }}|{{ 1 / 0 }}|{{ -1 / 0 }}",
    "{{ f }}{{ z }}", "{{ n + '' }}", "{{ u || 'd' }}", "{{ n && 1 }}", "{{ {a: n} }}", "{{ o.w }}|{{ n }}",
    "{{ arr0 }}", "{{ [[], [n]] }}", "{{ a }} + {{ b }} = {{ a + b }}", "{{ s }}{{ n }}{{ e }}!",
    "{{ big }}", "{{ -z }}|{{ 0.1 + 0.2 }}|{{ 1 / 3 }}",
]  # fmt: skip


def _equality() -> list[tuple[str, str]]:
    full = [(op, x, y) for op in ("==", "===") for x in OPERANDS for y in OPERANDS]
    few = [(op, x, y) for op in ("!=", "!==") for x in FEW for y in FEW]
    return [("equality", f"{{{{ {x} {op} {y} }}}}") for op, x, y in full + few]


CASES: list[tuple[str, str]] = [
    *_equality(),
    *(("arithmetic", f"{{{{ {x} }}}}") for x in ARITHMETIC),
    *(("concatenation", f"{{{{ {x} }}}}") for x in CONCATENATION),
    *(("ternary", f"{{{{ {x} }}}}") for x in TERNARIES),
    *(("member", f"{{{{ {x} }}}}") for x in MEMBERS),
    *(("text", x) for x in TEXTS),
]
GROUPS = ("equality", "arithmetic", "concatenation", "ternary", "member", "text")


def load() -> dict[str, Any]:
    table: dict[str, Any] = json.loads(TABLE.read_text(encoding="utf-8"))
    return table


# -- our side -------------------------------------------------------------------------------------


def encode(v: JSValue) -> list[Any]:
    """One of our values in the tagged form."""
    if v is UNDEFINED:
        return ["u"]
    if v is None:
        return ["z"]
    if isinstance(v, bool):
        return ["b", v]
    if isinstance(v, int | float):
        if isinstance(v, float) and v == 0 and math.copysign(1.0, v) < 0:
            return ["n", "-0"]
        return ["n", number_to_string(v)]
    if isinstance(v, str):
        return ["s", v]
    if isinstance(v, list):
        return ["a", [encode(x) for x in v]]
    assert isinstance(v, dict)
    return ["o", {k: encode(x) for k, x in v.items()}]


def ours(content: str, data: dict[str, Any]) -> tuple[list[Any] | None, str, list[str]]:
    """(tagged attribute value, rendered text, error codes) of one content, as the card renderer sees it."""
    sink = DiagnosticSink()
    parts = split_mustaches(content, file="case.wxml", line=1, column=1, sink=sink)
    scope = Scope(json.loads(json.dumps(data)))  # fresh objects, as JSON.parse gives wcc
    values: list[JSValue] = []
    rendered: list[str] = []
    for part in parts:
        if isinstance(part, str):
            rendered.append(part)
            continue
        assert isinstance(part, Mustache)
        if part.expr is not None:
            value = evaluate(part.expr, scope)
            values.append(value)
            rendered.append(to_text(value))
    lone = len(parts) == 1 and isinstance(parts[0], Mustache)
    errors = [d.code for d in sink if d.severity is Severity.ERROR]
    text = "".join(rendered)
    if not lone:
        return ["s", text], text, errors  # a mixed value is its text
    return (encode(values[0]) if values else None), text, errors


# -- wcc's side -------------------------------------------------------------------------------------

# The start of every node script that drives wcc: read the job, load the compiler, and enc(),
# which tags values as JSON so undefined, NaN, Infinity and -0 survive the crossing.
WCC_RUNNER_HEAD = r"""
const fs = require('fs'), path = require('path'), vm = require('vm');
const job = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const { wxmlToJs } = require(job.compiler);
function enc(v) {
  if (v === undefined) return ['u'];
  if (v === null) return ['z'];
  if (typeof v === 'boolean') return ['b', v];
  if (typeof v === 'number') return ['n', Object.is(v, -0) ? '-0' : String(v)];
  if (typeof v === 'string') return ['s', v];
  if (Array.isArray(v)) return ['a', v.map(enc)];
  const o = {};
  for (const k of Object.keys(v)) o[k] = enc(v[k]);
  return ['o', o];
}
"""

_RUNNER = (
    WCC_RUNNER_HEAD
    + r"""const quiet = { log() {}, warn() {}, error() {}, info() {} };
const ctx = vm.createContext({ console: quiet, __wxAppCode__: {}, __vd_version_info__: {} });
ctx.window = ctx;
ctx.__code = wxmlToJs(job.root);
vm.runInContext('var __page = new Function("global", __code + ";return $gwx;")({})("cases.wxml");', ctx);
ctx.__data = job.data;
const root = vm.runInContext('__page(JSON.parse(__data))', ctx);
process.stdout.write(JSON.stringify(root.children.map((n) => ({
  value: Object.prototype.hasOwnProperty.call(n.attr, 'data-v') ? enc(n.attr['data-v']) : null,
  text: n.children.join(''),
}))));
"""
)


def _view(content: str) -> str:
    quote = "'" if '"' in content else '"'
    assert quote not in content, content
    return f"<view data-v={quote}{content}{quote}>{content}</view>"


def record(node: str, peers: Path) -> dict[str, Any]:
    """Compile every case into one page with the real wcc, render it on DATA, and tabulate."""
    compiler = peers / "miniprogram-compiler"
    with tempfile.TemporaryDirectory(prefix="skillc-expr-") as tmp:
        root = Path(tmp)
        (root / "cases.wxml").write_text("\n".join(_view(c) for _, c in CASES), encoding="utf-8")
        job = {"compiler": str(compiler), "root": str(root), "data": json.dumps(DATA, ensure_ascii=False)}
        (root / "job.json").write_text(json.dumps(job), encoding="utf-8")
        (root / "runner.js").write_text(_RUNNER, encoding="utf-8")
        proc = subprocess.run(
            [node, str(root / "runner.js"), str(root / "job.json")],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    if proc.returncode != 0:
        raise RuntimeError(f"wcc failed: {proc.stderr}")
    rendered = json.loads(proc.stdout)
    assert len(rendered) == len(CASES), "one <view> per case"
    return {
        "about": "Recorded from wcc (miniprogram-compiler) by `python -m tests.expr_expected`; see that module.",
        "data": DATA,
        "cases": [{"group": g, "content": c, **r} for (g, c), r in zip(CASES, rendered, strict=True)],
    }


def dump(table: dict[str, Any]) -> str:
    """The file's exact text: one case per line, so a diff shows which case changed."""
    head = {k: v for k, v in table.items() if k != "cases"}
    lines = [json.dumps(c, ensure_ascii=False, sort_keys=True) for c in table["cases"]]
    body = json.dumps(head, ensure_ascii=False, indent=2, sort_keys=True)[:-2]
    return body + ',\n  "cases": [\n    ' + ",\n    ".join(lines) + "\n  ]\n}\n"


def main() -> int:
    node = shutil.which("node")
    peers = Path(__file__).with_name("peers") / "node_modules"
    if node is None or not (peers / "miniprogram-compiler").is_dir():
        print("needs node and the npm peers (make peers)", file=sys.stderr)
        return 2
    TABLE.write_text(dump(record(node, peers)), encoding="utf-8")
    print(f"wrote {len(CASES)} cases to {TABLE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
