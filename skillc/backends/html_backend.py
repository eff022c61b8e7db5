"""The `html` backend: Render IR -> a self-contained HTML document (or just the card's element).

Every node becomes one element carrying its id (`data-uid`), its type (`data-type`) and its
resolved style inline, properties sorted, so output is deterministic and a host can address
nodes by id when it applies patches. Event bindings become data attributes
(`data-bind-tap="onSelect"`, `data-catch-tap`, `data-dataset` as JSON); nothing runs. The only
external resources are the image URLs the IR names. Every string from the IR is escaped.

Accessibility (roles, names, tabindex, image alt, WXML aria-* attributes) comes from
:mod:`skillc.backends.html_a11y`: a tappable node is a focusable button with a name, an image has
the text it shows. Keyboard activation belongs to whatever script delivers the taps (the document
itself runs none).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from html import escape
from typing import Any

from skillc.backends.base import DEFAULT_OPTIONS, RenderOptions
from skillc.backends.html_a11y import A11Y_PROPS, ARIA_NAME, NodeA11y, accessibility
from skillc.backends.html_previews import CANVAS_CAPTION, PREVIEW_CSS, has_preview, preview_markup
from skillc.ir.previews import DRAWING_URL
from skillc.ir.render import TEXT, RenderDocument, RenderNode

_TAGS = {
    "view": "div",
    "text": "span",
    "image": "img",
    "button": "button",
    "scroll-view": "div",
    "collapsible-view": "div",
}
_VOID = {"img"}

# WeChat's built-in look where the resolved style says nothing: views are blocks, images
# default to 320x240, scroll-views scroll sideways (cards allow scroll-x only), buttons drop the
# browser chrome. Specificity 0 (`:where`) so any inline style wins. A collapsible-view
# (COLLAPSIBLE_CSS) clips what overflows (at most a square, a card's tallest shape, unless its
# own style sets a height) and keeps its slot="button" child in view at the bottom: in WeChat
# that button opens the whole content in a half-screen view. Its rules use only data-type and
# data-prop-* attributes, which the MCP Apps view's patched DOM carries too.
BASE_CSS = """\
html,body{margin:0;padding:0}
html{overflow:auto}
body{font-family:-apple-system,"PingFang SC","Helvetica Neue","Noto Sans CJK SC",sans-serif;\
font-size:16px;line-height:1.4}
:where([data-type=view],[data-type=scroll-view]){display:block}
:where([data-type=image]){display:inline-block;width:320px;height:240px;object-fit:fill}
:where([data-type=image][data-mode=aspectFit]){object-fit:contain}
:where([data-type=image][data-mode=aspectFill]){object-fit:cover}
:where([data-type=image][data-mode=widthFix]){height:auto}
:where([data-type=image][data-mode=heightFix]){width:auto}
:where([data-type=scroll-view]){overflow-x:auto;overflow-y:hidden;white-space:nowrap}
:where([data-type=button]){display:block;width:100%;margin:0;padding:0 14px;font:inherit;\
border:0;line-height:2.55555556;text-align:center;cursor:pointer}
"""
# Only documents that hold a collapsible-view carry these rules, so every other card's HTML is
# byte for byte what it was before collapsible-view rendered.
COLLAPSIBLE_CSS = """\
:where([data-type=collapsible-view]){display:block;position:relative;overflow:hidden;max-height:100vw}
:where([data-type=collapsible-view]>[data-prop-slot=button]){position:absolute;left:0;right:0;bottom:0}
"""

_ATTR_NAME = re.compile(r"[^a-z0-9_-]+")
_CSS_PROPERTY = re.compile(r"^-?[a-z][a-z0-9-]*$")
_UNSAFE_STYLE_VALUE = re.compile(r"[;{}\\<>]")
_SAFE_URL = re.compile(r"^(https?://|data:image/|/|\./|\.\./|[a-zA-Z0-9_][a-zA-Z0-9_./-]*$)")
# A browser knows no -wx-line-clamp: it clamps with the -webkit-box trio, and clips the rest.
_CLAMP_LINES = re.compile(r"^[1-9][0-9]{0,5}$")
# Props that become real attributes or data-mode, handled before the generic data-prop-*.
_CONSUMED_PROPS = {"src", "mode", "disabled", "text", "drawing"}

# The tables above as JSON (the patterns read the same in JavaScript), for the MCP Apps card
# view (skillc/server/static/card-view.js): it builds elements in the browser when it applies
# patches, and must build them exactly as this module does.
DOM_RULES = {
    "tags": _TAGS,
    "consumedProps": sorted(_CONSUMED_PROPS),
    "safeUrl": _SAFE_URL.pattern,
    "cssProperty": _CSS_PROPERTY.pattern,
    "unsafeStyleValue": _UNSAFE_STYLE_VALUE.pattern,
    "attrName": _ATTR_NAME.pattern,
    "canvasCaption": CANVAS_CAPTION,
    "drawingUrl": DRAWING_URL.pattern,
    "clampLines": _CLAMP_LINES.pattern,
    # html_a11y: aria-* props matching this become attributes of that name (aria-role: role).
    "ariaName": ARIA_NAME.pattern,
}


class HtmlBackend:
    name = "html"
    media_type = "text/html"
    extension = ".html"

    def render(self, doc: RenderDocument, *, options: RenderOptions | None = None) -> str:
        opts = options or DEFAULT_OPTIONS
        return render_html(doc, title=opts.title)


def render_html(doc: RenderDocument, *, title: str | None = None, page: bool = False) -> str:
    """A complete document: viewport meta, color scheme, base CSS, body as wide as the viewport.
    ``page``: a mini-program page, not a card: the body fills the device screen and scrolls."""
    vp = doc.viewport
    scheme = vp.color_scheme
    box = (
        f"width:{vp.width}px;min-height:{vp.height}px"
        if page
        else f"width:{vp.width}px;min-height:{vp.card_min_height}px;max-height:{vp.card_max_height}px;overflow:hidden"
    )
    return (
        "<!DOCTYPE html>\n"
        f'<html data-color-scheme="{scheme}" style="color-scheme:{scheme}">\n'
        "<head>\n"
        '<meta charset="utf-8">\n'
        f'<meta name="viewport" content="width={vp.width}, initial-scale=1">\n'
        f'<meta name="color-scheme" content="{scheme}">\n'
        f"<title>{escape(title or 'skillc card', quote=False)}</title>\n"
        f"<style>\n{BASE_CSS}{COLLAPSIBLE_CSS if _has_collapsible(doc.root) else ''}"
        f"{PREVIEW_CSS if has_preview(doc.root) else ''}</style>\n"
        "</head>\n"
        # The card box (docs/backends.md): as wide as the viewport, as tall as the content between
        # a quarter of that width and all of it, the rest clipped, as WeChat shows a card. Not on
        # <body> alone: the root's overflow:auto keeps body's overflow from passing to the viewport.
        f'<body style="{box}">\n'
        f"{render_html_fragment(doc)}\n"
        "</body>\n"
        "</html>\n"
    )


def _has_collapsible(root: RenderNode) -> bool:
    return any(node.type == "collapsible-view" for node in root.walk())


def render_html_fragment(doc: RenderDocument) -> str:
    """The root element alone, for embedding; pair it with :data:`BASE_CSS` (and
    :data:`COLLAPSIBLE_CSS` when it holds a collapsible-view, ``PREVIEW_CSS`` of
    :mod:`skillc.backends.html_previews` when it holds a map or a canvas)."""
    return "".join(_node(doc.root, accessibility(doc.root, _TAGS)))


_NO_A11Y = NodeA11y()  # an element with no accessibility attributes (never written to)


def _node(node: RenderNode, a11y: dict[int, NodeA11y]) -> Iterator[str]:
    if node.type == TEXT:
        yield escape(node.text or "", quote=False)
        return
    tag = _TAGS.get(node.type, "div")
    attributes = _attributes(node, tag, a11y.get(id(node)) or _NO_A11Y)
    attrs = "".join(f' {name}="{escape(value, quote=True)}"' for name, value in attributes)
    # The line break sits inside the tag, where HTML ignores it: every element starts a line
    # (so golden files diff per node) and no whitespace text appears between inline elements.
    yield f"<{tag}{attrs}\n>"
    if tag in _VOID:
        return
    for child in node.children or []:
        yield from _node(child, a11y)
    if node.type in ("map", "canvas"):
        yield preview_markup(node)
    yield f"</{tag}\n>"


def _attributes(node: RenderNode, tag: str, a11y: NodeA11y) -> Iterator[tuple[str, str]]:
    yield "data-uid", node.id
    yield "data-type", node.type
    props = node.props
    if tag == "img":
        src = props.get("src")
        if isinstance(src, str) and _SAFE_URL.match(src.strip()):
            yield "src", src.strip()
        yield "alt", a11y.alt or ""
        mode = props.get("mode")
        if isinstance(mode, str):
            yield "data-mode", mode
    if tag == "button":
        yield "type", "button"
        if props.get("disabled") in (True, "true", ""):
            yield "disabled", "disabled"
    yield from a11y.attrs
    for name, binding in sorted((node.events or {}).items()):
        kind = "catch" if binding.catch else "bind"
        yield f"data-{kind}-{_attr_suffix(name)}", binding.handler
    dataset = _dataset(node)
    if dataset is not None:
        yield "data-dataset", _json(dataset)
    for name, value in sorted(props.items()):
        # aria-* and alt are real attributes now (a11y.attrs); every other prop stays data-prop-*.
        if name not in _CONSUMED_PROPS and name not in A11Y_PROPS and not ARIA_NAME.match(name):
            yield f"data-prop-{_attr_suffix(name)}", value if isinstance(value, str) else _json(value)
    style = inline_style(node.style)
    if style:
        yield "style", style


def browser_style(style: Mapping[str, str]) -> Mapping[str, str]:
    """The resolved style in the CSS a browser draws. Gap, overflow, white-space and
    text-overflow are CSS already; only ``-wx-line-clamp: N`` needs spelling out (it stays, and
    the browser ignores it). The MCP Apps view (card-view.js, ``clampStyle``) does the same."""
    lines = style.get("-wx-line-clamp", "").strip()
    if not _CLAMP_LINES.match(lines):
        return style
    out = dict(style)
    if out.get("display", "").strip() != "none":
        out["display"] = "-webkit-box"
    out.update({"-webkit-box-orient": "vertical", "-webkit-line-clamp": lines, "overflow": "hidden"})
    return out


def inline_style(style: Mapping[str, str]) -> str:
    """`a:1px;b:red`, sorted by property. A declaration that could break out of its slot in the
    attribute (a `;`, brace or odd property name) is dropped rather than trusted."""
    parts = [
        f"{prop}:{value.strip()}"
        for prop, value in sorted(browser_style(style).items())
        if _CSS_PROPERTY.match(prop) and isinstance(value, str) and not _UNSAFE_STYLE_VALUE.search(value)
    ]
    return ";".join(parts)


def _dataset(node: RenderNode) -> dict[str, Any] | None:
    # WeChat's dataset belongs to the node (its data-* attributes), so every binding has the same.
    for _, binding in sorted((node.events or {}).items()):
        return binding.dataset
    return None


def _attr_suffix(name: str) -> str:
    return _ATTR_NAME.sub("-", name.lower()).strip("-") or "x"


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str)
