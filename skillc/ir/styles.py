"""Compiled stylesheets and style resolution: WXSS -> resolved ``style`` of each Render IR node.

``compile_stylesheet`` turns a parsed :class:`Stylesheet` into a JSON-serialisable
:class:`CompiledStylesheet` with rules indexed by their rightmost compound (id, class, tag),
so matching an element only looks at rules that can match it. ``StyleResolver`` binds one
to a :class:`Viewport`: media queries are evaluated and rpx/vw/rem converted once, up front;
per element only matching, the cascade and (rarely) em conversion remain, and the result is
cached by (ancestor chain, element, inline style).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal, NamedTuple, NoReturn

from pydantic import BaseModel, ConfigDict

from skillc.diagnostics import DiagnosticSink
from skillc.frontend.wxss import (
    Declaration,
    MediaFeature,
    MediaQuery,
    MediaQueryList,
    Stylesheet,
    format_number,
    parse_style_attribute,
    serialize_value,
)
from skillc.ir.template import RENDERED_TAGS, SPEC_ONLY_TAGS
from skillc.ir.viewport import Viewport, rpx_to_px

ROOT_FONT_SIZE_PX = 16.0  # rem, and em/% on an element with no resolved parent font-size

# Properties a host renderer without CSS needs carried down to text nodes. Only
# properties cards support (frontend/wxss.SUPPORTED_PROPERTIES) and CSS inherits.
INHERITED_PROPERTIES: tuple[str, ...] = (
    "color",
    "font",
    "font-family",
    "font-size",
    "font-style",
    "font-weight",
    "letter-spacing",
    "line-height",
    "text-align",
    "text-indent",
    "text-shadow",
    "visibility",
    "white-space",
    "word-break",
    "word-spacing",
    "pointer-events",
)
_INHERITED = frozenset(INHERITED_PROPERTIES)

# Elements a card can contain; a selector naming any other tag can never match.
CARD_TAGS = RENDERED_TAGS | SPEC_ONLY_TAGS


# ----------------------------------------------------------------------------------------
# The compiled form (JSON for `skillc build`)
# ----------------------------------------------------------------------------------------


class LengthSlot(BaseModel):
    """A length substituted per viewport (rpx, vw, rem) or per element (em, % font-size)."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    value: float
    unit: Literal["rpx", "vw", "em", "rem", "%"]


class CompiledDeclaration(BaseModel):
    """``value`` is normalised CSS text split around the lengths that still need converting."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    name: str
    value: tuple[str | LengthSlot, ...]
    important: bool = False


class CompiledCompound(BaseModel):
    model_config = ConfigDict(frozen=True, defer_build=True)

    tag: str | None = None
    id: str | None = None
    classes: tuple[str, ...] = ()


class CompiledSelector(BaseModel):
    model_config = ConfigDict(frozen=True, defer_build=True)

    text: str
    compounds: tuple[CompiledCompound, ...]
    specificity: tuple[int, int, int]
    block: int  # index into CompiledStylesheet.blocks


class CompiledBlock(BaseModel):
    """The declarations of one rule, under the media lists that must all match."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    order: int
    file: str
    media: tuple[MediaQueryList, ...] = ()
    declarations: tuple[CompiledDeclaration, ...]


class CompiledStylesheet(BaseModel):
    model_config = ConfigDict(frozen=True, defer_build=True)

    version: Literal[1] = 1
    blocks: tuple[CompiledBlock, ...] = ()
    selectors: tuple[CompiledSelector, ...] = ()
    # Selector indices by the rightmost compound's id, else its first class, else its tag.
    by_id: dict[str, tuple[int, ...]] = {}
    by_class: dict[str, tuple[int, ...]] = {}
    by_tag: dict[str, tuple[int, ...]] = {}
    font_faces: tuple[tuple[CompiledDeclaration, ...], ...] = ()


