"""A card's 2d canvas drawing, replayed into an SVG picture for the static preview.

The Component VM records what a card does to a ``<canvas type="2d">`` context (one op per call
or property write, ``["fillRect", 0, 0, 10, 10]``, ``["set", "fillStyle", "#c8742c"]``); this
module checks each op against :data:`OPS` and paints the subset skillc supports into SVG:

- state: ``fillStyle`` / ``strokeStyle`` (CSS colour strings), ``lineWidth``, ``font``,
  ``textAlign``, ``textBaseline``, ``globalAlpha``, ``lineCap``, ``lineJoin``; ``save`` /
  ``restore``; ``scale``, ``translate``, ``rotate``, ``transform``, ``setTransform``,
  ``resetTransform``;
- paths: ``beginPath``, ``closePath``, ``moveTo``, ``lineTo``, ``rect``, ``arc``, ``ellipse``,
  ``quadraticCurveTo``, ``bezierCurveTo``, then ``fill`` / ``stroke``;
- shapes and text: ``fillRect``, ``strokeRect``, ``clearRect`` of the whole canvas (a partial
  clear is skipped: SVG has no eraser), ``fillText``, ``strokeText``.

Everything else a card may call (``drawImage``, gradients, patterns, ``clip``, line dashes,
image data) is skipped and named in :attr:`Picture.skipped`, so the runtime can say so.
Output is deterministic: the same ops give the same bytes.
"""

from __future__ import annotations

import base64
import math
import re
from dataclasses import dataclass, field, replace
from typing import Any
from xml.sax.saxutils import quoteattr

from skillc.ir.previews import CanvasDrawing

Number = float
Matrix = tuple[float, float, float, float, float, float]
IDENTITY: Matrix = (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)

# name -> (minimum, maximum) number of arguments after the name; "set" and the text ops take a
# string first. A call with the wrong arguments is skipped, as a browser ignores it.
OPS: dict[str, tuple[int, int]] = {
    "set": (2, 2),
    "save": (0, 0),
    "restore": (0, 0),
    "scale": (2, 2),
    "translate": (2, 2),
    "rotate": (1, 1),
    "transform": (6, 6),
    "setTransform": (6, 6),
    "resetTransform": (0, 0),
    "beginPath": (0, 0),
    "closePath": (0, 0),
    "moveTo": (2, 2),
    "lineTo": (2, 2),
    "rect": (4, 4),
    "arc": (5, 6),
    "ellipse": (7, 8),
    "quadraticCurveTo": (4, 4),
    "bezierCurveTo": (6, 6),
    "fill": (0, 1),
    "stroke": (0, 0),
    "fillRect": (4, 4),
    "strokeRect": (4, 4),
    "clearRect": (4, 4),
    "fillText": (3, 4),
    "strokeText": (3, 4),
    "unsupported": (1, 1),
}
STATE_PROPERTIES = frozenset(
    {"fillStyle", "strokeStyle", "lineWidth", "font", "textAlign", "textBaseline", "globalAlpha", "lineCap", "lineJoin"}
)
_TEXT_FIRST = frozenset({"set", "fillText", "strokeText", "unsupported"})
# A colour or font goes into an XML attribute: anything beyond plain CSS characters is refused.
_SAFE_TEXT = re.compile(r"^[\w\s#%.,()+\-/'\"]{0,200}$")
_FONT = re.compile(
    r"^\s*(?:(?P<style>italic|oblique|normal)\s+)?(?:(?P<variant>small-caps|normal)\s+)?"
    r"(?:(?P<weight>bold|bolder|lighter|normal|\d{3})\s+)?(?P<size>\d+(?:\.\d+)?)px(?:\s*/\s*\S+)?\s+(?P<family>.+?)\s*$"
)
_ANCHOR = {"start": "start", "left": "start", "center": "middle", "end": "end", "right": "end"}
_BASELINE = {
    "top": "text-before-edge",
    "hanging": "hanging",
    "middle": "central",
    "alphabetic": "alphabetic",
    "ideographic": "ideographic",
    "bottom": "text-after-edge",
}


@dataclass(frozen=True, slots=True)
class _State:
    fill: str = "#000000"
    stroke: str = "#000000"
    line_width: float = 1.0
    font: str = "10px sans-serif"
    align: str = "start"
    baseline: str = "alphabetic"
    alpha: float = 1.0
    cap: str = "butt"
    join: str = "miter"
    matrix: Matrix = IDENTITY


