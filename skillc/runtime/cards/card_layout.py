"""A layout estimate of a card's rendered height, for the Overflow notification.

This is not a layout engine. It stacks block children, takes the tallest child of a flex row
or a horizontal scroll-view, adds vertical padding, border and margin, honours an explicit px
``height``, and wraps text by character count (CJK and full-width characters one em wide, others
0.55 em; ``white-space: nowrap`` keeps a run on one line). A flex container's gaps count: the
row gap between a column's items, the column gap out of a row's width; ``-wx-line-clamp: N``
(which the -webkit-box trio resolves to) caps the box at N lines. It ignores real font metrics,
``flex-wrap``, absolute positioning, percentage heights and images' intrinsic sizes (an image
without a px height is 3/4 of its width, or 240px). docs/components.md states these limits.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Callable, Hashable, Mapping
from functools import lru_cache

from skillc.ir.css_values import gaps, line_clamp, px
from skillc.ir.previews import DEFAULT_HEIGHT, PREVIEW_TAGS
from skillc.ir.render import TEXT, RenderNode
from skillc.runtime.cards.shared_memo import SharedMemo

# A card repeats the same few lengths on every node; parsing each once keeps a mount's layout cheap.
_px = lru_cache(maxsize=4096)(px)

_DEFAULT_FONT = 16.0
_LINE_FACTOR = 1.4
_IMAGE_HEIGHT = 240.0
# Every property _box reads: most nodes have none of them, and then the box adds nothing.
_SIDES = ("top", "bottom", "left", "right")
_BOX_PROPS = frozenset(
    ["padding", "margin", "border-width"]
    + [f"{prop}-{side}" for prop in ("padding", "margin") for side in _SIDES]
    + [f"border-{side}-width" for side in _SIDES]
)


def _box(style: Mapping[str, str], side: str) -> float:
    """Vertical (or horizontal) padding + margin + border of one side pair."""
    if _BOX_PROPS.isdisjoint(style):
        return 0.0
    total = 0.0
    sides = ("top", "bottom") if side == "v" else ("left", "right")
    for prop in ("padding", "margin"):
        parts = style.get(prop, "").split()
        if parts:
            values = [_px(p) or 0.0 for p in parts]
            if side == "v":
                total += values[0] + (values[2] if len(values) > 2 else values[0])
            else:
                right = values[1] if len(values) > 1 else values[0]
                total += right + (values[3] if len(values) > 3 else right)
        for s in sides:
            total += _px(style.get(f"{prop}-{s}")) or 0.0
    for s in sides:
        width = style.get(f"border-{s}-width") or (style.get("border-width") if "border-style" in style else None)
        total += _px(width) or 0.0
    return total


def _text_width(text: str, font: float) -> float:
    width = 0.0
    for ch in text:
        wide = unicodedata.east_asian_width(ch) in ("W", "F")
        width += font if wide else font * 0.55
    return width


def _line_height(style: Mapping[str, str], font: float) -> float:
    raw = style.get("line-height")
    px = _px(raw)
    if px is not None:
        return px
    try:
        return float(raw) * font if raw else font * _LINE_FACTOR
    except ValueError:
        return font * _LINE_FACTOR


def _layout(node: RenderNode, width: float, child: Callable[[RenderNode, float], float]) -> float:
    """The outer height of ``node`` in ``width`` px, given how to measure a child at a width."""
    style = node.style
    if style.get("display") == "none":
        return 0.0
    if node.type == TEXT:
        text = node.text or ""
        if not text.strip():
            return 0.0
        font = _px(style.get("font-size")) or _DEFAULT_FONT
        space = style.get("white-space")
        if space == "nowrap":
            lines = 1
        elif space == "pre":
            lines = text.count("\n") + 1
        else:
            lines = sum(max(1, math.ceil(_text_width(line, font) / max(width, 1.0))) for line in text.split("\n"))
        return lines * _line_height(style, font)
    outer_v = _box(style, "v")
    explicit = _px(style.get("height"))
    if explicit is not None:
        return explicit + outer_v
    if node.type == "image":
        img_w = _px(style.get("width"))
        return (img_w * 0.75 if img_w else _IMAGE_HEIGHT) + outer_v
    if node.type in PREVIEW_TAGS:  # a map or canvas box: 150px tall unless styled (as WeChat's canvas)
        return DEFAULT_HEIGHT + outer_v
    kids = node.children or []
    inner_w = max(width - _box(style, "h"), 1.0)
    flex = style.get("display") == "flex"
    row_gap, column_gap = gaps(style) if flex else (None, None)
    row = (flex and style.get("flex-direction", "row") in ("row", "row-reverse")) or (
        node.type == "scroll-view" and node.props.get("scroll-x") not in (None, False, "false")
    )
    if row and kids:
        gutters = (column_gap or 0.0) * (len(kids) - 1)
        share = max(inner_w - gutters, 1.0) / len(kids) if node.type != "scroll-view" else inner_w
        content = max(child(k, _px(k.style.get("width")) or share) for k in kids)
    else:
        content = sum(child(k, inner_w) for k in kids)
        if flex and row_gap:
            # A gap separates flex items, and an item with display: none is not one.
            items = sum(1 for k in kids if k.style.get("display") != "none")
            content += row_gap * max(items - 1, 0)
    clamp = line_clamp(style)
    if clamp is not None:
        content = min(content, clamp * _line_height(style, _px(style.get("font-size")) or _DEFAULT_FONT))
    return content + outer_v


def estimate_height(node: RenderNode, width: float) -> float:
    """The estimated outer height in px of ``node`` laid out in ``width`` px."""
    return _layout(node, width, estimate_height)


def _prefixes(node_id: str) -> list[str]:
    """``0.1.0[d02].2`` -> ``0``, ``0.1``, ``0.1.0[d02]``, itself: ids nest by template position."""
    out, depth = [], 0
    for i, ch in enumerate(node_id):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        elif ch == "." and depth == 0:
            out.append(node_id[:i])
    out.append(node_id)
    return out


class HeightCache:
    """Heights of unchanged subtrees are reused between events, so a tap costs what it changed.

    A patch dirties its node (and, through id prefixes, the node's ancestors and descendants);
    everything else keeps the height it had.
    """

    def __init__(self, width: float) -> None:
        self.width = width
        self._memo: dict[tuple[str, float], float] = {}

    def measure(self, root: RenderNode, dirty: set[str] | None = None) -> float:
        if dirty is None:
            self._memo.clear()
            return self._height(root, self.width, None, set())
        up = {p for d in dirty for p in _prefixes(d)} | {root.id}
        return self._height(root, self.width, dirty, up)

    def _height(self, node: RenderNode, width: float, dirty: set[str] | None, up: set[str]) -> float:
        key = (node.id, width)
        # Reused unless the node is a dirty node's ancestor (in ``up``) or lies inside a dirty subtree.
        if dirty is not None and node.id not in up and key in self._memo and dirty.isdisjoint(_prefixes(node.id)):
            return self._memo[key]
        height = _layout(node, width, lambda k, w: self._height(k, w, dirty, up))
        self._memo[key] = height
        return height


class FirstHeights(SharedMemo[tuple[str, Hashable, str], float]):
    """The height of a first render, by what decides it: the component, the viewport and the data.

    A first render is a function of those three, so cards mounted on the same data (every search
    for "latte") share one layout; a card whose height comes from here measures its subtrees when
    a patch first asks (its HeightCache starts empty). Bounded, oldest out first; the card threads
    share it.
    """

    def __init__(self, bound: int = 256) -> None:
        super().__init__(bound)
