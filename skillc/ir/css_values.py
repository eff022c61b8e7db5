"""Reading resolved Render IR style values (px lengths, colors, font weights).

For whoever reads styles after evaluation: backends that map them, the card layout estimate.

Render IR styles are already resolved to px and plain values, so these readers stay small; a
value they do not understand reads as None and the caller falls back to its default.
"""

from __future__ import annotations

import colorsys
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

_PX = re.compile(r"^\s*(-?\d+(?:\.\d+)?|-?\.\d+)(px)?\s*$", re.ASCII)
_HEX = re.compile(r"^#([0-9a-fA-F]{3,4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$")
_FUNC = re.compile(r"^rgba?\(\s*([^)]*)\)$")

# Enough names for the heuristics; anything else reads as "no color".
_NAMED = {
    "black": (0, 0, 0),
    "white": (255, 255, 255),
    "red": (255, 0, 0),
    "green": (0, 128, 0),
    "blue": (0, 0, 255),
    "orange": (255, 165, 0),
    "yellow": (255, 255, 0),
    "gray": (128, 128, 128),
    "grey": (128, 128, 128),
    "silver": (192, 192, 192),
    "purple": (128, 0, 128),
}


@dataclass(frozen=True, slots=True)
class Rgba:
    r: int
    g: int
    b: int
    a: float = 1.0

    @property
    def hls(self) -> tuple[float, float, float]:
        """Hue in degrees [0, 360), lightness and saturation in [0, 1]."""
        h, lightness, s = colorsys.rgb_to_hls(self.r / 255, self.g / 255, self.b / 255)
        return h * 360, lightness, s


# Cards repeat the same few values on every node; parsing each once pays off.
@lru_cache(maxsize=1024)
def px(value: str | None) -> float | None:
    """`12px`, `12.5px` or a bare number (unitless 0) -> 12.0; anything else -> None."""
    if value is None:
        return None
    m = _PX.match(value)
    if m is None or (m.group(2) is None and float(m.group(1)) != 0):
        return None
    number = float(m.group(1))
    return number if math.isfinite(number) else None


@lru_cache(maxsize=1024)
def color(value: str | None) -> Rgba | None:
    """`#rgb`, `#rrggbb(aa)`, `rgb()`/`rgba()` (commas or spaces) or a basic name; else None."""
    if value is None:
        return None
    text = value.strip().lower()
    if text in _NAMED:
        return Rgba(*_NAMED[text])
    if text == "transparent":
        return Rgba(0, 0, 0, 0.0)
    m = _HEX.match(text)
    if m is not None:
        digits = m.group(1)
        if len(digits) <= 4:
            digits = "".join(c * 2 for c in digits)
        alpha = int(digits[6:8], 16) / 255 if len(digits) == 8 else 1.0
        return Rgba(int(digits[0:2], 16), int(digits[2:4], 16), int(digits[4:6], 16), alpha)
    m = _FUNC.match(text)
    if m is not None:
        parts = [p for p in re.split(r"[\s,/]+", m.group(1)) if p]
        if len(parts) in (3, 4):
            try:
                r, g, b = (_channel(p) for p in parts[:3])
                a = _alpha(parts[3]) if len(parts) == 4 else 1.0
            except ValueError:
                return None
            return Rgba(r, g, b, a)
    return None


@lru_cache(maxsize=1024)
def font_weight(value: str | None) -> int | None:
    """A numeric weight: `bold` 700, `normal` 400, `bolder` 700, `lighter` 300, numbers as is."""
    if value is None:
        return None
    text = value.strip().lower()
    named = {"normal": 400, "bold": 700, "bolder": 700, "lighter": 300}
    if text in named:
        return named[text]
    # isascii: "²" and "٣" are digits to isdigit(), and int() refuses the first.
    return int(text) if text.isascii() and text.isdigit() else None


def _channel(part: str) -> int:
    number = float(part[:-1]) * 2.55 if part.endswith("%") else float(part)
    if math.isnan(number):
        raise ValueError(part)
    return max(0, min(255, round(max(-1.0, min(256.0, number)))))  # round(inf) would overflow


def _alpha(part: str) -> float:
    number = float(part[:-1]) / 100 if part.endswith("%") else float(part)
    if math.isnan(number):
        raise ValueError(part)
    return max(0.0, min(1.0, number))


def gaps(style: Mapping[str, str]) -> tuple[float | None, float | None]:
    """(row gap, column gap) in px, None where the style sets none. Entries are in cascade
    order, so a later ``gap`` or longhand wins; ``normal``, % and calc() read as 0."""
    row = column = None
    for name, value in style.items():
        if name == "gap":
            parts = value.split()
            row = (px(parts[0]) or 0.0) if parts else 0.0
            column = (px(parts[-1]) or 0.0) if parts else 0.0
        elif name == "row-gap":
            row = px(value) or 0.0
        elif name == "column-gap":
            column = px(value) or 0.0
    return row, column


def line_clamp(style: Mapping[str, str]) -> int | None:
    """The number of lines ``-wx-line-clamp`` keeps (the -webkit-box trio already reads as it)."""
    text = style.get("-wx-line-clamp", "").strip()
    return int(text) if text.isascii() and text.isdigit() and int(text) >= 1 else None


_CLIPS = frozenset({"hidden", "clip"})


def clips_sideways(style: Mapping[str, str]) -> bool:
    """Does the box clip what overflows it sideways (``overflow`` or ``overflow-x`` hidden/clip)?"""
    x = None
    for name, value in style.items():  # cascade order: the later of overflow and overflow-x wins
        if name == "overflow-x" or (name == "overflow" and value.split()):
            x = value.split()[0] if value.split() else None
    return x in _CLIPS


def single_line_ellipsis(style: Mapping[str, str]) -> bool:
    """``white-space: nowrap`` + ``text-overflow: ellipsis`` + a sideways clip: one line, cut with "…"."""
    return (
        style.get("white-space", "").strip() == "nowrap"
        and "ellipsis" in style.get("text-overflow", "").split()
        and clips_sideways(style)
    )