@dataclass
class Picture:
    """The painted SVG and the ops skillc skipped (by name, first seen first)."""

    svg: str
    skipped: list[str] = field(default_factory=list)

    def drawing(self, width: int, height: int) -> CanvasDrawing:
        data = base64.b64encode(self.svg.encode("utf-8")).decode("ascii")
        return CanvasDrawing(src=f"data:image/svg+xml;base64,{data}", width=width, height=height)


def _num(value: float) -> str:
    """A coordinate for SVG: at most 3 decimals, no exponent, no trailing zeros."""
    rounded = round(float(value), 3) if math.isfinite(value) else 0.0
    if rounded == int(rounded):
        return str(int(rounded))
    return f"{rounded:.3f}".rstrip("0")


def _multiply(m: Matrix, n: Matrix) -> Matrix:
    a, b, c, d, e, f = m
    a2, b2, c2, d2, e2, f2 = n
    return (
        a * a2 + c * b2,
        b * a2 + d * b2,
        a * c2 + c * d2,
        b * c2 + d * d2,
        a * e2 + c * f2 + e,
        b * e2 + d * f2 + f,
    )


def _apply(m: Matrix, x: float, y: float) -> tuple[float, float]:
    a, b, c, d, e, f = m
    return a * x + c * y + e, b * x + d * y + f


def _valid(op: Any) -> tuple[str, list[Any]] | None:
    if not isinstance(op, list) or not op or not isinstance(op[0], str) or op[0] not in OPS:
        return None
    name, args = op[0], op[1:]
    low, high = OPS[name]
    if not low <= len(args) <= high:
        return None
    for i, arg in enumerate(args):
        if i == 0 and name in _TEXT_FIRST:
            if not isinstance(arg, str):
                return None
        elif name == "set":
            if not isinstance(arg, str | int | float) or isinstance(arg, bool):
                return None
        elif name == "fill":
            if arg not in ("nonzero", "evenodd"):
                return None
        elif isinstance(arg, bool) and name in ("arc", "ellipse") and i == len(args) - 1 and len(args) == high:
            continue  # anticlockwise
        elif isinstance(arg, bool) or not isinstance(arg, int | float) or not math.isfinite(arg):
            return None
    return name, args