def _slot_units(name: str) -> frozenset[str]:
    return _FONT_SIZE_SLOTS if name == "font-size" else _SLOTS


_SLOTS = frozenset({"rpx", "vw", "em", "rem"})
_FONT_SIZE_SLOTS = _SLOTS | {"%"}


def compile_declaration(decl: Declaration) -> CompiledDeclaration:
    units = _slot_units(decl.name)
    segments = serialize_value(decl.value, lambda length: length.unit in units)
    value = tuple(
        seg if isinstance(seg, str) else LengthSlot(value=seg.value, unit=seg.unit)  # type: ignore[arg-type]
        for seg in segments
    )
    return CompiledDeclaration(name=decl.name, value=value, important=decl.important)


@lru_cache(maxsize=4096)
def compile_inline_style(text: str) -> tuple[CompiledDeclaration, ...]:
    """A ``style="..."`` value, compiled once per process for every resolver and viewport.

    Runtime input: its diagnostics were given at check time (or cannot be, if it is dynamic),
    so unsupported declarations are dropped silently (and the drawn ones kept silently).
    """
    return tuple(compile_declaration(d) for d in parse_style_attribute(text) if d.supported or d.drawn)


def compile_stylesheet(sheet: Stylesheet, *, sink: DiagnosticSink | None = None) -> CompiledStylesheet:
    """Index the supported rules of ``sheet``. ``sink`` receives STY diagnostics (check time)."""
    blocks: list[CompiledBlock] = []
    selectors: list[CompiledSelector] = []
    by_id: dict[str, list[int]] = {}
    by_class: dict[str, list[int]] = {}
    by_tag: dict[str, list[int]] = {}
    for rule in sheet.rules:
        decls = tuple(compile_declaration(d) for d in rule.declarations if d.supported or d.drawn)
        live = []
        for sel in rule.selectors:
            foreign = next((c.tag for c in sel.compounds if c.tag is not None and c.tag not in CARD_TAGS), None)
            if foreign is None:
                live.append(sel)
            elif sink is not None:
                sink.emit(
                    "STY001",
                    f"selector '{sel.text}' never matches: cards have no <{foreign}> element",
                    file=rule.file,
                    span=sel.span,
                    hint="card elements are " + ", ".join(sorted(CARD_TAGS)),
                )
        if not decls or not live:
            continue
        block = len(blocks)
        blocks.append(CompiledBlock(order=rule.order, file=rule.file, media=rule.media, declarations=decls))
        for sel in live:
            index = len(selectors)
            compounds = tuple(CompiledCompound(tag=c.tag, id=c.id, classes=c.classes) for c in sel.compounds)
            selectors.append(
                CompiledSelector(text=sel.text, compounds=compounds, specificity=sel.specificity, block=block)
            )
            last = compounds[-1]
            if last.id is not None:
                by_id.setdefault(last.id, []).append(index)
            elif last.classes:
                by_class.setdefault(last.classes[0], []).append(index)
            elif last.tag is not None:
                by_tag.setdefault(last.tag, []).append(index)
    font_faces = tuple(tuple(compile_declaration(d) for d in face.declarations) for face in sheet.font_faces)
    return CompiledStylesheet(
        blocks=tuple(blocks),
        selectors=tuple(selectors),
        by_id={k: tuple(v) for k, v in by_id.items()},
        by_class={k: tuple(v) for k, v in by_class.items()},
        by_tag={k: tuple(v) for k, v in by_tag.items()},
        font_faces=font_faces,
    )


# ----------------------------------------------------------------------------------------
# Media queries
# ----------------------------------------------------------------------------------------


def media_matches(mql: MediaQueryList, viewport: Viewport) -> bool:
    return any(_query_matches(q, viewport) for q in mql.queries)


def _query_matches(query: MediaQuery, vp: Viewport) -> bool:
    if not query.supported:
        return False  # CSS: a query that cannot be evaluated is "not all", negated or not
    result = query.media_type != "print" and all(_feature_matches(f, vp) for f in query.features)
    return not result if query.negated else result


