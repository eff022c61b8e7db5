"""Resolved text styles -> the few text attributes Adaptive Cards has (size, weight, color, ...).

Adaptive Cards style text by intent, not by value: the host's theme decides what "Large" or
"Accent" look like. So each CSS value is bucketed; the thresholds sit halfway between the
sizes of the default host config (Small 12, Default 14, Medium 17, Large 21, ExtraLarge 26 px).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from skillc.ir import css_values

ColorScheme = Literal["light", "dark"]

# Text properties that inherit in CSS; the walk carries them down the tree so a `#text` run
# without a style of its own still reads its element's look.
INHERITED_TEXT_PROPERTIES = ("color", "font-size", "font-weight", "text-align", "white-space")

_SIZE_BUCKETS = ((13.0, "Small"), (15.5, None), (19.0, "Medium"), (23.5, "Large"))
# Spacings of the default host config: None 0, Small 3, Default 8, Medium 20, Large 30,
# ExtraLarge 40 px; a gap maps to the nearest (the midpoints split them).
_SPACING_BUCKETS = ((1.5, "None"), (5.5, "Small"), (14.0, "Default"), (25.0, "Medium"), (35.0, "Large"))
# Not CSS: the walk's mark that an element above cuts its text to one line with an ellipsis.
ELLIPSIS_MARK = "-skillc-ellipsis"


@dataclass(frozen=True, slots=True)
class TextLook:
    """How a run of text looks in card terms; None means the host default."""

    size: str | None = None
    weight: str | None = None
    color: str | None = None
    subtle: bool = False
    align: str | None = None
    wrap: bool = True
    max_lines: int | None = None  # a TextBlock's maxLines; a TextRun has none

    def run_attributes(self) -> dict[str, Any]:
        """The attributes a TextBlock and a TextRun share, in a fixed order."""
        out: dict[str, Any] = {}
        if self.size is not None:
            out["size"] = self.size
        if self.weight is not None:
            out["weight"] = self.weight
        if self.color is not None:
            out["color"] = self.color
        if self.subtle:
            out["isSubtle"] = True
        return out


def inherit(parent: Mapping[str, str], style: Mapping[str, str]) -> dict[str, str]:
    """The inherited text properties below an element with `style`.

    A line clamp and a single-line ellipsis are not inherited in CSS, but they cut the text the
    element holds, and a card's text sits in TextBlocks below it: the walk carries them down.
    """
    out = dict(parent)
    for prop in INHERITED_TEXT_PROPERTIES:
        if prop in style:
            out[prop] = style[prop]
    if "-wx-line-clamp" in style:
        out["-wx-line-clamp"] = style["-wx-line-clamp"]
    if "white-space" in out and css_values.single_line_ellipsis({**style, "white-space": out["white-space"]}):
        out[ELLIPSIS_MARK] = "1"
    return out


def text_look(style: Mapping[str, str], scheme: ColorScheme) -> TextLook:
    wrap = style.get("white-space", "").strip() not in ("nowrap", "pre")
    # maxLines 1 with wrap false: hosts cut a one-line TextBlock with an ellipsis.
    ellipsis = ELLIPSIS_MARK in style and not wrap
    return TextLook(
        size=font_size_bucket(css_values.px(style.get("font-size"))),
        weight=weight_bucket(css_values.font_weight(style.get("font-weight"))),
        color=color_intent(style.get("color")),
        subtle=is_subtle(style.get("color"), scheme),
        align={"center": "Center", "right": "Right", "end": "Right"}.get(style.get("text-align", "").strip()),
        wrap=wrap,
        max_lines=1 if ellipsis else css_values.line_clamp(style),
    )


def spacing_bucket(gap: float) -> str:
    """The card spacing nearest a gap of ``gap`` px."""
    for limit, bucket in _SPACING_BUCKETS:
        if gap < limit:
            return bucket
    return "ExtraLarge"


def font_size_bucket(size: float | None) -> str | None:
    if size is None:
        return None
    for limit, bucket in _SIZE_BUCKETS:
        if size < limit:
            return bucket
    return "ExtraLarge"


def weight_bucket(weight: int | None) -> str | None:
    if weight is None:
        return None
    if weight >= 600:
        return "Bolder"
    if weight <= 300:
        return "Lighter"
    return None


def color_intent(value: str | None) -> str | None:
    """A saturated color by hue: red Attention, orange/yellow Warning, green Good, else Accent.

    Greys and near-black/near-white stay the default: the card's background is not carried
    over, so a white-on-orange badge must not become white-on-white.
    """
    rgba = css_values.color(value)
    if rgba is None or rgba.a < 0.1:
        return None
    hue, lightness, saturation = rgba.hls
    if saturation < 0.35 or not 0.2 <= lightness <= 0.8:
        return None
    if hue < 15 or hue >= 330:
        return "Attention"
    if hue < 70:
        return "Warning"
    if hue < 170:
        return "Good"
    return "Accent"


def is_subtle(value: str | None, scheme: ColorScheme) -> bool:
    """A mid-lightness grey (secondary text such as `#8a7768`) is the host's subtle text.

    Primary text is near the opposite end of the scheme's background: dark on light, light on
    dark; a grey between the two ends is secondary in either scheme.
    """
    rgba = css_values.color(value)
    if rgba is None or rgba.a < 0.1:
        return False
    _, lightness, saturation = rgba.hls
    if saturation >= 0.35 and 0.2 <= lightness <= 0.8:
        return False
    low, high = (0.3, 0.75) if scheme == "light" else (0.35, 0.8)
    return low <= lightness <= high
