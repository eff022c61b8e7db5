"""What cards can render: supported properties and values, media features, selector hints.

The tables follow DESIGN.md "Card WXSS" and notes/ai-mode-spec.md section 5; the hints say
why a known CSS feature is refused and what to write instead. Only tables and lookups live
here: the parser's readers apply them.
"""

from __future__ import annotations

from functools import lru_cache

import tinycss2.color3

__all__ = ["DRAWN_PROPERTIES", "SUPPORTED_PROPERTIES"]

_SIDES = ("top", "right", "bottom", "left")
SUPPORTED_PROPERTIES: frozenset[str] = frozenset(
    {
        "display", "position", "top", "right", "bottom", "left", "box-sizing", "pointer-events",
        "color", "opacity", "visibility", "aspect-ratio",
        "flex", "flex-direction", "flex-wrap", "flex-flow", "flex-grow", "flex-shrink", "flex-basis",
        "justify-content", "align-items", "align-self", "align-content", "order",
        "background", "background-color", "background-image", "background-size", "background-position",
        "background-repeat", "background-clip", "background-origin",
        "mask", "mask-image", "mask-size", "mask-position", "mask-repeat", "mask-origin", "mask-clip", "mask-mode",
        "width", "height", "min-width", "max-width", "min-height", "max-height",
        "padding", "margin", "border", "border-width", "border-style", "border-color", "border-radius",
        "box-shadow", "text-shadow",
        "font", "font-size", "font-weight", "font-family", "font-style",
        "line-height", "text-align", "word-break", "white-space", "text-overflow", "text-indent",
        "vertical-align", "letter-spacing", "word-spacing", "-wx-line-clamp",
        "transform", "transform-origin", "filter",
    }
    | {f"padding-{s}" for s in _SIDES}
    | {f"margin-{s}" for s in _SIDES}
    | {f"border-{s}{p}" for s in _SIDES for p in ("", "-width", "-style", "-color")}
    | {f"border-{v}-{h}-radius" for v in ("top", "bottom") for h in ("left", "right")}
)  # fmt: skip

# The gate (V005) refuses these, yet WeChat's screenshots of published cards show them drawn:
# gap between a row's items, clipped boxes, ellipsis, -webkit-box line clamps. Left out, text
# runs together and spills past the card's edge, so the renderer keeps them while check still
# reports them as errors. -webkit-line-clamp and -webkit-box-orient count only with
# display: -webkit-box (the resolver reads the three together).
DRAWN_PROPERTIES: frozenset[str] = frozenset(
    {"gap", "row-gap", "column-gap", "overflow", "overflow-x", "overflow-y", "-webkit-line-clamp",
     "-webkit-box-orient"}
)  # fmt: skip
# The gate refuses animation; a static rendering shows what is left when it is over. For a
# transition that is the declared style; for an animation skillc does not resolve @keyframes,
# and draws the element's own style (CSS's state once an animation without fill-mode ends).
_END_STATE_PREFIXES = ("transition", "animation")

# Why a known CSS property is not allowed, shown as the hint.
_PROPERTY_HINTS: dict[str, str] = {
    "z-index": "cards stack elements in document order; reorder the elements instead",
    "float": "use display: flex",
    "clear": "use display: flex",
    "overflow": "to pass the gate, remove it; a card clips its content at its fixed height",
    "gap": "use margins on the children (margin-right on all but the last, or a class from the wx:for index)",
    "cursor": "cards are touch-only",
    "text-decoration": "cards cannot draw text decorations; use a border-bottom instead",
    "-webkit-line-clamp": "use -wx-line-clamp",
    "-webkit-box-orient": "use -wx-line-clamp with display: block",
}
_PREFIX_HINTS: tuple[tuple[str, str], ...] = (
    ("animation", "cards do not animate"),
    ("transition", "cards do not animate"),
    ("grid", "use display: flex"),
    ("row-gap", _PROPERTY_HINTS["gap"]),
    ("column-gap", _PROPERTY_HINTS["gap"]),
    ("text-decoration", _PROPERTY_HINTS["text-decoration"]),
    ("border-collapse", "cards have no tables"),
    ("border-spacing", "cards have no tables"),
    ("table-layout", "cards have no tables"),
)
_PROPERTY_HINTS["overflow-x"] = _PROPERTY_HINTS["overflow-y"] = _PROPERTY_HINTS["overflow"]
_KNOWN_CSS = frozenset(_PROPERTY_HINTS) | {
    "content", "outline", "resize", "user-select", "will-change", "clip-path", "object-fit", "list-style",
    "columns", "column-count", "backdrop-filter", "mix-blend-mode", "isolation", "contain", "inset",
    "scroll-behavior", "touch-action", "caret-color", "appearance", "word-wrap", "overflow-wrap",
}  # fmt: skip

_DISPLAY_OK = frozenset({"none", "inline", "inline-block", "block", "flex"})
_POSITION_OK = frozenset({"relative", "absolute", "static"})