class _Painter:
    def __init__(self, width: int, height: int) -> None:
        self.width, self.height = width, height
        self.state = _State()
        self.stack: list[_State] = []
        self.path: list[str] = []
        self.start: tuple[float, float] | None = None  # the current subpath's first point
        self.last: tuple[float, float] | None = None
        self.items: list[str] = []
        self.skipped: list[str] = []

    def skip(self, name: str) -> None:
        if name not in self.skipped:
            self.skipped.append(name)

    # -- state ----------------------------------------------------------------------------

    def set(self, prop: str, value: Any) -> None:
        s = self.state
        if prop not in STATE_PROPERTIES:
            self.skip(prop)
        elif prop in ("fillStyle", "strokeStyle"):
            if isinstance(value, str) and _SAFE_TEXT.match(value) and value.strip():
                self.state = replace(s, fill=value.strip()) if prop == "fillStyle" else replace(s, stroke=value.strip())
            else:
                self.skip(f"{prop} (not a colour string)")
        elif prop in ("lineWidth", "globalAlpha"):
            if isinstance(value, int | float) and value >= 0:
                self.state = (
                    replace(s, line_width=float(value))
                    if prop == "lineWidth"
                    else replace(s, alpha=min(float(value), 1.0))
                )
        elif prop == "font":
            if isinstance(value, str) and _FONT.match(value) and _SAFE_TEXT.match(value):
                self.state = replace(s, font=value)
        elif prop == "textAlign" and value in _ANCHOR:
            self.state = replace(s, align=str(value))
        elif prop == "textBaseline" and value in _BASELINE:
            self.state = replace(s, baseline=str(value))
        elif prop == "lineCap" and value in ("butt", "round", "square"):
            self.state = replace(s, cap=str(value))
        elif prop == "lineJoin" and value in ("miter", "round", "bevel"):
            self.state = replace(s, join=str(value))

    def transform(self, m: Matrix) -> None:
        self.state = replace(self.state, matrix=_multiply(self.state.matrix, m))

    # -- paths (points are stored in bitmap space, as a canvas transforms them when added) ---

    def point(self, x: float, y: float) -> tuple[float, float]:
        return _apply(self.state.matrix, x, y)

    def move(self, x: float, y: float) -> None:
        px, py = self.point(x, y)
        self.path.append(f"M{_num(px)} {_num(py)}")
        self.start = self.last = (px, py)

    def line(self, x: float, y: float) -> None:
        if self.last is None:
            self.move(x, y)
            return
        px, py = self.point(x, y)
        self.path.append(f"L{_num(px)} {_num(py)}")
        self.last = (px, py)

    def curve(self, *points: float) -> None:
        if self.last is None:
            self.move(points[0], points[1])
        pts = [self.point(points[i], points[i + 1]) for i in range(0, len(points), 2)]
        letter = "Q" if len(pts) == 2 else "C"
        self.path.append(letter + " ".join(f"{_num(x)} {_num(y)}" for x, y in pts))
        self.last = pts[-1]

    def close(self) -> None:
        if self.path:
            self.path.append("Z")
            self.last = self.start

    def ellipse(self, x: float, y: float, rx: float, ry: float, rot: float, a0: float, a1: float, ccw: bool) -> None:
        if rx < 0 or ry < 0:
            return
        # A canvas arc sweeps clockwise unless ccw, at most one full turn (as CanvasRenderingContext2D).
        full = 2 * math.pi
        sweep = a1 - a0 if not ccw else a0 - a1
        sweep = full if sweep >= full else sweep % full
        if ccw:
            sweep = -sweep
        cos_r, sin_r = math.cos(rot), math.sin(rot)

        def at(angle: float) -> tuple[float, float]:
            ex, ey = rx * math.cos(angle), ry * math.sin(angle)
            return x + ex * cos_r - ey * sin_r, y + ex * sin_r + ey * cos_r

        sx, sy = at(a0)
        if self.last is None:
            self.move(sx, sy)
        else:
            self.line(sx, sy)
        # Cubic Beziers of at most a quarter turn each (the usual 4/3·tan(θ/4) handles).
        steps = max(1, math.ceil(abs(sweep) / (math.pi / 2) - 1e-9))
        step = sweep / steps
        k = 4 / 3 * math.tan(step / 4)
        angle = a0
        for _ in range(steps):
            b = angle + step
            p0, p3 = at(angle), at(b)
            d0 = (-rx * math.sin(angle), ry * math.cos(angle))
            d1 = (-rx * math.sin(b), ry * math.cos(b))
            c1 = (p0[0] + k * (d0[0] * cos_r - d0[1] * sin_r), p0[1] + k * (d0[0] * sin_r + d0[1] * cos_r))
            c2 = (p3[0] - k * (d1[0] * cos_r - d1[1] * sin_r), p3[1] - k * (d1[0] * sin_r + d1[1] * cos_r))
            self.curve(c1[0], c1[1], c2[0], c2[1], p3[0], p3[1])
            angle = b

    def rect_path(self, x: float, y: float, w: float, h: float) -> None:
        self.move(x, y)
        self.line(x + w, y)
        self.line(x + w, y + h)
        self.line(x, y + h)
        self.close()
        self.move(x, y)

    # -- painting --------------------------------------------------------------------------

    def _alpha(self, attr: str) -> str:
        return f' {attr}="{_num(self.state.alpha)}"' if self.state.alpha < 1 else ""

    def _stroke_attrs(self) -> str:
        s = self.state
        a, b, c, d, _, _ = s.matrix
        width = s.line_width * math.sqrt(abs(a * d - b * c))
        return (
            f' fill="none" stroke={quoteattr(s.stroke)} stroke-width="{_num(width)}"'
            f' stroke-linecap="{s.cap}" stroke-linejoin="{s.join}"' + self._alpha("stroke-opacity")
        )

    def fill(self, rule: str = "nonzero", path: str | None = None) -> None:
        d = path if path is not None else " ".join(self.path)
        if not d:
            return
        rule_attr = ' fill-rule="evenodd"' if rule == "evenodd" else ""
        self.items.append(
            f'<path d="{d}" fill={quoteattr(self.state.fill)}{rule_attr}' + self._alpha("fill-opacity") + "/>"
        )

    def stroke(self, path: str | None = None) -> None:
        d = path if path is not None else " ".join(self.path)
        if d:
            self.items.append(f'<path d="{d}"' + self._stroke_attrs() + "/>")

    def box(self, x: float, y: float, w: float, h: float) -> str:
        corners = [self.point(x, y), self.point(x + w, y), self.point(x + w, y + h), self.point(x, y + h)]
        return "M" + " L".join(f"{_num(px)} {_num(py)}" for px, py in corners) + " Z"

    def clear(self, x: float, y: float, w: float, h: float) -> None:
        xs, ys = zip(*(self.point(px, py) for px, py in ((x, y), (x + w, y), (x + w, y + h), (x, y + h))), strict=True)
        if min(xs) <= 0 and min(ys) <= 0 and max(xs) >= self.width and max(ys) >= self.height:
            self.items.clear()
        else:
            self.skip("clearRect (part of the canvas)")

    def text(self, content: str, x: float, y: float, *, stroke: bool) -> None:
        s = self.state
        m = _FONT.match(s.font)
        assert m is not None  # set() keeps only fonts that match
        weight = m.group("weight")
        family = m.group("family")
        attrs = [
            f'x="{_num(x)}" y="{_num(y)}"',
            f'font-size="{_num(float(m.group("size")))}"',
            f"font-family={quoteattr(family)}",
        ]
        if weight and weight != "normal":
            attrs.append(f'font-weight="{weight}"')
        if m.group("style") in ("italic", "oblique"):
            attrs.append(f'font-style="{m.group("style")}"')
        if _ANCHOR[s.align] != "start":
            attrs.append(f'text-anchor="{_ANCHOR[s.align]}"')
        if s.baseline != "alphabetic":
            attrs.append(f'dominant-baseline="{_BASELINE[s.baseline]}"')
        paint = self._stroke_attrs() if stroke else f" fill={quoteattr(s.fill)}" + self._alpha("fill-opacity")
        if s.matrix != IDENTITY:
            attrs.append('transform="matrix(' + " ".join(_num(v) for v in s.matrix) + ')"')
        body = content.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        self.items.append(f"<text {' '.join(attrs)}{paint}>{body}</text>")

    # -- dispatch --------------------------------------------------------------------------

    def run(self, name: str, a: list[Any]) -> None:
        if name == "set":
            self.set(a[0], a[1])
        elif name == "unsupported":
            self.skip(a[0])
        elif name == "save":
            self.stack.append(self.state)
        elif name == "restore":
            if self.stack:
                self.state = self.stack.pop()
        elif name == "scale":
            self.transform((a[0], 0.0, 0.0, a[1], 0.0, 0.0))
        elif name == "translate":
            self.transform((1.0, 0.0, 0.0, 1.0, a[0], a[1]))
        elif name == "rotate":
            c, s = math.cos(a[0]), math.sin(a[0])
            self.transform((c, s, -s, c, 0.0, 0.0))
        elif name == "transform":
            self.transform(tuple(float(v) for v in a))  # type: ignore[arg-type]
        elif name == "setTransform":
            self.state = replace(self.state, matrix=tuple(float(v) for v in a))  # type: ignore[arg-type]
        elif name == "resetTransform":
            self.state = replace(self.state, matrix=IDENTITY)
        elif name == "beginPath":
            self.path, self.start, self.last = [], None, None
        elif name == "closePath":
            self.close()
        elif name == "moveTo":
            self.move(a[0], a[1])
        elif name == "lineTo":
            self.line(a[0], a[1])
        elif name == "rect":
            self.rect_path(*a)
        elif name == "arc":
            self.ellipse(a[0], a[1], a[2], a[2], 0.0, a[3], a[4], bool(a[5]) if len(a) > 5 else False)
        elif name == "ellipse":
            x, y, rx, ry, rot, a0, a1 = a[:7]
            self.ellipse(x, y, rx, ry, rot, a0, a1, bool(a[7]) if len(a) > 7 else False)
        elif name in ("quadraticCurveTo", "bezierCurveTo"):
            self.curve(*a)
        elif name == "fill":
            self.fill(a[0] if a else "nonzero")
        elif name == "stroke":
            self.stroke()
        elif name == "fillRect":
            self.fill(path=self.box(*a))
        elif name == "strokeRect":
            self.stroke(path=self.box(*a))
        elif name == "clearRect":
            self.clear(*a)
        elif name in ("fillText", "strokeText"):
            self.text(a[0], a[1], a[2], stroke=name == "strokeText")


def paint(width: int, height: int, ops: list[Any]) -> Picture:
    """The SVG picture of ``ops`` on a ``width`` x ``height`` bitmap. An op that is not a valid
    call of :data:`OPS` is skipped and named (``"fillRect (bad arguments)"``)."""
    painter = _Painter(width, height)
    for op in ops:
        valid = _valid(op)
        if valid is None:
            name = op[0] if isinstance(op, list) and op and isinstance(op[0], str) else "?"
            painter.skip(f"{name} (bad arguments)" if name in OPS else name)
            continue
        painter.run(*valid)
    svg = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}">' + "".join(painter.items) + "</svg>"
    )
    return Picture(svg, painter.skipped)
