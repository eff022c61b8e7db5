"""The MCP Apps card view (what `serve` shows) builds the map and canvas previews exactly as the
html backend writes them, and a canvas repainted by a tap (one setProp of `drawing`) shows the
new picture. The view runs in jsdom as served (skillc.server.view.view_html); needs node and the
npm peers. Documents come from `skillc run --json` on tests/fixtures/card-builtins/preview-skill.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from skillc.backends.html_backend import render_html_fragment
from skillc.cli import main
from skillc.ir.render import from_plain
from skillc.server.view import view_html

from .conftest import require

pytestmark = pytest.mark.node

PREVIEW = Path(__file__).parent / "fixtures" / "card-builtins" / "preview-skill"

# Renders a document in the view, applies patch lists, and reads every map / canvas element's
# preview parts after each step; the html backend's fragment is read the same way.
_RUNNER = r"""
const fs = require('fs'), path = require('path');
const job = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const { JSDOM, VirtualConsole } = require(path.join(process.argv[3], 'jsdom'));
const errors = [];
const console_ = new VirtualConsole();
console_.on('jsdomError', (e) => errors.push(String((e && e.message) || e)));
function previews (root) {
  const out = {};
  root.querySelectorAll('[data-type="map"], [data-type="canvas"]').forEach((el) => {
    out[el.getAttribute('data-uid')] = [...el.children].filter((c) => c.hasAttribute('data-preview')).map((c) =>
      [c.tagName.toLowerCase(), c.getAttribute('data-preview'), c.getAttribute('src') || c.textContent]);
  });
  return out;
}
const view = new JSDOM(job.html, { runScripts: 'dangerously', pretendToBeVisual: true, virtualConsole: console_ });
const after = [];
for (const step of job.steps) {
  try {
    if (step.render) view.window.skillcView.render(step.render); else view.window.skillcView.applyPatches(step.patches);
  } catch (e) { errors.push(String(e && e.stack || e)); }
  after.push(previews(view.window.document.getElementById('card')));
}
const backend = job.fragments.map((f) => previews(new JSDOM('<body>' + f + '</body>').window.document.body));
process.stdout.write(JSON.stringify({ errors, after, backend }));
process.exit(0);
"""


def _flow(name: str) -> list[dict[str, Any]]:
    result = CliRunner().invoke(main, ["run", str(PREVIEW), "--script", str(PREVIEW / "flows" / name), "--json"])
    assert result.exit_code == 0, result.output
    steps: list[dict[str, Any]] = json.loads(result.stdout)
    return steps


def _run(node_bin: str, peers_dir: Path, tmp_path: Path, steps: list[Any], fragments: list[str]) -> dict[str, Any]:
    require((peers_dir / "jsdom" / "package.json").is_file(), "jsdom is not installed in tests/peers (make peers)")
    runner, job = tmp_path / "runner.js", tmp_path / "job.json"
    runner.write_text(_RUNNER, encoding="utf-8")
    html = view_html("preview-skill", "components/sales-chart/index", "ui://preview-skill/sales-chart")
    job.write_text(json.dumps({"html": html, "steps": steps, "fragments": fragments}), encoding="utf-8")
    proc = subprocess.run(
        [node_bin, str(runner), str(job), str(peers_dir)], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr
    out: dict[str, Any] = json.loads(proc.stdout)
    assert out["errors"] == []
    return out


def test_the_view_builds_the_previews_as_the_backend_and_follows_a_repaint(
    node_bin: str, peers_dir: Path, tmp_path: Path
) -> None:
    chart = _flow("chart.json")
    first = chart[0]["cards"][0]["document"]
    repaint = chart[1]["patches"]
    probe = _flow("probe.json")[0]["cards"][0]["document"]  # a map without markers, an unpainted canvas
    shops = _flow("shops.json")[0]["cards"][0]["document"]
    fragments = [render_html_fragment(from_plain(doc)) for doc in (first, probe, shops)]
    steps = [{"render": first}, {"patches": repaint}, {"render": probe}, {"render": shops}]
    out = _run(node_bin, peers_dir, tmp_path, steps, fragments)
    painted, repainted, probed, mapped = out["after"]
    assert painted == out["backend"][0]
    assert (
        probed
        == out["backend"][1]
        == {
            "0.1": [["div", "caption", "Canvas · not drawn"]],
            "0.2": [["div", "caption", "Map 1, 2 · 0 markers"]],
        }
    )
    assert (
        mapped
        == out["backend"][2]
        == {
            "0.1": [
                ["div", "caption", "Map 31.2304, 121.4737 · 3 markers"],
                [
                    "ol",
                    "markers",
                    "南京西路店 · 31.2304, 121.4737Jing An Temple · 31.2235, 121.4452外滩店 · 31.2401, 121.4903",
                ],
            ]
        }
    )
    (part,) = painted["0.1"]
    assert (
        part[:2] == ["img", "drawing"]
        and part[2] == first["root"]["children"][0]["children"][1]["props"]["drawing"]["src"]
    )
    assert repainted == {"0.1": [["img", "drawing", repaint[0]["value"]["src"]]]}
    assert repaint[0]["value"]["src"] != part[2]