def _feature_matches(feature: MediaFeature, vp: Viewport) -> bool:
    name = feature.name
    if name == "orientation":
        return vp.orientation == feature.keyword
    if name == "prefers-color-scheme":
        return vp.color_scheme == feature.keyword
    size = float(feature.number or 0) * (ROOT_FONT_SIZE_PX if feature.unit in ("em", "rem") else 1)
    actual = vp.width if name.endswith("width") else vp.height
    if name.startswith("min-"):
        return actual >= size
    if name.startswith("max-"):
        return actual <= size
    return actual == size


# ----------------------------------------------------------------------------------------
# Resolution
# ----------------------------------------------------------------------------------------


class ElementKey(NamedTuple):
    """What selectors can see of an element: its tag, id and classes.

    Keys are hashed and compared for every resolve (alone and inside ancestor chains); as a
    tuple, that happens in C.
    """

    tag: str
    id: str | None = None
    classes: tuple[str, ...] = ()


class ResolvedStyle(dict[str, str]):
    """A resolved style: a ``dict[str, str]`` that also remembers its inherited part.

    The resolver hands the same object to every element with the same rules and the same
    inherited part (a list of a thousand rows holds a few dozen styles, not thousands), so it is
    read-only: an edit raises TypeError. ``dict(style)``, ``copy.copy`` and ``copy.deepcopy``
    give a plain dict to edit. Passing it back as ``parent_style`` lets the resolver key its
    cache on the remembered part instead of rescanning the dict.
    """

    __slots__ = ("_changes", "_text", "inherited")

    def __init__(self, items: Iterable[tuple[str, str]] | Mapping[str, str] = (), inherited: _Inherited | None = None):
        super().__init__(items)
        self.inherited: _Inherited = inherited if inherited is not None else _scan_inherited(self)
        self._text: ResolvedStyle | None = None
        self._changes: dict[int, tuple[ResolvedStyle, ResolvedStyle]] | None = None

    def text_style(self) -> ResolvedStyle:
        """The style of a text run inside an element of this style: its inherited part alone."""
        text = self._text
        if text is None:
            text = self._text = ResolvedStyle(self.inherited, self.inherited)
        return text

    def changes_to(self, other: ResolvedStyle) -> ResolvedStyle:
        """The entries of ``other`` that this style lacks or holds otherwise (a hover style over
        this one), shared as the styles are: the last few are remembered by ``other``'s identity."""
        changes = self._changes
        if changes is None:
            changes = self._changes = {}
        hit = changes.get(id(other))
        if hit is not None and hit[0] is other:  # the entry holds ``other``, so its id is still its own
            return hit[1]
        diff = ResolvedStyle({k: v for k, v in other.items() if self.get(k) != v})
        if len(changes) >= 8:
            changes.clear()
        changes[id(other)] = (other, diff)
        return diff

    def _refuse(self, *args: object, **kwargs: object) -> NoReturn:
        raise TypeError("a resolved style is shared by every element it styles: edit a copy, dict(style)")

    __setitem__ = __delitem__ = update = pop = popitem = setdefault = clear = __ior__ = _refuse

    def __copy__(self) -> dict[str, str]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, object]) -> dict[str, str]:
        return dict(self)

    def __reduce__(self) -> tuple[type[dict[str, str]], tuple[dict[str, str]]]:
        return dict, (dict(self),)


_Inherited = tuple[tuple[str, str], ...]  # the inheritable entries of a style, in INHERITED_PROPERTIES order


def inherited_part(style: Mapping[str, str]) -> _Inherited:
    """The inheritable entries of ``style``: remembered by a ResolvedStyle, else scanned."""
    if isinstance(style, ResolvedStyle):
        return style.inherited
    return _scan_inherited(style)


