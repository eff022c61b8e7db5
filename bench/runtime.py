"""Atomic API VM throughput: calls per second, a fresh QuickJS context per call.

Run: .venv/bin/python bench/runtime.py [--calls N]

Measures the whole call chain (inputSchema, VM, result rules, outputSchema) for a trivial API and
for the coffee example's searchDrinks, on one thread and on two worker threads, and compares
each with its floor: creating the bare QuickJS context the VM cannot do without.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from pathlib import Path

import quickjs

from skillc.diagnostics import DiagnosticSink
from skillc.frontend.package import load_skill
from skillc.runtime.api.api_runtime import ApiRuntime
from skillc.runtime.config import RuntimeConfig

ROOT = Path(__file__).resolve().parents[1]
TRIVIAL_INDEX = (
    "wx.modelContext.registerAPI('ping', async (a) => ({ content: [{ type: 'text', text: 'pong ' + a.n }] }))\n"
)
TRIVIAL_MCP = (
    '{"apis": [{"name": "ping", "description": "Answers pong.",'
    ' "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}}}]}'
)


def trivial_skill(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "SKILL.md").write_text("# ping\n\nAnswers pong.\n")
    (root / "mcp.json").write_text(TRIVIAL_MCP)
    (root / "index.js").write_text(TRIVIAL_INDEX)
    return root


def one_thread(rt: ApiRuntime, api: str, args: dict[str, object], calls: int) -> float:
    for _ in range(20):
        rt.call_blocking(api, args)
    started = time.perf_counter()
    for _ in range(calls):
        outcome = rt.call_blocking(api, args)
    assert not outcome.result.is_error, outcome.result.text
    return calls / (time.perf_counter() - started)


def two_workers(rt: ApiRuntime, api: str, args: dict[str, object], calls: int) -> float:
    async def run() -> float:
        started = time.perf_counter()
        for _ in range(calls // 50):
            outcomes = await asyncio.gather(*[rt.call(api, args) for _ in range(50)])
            assert not any(o.result.is_error for o in outcomes)
        return (calls // 50 * 50) / (time.perf_counter() - started)

    return asyncio.run(run())


def bare_contexts(calls: int) -> float:
    started = time.perf_counter()
    for _ in range(calls):
        quickjs.Context().eval("1")
    return calls / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        state = Path(tmp) / "state"
        floor = bare_contexts(opts.calls)
        print(f"cores: {os.cpu_count()}, calls per case: {opts.calls}")
        print(f"floor: bare quickjs.Context() + eval('1'): {floor:8.0f} /s")
        cases = [
            ("trivial ping", trivial_skill(Path(tmp) / "ping"), "ping", {"n": 1}),
            ("coffee searchDrinks", ROOT / "examples" / "coffee-skill", "searchDrinks", {"keyword": "latte"}),
        ]
        for label, path, api, args in cases:
            pkg = load_skill(path, DiagnosticSink())
            assert pkg is not None
            rt = ApiRuntime(pkg, RuntimeConfig(state_dir=state, workers=2))
            single = one_thread(rt, api, args, opts.calls)
            double = two_workers(rt, api, args, opts.calls)
            rt.close()
            print(
                f"{label:22} one thread: {single:7.0f} calls/s ({single / floor:4.2f}x floor)   "
                f"two workers: {double:7.0f} calls/s ({double / single:4.2f}x one thread)"
            )
        print("target: >= 1000 calls/s for the trivial API on one core")


if __name__ == "__main__":
    main()
