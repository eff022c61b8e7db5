"""rpx conversion against the reference: WeChat's wcsc compiles the sheet, its runtime JS runs in node."""

from __future__ import annotations

import json
import re
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from skillc.diagnostics import DiagnosticSink
from skillc.frontend.wxss import parse_wxss
from skillc.ir.styles import ElementKey, StyleResolver, compile_stylesheet
from skillc.ir.viewport import Viewport

pytestmark = pytest.mark.node

# Runs wcsc's output with just enough of a browser for setCssToHead, prints the CSS per width.
RUNNER = r"""
const fs = require('fs'), vm = require('vm')
const src = fs.readFileSync(process.argv[2], 'utf8').replace(/^%s$/m, '')
const out = {}
for (const width of JSON.parse(process.argv[3])) {
  let css = ''
  const node = () => ({ setAttribute () {}, appendChild (t) { css = t.text }, childNodes: [], styleSheet: null })
  vm.runInNewContext(src, {
    window: { screen: { width }, devicePixelRatio: 2 },
    navigator: { userAgent: 'node' },
    document: { createElement: node, createTextNode: (text) => ({ text }), head: { appendChild () {} },
      getElementsByTagName: () => [{ appendChild () {} }] },
    console,
  })
  out[width] = css
}
process.stdout.write(JSON.stringify(out))
"""

WIDTHS = [320, 360, 375, 390, 393, 414, 428, 768]
VALUES = [0.5, 1, 1.5, 2, 3, 4, 5, 7, 10, 13, 24, 25, 33, 99, 100, 101, 333, 375, 749, 750, 1000, -1, -2, -3, -7, -24]


def _name(i: int) -> str:
    return f"r{i}"


def test_rpx_matches_wcsc(node_bin: str, peers_dir: Path, tmp_path: Path) -> None:
    wcsc = tmp_path / "wcsc"
    shutil.copy(peers_dir / "miniprogram-compiler" / "bin" / "linux" / "wcsc", wcsc)
    wcsc.chmod(wcsc.stat().st_mode | stat.S_IXUSR)
    css = "".join(f".{_name(i)} {{ margin-left: {v}rpx; width: calc(100% - {v}rpx) }}\n" for i, v in enumerate(VALUES))
    (tmp_path / "a.wxss").write_text(css)
    js = subprocess.run([str(wcsc), "-js", "a.wxss"], cwd=tmp_path, capture_output=True, text=True, check=True)
    (tmp_path / "a.js").write_text(js.stdout)
    (tmp_path / "run.js").write_text(RUNNER)
    done = subprocess.run(
        [node_bin, "run.js", "a.js", json.dumps(WIDTHS)], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    reference = json.loads(done.stdout)

    sink = DiagnosticSink()
    compiled = compile_stylesheet(parse_wxss(css, file="a.wxss", sink=sink))
    assert list(sink) == []
    compared = 0
    for width in WIDTHS:
        theirs = {
            m.group(1): (m.group(2), m.group(3))
            for m in re.finditer(
                r"\.(r\d+)\s*\{\s*margin-left:\s*([^;]+?);\s*width:\s*([^}]+?)\s*\}", reference[str(width)]
            )
        }
        ours = StyleResolver(compiled, Viewport(width=width))
        for i in range(len(VALUES)):
            style = ours.resolve([], ElementKey("view", None, (_name(i),)))
            assert (style["margin-left"], style["width"]) == theirs[_name(i)], (width, VALUES[i])
            compared += 1
    assert compared == len(WIDTHS) * len(VALUES)
