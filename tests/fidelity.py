"""The fidelity check's harness: skillc's HTML and a reference built from WeChat's own compilers,
laid out in the same Chromium, element boxes compared (docs/fidelity.md has the method).

The test is tests/test_fidelity_chromium.py; this module holds what it needs and what re-recording
needs: the card list, both pages, the measuring script, the comparison and the recorded file.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillc.backends.html_backend import render_html
from skillc.diagnostics import DiagnosticSink
from skillc.frontend.package import load_skill
from skillc.ir.component import compile_component
from skillc.ir.evaluate import CardRenderer
from skillc.ir.viewport import Viewport
from tests.conftest import COFFEE, FIXTURES, PEERS

WIDTH = 375
# Tall enough that no card reaches the bottom: nothing may depend on the viewport's height.
HEIGHT = 2000
TOLERANCE_PX = 2.0
RECORD_ENV = "SKILLC_FIDELITY_RECORD"
FIXTURE_SKILL = FIXTURES / "fidelity" / "fidelity-skill"
RECORDED = FIXTURES / "fidelity" / "recorded.json"
REFERENCE_SCRIPT = PEERS / "fidelity_reference.js"
MEASURES = ("x", "y", "w", "h", "vw", "vh")

CARDS: tuple[tuple[Path, str], ...] = (
    (COFFEE, "drink-list"),
    (COFFEE, "order-confirm"),
    (COFFEE, "payment-result"),
    (FIXTURE_SKILL, "gap-row"),
    (FIXTURE_SKILL, "ellipsis-list"),
    (FIXTURE_SKILL, "clamp-notes"),
)

# Why a box may sit further than TOLERANCE_PX from the reference today: (card, key prefix) -> why.
# Recording refuses a box beyond the tolerance that no entry here explains, so every recorded
# exception carries a reason a reader can check against docs/fidelity.md.
_GAP, _ELLIPSIS, _CLAMP = "fidelity-skill/gap-row", "fidelity-skill/ellipsis-list", "fidelity-skill/clamp-notes"
REASONS: dict[tuple[str, str], str] = {
    (_GAP, "avatar"): "overflow: hidden on the 44 px avatar box is not drawn yet: all of the 60 px picture shows",
    (_GAP, "title"): "gap is not drawn yet: the 10 px between the avatar box and the text column is missing",
    (_GAP, "author"): "gap is not drawn yet: the 10 px between the avatar box and the text column is missing",
    (_GAP, "chip-"): "gap is not drawn yet: each chip loses 8 px per chip before it on its line, "
    "and the second line the 6 px row gap",
    (_GAP, "thumb-"): "gap is not drawn yet: 8 px between thumbnails, and 6 px of row gap above",
    (_GAP, "clip-text"): "overflow: hidden on the 40 px box is not drawn yet: the whole paragraph shows; "
    "6 px of row gap above is missing",
    (_GAP, "foot"): "follows the chips' missing 6 px row gap",
    (_ELLIPSIS, "author-b3"): "overflow: hidden is not drawn yet: as a flex item the nowrap author keeps its "
    "whole text's width instead of shrinking to an ellipsis",
    (_ELLIPSIS, "progress-b3"): "pushed right, out of the card, by the author beside it that does not shrink "
    "(overflow: hidden not drawn yet)",
    (_CLAMP, "quote-n1"): "-wx-line-clamp: 2 is not drawn yet: three lines where the reference shows two",
    (_CLAMP, "comment-n1"): "the -webkit-box trio is dropped: the text stays inline (as wide as its text) with "
    "three lines instead of two; and it follows the unclamped quote above",
    (_CLAMP, "comment-n2"): "display: -webkit-box is dropped: the one-line text stays inline, as wide as its text "
    "rather than the column; and it follows the unclamped lines above",
    (_CLAMP, "date-"): "follows the unclamped lines above",
    (_CLAMP, "quote-n2"): "follows the unclamped lines above",
}

# Fonts: the same stack as skillc's page, so both sides resolve the same faces on this machine.
# WeChat draws with the system font (PingFang SC on iOS); its normal line height is 1.4em, and the
# base library sets none, so 1.4 stands for "normal with PingFang" (an assumption: this machine has
# no PingFang, and "normal" would measure whatever fallback face it has).
PAGE_CSS = """\
html,body{margin:0;padding:0}
body{font-family:-apple-system,"PingFang SC","Helvetica Neue","Noto Sans CJK SC",sans-serif;\
font-size:16px;line-height:1.4}
fid-card{display:block}
"""

# The built-in components' default styles, from the base library's injected stylesheet (wx-view,
# wx-image, wx-button as WeChat ships them; docs/fidelity.md cites the sources). wx-text has no
# rule there: a custom element is inline. The scroll-view rule is an assumption: the base library
# scrolls an inner div; cards allow scroll-x only, so the host itself scrolls sideways here.
BUILTIN_CSS = """\
wx-view{display:block}
wx-view[hidden]{display:none}
wx-image{width:320px;height:240px;display:inline-block;overflow:hidden}
wx-image[hidden]{display:none}
wx-button{position:relative;display:block;margin-left:auto;margin-right:auto;padding-left:14px;\
padding-right:14px;box-sizing:border-box;font-size:18px;text-align:center;text-decoration:none;\
line-height:2.55555556;border-radius:5px;-webkit-tap-highlight-color:transparent;overflow:hidden;\
color:#000;background-color:#f8f8f8}
wx-button[hidden]{display:none!important}
wx-button:after{content:" ";width:200%;height:200%;position:absolute;top:0;left:0;\
border:1px solid rgba(0,0,0,.2);transform:scale(.5);transform-origin:0 0;box-sizing:border-box;\
border-radius:10px}
wx-scroll-view{display:block;overflow-x:auto;overflow-y:hidden}
"""

_WX_LINE_CLAMP = re.compile(r"-wx-line-clamp\s*:\s*(\d+)\s*(?=;|\})")


def reference_css(css: str) -> str:
    """wcsc's CSS with ``-wx-line-clamp: N`` spelled as the -webkit-box trio Chromium draws.

    Assumed: WeChat draws ``-wx-line-clamp`` as N lines and an ellipsis, like the trio; no public
    stylesheet of the base library spells it, and Chromium ignores the property.
    """
    return _WX_LINE_CLAMP.sub(
        lambda m: f"display:-webkit-box;-webkit-box-orient:vertical;-webkit-line-clamp:{m.group(1)};overflow:hidden",
        css,
    )


def card_key(skill: Path, component: str) -> str:
    return f"{skill.name}/{component}"


def preview_data(skill: Path, component: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((skill / "components" / component / "preview.json").read_text("utf-8"))
    return data


def skillc_page(skill: Path, component: str) -> str:
    """skillc's whole HTML page for the card on its preview data, as `skillc render --data` makes it.

    Through the Python API rather than the command: the command refuses a card whose WXSS the
    official rules reject (gap, overflow, the -webkit-box trio), and the renderer is meant to draw
    those cards anyway.
    """
    sink = DiagnosticSink()
    pkg = load_skill(skill, sink)
    assert pkg is not None, list(sink)
    compiled = compile_component(pkg, component, sink)
    assert compiled is not None, list(sink)
    doc = CardRenderer(compiled, Viewport(width=WIDTH, height=HEIGHT), sink=sink).render(preview_data(skill, component))
    return render_html(doc, title=card_key(skill, component))


def reference_markup(node: str, cards: Iterable[tuple[Path, str]]) -> dict[str, tuple[str, str]]:
    """card key -> (the simulate DOM of wx-* elements, wcsc's CSS at WIDTH), one node run a skill."""
    by_skill: dict[Path, list[str]] = {}
    for skill, component in cards:
        by_skill.setdefault(skill, []).append(component)
    out: dict[str, tuple[str, str]] = {}
    with tempfile.TemporaryDirectory(prefix="skillc-fidelity-") as tmp:
        for skill, components in by_skill.items():
            job = {
                "width": WIDTH,
                "root": str(skill),
                "cards": [
                    {
                        "key": card_key(skill, c),
                        "component": str(skill / "components" / c / "index"),
                        "data": preview_data(skill, c),
                    }
                    for c in components
                ],
            }
            path = Path(tmp) / f"{skill.name}.json"
            path.write_text(json.dumps(job, ensure_ascii=False), encoding="utf-8")
            done = subprocess.run(
                [node, str(REFERENCE_SCRIPT), str(path)], capture_output=True, text=True, timeout=120, check=False
            )
            if done.returncode != 0:
                raise RuntimeError(f"the reference for {skill.name} failed: {done.stderr}")
            for key, made in json.loads(done.stdout).items():
                out[key] = (made["html"], made["css"])
    return out


def reference_page(markup: str, css: str) -> str:
    return (
        '<!DOCTYPE html>\n<html style="color-scheme:light">\n<head>\n<meta charset="utf-8">\n'
        f'<meta name="viewport" content="width={WIDTH}, initial-scale=1">\n'
        f"<style>\n{PAGE_CSS}{BUILTIN_CSS}</style>\n<style>\n{reference_css(css)}</style>\n</head>\n"
        f'<body style="width:{WIDTH}px">\n{markup}\n</body>\n</html>\n'
    )


# Every text, image and button element in document order, with its border box and the part of it
# that stays visible once each clipping ancestor (overflow other than visible) has cut it.
MEASURE_JS = """(selector) => {
  const kindOf = (el) => el.dataset.type || el.localName.replace(/^wx-/, '');
  return [...document.querySelectorAll(selector)].map((el) => {
    const r = el.getBoundingClientRect();
    let [l, t, rt, b] = [r.left, r.top, r.right, r.bottom];
    for (let a = el.parentElement; a; a = a.parentElement) {
      const s = getComputedStyle(a);
      if (s.overflowX === 'visible' && s.overflowY === 'visible') continue;
      const c = a.getBoundingClientRect();
      if (s.overflowX !== 'visible') { l = Math.max(l, c.left); rt = Math.min(rt, c.right); }
      if (s.overflowY !== 'visible') { t = Math.max(t, c.top); b = Math.min(b, c.bottom); }
    }
    return {kind: kindOf(el), fid: el.getAttribute('data-fid'), text: el.textContent.replace(/\\s+/g, ' ').trim(),
            x: r.left, y: r.top, w: r.width, h: r.height, vw: Math.max(0, rt - l), vh: Math.max(0, b - t)};
  });
}"""
SKILLC_SELECTOR = "[data-type=text],[data-type=image],[data-type=button]"
REFERENCE_SELECTOR = "wx-text,wx-image,wx-button"


@dataclass(frozen=True)
class Box:
    key: str
    kind: str
    text: str
    values: dict[str, float]


def boxes(measured: list[dict[str, Any]]) -> list[Box]:
    """Keys: the fixture's data-fid when the element has one, else kind and ordinal (text#3)."""
    counts: dict[str, int] = {}
    out = []
    for m in measured:
        n = counts.get(m["kind"], 0)
        counts[m["kind"]] = n + 1
        key = m.get("fid") or f"{m['kind']}#{n}"
        out.append(Box(key, m["kind"], m["text"], {k: float(m[k]) for k in MEASURES}))
    return out


def deltas(rendered: list[Box], reference: list[Box]) -> dict[str, dict[str, Any]]:
    """Per reference key: rendered - reference for each measure, rounded to 1/100 px.

    skillc's HTML does not carry data-* attributes of nodes without bindings, so elements are paired
    by document order; the kinds and texts must agree, or the two sides drew different trees.
    """
    shape = [(b.kind, b.text) for b in rendered]
    expected = [(b.kind, b.text) for b in reference]
    if shape != expected:
        raise AssertionError(f"the two sides hold different elements:\nskillc:    {shape}\nreference: {expected}")
    return {
        ref.key: {
            "kind": ref.kind,
            "text": ref.text[:40],
            "delta": {k: round(ours.values[k] - ref.values[k], 2) for k in MEASURES},
        }
        for ours, ref in zip(rendered, reference, strict=True)
    }


def worst(delta: Mapping[str, float]) -> float:
    return max(abs(v) for v in delta.values())


def reason_for(card: str, key: str) -> str | None:
    for (c, prefix), why in REASONS.items():
        if c == card and key.startswith(prefix):
            return why
    return None


def recorded_entry(card: str, key: str, measured: Mapping[str, Any]) -> dict[str, Any]:
    """The stored row: the delta today and the tolerance it is held to (TOLERANCE_PX unless explained)."""
    entry = dict(measured)
    far = worst(measured["delta"])
    if far <= TOLERANCE_PX:
        entry["tolerance"] = TOLERANCE_PX
        return entry
    # Half a pixel of slack above today's number, so font hinting noise does not fail the test.
    entry["tolerance"] = math.ceil(far * 2) / 2 + 0.5
    entry["reason"] = reason_for(card, key) or "UNEXPLAINED"
    return entry


def failures(card: str, now: Mapping[str, Mapping[str, Any]], stored: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Boxes now further from the reference than their recorded tolerance (better is never a failure)."""
    out = []
    if set(now) != set(stored):
        out.append(
            f"{card}: the boxes changed: new {sorted(set(now) - set(stored))}, gone {sorted(set(stored) - set(now))}"
        )
    for key in sorted(set(now) & set(stored)):
        tolerance = float(stored[key]["tolerance"])
        for measure, value in now[key]["delta"].items():
            if abs(value) > tolerance:
                was = stored[key]["delta"].get(measure)
                out.append(
                    f"{card} {key} ({now[key]['text']!r}): {measure} is {value:+.2f} px from the reference, "
                    f"recorded {was:+.2f}, tolerance {tolerance} px"
                )
    return out


def load_recorded() -> dict[str, Any]:
    if not RECORDED.exists():
        return {"cards": {}}
    recorded: dict[str, Any] = json.loads(RECORDED.read_text("utf-8"))
    return recorded


def write_recorded(cards: Mapping[str, Mapping[str, Any]]) -> None:
    """One line a box, so a re-record's diff shows which boxes moved."""
    head = {
        "about": "rendered - reference per box (px), see docs/fidelity.md; re-record with "
        f"{RECORD_ENV}=1 .venv/bin/pytest tests/test_fidelity_chromium.py",
        "viewport": {"width": WIDTH, "height": HEIGHT},
        "tolerance_px": TOLERANCE_PX,
    }
    lines = ["{"] + [f"  {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}," for k, v in head.items()]
    lines.append('  "cards": {')
    for i, card in enumerate(sorted(cards)):
        lines.append(f"    {json.dumps(card)}: {{")
        rows = cards[card]
        for j, (key, row) in enumerate(rows.items()):
            comma = "," if j < len(rows) - 1 else ""
            lines.append(f"      {json.dumps(key, ensure_ascii=False)}: {json.dumps(row, ensure_ascii=False)}{comma}")
        lines.append("    }" + ("," if i < len(cards) - 1 else ""))
    lines += ["  }", "}"]
    RECORDED.write_text("\n".join(lines) + "\n", encoding="utf-8")