def _scan_inherited(style: Mapping[str, str]) -> _Inherited:
    return tuple((k, style[k]) for k in INHERITED_PROPERTIES if k in style)


def text_style(style: Mapping[str, str]) -> ResolvedStyle:
    """The style of a text run in an element of ``style``: the inherited part alone (shared)."""
    return (style if isinstance(style, ResolvedStyle) else ResolvedStyle(style)).text_style()


NO_STYLE = ResolvedStyle((), ())
"""The empty style, shared (it is read-only): an element's until its own is resolved, the root's."""


class _Relative:
    """A value with em (or font-size %) lengths, converted per element."""

    __slots__ = ("segments",)

    def __init__(self, segments: tuple[str | LengthSlot, ...]) -> None:
        self.segments = segments

    def render(self, em: float) -> str:
        out = []
        for seg in self.segments:
            if isinstance(seg, str):
                out.append(seg)
            elif seg.unit == "%":
                out.append(format_number(em * seg.value / 100) + "px")
            else:
                out.append(format_number(em * seg.value) + "px")
        return "".join(out)


_Value = str | _Relative
_Decls = tuple[tuple[str, _Value], ...]
_CSS_WIDE = frozenset({"inherit", "unset", "initial"})


class _Entry:
    """The cascade result for one (ancestors, element, inline), and its finished forms.

    ``finished`` maps the parent's inherited entries to the final style, one ResolvedStyle shared
    by every element that reaches it, so a re-render with unchanged parents costs two dict lookups.
    """

    __slots__ = ("decls", "finished", "needs_parent")

    def __init__(self, decls: _Decls) -> None:
        self.decls = decls
        self.finished: dict[_Inherited, ResolvedStyle] = {}
        # `margin: inherit` reads a property the inherited part does not carry: no caching.
        self.needs_parent = any(
            isinstance(v, str) and v in ("inherit", "unset") and n not in _INHERITED for n, v in decls
        )


@dataclass(frozen=True, slots=True)
class _Sel:
    compounds: tuple[tuple[str | None, str | None, frozenset[str]], ...]
    rank: tuple[int, int, int, int, int]  # specificity, source order, selector index
    normal: _Decls
    important: _Decls


def _bind(decl: CompiledDeclaration, vp: Viewport) -> _Value:
    """Convert the viewport-bound lengths now; em stays for the element."""
    out: list[str | LengthSlot] = []
    relative = False
    for seg in decl.value:
        if isinstance(seg, str):
            text = seg
        elif seg.unit == "rpx":
            text = f"{rpx_to_px(seg.value, vp.width)}px"
        elif seg.unit == "vw":
            text = format_number(seg.value * vp.width / 100) + "px"
        elif seg.unit == "rem":
            text = format_number(seg.value * ROOT_FONT_SIZE_PX) + "px"
        else:
            out.append(seg)
            relative = True
            continue
        if out and isinstance(out[-1], str):
            out[-1] += text
        else:
            out.append(text)
    if relative:
        return _Relative(tuple(out))
    return "".join(s for s in out if isinstance(s, str))


def _split_important(decls: Sequence[CompiledDeclaration], vp: Viewport) -> tuple[_Decls, _Decls]:
    normal = tuple((d.name, _bind(d, vp)) for d in decls if not d.important)
    important = tuple((d.name, _bind(d, vp)) for d in decls if d.important)
    return normal, important


def _px(value: str | None) -> float | None:
    if value is not None and value.endswith("px"):
        try:
            return float(value[:-2])
        except ValueError:
            return None
    return None


