"""Regression: one JSON number where a card expects a list must not take a card render minutes.

Found by tests/test_evaluate.py::test_any_json_data_renders_and_updates with random seeds
(3128592539, 320523924, 582890126): ``wx:for`` over a number n walks 0..n-1, capped at 100000
(skillc/ir/evaluate.py ``_iterate``), so the drink-list card given ``{"drinks": 100000}`` renders
900006 nodes: about 27 s and 4.5 GB to render, 35 s more for the JSON backend, 20 s per update.
Any API result or setData with a big number there does it. The derandomized profile CI uses never
draws such a number, which is why the property test passes there.

The render runs in a subprocess, bounded in CPU seconds (what the render costs, however busy the
machine) and, with a generous wall-clock limit, never left to run for minutes.
The evaluator now refuses a number above RenderLimits.max_for_number (RND007) and stops any render
past RenderLimits.max_nodes (RND005); tests/hostile/test_bounds.py covers the limits one by one.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import COFFEE, ROOT

RENDER = """
import sys
from skillc.diagnostics import DiagnosticSink
from skillc.frontend.package import load_skill
from skillc.ir.component import compile_component
from skillc.ir.evaluate import CardRenderer
import time
started = time.process_time()

pkg = load_skill(__import__("pathlib").Path(sys.argv[1]), DiagnosticSink())
component = compile_component(pkg, "drink-list", DiagnosticSink())
renderer = CardRenderer(component, sink=DiagnosticSink())
renderer.render({"drinks": int(sys.argv[2])})
renderer.update({"selectedId": "d1"})
print("rendered", time.process_time() - started)
"""
BUDGET_S = 5.0  # CPU seconds; a 1000-drink list renders in about 0.2 s
# Wall seconds for the child as a whole, Python's start included, on a loaded machine.
WALL_S = 120.0


@pytest.mark.parametrize("n", [100000])  # any larger number hits the same cap
def test_a_number_where_a_list_belongs_renders_in_bounded_time(n: int) -> None:
    try:
        done = subprocess.run(
            [sys.executable, "-c", RENDER, str(COFFEE), str(n)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=WALL_S,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"rendering drink-list with drinks={n} took more than {WALL_S} s")
    assert done.returncode == 0, done.stderr
    said, seconds = done.stdout.split()
    assert said == "rendered"
    # CPU time: the rendering's own cost, which a busy machine does not inflate as it does wall time.
    assert float(seconds) < BUDGET_S, f"rendering drink-list with drinks={n} took {float(seconds):.1f} CPU seconds"


def test_a_small_number_still_iterates_as_wechat_does() -> None:
    """The fix must keep WeChat's meaning of wx:for over a number: n items, 0..n-1."""
    from skillc.diagnostics import DiagnosticSink
    from skillc.frontend.package import load_skill
    from skillc.ir.component import compile_component
    from skillc.ir.evaluate import CardRenderer

    pkg = load_skill(COFFEE, DiagnosticSink())
    assert pkg is not None
    component = compile_component(pkg, "drink-list", DiagnosticSink())
    assert component is not None
    doc = CardRenderer(component, sink=DiagnosticSink()).render({"drinks": 3})
    items = [n.id for n in doc.root.walk() if n.id.startswith("0.1.0[") and n.id.endswith("]")]
    assert len(items) == 3