# What WeChat's own validator fails a build for (notes/ai-mode-spec.md section 6, V005 in
# v0.2.1 and in the newer O6b rules): these findings are errors; the rest of what cards
# cannot render is skillc's own finding and stays a warning.
_OFFICIAL_PROPERTIES = frozenset(
    {"z-index", "float", "cursor", "gap", "row-gap", "column-gap", "overflow", "overflow-x", "overflow-y",
     "-webkit-line-clamp", "-webkit-box-orient"}
)  # fmt: skip
_OFFICIAL_PREFIXES = ("text-decoration", "transition", "animation")
_OFFICIAL_DISPLAY = frozenset(
    {"grid", "inline-grid", "inline-flex", "-webkit-box", "-webkit-inline-box", "table", "inline-table"}
    | {f"table-{p}" for p in ("row", "cell", "column", "caption", "row-group", "header-group", "footer-group",
                              "column-group")}
)  # fmt: skip
_OFFICIAL_POSITION = frozenset({"fixed", "sticky", "-webkit-sticky"})
# v0.2.1 means to let transitions of these through (its regex flags them anyway); O6b refuses
# every transition. A card renders the end state either way, so skillc only warns on them.
_TRANSITION_OK = frozenset({"opacity", "transform"})
_BORDER_STYLE_BAD = frozenset({"dashed", "dotted", "double", "groove", "ridge", "inset", "outset", "hidden"})
_BORDER_STYLE_PROPS = frozenset(
    {"border", "border-style"} | {f"border-{s}" for s in _SIDES} | {f"border-{s}-style" for s in _SIDES}
)
_GLOBAL_KEYWORDS = frozenset({"inherit", "initial", "unset"})

_MEDIA_LENGTH_FEATURES = frozenset({"width", "min-width", "max-width", "height", "min-height", "max-height"})
_MEDIA_KEYWORD_FEATURES = {"orientation": ("portrait", "landscape"), "prefers-color-scheme": ("light", "dark")}
_MEDIA_TYPES = frozenset({"all", "screen", "print"})

_SELECTOR_HINT = "card selectors are .class, #id, tag and descendants of them, separated by commas"
_PSEUDO_HINTS = {
    "hover": 'use hover-class="..." on the element',
    "active": 'use hover-class="..." on the element',
    "first-child": "add a class to the first item in the template",
    "last-child": "add a class to the last item in the template (wx:for index)",
    "nth-child": "add a class from the wx:for index",
    "first-of-type": "add a class to the first item in the template",
    "last-of-type": "add a class to the last item in the template (wx:for index)",
    "nth-of-type": "add a class from the wx:for index",
    "before": "put the content in the template as its own element",
    "after": "put the content in the template as its own element",
}


# Why cards refuse a property that is close to one they have (filter, mask) or that a page would
# use (user-select): the reason goes in the message, what to write instead in the hint.
_UNSUPPORTED_REASONS: dict[str, tuple[str, str]] = {
    "-webkit-filter": ("cards take only the unprefixed filter, with blur()", "write filter: blur(...)"),
    "backdrop-filter": (
        "cards blur only the element itself (filter: blur())",
        "put filter: blur(...) on an element of its own behind the content",
    ),
    "user-select": ("card text cannot be selected or copied", "remove it"),
    "-webkit-user-select": ("card text cannot be selected or copied", "remove it"),
}


def _unsupported_reason(name: str) -> tuple[str, str] | None:
    """(why cards do not have ``name``, what to write instead), for the properties that have one."""
    found = _UNSUPPORTED_REASONS.get(name)
    if found is None and name.startswith("-webkit-mask"):
        plain = name.removeprefix("-webkit-")
        if plain in SUPPORTED_PROPERTIES:
            return "cards take only the unprefixed mask properties", f"write {plain}"
        return "cards take only the unprefixed mask properties", "use mask, mask-image, mask-size or mask-position"
    return found


def _is_official_property(name: str) -> bool:
    return name in _OFFICIAL_PROPERTIES or name.startswith(_OFFICIAL_PREFIXES)


def _gate_message(raw_name: str, name: str) -> str:
    """The V005 finding for a property the renderer draws (or whose end state it draws)."""
    refused = f"'{raw_name}' is refused by WeChat's gate (V005)"
    if name == "-webkit-line-clamp":
        return (
            f"{refused}, while the renderer draws it as a line clamp together with display: -webkit-box "
            "and -webkit-box-orient: vertical, as WeChat does"
        )
    if name == "-webkit-box-orient":
        return (
            f"{refused}, while the renderer draws it as a line clamp together with display: -webkit-box "
            "and -webkit-line-clamp, as WeChat does"
        )
    if name.startswith("transition"):
        return f"{refused}, while the renderer draws its end state, the element's declared style, without animating"
    if name.startswith("animation"):
        return f"{refused}, while the renderer draws the element's own style, without animating"
    return f"{refused}, while the renderer draws it, as WeChat does"


def _property_hint(name: str) -> str | None:
    if name in _PROPERTY_HINTS:
        return _PROPERTY_HINTS[name]
    for prefix, hint in _PREFIX_HINTS:
        if name.startswith(prefix):
            return hint
    return None


@lru_cache(maxsize=4096)
def _is_color_name(name: str) -> bool:
    return tinycss2.color3.parse_color(name) is not None
