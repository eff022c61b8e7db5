"""{{ }} expressions: parse throughput (KB/s of mustache text) and evaluations per second,
with wcc compiling the same expressions as the peer figure.

Run: .venv/bin/python bench/expr.py
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from skillc.diagnostics import DiagnosticSink  # noqa: E402
from skillc.frontend.expr import Mustache, split_mustaches  # noqa: E402
from skillc.ir.expreval import Scope, evaluate  # noqa: E402
from tests.expr_table import DATA, ROWS  # noqa: E402

# Realistic card bindings plus every accepted row of the differential table.
TYPICAL = [
    "{{ order.lines[0].price * order.lines[0].qty }}",
    "{{ items.length > 0 ? items[0].name : 'empty' }}",
    "Total: {{ order.total }} CNY ({{ items.length }} items)",
    "{{ s == 'abc' && a == 1 ? 'ok' : 'no' }}",
    "{{ {a, b: a + b, ...o} }}",
    "card {{ t ? 'card--active' : '' }} {{ f > 1 ? 'big' : 'small' }}",
]
ACCEPTED = [r.content for r in ROWS if r.kind in ("ok", "stricter")]


def corpus(target_bytes: int) -> list[str]:
    texts: list[str] = []
    size = 0
    pool = TYPICAL * 4 + ACCEPTED
    while size < target_bytes:
        for t in pool:
            texts.append(t)
            size += len(t.encode())
    return texts


def bench_parse(texts: list[str]) -> tuple[float, list[Mustache]]:
    sink = DiagnosticSink()
    mustaches: list[Mustache] = []
    start = time.perf_counter()
    for t in texts:
        for part in split_mustaches(t, file="b.wxml", line=1, column=1, sink=sink):
            if isinstance(part, Mustache):
                mustaches.append(part)
    return time.perf_counter() - start, mustaches


def bench_eval(mustaches: list[Mustache]) -> float:
    scope = Scope(DATA)
    exprs = [m.expr for m in mustaches if m.expr is not None]
    start = time.perf_counter()
    for e in exprs:
        evaluate(e, scope)
    return time.perf_counter() - start


def bench_wcc(texts: list[str]) -> float | None:
    node = shutil.which("node")
    compiler = ROOT / "tests" / "peers" / "node_modules" / "miniprogram-compiler"
    if node is None or not compiler.is_dir():
        return None
    with tempfile.TemporaryDirectory() as tmp:
        body = "\n".join(f"<view>{t}</view>" for t in texts)
        Path(tmp, "b.wxml").write_text(body, encoding="utf-8")
        script = (
            f"const w=require({json.dumps(str(compiler / 'src' / 'wcc.js'))});"
            f"const t=process.hrtime.bigint();w({json.dumps(tmp)},['b'],[],{{maxBuffer:1<<30}});"
            "process.stdout.write(String(Number(process.hrtime.bigint()-t)/1e9));"
        )
        out = subprocess.run([node, "-e", script], capture_output=True, text=True, check=True)
        return float(out.stdout)


def main() -> None:
    texts = corpus(500_000)
    kb = sum(len(t.encode()) for t in texts) / 1000
    bench_parse(texts[:2000])  # warm up
    parse_s = min(bench_parse(texts)[0] for _ in range(3))
    _, mustaches = bench_parse(texts)
    eval_s = min(bench_eval(mustaches) for _ in range(3))
    print(f"corpus: {kb:.0f} KB of mustache text, {len(mustaches)} expressions")
    print(
        f"parse (split_mustaches + parse_expression): {kb / parse_s:,.0f} KB/s, {len(mustaches) / parse_s:,.0f} expr/s"
    )
    print(f"evaluate: {len(mustaches) / eval_s:,.0f} expr/s ({eval_s / len(mustaches) * 1e6:.2f} us each)")
    wcc_s = bench_wcc(texts)
    if wcc_s is None:
        print("wcc: node or tests/peers not installed, peer figure skipped")
    else:
        print(f"wcc compile of the same text as <view> nodes: {kb / wcc_s:,.0f} KB/s")
        print(f"ratio skillc parse / wcc compile: {wcc_s / parse_s:.2f}x")


if __name__ == "__main__":
    main()
