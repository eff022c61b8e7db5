"""What the HTML backend adds so screen readers and agents that read the accessibility tree can use
a card: roles, names, focus and image text. The Render IR says nothing of these (a WXML ``view``
with ``bindtap`` is a tappable box), so they are derived here from the node, its props and the text
around it, once per document (:func:`accessibility`), and the backend writes them as attributes.

- A node with a tap handler (``bindtap`` / ``catchtap``) is a button: ``role="button"`` (or the
  WXML ``aria-role``), ``tabindex="0"``, and a name: its ``aria-label`` when WXML gives one, else
  its text runs joined by spaces. A ``<button>`` is a button already and keeps its own name.
- An image's ``alt`` is the WXML ``alt``, else its ``aria-label``, else nearby text: the first text
  after it (else the last before it) in the same tappable item, or in its parent when it is in
  none, going up at most :data:`MAX_SCOPES` levels until some text is found, else ``image``.
  ``alt=""`` only for an image WXML marks decorative (``aria-hidden="true"``,
  ``aria-role="presentation"`` or ``"none"``): a content image always has a name.
- WXML ``aria-*`` attributes become the same HTML attributes (``aria-role`` becomes ``role``);
  a bound value is written as text (``true``, ``3``, JSON for objects).
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from skillc.ir.render import TEXT, RenderNode

# ARIA attribute names are lower-case letters after the prefix; anything else is not passed on.
ARIA_NAME = re.compile(r"^aria-[a-z]+$")
# The props this module turns into attributes, so the backend does not also write them as data-prop-*.
A11Y_PROPS = frozenset({"alt"})
DECORATIVE_ROLES = frozenset({"presentation", "none"})
# How far up an image looks for text: its item or parent and three more levels, so a card of
# many images without text does not walk the whole tree for each.
MAX_SCOPES = 4
MAX_NAME = 150  # characters of a derived name: a label, not the card's whole text
_TAP = "tap"


@dataclass
class NodeA11y:
    """The accessibility attributes of one element, in the order the backend writes them."""

    alt: str | None = None  # an <img>'s, written where the backend always wrote alt
    attrs: list[tuple[str, str]] = field(default_factory=list)


def is_tappable(node: RenderNode) -> bool:
    return bool(node.events) and _TAP in (node.events or {})


def aria_value(value: Any) -> str:
    """A prop's value as ARIA text: strings as they are, a bare attribute or a boolean as
    ``true``/``false``, numbers as numbers, anything else as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return json.dumps(value)
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str)


def _label(node: RenderNode, name: str) -> str | None:
    value = node.props.get(name)
    if value is None or value is False:
        return None
    text = " ".join(aria_value(value).split())
    return text or None


def _decorative(node: RenderNode) -> bool:
    hidden = node.props.get("aria-hidden")
    role = node.props.get("aria-role")
    return (hidden is True or (isinstance(hidden, str) and hidden.strip() == "true")) or (
        isinstance(role, str) and role.strip() in DECORATIVE_ROLES
    )


def _runs(node: RenderNode) -> list[RenderNode]:
    return [n for n in node.walk() if n.type == TEXT and (n.text or "").strip()]


def _join(runs: list[RenderNode]) -> str:
    text = " ".join(" ".join((r.text or "").split()) for r in runs)
    return text if len(text) <= MAX_NAME else text[: MAX_NAME - 1] + "…"


