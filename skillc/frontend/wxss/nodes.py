"""The stylesheet tree: selectors, declarations, media queries, rules, imports, font faces.

Frozen records carrying the source span of each piece; the parser builds them and nothing
here reads CSS. Unsupported declarations and media queries stay in the tree marked
``supported=False`` after their diagnostic, so later phases drop them without reporting
again; a declaration WeChat's gate refuses but WeChat still draws is also marked ``drawn=True``,
and the renderer keeps it.
"""

from __future__ import annotations

from dataclasses import dataclass

from skillc.diagnostics import Span
from skillc.frontend.wxss.values import Part

__all__ = [
    "Compound",
    "Declaration",
    "FontFace",
    "Import",
    "MediaFeature",
    "MediaQuery",
    "MediaQueryList",
    "Rule",
    "Selector",
    "Stylesheet",
]


@dataclass(frozen=True, slots=True)
class Compound:
    """One compound selector: ``view#id.a.b``. Tags are lower-cased; classes keep case."""

    tag: str | None = None
    id: str | None = None
    classes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Selector:
    """Compounds joined by descendant combinators, outermost first."""

    compounds: tuple[Compound, ...]
    specificity: tuple[int, int, int]
    span: Span
    text: str


@dataclass(frozen=True, slots=True)
class Declaration:
    name: str
    value: tuple[Part, ...]
    important: bool
    span: Span
    supported: bool = True  # False: reported at parse time, dropped by later phases
    # Refused by WeChat's gate (reported as such) yet drawn by WeChat in published cards (gap,
    # overflow, the -webkit-box line clamp): the renderer keeps it although supported is False.
    drawn: bool = False


@dataclass(frozen=True, slots=True)
class MediaFeature:
    """``(name: value)``; lengths keep their unit, keywords are in ``keyword``."""

    name: str
    keyword: str | None = None
    number: float | None = None
    unit: str | None = None


@dataclass(frozen=True, slots=True)
class MediaQuery:
    negated: bool
    media_type: str  # "all", "screen", "print", ...
    features: tuple[MediaFeature, ...]
    supported: bool = True  # an unsupported query never matches (CSS "not all")


@dataclass(frozen=True, slots=True)
class MediaQueryList:
    """Comma-separated queries: matches when any query does."""

    queries: tuple[MediaQuery, ...]
    text: str


@dataclass(frozen=True, slots=True)
class Rule:
    selectors: tuple[Selector, ...]  # unsupported selectors already dropped
    declarations: tuple[Declaration, ...]
    media: tuple[MediaQueryList, ...]  # enclosing @media lists (all must match); () = always
    order: int  # position in the flattened sheet, imports inlined
    span: Span  # the selector list
    file: str


@dataclass(frozen=True, slots=True)
class Import:
    path: str  # skill-relative target
    file: str  # the importing file
    span: Span
    found: bool


@dataclass(frozen=True, slots=True)
class FontFace:
    declarations: tuple[Declaration, ...]
    span: Span
    file: str


@dataclass(frozen=True, slots=True)
class Stylesheet:
    rules: tuple[Rule, ...]
    imports: tuple[Import, ...]
    font_faces: tuple[FontFace, ...]
