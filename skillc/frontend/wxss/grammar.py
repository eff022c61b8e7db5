"""The value grammar of every supported property: is ``width: 10qq`` CSS at all?

A browser drops a declaration whose value does not parse for its property, and the previous
declaration of that property wins; cards do the same, so a value that fails its grammar is
reported once (WXSS022) and marked unsupported. The grammars follow CSS (Values 4, Backgrounds
3, Fonts 4, Transforms 1, Filters 1) for what cards support (notes/ai-mode-spec.md section 5),
over the significant tinycss2 tokens of the value. Whether cards *render* a valid value
(``position: fixed``, a dotted border) is the card rules' question, asked after this one.

Values that need substituting are rejected before a grammar runs: ``var()`` (WXSS009) and
unsupported units (WXSS010), so a length here is always one cards can convert.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import tinycss2.color4

from skillc.frontend.wxss.card_rules import _DISPLAY_OK, _POSITION_OK
from skillc.frontend.wxss.tokens import Token, _significant, _split
from skillc.frontend.wxss.values import LENGTH_UNITS

__all__: list[str] = []

_Check = Callable[[Sequence[Token]], bool]


@dataclass(frozen=True, slots=True)
class _Grammar:
    check: _Check
    expected: str  # completes "expected ...": what the property takes, in words
    length: bool = False  # takes lengths: a unitless non-zero number gets the unit hint
    words: frozenset[str] = frozenset()  # a keyword property: a misspelt keyword gets "did you mean"


# -- single tokens -----------------------------------------------------------------------

_LENGTH_DIMS = LENGTH_UNITS - {"%"}
_ANGLE_UNITS = frozenset({"deg", "grad", "rad", "turn"})
_TIME_UNITS = frozenset({"s", "ms"})
_MATH = frozenset({"calc", "min", "max", "clamp"})
_SAFE_AREA = frozenset({f"safe-area-inset-{s}" for s in ("top", "right", "bottom", "left")})


def _is(tok: Token, kind: str, text: str) -> bool:
    return bool(tok.type == kind and tok.value == text)


def _math_ok(args: Sequence[Token]) -> bool:
    """calc() and friends: numbers, any dimension, operators, groups and nested math; not empty.

    Types inside are not unified (``calc(1px + 2)`` passes): cards hand calc() to the host.
    """
    sig = _significant(args)
    if not sig:
        return False
    for tok in sig:
        kind = tok.type
        if kind in ("number", "dimension", "percentage"):
            continue
        if kind == "literal" and tok.value in ("+", "-", "*", "/", ","):
            continue
        if kind == "() block" and _math_ok(tok.content):
            continue
        if kind == "function" and _math_function(tok):
            continue
        return False
    return True


def _math_function(tok: Token) -> bool:
    name = tok.lower_name
    if name in _MATH:
        return _math_ok(tok.arguments)
    if name in ("env", "constant"):  # constant(): iOS 11.0's spelling, still paired with env() in cards
        parts = _split(_significant(tok.arguments), ",")
        first = parts[0]
        return (
            len(first) == 1
            and first[0].type == "ident"
            and first[0].lower_value in _SAFE_AREA
            and (len(parts) == 1 or (len(parts) == 2 and len(parts[1]) == 1 and _length(parts[1][0])))
        )
    return False


def _length(tok: Token, percent: bool = True, negative: bool = True) -> bool:
    """A length cards convert (px rpx vw em rem), ``%`` when allowed, unitless 0, calc(), env()."""
    kind = tok.type
    if kind == "dimension":
        return tok.lower_unit in _LENGTH_DIMS and (negative or tok.value >= 0)
    if kind == "number":
        return bool(tok.value == 0)
    if kind == "percentage":
        return percent and (negative or tok.value >= 0)
    return kind == "function" and _math_function(tok)


def _size(tok: Token) -> bool:
    return _length(tok, negative=False)


def _number(tok: Token, negative: bool = True, integer: bool = False) -> bool:
    if tok.type == "number":
        return (negative or tok.value >= 0) and (not integer or bool(tok.is_integer))
    return tok.type == "function" and tok.lower_name in _MATH and _math_ok(tok.arguments)


def _angle(tok: Token) -> bool:
    if tok.type == "dimension":
        return tok.lower_unit in _ANGLE_UNITS
    if tok.type == "number":
        return bool(tok.value == 0)
    return tok.type == "function" and tok.lower_name in _MATH and _math_ok(tok.arguments)


def _number_or_percent(tok: Token) -> bool:
    return (tok.type == "percentage" and tok.value >= 0) or _number(tok, negative=False)


@lru_cache(maxsize=4096)
def _color_text(text: str) -> bool:
    return tinycss2.color4.parse_color(text) is not None


def _color(tok: Token) -> bool:
    kind = tok.type
    if kind == "ident":
        return _color_text(tok.lower_value)
    if kind == "hash":
        return _color_text("#" + tok.value)
    if kind == "function":
        return tinycss2.color4.parse_color(tok) is not None
    return False


def _keyword(words: frozenset[str]) -> Callable[[Token], bool]:
    def check(tok: Token) -> bool:
        return tok.type == "ident" and tok.lower_value in words

    return check


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# -- combinators ---------------------------------------------------------------------------


def _one(pred: Callable[[Token], bool]) -> _Check:
    return lambda toks: len(toks) == 1 and pred(toks[0])


def _repeat(pred: Callable[[Token], bool], low: int, high: int) -> _Check:
    return lambda toks: low <= len(toks) <= high and all(pred(t) for t in toks)


def _either(*checks: _Check) -> _Check:
    return lambda toks: any(c(toks) for c in checks)


def _commas(item: _Check) -> _Check:
    """``a, b, c``: every comma-separated item non-empty and valid."""

    def check(toks: Sequence[Token]) -> bool:
        return all(part and item(part) for part in _split(toks, ","))

    return check


def _any_order(*slots: Callable[[Token], bool]) -> _Check:
    """CSS ``a || b || c``, each slot one token at most once; the slots here never overlap."""

    def check(toks: Sequence[Token]) -> bool:
        if not toks or len(toks) > len(slots):
            return False
        used = [False] * len(slots)
        for tok in toks:
            for i, slot in enumerate(slots):
                if not used[i] and slot(tok):
                    used[i] = True
                    break
            else:
                return False
        return True

    return check


# -- the property grammars -----------------------------------------------------------------

_LENGTH_WORDS = "a length (px, rpx, vw, em, rem or %; 0 needs no unit) or calc()"
_SIDE_KEYWORDS = _words("left right top bottom center")
_BOX = _words("border-box padding-box content-box")
_LINE_STYLE = _words("none hidden dotted dashed solid double groove ridge inset outset")
_LINE_WIDTH_WORDS = _words("thin medium thick")
_DISPLAY = _words(
    "none inline inline-block block flex contents list-item flow-root run-in grid inline-grid inline-flex "
    "table inline-table table-row table-cell table-column table-caption table-row-group table-header-group "
    "table-footer-group table-column-group -webkit-box -webkit-inline-box -webkit-flex"
)
_POSITION = _words("static relative absolute fixed sticky -webkit-sticky")
_FONT_SIZE_WORDS = _words("xx-small x-small small medium large x-large xx-large xxx-large larger smaller")
_FONT_STYLE = _words("normal italic oblique")
_FONT_WEIGHT_WORDS = _words("normal bold bolder lighter")
_FONT_STRETCH = _words(
    "ultra-condensed extra-condensed condensed semi-condensed semi-expanded expanded extra-expanded ultra-expanded"
)
_FONT_SYSTEM = _words("caption icon menu message-box small-caption status-bar")
_GRADIENTS = _words(
    "linear-gradient radial-gradient conic-gradient repeating-linear-gradient "
    "repeating-radial-gradient repeating-conic-gradient -webkit-linear-gradient -webkit-radial-gradient"
)
_FILTERS = _words("blur brightness contrast grayscale hue-rotate invert opacity saturate sepia drop-shadow")
_REPEAT = _words("repeat space round no-repeat")
_REPEAT_AXIS = _words("repeat-x repeat-y")
_ATTACHMENT = _words("scroll fixed local")


def _length_or(words: str, percent: bool = True, negative: bool = True) -> Callable[[Token], bool]:
    allowed = _words(words)
    return lambda tok: (tok.type == "ident" and tok.lower_value in allowed) or _length(tok, percent, negative)


def _line_width(tok: Token) -> bool:
    return (tok.type == "ident" and tok.lower_value in _LINE_WIDTH_WORDS) or _length(tok, False, False)


def _font_weight(tok: Token) -> bool:
    if tok.type == "ident":
        return tok.lower_value in _FONT_WEIGHT_WORDS
    return tok.type == "number" and bool(1 <= tok.value <= 1000)


def _font_size(tok: Token) -> bool:
    return (tok.type == "ident" and tok.lower_value in _FONT_SIZE_WORDS) or _size(tok)


def _line_height(tok: Token) -> bool:
    return _is_word(tok, "normal") or _number(tok, negative=False) or _size(tok)


def _is_word(tok: Token, word: str) -> bool:
    return tok.type == "ident" and bool(tok.lower_value == word)


def _family(toks: Sequence[Token]) -> bool:
    """``"PingFang SC", Helvetica Neue, sans-serif``: strings or runs of identifiers."""
    for part in _split(toks, ","):
        if not part:
            return False
        if len(part) == 1 and part[0].type == "string":
            continue
        if not all(t.type == "ident" for t in part):
            return False
    return True


def _font(toks: Sequence[Token]) -> bool:
    """``[style || weight || stretch || small-caps]? size [/ line-height]? family`` or a system font."""
    if len(toks) == 1:
        return _keyword(_FONT_SYSTEM)(toks[0])
    i, n = 0, len(toks)
    while i < n and i < 4 and not _font_size(toks[i]):
        tok = toks[i]
        word = tok.lower_value if tok.type == "ident" else None
        if not (word in _FONT_STYLE or word == "small-caps" or word in _FONT_STRETCH or _font_weight(tok)):
            return False
        i += 1
    if i >= n or not _font_size(toks[i]):
        return False
    i += 1
    if i < n and _is(toks[i], "literal", "/"):
        if i + 1 >= n or not _line_height(toks[i + 1]):
            return False
        i += 2
    return i < n and _family(toks[i:])


def _flex(toks: Sequence[Token]) -> bool:
    """``none | auto | <grow> <shrink>? || <basis>``."""
    if len(toks) == 1 and _keyword(_words("none auto content"))(toks[0]):
        return True
    if not 1 <= len(toks) <= 3:
        return False
    numbers = [i for i, t in enumerate(toks) if _number(t, negative=False)]
    if len(numbers) == 3:  # flex: 1 1 0: a third number is the basis (0)
        numbers = numbers[:2]
    if len(numbers) == 2 and numbers[1] != numbers[0] + 1:
        return False
    rest = [i for i in range(len(toks)) if i not in numbers]
    if len(rest) > 1 or (rest and numbers and rest[0] not in (0, len(toks) - 1)):
        return False
    return all(_flex_basis(toks[i]) for i in rest)


def _flex_basis(tok: Token) -> bool:
    return _length_or("auto content max-content min-content fit-content", negative=False)(tok)


def _ratio(toks: Sequence[Token]) -> bool:
    if len(toks) == 1:
        return _number(toks[0], negative=False)
    return (
        len(toks) == 3
        and _number(toks[0], negative=False)
        and _is(toks[1], "literal", "/")
        and _number(toks[2], negative=False)
    )


def _aspect_ratio(toks: Sequence[Token]) -> bool:
    """``auto || <ratio>``: auto before or after the ratio."""
    if toks and _is_word(toks[0], "auto"):
        toks = toks[1:]
    elif toks and _is_word(toks[-1], "auto"):
        toks = toks[:-1]
    else:
        return _ratio(toks)
    return not toks or _ratio(toks)


def _border_radius(toks: Sequence[Token]) -> bool:
    groups = _split(toks, "/")
    return 1 <= len(groups) <= 2 and all(1 <= len(g) <= 4 and all(_size(t) for t in g) for g in groups)


def _shadow(inset: bool, most: int) -> _Check:
    """``inset? && <length>{2,most} && <color>?``, the lengths together, blur not negative."""

    def layer(toks: Sequence[Token]) -> bool:
        lengths: list[Token] = []
        seen_inset = seen_color = False
        run_over = False
        for tok in toks:
            if _length(tok, percent=False):
                if run_over:
                    return False
                lengths.append(tok)
                continue
            if lengths:
                run_over = True
            if inset and _is_word(tok, "inset") and not seen_inset:
                seen_inset = True
            elif _color(tok) and not seen_color:
                seen_color = True
            else:
                return False
        if not 2 <= len(lengths) <= most:
            return False
        return len(lengths) < 3 or _length(lengths[2], percent=False, negative=False)

    none = _one(_keyword(_words("none")))
    return _either(none, _commas(layer))


def _color_stops(parts: Sequence[Sequence[Token]]) -> bool:
    """Colour stops (``color <position>{0,2}``) and hints (a lone position); two colours at least."""
    colors = 0
    for part in parts:
        if _color(part[0]):
            if len(part) > 3 or not all(_length(t) or _angle(t) for t in part[1:]):
                return False
            colors += 1
        elif not (len(part) == 1 and (_length(part[0]) or _angle(part[0]))):
            return False
    return colors >= 2


def _gradient(tok: Token) -> bool:
    if tok.type != "function" or tok.lower_name not in _GRADIENTS:
        return False
    parts = _split(_significant(tok.arguments), ",")
    if not parts or any(not p for p in parts):
        return False
    first = parts[0]
    if not _color(first[0]):  # a direction, shape, size or position prelude
        allowed = _SIDE_KEYWORDS | _words(
            "to at circle ellipse closest-side closest-corner farthest-side farthest-corner from in"
        )
        if not all((t.type == "ident" and t.lower_value in allowed) or _length(t) or _angle(t) for t in first):
            return False
        parts = parts[1:]
    return _color_stops(parts)


def _image(tok: Token) -> bool:
    if tok.type == "url" or _is_word(tok, "none"):
        return True
    if tok.type == "function" and tok.lower_name == "url":
        return True
    return _gradient(tok)


def _position_part(tok: Token) -> bool:
    return (tok.type == "ident" and tok.lower_value in _SIDE_KEYWORDS) or _length(tok)


def _bg_size(toks: Sequence[Token]) -> bool:
    if len(toks) == 1 and _keyword(_words("cover contain"))(toks[0]):
        return True
    return 1 <= len(toks) <= 2 and all(_length_or("auto", negative=False)(t) for t in toks)


def _bg_repeat(toks: Sequence[Token]) -> bool:
    if len(toks) == 1 and _keyword(_REPEAT_AXIS)(toks[0]):
        return True
    return 1 <= len(toks) <= 2 and all(_keyword(_REPEAT)(t) for t in toks)


def _layer(toks: Sequence[Token], color: bool, boxes: frozenset[str], extra: frozenset[str]) -> bool:
    """One background (or mask) layer, each component at most once, in any order."""
    seen: set[str] = set()
    i, n = 0, len(toks)

    def take(what: str) -> bool:
        if what in seen:
            return False
        seen.add(what)
        return True

    while i < n:
        tok = toks[i]
        if _image(tok) and take("image"):
            i += 1
        elif _position_part(tok) and take("position"):
            j = i
            while j < n and j - i < 4 and _position_part(toks[j]):
                j += 1
            i = j
            if i < n and _is(toks[i], "literal", "/"):
                j = i + 1
                while (
                    j < n
                    and j - i <= 2
                    and (_length_or("auto", negative=False)(toks[j]) or _keyword(_words("cover contain"))(toks[j]))
                ):
                    j += 1
                if not _bg_size(toks[i + 1 : j]):
                    return False
                i = j
        elif (_keyword(_REPEAT)(tok) or _keyword(_REPEAT_AXIS)(tok)) and take("repeat"):
            j = i + 1
            if j < n and _keyword(_REPEAT)(toks[j]) and _keyword(_REPEAT)(tok):
                j += 1
            i = j
        elif (slot := _layer_slot(tok, color, boxes, extra)) is not None and (
            take(slot) or (slot == "box" and take("box2"))
        ):
            i += 1
        else:
            return False
    return n > 0


def _layer_slot(tok: Token, color: bool, boxes: frozenset[str], extra: frozenset[str]) -> str | None:
    """The one-token component of a layer ``tok`` is, if any."""
    if tok.type == "ident":
        word = tok.lower_value
        if color and word in _ATTACHMENT:
            return "attachment"
        if word in boxes:
            return "box"  # origin, then clip: twice at most
        if word in extra:
            return "extra"
    return "color" if color and _color(tok) else None


def _background(toks: Sequence[Token]) -> bool:
    layers = _split(toks, ",")
    return all(
        layer and _layer(layer, color=i == len(layers) - 1, boxes=_BOX | {"text"}, extra=frozenset())
        for i, layer in enumerate(layers)
    )


_MASK_BOX = _BOX | _words("fill-box stroke-box view-box no-clip")
_MASK_EXTRA = _words("alpha luminance match-source add subtract intersect exclude")


def _mask(toks: Sequence[Token]) -> bool:
    return all(layer and _layer(layer, False, _MASK_BOX, _MASK_EXTRA) for layer in _split(toks, ","))


_TRANSFORMS: dict[str, tuple[Callable[[Token], bool], int, int]] = {
    "translate": (_length, 1, 2),
    "translatex": (_length, 1, 1),
    "translatey": (_length, 1, 1),
    "translatez": (lambda t: _length(t, percent=False), 1, 1),
    "translate3d": (_length, 3, 3),
    "scale": (_number_or_percent, 1, 2),
    "scalex": (_number_or_percent, 1, 1),
    "scaley": (_number_or_percent, 1, 1),
    "scalez": (_number_or_percent, 1, 1),
    "scale3d": (_number_or_percent, 3, 3),
    "rotate": (_angle, 1, 1),
    "rotatex": (_angle, 1, 1),
    "rotatey": (_angle, 1, 1),
    "rotatez": (_angle, 1, 1),
    "rotate3d": (lambda t: _number(t) or _angle(t), 4, 4),
    "skew": (_angle, 1, 2),
    "skewx": (_angle, 1, 1),
    "skewy": (_angle, 1, 1),
    "matrix": (_number, 6, 6),
    "matrix3d": (_number, 16, 16),
    "perspective": (lambda t: _length(t, percent=False, negative=False) or _is_word(t, "none"), 1, 1),
}


def _function_args(tok: Token, pred: Callable[[Token], bool], low: int, high: int) -> bool:
    args = _significant(tok.arguments)
    if not args:
        return low == 0
    parts = _split(args, ",")
    return low <= len(parts) <= high and all(len(p) == 1 and pred(p[0]) for p in parts)


def _transform(toks: Sequence[Token]) -> bool:
    if len(toks) == 1 and _is_word(toks[0], "none"):
        return True
    for tok in toks:
        spec = _TRANSFORMS.get(tok.lower_name) if tok.type == "function" else None
        if spec is None or not _function_args(tok, *spec):
            return False
    return bool(toks)


def _filter_function(tok: Token) -> bool:
    if tok.type == "url" or (tok.type == "function" and tok.lower_name == "url"):
        return True
    if tok.type != "function" or tok.lower_name not in _FILTERS:
        return False
    name = tok.lower_name
    if name == "blur":
        return _function_args(tok, lambda t: _length(t, percent=False, negative=False), 0, 1)
    if name == "hue-rotate":
        return _function_args(tok, _angle, 0, 1)
    if name == "drop-shadow":
        args = _significant(tok.arguments)
        return _shadow(inset=False, most=3)(args) and "," not in [t.value for t in args if t.type == "literal"]
    return _function_args(tok, _number_or_percent, 0, 1)


def _filter(toks: Sequence[Token]) -> bool:
    if len(toks) == 1 and _is_word(toks[0], "none"):
        return True
    return bool(toks) and all(_filter_function(t) for t in toks)


def _transform_origin(toks: Sequence[Token]) -> bool:
    if not 1 <= len(toks) <= 3:
        return False
    if len(toks) == 3 and not _length(toks[2], percent=False):
        return False
    return all(_position_part(t) for t in toks[:2])


def _text_overflow(tok: Token) -> bool:
    return tok.type == "string" or _keyword(_words("clip ellipsis"))(tok)


def _keywords(text: str) -> _Grammar:
    words = _words(text)
    listed = sorted(words)
    expected = "one of " + ", ".join(listed[:-1]) + " or " + listed[-1] if len(listed) > 1 else listed[0]
    return _Grammar(_one(_keyword(words)), expected, words=words)


_LP = "a length or percentage"
_LINE_CLAMP = _Grammar(
    _one(
        lambda t: (
            _is_word(t, "none") or (_number(t, negative=False, integer=True) and t.type == "number" and t.value >= 1)
        )
    ),
    "a whole number of lines, 1 or more",
)
_GAP_WORDS = f"normal or {_LP}, not negative"
_GAP = _Grammar(_one(_length_or("normal", negative=False)), _GAP_WORDS, length=True)
_OVERFLOW = _words("visible hidden clip scroll auto")
_GRAMMARS: dict[str, _Grammar] = {
    "display": _Grammar(_one(_keyword(_DISPLAY)), "none, inline, inline-block, block or flex", words=_DISPLAY_OK),
    "position": _Grammar(_one(_keyword(_POSITION)), "relative, absolute or static", words=_POSITION_OK),
    "box-sizing": _keywords("content-box border-box"),
    "pointer-events": _keywords("auto none"),
    "color": _Grammar(_one(_color), "a colour (#rgb, #rrggbb, rgb(), rgba(), hsl(), a colour name, transparent)"),
    "opacity": _Grammar(_one(_number_or_percent), "a number (0 to 1) or a percentage"),
    "visibility": _keywords("visible hidden collapse"),
    "aspect-ratio": _Grammar(_aspect_ratio, "auto or a ratio such as 16 / 9"),
    "flex": _Grammar(_flex, "none, auto, or grow [shrink] [basis] such as 1 1 0"),
    "flex-direction": _keywords("row row-reverse column column-reverse"),
    "flex-wrap": _keywords("nowrap wrap wrap-reverse"),
    "flex-flow": _Grammar(
        _any_order(
            _keyword(_words("row row-reverse column column-reverse")), _keyword(_words("nowrap wrap wrap-reverse"))
        ),
        "a direction (row, column, ...) and/or a wrap (nowrap, wrap, wrap-reverse)",
    ),
    "flex-grow": _Grammar(_one(lambda t: _number(t, negative=False)), "a number, 0 or more"),
    "flex-shrink": _Grammar(_one(lambda t: _number(t, negative=False)), "a number, 0 or more"),
    "flex-basis": _Grammar(_one(_flex_basis), f"auto, content or {_LP}", length=True),
    "justify-content": _keywords(
        "flex-start flex-end center space-between space-around space-evenly start end left right normal stretch"
    ),
    "align-items": _keywords("flex-start flex-end center baseline stretch start end self-start self-end normal"),
    "align-self": _keywords("auto flex-start flex-end center baseline stretch start end self-start self-end normal"),
    "align-content": _keywords(
        "flex-start flex-end center space-between space-around space-evenly stretch start end normal baseline"
    ),
    "order": _Grammar(_one(lambda t: _number(t, integer=True)), "a whole number"),
    "background": _Grammar(
        _background, "background layers: a colour, url() or gradient, position / size, repeat", length=True
    ),
    "background-color": _Grammar(_one(_color), "a colour"),
    "background-image": _Grammar(_commas(_one(_image)), "none, url() or a gradient, separated by commas"),
    "background-size": _Grammar(_commas(_bg_size), f"cover, contain, or one or two of auto / {_LP}", length=True),
    "background-position": _Grammar(
        _commas(_repeat(_position_part, 1, 4)), f"one to four of left, center, right, top, bottom or {_LP}", length=True
    ),
    "background-repeat": _Grammar(_commas(_bg_repeat), "repeat, repeat-x, repeat-y, no-repeat, space or round"),
    "background-clip": _Grammar(
        _commas(_one(_keyword(_BOX | {"text"}))), "border-box, padding-box, content-box or text"
    ),
    "background-origin": _Grammar(_commas(_one(_keyword(_BOX))), "border-box, padding-box or content-box"),
    "mask": _Grammar(_mask, "mask layers: url() or a gradient, position / size, repeat", length=True),
    "mask-image": _Grammar(_commas(_one(_image)), "none, url() or a gradient, separated by commas"),
    "mask-size": _Grammar(_commas(_bg_size), f"cover, contain, or one or two of auto / {_LP}", length=True),
    "mask-position": _Grammar(
        _commas(_repeat(_position_part, 1, 4)), f"one to four of left, center, right, top, bottom or {_LP}", length=True
    ),
    "mask-repeat": _Grammar(_commas(_bg_repeat), "repeat, repeat-x, repeat-y, no-repeat, space or round"),
    "mask-origin": _Grammar(
        _commas(_one(_keyword(_MASK_BOX - {"no-clip"}))), "a box: border-box, padding-box, content-box, ..."
    ),
    "mask-clip": _Grammar(
        _commas(_one(_keyword(_MASK_BOX))), "a box: border-box, padding-box, content-box, no-clip, ..."
    ),
    "mask-mode": _Grammar(
        _commas(_one(_keyword(_words("alpha luminance match-source")))), "alpha, luminance or match-source"
    ),
    "border": _Grammar(
        _any_order(_line_width, _keyword(_LINE_STYLE), _color),
        "a width, a style and a colour, such as 1px solid #eee",
        length=True,
    ),
    "border-width": _Grammar(
        _repeat(_line_width, 1, 4), "one to four widths (a length, thin, medium or thick)", length=True
    ),
    "border-style": _Grammar(_repeat(_keyword(_LINE_STYLE), 1, 4), "one to four of none, solid, ..."),
    "border-color": _Grammar(_repeat(_color, 1, 4), "one to four colours"),
    "border-radius": _Grammar(
        _border_radius, "one to four lengths or percentages (0 or more), optionally / one to four more", length=True
    ),
    "box-shadow": _Grammar(
        _shadow(inset=True, most=4), "none, or [inset] x y [blur [spread]] [colour], separated by commas", length=True
    ),
    "text-shadow": _Grammar(
        _shadow(inset=False, most=3), "none, or x y [blur] [colour], separated by commas", length=True
    ),
    "font": _Grammar(_font, "[style] [weight] size[/line-height] family, such as bold 14px sans-serif"),
    "font-size": _Grammar(_one(_font_size), f"{_LENGTH_WORDS}, not negative, or a keyword such as small", length=True),
    "font-weight": _Grammar(_one(_font_weight), "normal, bold, bolder, lighter or a number from 1 to 1000"),
    "font-family": _Grammar(_family, "font names (quoted, or plain words) separated by commas"),
    "font-style": _Grammar(
        lambda toks: (
            _one(_keyword(_FONT_STYLE))(toks) or (len(toks) == 2 and _is_word(toks[0], "oblique") and _angle(toks[1]))
        ),
        "normal, italic or oblique",
    ),
    "line-height": _Grammar(
        _one(_line_height), "normal, a number (1.5) or a length or percentage, 0 or more", length=False
    ),
    "text-align": _keywords("left right center justify start end justify-all match-parent"),
    "word-break": _keywords("normal break-all keep-all break-word"),
    "white-space": _keywords("normal nowrap pre pre-wrap pre-line break-spaces"),
    "text-overflow": _Grammar(_repeat(_text_overflow, 1, 2), "clip, ellipsis or a string"),
    "text-indent": _Grammar(
        lambda toks: (
            1 <= len(toks) <= 3
            and sum(1 for t in toks if _length(t)) == 1
            and all(_length(t) or _keyword(_words("hanging each-line"))(t) for t in toks)
        ),
        _LP,
        length=True,
    ),
    "vertical-align": _Grammar(
        _one(_length_or("baseline sub super text-top text-bottom middle top bottom")),
        f"baseline, middle, top, bottom, text-top, text-bottom, sub, super or {_LP}",
        length=True,
    ),
    "letter-spacing": _Grammar(_one(_length_or("normal", percent=False)), "normal or a length", length=True),
    "word-spacing": _Grammar(_one(_length_or("normal")), f"normal or {_LP}", length=True),
    "-wx-line-clamp": _LINE_CLAMP,
    "-webkit-line-clamp": _LINE_CLAMP,
    "-webkit-box-orient": _keywords("horizontal vertical inline-axis block-axis"),
    "gap": _Grammar(_repeat(_length_or("normal", negative=False), 1, 2), f"one or two of {_GAP_WORDS}", length=True),
    "row-gap": _GAP,
    "column-gap": _GAP,
    "overflow": _Grammar(
        _repeat(_keyword(_OVERFLOW), 1, 2), "one or two of visible, hidden, clip, scroll or auto", words=_OVERFLOW
    ),
    "overflow-x": _keywords("visible hidden clip scroll auto"),
    "overflow-y": _keywords("visible hidden clip scroll auto"),
    "transform": _Grammar(
        _transform, "none or transform functions: translate(), scale(), rotate(), skew(), matrix()", length=True
    ),
    "transform-origin": _Grammar(
        _transform_origin, f"one to three of left, center, right, top, bottom or {_LP}", length=True
    ),
    "filter": _Grammar(_filter, "none or filter functions such as blur(4px)"),
}

_EDGE = _Grammar(_one(_length_or("auto")), f"auto or {_LENGTH_WORDS}", length=True)
for _side in ("top", "right", "bottom", "left"):
    _GRAMMARS[_side] = _EDGE
    _GRAMMARS[f"margin-{_side}"] = _EDGE
    _GRAMMARS[f"padding-{_side}"] = _Grammar(_one(_size), f"{_LENGTH_WORDS}, not negative", length=True)
    _GRAMMARS[f"border-{_side}"] = _GRAMMARS["border"]
    _GRAMMARS[f"border-{_side}-width"] = _Grammar(_one(_line_width), "a length, thin, medium or thick", length=True)
    _GRAMMARS[f"border-{_side}-style"] = _Grammar(_one(_keyword(_LINE_STYLE)), "none, solid, ...")
    _GRAMMARS[f"border-{_side}-color"] = _Grammar(_one(_color), "a colour")
for _corner in ("top-left", "top-right", "bottom-left", "bottom-right"):
    _GRAMMARS[f"border-{_corner}-radius"] = _Grammar(
        _repeat(_size, 1, 2), "one or two lengths or percentages, 0 or more", length=True
    )
_SIZE_WORDS = "min-content max-content fit-content"
for _prop, _word in (("width", "auto"), ("height", "auto"), ("min-width", "auto"), ("min-height", "auto"),
                     ("max-width", "none"), ("max-height", "none")):  # fmt: skip
    _GRAMMARS[_prop] = _Grammar(
        _one(_length_or(f"{_word} {_SIZE_WORDS}", negative=False)),
        f"{_word} or {_LENGTH_WORDS}, not negative",
        length=True,
    )
_GRAMMARS["margin"] = _Grammar(
    _repeat(_length_or("auto"), 1, 4), f"one to four of auto or {_LENGTH_WORDS}", length=True
)
_GRAMMARS["padding"] = _Grammar(_repeat(_size, 1, 4), f"one to four of {_LENGTH_WORDS}, not negative", length=True)


def _value_hint(grammar: _Grammar, toks: Sequence[Token], top: bool = True) -> str | None:
    """Why the value fails, where one token shows it; None when only the whole value does."""
    if top and len(toks) == 1 and toks[0].type == "ident" and grammar.words:
        close = difflib.get_close_matches(toks[0].lower_value, sorted(grammar.words), n=1, cutoff=0.6)
        if close:
            return f"did you mean '{close[0]}'?"
    if (
        top
        and "not negative" in grammar.expected
        and any(t.type in ("dimension", "percentage") and t.value < 0 for t in toks)
    ):
        return "this property cannot be negative"
    for tok in toks:
        kind = tok.type
        if kind == "hash" and not _color_text("#" + tok.value):
            return f"'#{tok.value}' is not a colour: a hex colour has 3, 4, 6 or 8 digits 0-9 and a-f"
        if kind == "dimension" and tok.lower_unit not in _LENGTH_DIMS | _ANGLE_UNITS | _TIME_UNITS:
            return f"'{tok.unit}' is not a CSS unit; lengths in cards use px, rpx, vw, em, rem or %"
        if kind == "number" and top and tok.value != 0 and grammar.length:
            number = tok.representation
            return f"a length needs a unit: write {number}px or {number}rpx (only 0 may go without)"
        if kind == "function":
            inner = _value_hint(grammar, _significant(tok.arguments), top=False)
            if inner is not None:
                return inner
    return None


def check_value(name: str, toks: Sequence[Token]) -> tuple[str, str | None] | None:
    """None when ``toks`` (significant tokens) are a valid value of ``name``; else what the
    property expects and a hint. Properties without a grammar here accept anything."""
    grammar = _GRAMMARS.get(name)
    if grammar is None or grammar.check(toks):
        return None
    return grammar.expected, _value_hint(grammar, toks)


def has_grammar(name: str) -> bool:
    return name in _GRAMMARS
