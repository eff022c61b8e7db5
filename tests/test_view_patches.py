"""The MCP Apps card view (skillc/server/static/card-view.js) applying patches to a real DOM (jsdom).

docs/patches.md: in a ``setStyle`` op, a ``null`` value removes the property. The view is loaded as
the server serves it (skillc.server.view.view_html), its inline script run by jsdom; the test
renders Render IR through ``window.skillcView.render``, applies patch lists through
``window.skillcView.applyPatches`` (what a tap's result goes through), and reads each element's
inline style back. Needs node and the npm peers (jsdom); test_server_apps_chromium.py covers the
whole host round trip in Chromium.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from skillc.diagnostics import DiagnosticSink
from skillc.frontend.package import load_skill
from skillc.ir.component import compile_component
from skillc.ir.diff import patches_to_plain
from skillc.ir.evaluate import CardRenderer
from skillc.ir.render import to_plain
from skillc.server.view import view_html

from .conftest import COFFEE, require

pytestmark = pytest.mark.node

# Runs the steps of a job ({"render": document} or {"patches": [...]}) in one page and prints,
# after each step, every card element's inline style: uid -> {property: value}.
_RUNNER = r"""
const fs = require('fs'), path = require('path');
const job = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const { JSDOM, VirtualConsole } = require(path.join(process.argv[3], 'jsdom'));
const errors = [];
const console_ = new VirtualConsole();
console_.on('jsdomError', (e) => errors.push(String((e && e.message) || e)));
const dom = new JSDOM(job.html, { runScripts: 'dangerously', pretendToBeVisual: true, virtualConsole: console_ });
const w = dom.window;
function styles () {
  const out = {};
  w.document.querySelectorAll('#card [data-uid]').forEach((el) => {
    const s = {};
    for (let i = 0; i < el.style.length; i++) s[el.style[i]] = el.style.getPropertyValue(el.style[i]);
    out[el.getAttribute('data-uid')] = s;
  });
  return out;
}
const after = [];
for (const step of job.steps) {
  try {
    if (step.render) w.skillcView.render(step.render); else w.skillcView.applyPatches(step.patches);
  } catch (e) { errors.push(String(e && e.stack || e)); }
  after.push(styles());
}
process.stdout.write(JSON.stringify({ errors, after }));
process.exit(0);
"""

Styles = dict[str, dict[str, str]]
Run = Callable[[list[dict[str, Any]]], list[Styles]]


@pytest.fixture(scope="module")
def run_view(node_bin: str, peers_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Run:
    require((peers_dir / "jsdom" / "package.json").is_file(), "jsdom is not installed in tests/peers (make peers)")
    root = tmp_path_factory.mktemp("view")
    runner = root / "runner.js"
    runner.write_text(_RUNNER, encoding="utf-8")
    html = view_html("coffee-skill", "components/drink-list/index", "ui://coffee-skill/drink-list")

    def run(steps: list[dict[str, Any]]) -> list[Styles]:
        job = root / "job.json"
        job.write_text(json.dumps({"html": html, "steps": steps}), encoding="utf-8")
        proc = subprocess.run(
            [node_bin, str(runner), str(job), str(peers_dir)], capture_output=True, text=True, timeout=120, check=False
        )
        assert proc.returncode == 0, proc.stderr
        out = json.loads(proc.stdout)
        assert out["errors"] == []
        after: list[Styles] = out["after"]
        return after

    return run


def _node(node_id: str, style: dict[str, str], children: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"id": node_id, "type": "view", "props": {}, "style": style, "children": children or []}


def _document(*children: dict[str, Any]) -> dict[str, Any]:
    return {"version": 1, "viewport": {"width": 375, "colorScheme": "light"}, "root": _node("root", {}, list(children))}


STYLED = _document(
    _node("0", {"color": "red", "font-size": "20px", "padding": "4px", "border": "2px solid #c8742c"}),
    _node("1", {"color": "red"}),
)


def test_a_null_style_value_removes_the_property(run_view: Run) -> None:
    patch = {"op": "setStyle", "id": "0", "style": {"color": None, "font-size": "24px", "border": None}}
    before, after = run_view([{"render": STYLED}, {"patches": [patch]}])
    assert before["0"] == {
        "color": "red",
        "font-size": "20px",
        "padding": "4px",
        "border": "2px solid rgb(200, 116, 44)",
    }
    assert after["0"] == {"font-size": "24px", "padding": "4px"}  # removed, changed, kept
    assert after["1"] == before["1"] == {"color": "red"}  # another node with the property keeps it
    assert after["root"] == {}


def test_a_null_for_a_property_the_node_lacks_changes_nothing(run_view: Run) -> None:
    patch = {"op": "setStyle", "id": "1", "style": {"margin": None}}
    before, after = run_view([{"render": STYLED}, {"patches": [patch]}])
    assert after == before


def test_removed_styles_stay_removed_after_later_patches(run_view: Run) -> None:
    steps: list[dict[str, Any]] = [
        {"render": STYLED},
        {"patches": [{"op": "setStyle", "id": "0", "style": {"color": None}}]},
        {"patches": [{"op": "setProp", "id": "0", "name": "hidden", "value": False}]},  # re-applies attributes
        {"patches": [{"op": "setStyle", "id": "0", "style": {"color": "blue"}}]},
    ]
    _, removed, refreshed, again = run_view(steps)
    assert "color" not in removed["0"] and "color" not in refreshed["0"]
    assert again["0"]["color"] == "blue"


def test_deselecting_a_drink_removes_its_border_as_a_fresh_render_would(run_view: Run) -> None:
    """The real patches of the coffee card: the selected drink's border goes by setStyle null."""
    pkg = load_skill(COFFEE, DiagnosticSink())
    assert pkg is not None
    component = compile_component(pkg, "drink-list", DiagnosticSink())
    assert component is not None
    data = json.loads(pkg.sources["components/drink-list/preview.json"])
    selected, unselected = {**data, "selectedId": "d02"}, {**data, "selectedId": ""}
    live = CardRenderer(component)
    first = to_plain(live.render(selected))
    deselect = patches_to_plain(live.update({"selectedId": ""}))
    reselect = patches_to_plain(live.update({"selectedId": "d02"}))
    assert {"op": "setStyle", "id": "0.1.0[d02]", "style": {"border": None}} in deselect
    fresh = to_plain(CardRenderer(component).render(unselected))

    shown, deselected, reselected, expected = run_view(
        [{"render": first}, {"patches": deselect}, {"patches": reselect}, {"render": fresh}]
    )
    assert shown["0.1.0[d02]"]["border"] == "2px solid rgb(200, 116, 44)"
    assert "border" not in deselected["0.1.0[d02]"]
    assert deselected["0.1.0[d02]"] == {k: v for k, v in shown["0.1.0[d02]"].items() if k != "border"}
    assert deselected == expected  # every element as a fresh render of the new data draws it
    assert reselected == shown