class StyleResolver:
    """Resolves element styles for one compiled stylesheet on one viewport.

    Not thread-safe (it caches); create one per render thread or guard it.
    """

    CACHE_LIMIT = 8192

    def __init__(self, compiled: CompiledStylesheet, viewport: Viewport | None = None) -> None:
        self.compiled = compiled
        self.viewport = vp = viewport if viewport is not None else Viewport()
        active = [all(media_matches(m, vp) for m in block.media) for block in compiled.blocks]
        bound = [_split_important(b.declarations, vp) if active[i] else ((), ()) for i, b in enumerate(compiled.blocks)]
        self._sels: list[_Sel | None] = []
        for index, sel in enumerate(compiled.selectors):
            if not active[sel.block]:
                self._sels.append(None)
                continue
            normal, important = bound[sel.block]
            compounds = tuple((c.tag, c.id, frozenset(c.classes)) for c in sel.compounds)
            rank = (*sel.specificity, compiled.blocks[sel.block].order, index)
            self._sels.append(_Sel(compounds, rank, normal, important))
        self._by_id = self._live(compiled.by_id)
        self._by_class = self._live(compiled.by_class)
        self._by_tag = self._live(compiled.by_tag)
        self._cache: dict[tuple[tuple[ElementKey, ...], ElementKey, str | None], _Entry] = {}
        self._inline: dict[str, tuple[_Decls, _Decls]] = {}

    def _live(self, index: Mapping[str, tuple[int, ...]]) -> dict[str, tuple[_Sel, ...]]:
        out = {}
        for key, ids in index.items():
            sels = tuple(s for s in (self._sels[i] for i in ids) if s is not None)
            if sels:
                out[key] = sels
        return out

    # -- public -------------------------------------------------------------------------

    def resolve(
        self,
        ancestors: Sequence[ElementKey],
        element: ElementKey,
        inline: str | None = None,
        parent_style: Mapping[str, str] | None = None,
    ) -> ResolvedStyle:
        """The element's style: cascaded, converted to px, inheritance applied if ``parent_style``.

        ``ancestors`` run from the root to the parent. ``inline`` is the evaluated ``style``
        attribute. ``parent_style`` is the parent's resolved style: inherited properties come
        from it and em resolves against its font-size (16px without one). Entries are in
        cascade order: a host applying them in order gets CSS's shorthand/longhand result.
        """
        chain = ancestors if type(ancestors) is tuple else tuple(ancestors)
        key = (chain, element, inline)
        entry = self._cache.get(key)
        if entry is None:
            if len(self._cache) >= self.CACHE_LIMIT:
                self._cache.clear()
            entry = self._cache[key] = _Entry(self._cascade(chain, element, inline))
        if entry.needs_parent:
            return ResolvedStyle(self._finish(entry.decls, parent_style or {}))
        inherited = inherited_part(parent_style) if parent_style else ()
        done = entry.finished.get(inherited)
        if done is None:
            if len(entry.finished) >= 64:
                entry.finished.clear()
            done = entry.finished[inherited] = ResolvedStyle(self._finish(entry.decls, dict(inherited)))
        return done

    def matched_selectors(self, ancestors: Sequence[ElementKey], element: ElementKey) -> list[str]:
        """Texts of the selectors matching ``element``, lowest precedence first (for debugging)."""
        return [self.compiled.selectors[s.rank[4]].text for s in self._matching(tuple(ancestors), element)]

    # -- internals ----------------------------------------------------------------------

    def _matching(self, ancestors: tuple[ElementKey, ...], element: ElementKey) -> list[_Sel]:
        candidates: list[_Sel] = []
        found = self._by_tag.get(element.tag)
        if found:
            candidates.extend(found)
        if element.id is not None:
            found = self._by_id.get(element.id)
            if found:
                candidates.extend(found)
        for cls in element.classes:
            found = self._by_class.get(cls)
            if found:
                candidates.extend(found)
        if not candidates:
            return []
        classes = frozenset(element.classes)
        matched = [s for s in candidates if _matches(s.compounds, ancestors, element, classes)]
        matched.sort(key=lambda s: s.rank)
        # A class listed twice in `class` makes a selector a candidate twice; keep one.
        return [s for i, s in enumerate(matched) if i == 0 or s is not matched[i - 1]]

    def _cascade(self, ancestors: tuple[ElementKey, ...], element: ElementKey, inline: str | None) -> _Decls:
        matched = self._matching(ancestors, element)
        inline_normal, inline_important = self._inline_decls(inline) if inline else ((), ())
        style: dict[str, _Value] = {}

        def apply(decls: _Decls) -> None:
            for name, value in decls:
                style.pop(name, None)  # re-insert: entry order is cascade order
                style[name] = value

        for sel in matched:
            apply(sel.normal)
        apply(inline_normal)
        for sel in matched:
            apply(sel.important)
        apply(inline_important)
        return tuple(style.items())

    def _inline_decls(self, inline: str) -> tuple[_Decls, _Decls]:
        found = self._inline.get(inline)
        if found is None:
            if len(self._inline) >= self.CACHE_LIMIT:
                self._inline.clear()
            found = self._inline[inline] = _split_important(compile_inline_style(inline), self.viewport)
        return found

    def _finish(self, decls: _Decls, parent: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
        """Inherited entries first, then own ones with em and inherit resolved."""
        own = dict(decls)
        result: dict[str, str] = {k: parent[k] for k in INHERITED_PROPERTIES if k in parent and k not in own}
        parent_fs = _px(parent.get("font-size")) or ROOT_FONT_SIZE_PX
        own_fs = parent_fs
        size = own.get("font-size")
        if isinstance(size, _Relative):
            own_fs = _px(size.render(parent_fs)) or parent_fs
        elif isinstance(size, str):
            own_fs = _px(size) or parent_fs
        for name, value in decls:
            if isinstance(value, _Relative):
                result[name] = value.render(parent_fs if name == "font-size" else own_fs)
            elif value in _CSS_WIDE:
                inherits = value == "inherit" or (value == "unset" and name in _INHERITED)
                if inherits and name in parent:
                    result[name] = parent[name]
            else:
                result[name] = value
        if "-webkit-line-clamp" in result or "-webkit-box-orient" in result or result.get("display") == "-webkit-box":
            _read_webkit_clamp(result)
        return tuple(result.items())


def _read_webkit_clamp(style: dict[str, str]) -> None:
    """The -webkit-box trio becomes ``-wx-line-clamp`` (a host then reads one clamp, whichever way
    the card wrote it); a part of the trio without the rest draws nothing and is dropped.

    A complete trio makes the element a block (as -webkit-box lays out, and as -wx-line-clamp
    expects); ``-wx-line-clamp`` written on the element wins over the trio's count. An
    incomplete ``display: -webkit-box`` leaves the element's default display, not a display
    an earlier rule set: the cascade has already replaced that one.
    """
    lines = style.pop("-webkit-line-clamp", None)
    orient = style.pop("-webkit-box-orient", None)
    if style.get("display") != "-webkit-box":
        return
    if lines is None or lines == "none" or orient != "vertical":
        del style["display"]
        return
    style["display"] = "block"
    style.setdefault("-wx-line-clamp", lines)


def _matches(
    compounds: tuple[tuple[str | None, str | None, frozenset[str]], ...],
    ancestors: tuple[ElementKey, ...],
    element: ElementKey,
    classes: frozenset[str],
) -> bool:
    tag, ident, need = compounds[-1]
    if (tag is not None and tag != element.tag) or (ident is not None and ident != element.id):
        return False
    if need and not need <= classes:
        return False
    # Descendant combinators only: matching each compound to the nearest fitting ancestor
    # (right to left) is exact, no backtracking needed.
    pos = len(ancestors) - 1
    for i in range(len(compounds) - 2, -1, -1):
        tag, ident, need = compounds[i]
        while pos >= 0:
            anc = ancestors[pos]
            pos -= 1
            if (
                (tag is None or tag == anc.tag)
                and (ident is None or ident == anc.id)
                and (not need or need.issubset(anc.classes))
            ):
                break
        else:
            return False
    return True
