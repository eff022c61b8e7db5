"""Differential test of the {{ }} language against WeChat's own compiler (wcc).

The whole table is compiled ONCE into one WXML page (one <view> per row, the expression both
as a lone attribute value and as text), the page is rendered in node once per distinct data
set, and every row's attribute value and text are compared with ours. Rows wcc must refuse
are compiled one by one in the same node process (wcc stops at the first error).
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from skillc.diagnostics import DiagnosticSink, Severity
from skillc.frontend.expr import Mustache, split_mustaches
from skillc.ir.expreval import Scope, evaluate
from skillc.ir.jsvalue import JSValue, to_text
from tests.expr_expected import WCC_RUNNER_HEAD, encode
from tests.expr_table import DATA, ROWS, Row

pytestmark = pytest.mark.node

# Values cross from node as tagged JSON so undefined, NaN, Infinity and -0 survive.
_RUNNER = (
    WCC_RUNNER_HEAD
    + r"""
const wcc = require(path.join(job.compiler, 'src', 'wcc.js'));
const quiet = { log() {}, warn() {}, error() {}, info() {} };
const ctx = vm.createContext({ console: quiet, __wxAppCode__: {}, __vd_version_info__: {} });
ctx.window = ctx;
const out = { renders: {}, rejects: {} };
ctx.__code = wxmlToJs(job.root);
vm.runInContext('var __page = new Function("global", __code + ";return $gwx;")({})("table.wxml");', ctx);
for (const [key, data] of Object.entries(job.datasets)) {
  ctx.__data = data;
  const root = vm.runInContext('__page(JSON.parse(__data))', ctx);
  out.renders[key] = root.children.map((n) => ({
    attr: Object.prototype.hasOwnProperty.call(n.attr, 'data-v') ? enc(n.attr['data-v']) : null,
    text: n.children.join(''),
  }));
}
for (const r of job.rejects) {
  const dir = path.join(job.root, 'reject', String(r.id));
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'r.wxml'), r.wxml);
  try { wcc(dir, ['r'], [], {}); out.rejects[r.id] = null; }
  catch (e) { out.rejects[r.id] = String(e.message).split('\n')[0]; }
}
process.stdout.write(JSON.stringify(out));
"""
)


def _view(row: Row) -> str:
    content = row.content
    if not row.attr or ("'" in content and '"' in content):
        return f"<view>{content}</view>"
    quote = "'" if '"' in content else '"'
    return f"<view data-v={quote}{content}{quote}>{content}</view>"


def _row_data(row: Row) -> dict[str, Any]:
    return {**DATA, **row.data}


@dataclass(frozen=True)
class WccResult:
    attr: list[Any] | None  # tagged value, None when the row has no attribute
    text: str


@pytest.fixture(scope="session")
def wcc_table(node_bin: str, peers_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    compiler = peers_dir / "miniprogram-compiler"
    assert (compiler / "bin" / "linux" / "wcc").exists(), "miniprogram-compiler is missing its wcc binary"
    root = tmp_path_factory.mktemp("wcc-expr")
    accepted = [r for r in ROWS if r.kind in ("ok", "stricter", "differs")]
    (root / "table.wxml").write_text("\n".join(_view(r) for r in accepted), encoding="utf-8")
    datasets: dict[str, str] = {}
    for r in accepted:
        blob = json.dumps(_row_data(r), ensure_ascii=False, sort_keys=True)
        datasets.setdefault(blob, blob)
    rejects = [
        {"id": i, "wxml": f"<view>{r.content}</view>"} for i, r in enumerate(ROWS) if r.kind in ("reject", "lenient")
    ]
    job = root / "job.json"
    job.write_text(
        json.dumps({"compiler": str(compiler), "root": str(root), "datasets": datasets, "rejects": rejects}),
        encoding="utf-8",
    )
    runner = root / "runner.js"
    runner.write_text(_RUNNER, encoding="utf-8")
    proc = subprocess.run([node_bin, str(runner), str(job)], capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    results: dict[int, WccResult] = {}
    for pos, r in enumerate(accepted):
        node = out["renders"][json.dumps(_row_data(r), ensure_ascii=False, sort_keys=True)][pos]
        results[ROWS.index(r)] = WccResult(node["attr"], node["text"])
    return {"accepted": results, "rejects": {int(k): v for k, v in out["rejects"].items()}}


@dataclass(frozen=True)
class Ours:
    value: list[Any] | None  # tagged; None unless the content is one lone mustache
    text: str
    codes: tuple[tuple[str, Severity], ...]
    parsed: bool


def _ours(row: Row) -> Ours:
    sink = DiagnosticSink()
    parts = split_mustaches(row.content, file="table.wxml", line=1, column=1, sink=sink)
    scope = Scope(_row_data(row))
    values: list[JSValue] = []
    rendered: list[str] = []
    parsed = True
    for part in parts:
        if isinstance(part, str):
            rendered.append(part)
            continue
        assert isinstance(part, Mustache)
        if part.expr is None:
            parsed = False
            continue
        value = evaluate(part.expr, scope)
        values.append(value)
        rendered.append(to_text(value))
    lone = len(parts) == 1 and isinstance(parts[0], Mustache)
    value = encode(values[0]) if lone and values else (["s", "".join(rendered)] if not lone else None)
    codes = tuple((d.code, d.severity) for d in sink)
    return Ours(value, "".join(rendered), codes, parsed)


def test_table_is_large_enough_and_covers_every_kind() -> None:
    assert len(ROWS) >= 100
    # "stricter" and "lenient" have no rows since severities follow wcc; the kinds stay for later.
    assert {r.kind for r in ROWS} >= {"ok", "reject", "differs"}
    assert len({r.content for r in ROWS}) == len(ROWS), "duplicate rows"


@pytest.mark.parametrize("index", range(len(ROWS)), ids=[f"{i}:{r.content}" for i, r in enumerate(ROWS)])
def test_row_matches_wcc(index: int, wcc_table: dict[str, Any]) -> None:
    row = ROWS[index]
    ours = _ours(row)
    errors = {c for c, sev in ours.codes if sev is Severity.ERROR}
    warnings = {c for c, sev in ours.codes if sev is not Severity.ERROR}
    if row.kind in ("reject", "lenient"):
        wcc_error = wcc_table["rejects"][index]
        assert wcc_error is not None, f"wcc accepted {row.content!r}; the table says it rejects it"
        if row.kind == "reject":
            assert errors == set(row.codes), (ours.codes, wcc_error)
        else:
            assert not errors and warnings == set(row.codes), ours.codes
        return
    theirs: WccResult = wcc_table["accepted"][index]
    if row.kind == "stricter":
        assert errors == set(row.codes)
    else:
        assert not errors, ours.codes
        assert warnings == set(row.codes), ours.codes
    if row.kind == "differs":
        assert ours.text != theirs.text, "wcc now agrees with JavaScript here: update docs/expressions.md"
        return
    assert ours.text == theirs.text
    if theirs.attr is not None:
        assert ours.value == theirs.attr