class _Order:
    """The document in pre-order: each node's position and the end of its subtree, and the
    positions of the text runs with text, so "the first text after the image inside this scope" is
    one binary search rather than a walk of the scope for every image."""

    def __init__(self, root: RenderNode) -> None:
        self.at: dict[int, tuple[int, int]] = {}  # id(node) -> (position, end of its subtree)
        self.texts: list[int] = []
        self.runs: list[RenderNode] = []
        count = 0
        stack: list[tuple[RenderNode, bool]] = [(root, False)]
        while stack:
            node, closing = stack.pop()
            if closing:
                self.at[id(node)] = (self.at[id(node)][0], count)
                continue
            self.at[id(node)] = (count, count)
            if node.type == TEXT and (node.text or "").strip():
                self.texts.append(count)
                self.runs.append(node)
            count += 1
            stack.append((node, True))
            stack.extend((child, False) for child in reversed(node.children or []))

    def nearby_text(self, image: RenderNode, scopes: list[RenderNode]) -> str | None:
        """The first text after ``image`` (else the last before it) in the innermost scope that has any."""
        at = self.at[id(image)][0]
        for scope in scopes:
            start, end = self.at[id(scope)]
            after = bisect_right(self.texts, at)
            if after < len(self.texts) and self.texts[after] < end:
                return _join([self.runs[after]])
            before = bisect_left(self.texts, at) - 1
            if before >= 0 and self.texts[before] >= start:
                return _join([self.runs[before]])
        return None


def _aria_attrs(node: RenderNode) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for name, value in sorted(node.props.items()):
        if name == "aria-role" or not ARIA_NAME.match(name) or value is None:
            continue
        out.append((name, aria_value(value)))
    return out


# A node's ancestors, innermost first, as a linked chain (no list copied per node of a deep tree).
_Chain = tuple[RenderNode, "_Chain"] | None


def _ancestors(chain: _Chain) -> Iterator[RenderNode]:
    while chain is not None:
        node, chain = chain
        yield node


def accessibility(root: RenderNode, tags: dict[str, str]) -> dict[int, NodeA11y]:
    """The accessibility attributes of the elements that have any, by ``id()`` of their node.
    ``tags``: the backend's type -> HTML tag table (a ``<button>`` needs no role, an ``<img>``
    needs ``alt``)."""
    out: dict[int, NodeA11y] = {}
    order: list[_Order] = []  # built on the first image that needs its nearby text
    stack: list[tuple[RenderNode, _Chain]] = [(root, None)]
    while stack:
        node, chain = stack.pop()
        if node.type == TEXT:
            continue
        tag = tags.get(node.type, "div")
        tappable = is_tappable(node) and tag != "button"
        if tag == "img" or tappable or any(k.startswith("aria-") for k in node.props):
            a11y = out[id(node)] = NodeA11y()
            role = node.props.get("aria-role")
            own_role = role.strip() if isinstance(role, str) and role.strip() else None
            if own_role is not None:
                a11y.attrs.append(("role", own_role))
            if tag == "img":
                a11y.alt = _image_name(node, chain, order, root)
            elif tappable:
                if own_role is None:
                    a11y.attrs.append(("role", "button"))
                a11y.attrs.append(("tabindex", "0"))
                if _label(node, "aria-label") is None:
                    name = _join(_runs(node)) or _inner_image_name(node)
                    if name:
                        a11y.attrs.append(("aria-label", name))
            # An empty WXML aria-label names nothing: the derived one (if any) stands alone.
            a11y.attrs += [(k, v) for k, v in _aria_attrs(node) if k != "aria-label" or v.strip()]
        if node.children:
            inner: _Chain = (node, chain)
            stack.extend((child, inner) for child in reversed(node.children))
    return out


def _image_name(node: RenderNode, chain: _Chain, order: list[_Order], root: RenderNode) -> str:
    if _decorative(node):
        return ""
    given = _label(node, "alt") or _label(node, "aria-label")
    if given is not None:
        return given
    scopes = list(_ancestors(chain))
    tappable = next((i for i, s in enumerate(scopes) if is_tappable(s)), None)
    # In a tappable item, its text names the image; elsewhere the parent's, then further up.
    search = scopes[tappable:] if tappable is not None else scopes
    if not order:
        order.append(_Order(root))
    return order[0].nearby_text(node, search[:MAX_SCOPES]) or "image"


def _inner_image_name(node: RenderNode) -> str:
    """A tappable node with no text: the alt its images were given by WXML."""
    for n in node.walk():
        if n.type == "image" and not _decorative(n):
            given = _label(n, "alt") or _label(n, "aria-label")
            if given:
                return given
    return ""
