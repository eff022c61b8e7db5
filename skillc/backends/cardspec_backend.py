"""The `cardspec` backend: Render IR -> an Adaptive Cards 1.5 card.

The mapping and what it loses are documented for users in docs/cardspec.md. In short: block
flow becomes a vertical list of elements (plain views dissolve into it), flex rows and
scroll-views become ColumnSets, text runs merge into TextBlocks (RichTextBlocks when their
looks differ), buttons become Action.Submit in an ActionSet, tap handlers on anything else
become `selectAction`s. Every Action.Submit carries the tap in `data` so a host can route it
back to the component: ``{"event": "tap", "handler", "nodeId", "dataset"}``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from skillc.backends.base import DEFAULT_OPTIONS, RenderOptions
from skillc.backends.cardspec_style import ColorScheme, TextLook, inherit, spacing_bucket, text_look
from skillc.backends.html_previews import CANVAS_CAPTION
from skillc.ir import css_values
from skillc.ir.previews import DEFAULT_HEIGHT, DEFAULT_WIDTH, canvas_drawing, coordinate, map_caption, map_props
from skillc.ir.render import TEXT, RenderDocument, RenderNode

CARD_VERSION = "1.5"
CARD_SCHEMA_URL = "http://adaptivecards.io/schemas/adaptive-card.json"

Element = dict[str, Any]

# Image sizes of the default host config are Small 40, Medium 80, Large 160 px; a width maps to
# the nearest one (the geometric midpoints 56 and 113 split them).
_IMAGE_BUCKETS = ((56.0, "Small"), (113.0, "Medium"))
# A map preview lists this many markers as facts, then says how many more there are.
MAX_MARKERS = 20


class CardSpecBackend:
    name = "cardspec"
    media_type = "application/vnd.microsoft.card.adaptive+json"
    extension = ".card.json"

    def render(self, doc: RenderDocument, *, options: RenderOptions | None = None) -> str:
        opts = options or DEFAULT_OPTIONS
        return json.dumps(render_card(doc), ensure_ascii=False, indent=opts.indent) + "\n"


def render_card(doc: RenderDocument) -> Element:
    """The card as JSON data, for hosts that embed it rather than read text."""
    return _CardBuilder(doc.viewport.color_scheme).card(doc.root)


def new_card(body: list[Element], fallback_text: str) -> Element:
    """The card envelope shared with the structuredContent fallback card."""
    return {
        "type": "AdaptiveCard",
        "$schema": CARD_SCHEMA_URL,
        "version": CARD_VERSION,
        "body": body,
        "fallbackText": fallback_text,
    }


def text_block(text: str, look: TextLook) -> Element:
    block: Element = {"type": "TextBlock", "text": text, **look.run_attributes()}
    if look.align is not None:
        block["horizontalAlignment"] = look.align
    block["wrap"] = look.wrap
    if look.max_lines is not None:
        block["maxLines"] = look.max_lines
    return block


def tap_action(node: RenderNode) -> Element | None:
    """The node's own tap handler as an Action.Submit; bubbling is left to the host's nesting."""
    binding = (node.events or {}).get("tap")
    if binding is None:
        return None
    data = {"event": "tap", "handler": binding.handler, "nodeId": node.id, "dataset": binding.dataset}
    return {"type": "Action.Submit", "data": data}


@dataclass(frozen=True, slots=True)
class _Run:
    text: str
    look: TextLook
    action: Element | None


def _hidden(node: RenderNode) -> bool:
    return node.style.get("display", "").strip() == "none"


def _is_inline_text(node: RenderNode) -> bool:
    if node.type == TEXT:
        return True
    return node.type == "text" and node.style.get("display", "inline").strip() not in ("block", "flex")


def _is_flex_row(style: Mapping[str, str]) -> bool:
    return style.get("display", "").strip() == "flex" and not style.get("flex-direction", "row").strip().startswith(
        "column"
    )


def _grows(style: Mapping[str, str]) -> bool:
    for prop in ("flex-grow", "flex"):
        first = style.get(prop, "").split()
        if first:
            try:
                return float(first[0]) > 0
            except ValueError:
                return first[0] == "auto"
    return False


class _CardBuilder:
    """One card's walk. Keeps the text lines seen, in order, for `fallbackText`."""

    def __init__(self, scheme: ColorScheme) -> None:
        self.scheme = scheme
        self.lines: list[str] = []

    def card(self, root: RenderNode) -> Element:
        body = self.node(root, {})
        return new_card(body, "\n".join(self.lines))

    def node(self, node: RenderNode, inherited: Mapping[str, str]) -> list[Element]:
        items, action = self.content(node, inherited)
        if action is None or not items:
            return items
        return [{"type": "Container", "items": items, "selectAction": action}]

    def content(self, node: RenderNode, inherited: Mapping[str, str]) -> tuple[list[Element], Element | None]:
        """The node's elements, and its tap action when the caller has to place it."""
        if _hidden(node):
            return [], None
        if node.type in (TEXT, "text"):
            return self.text(self.runs(node, inherited, None)), None
        if node.type == "image":
            return self.image(node), None
        if node.type == "button":
            return [self.button(node)], None
        inner = inherit(inherited, node.style)
        children = node.children or []
        if node.type == "scroll-view":
            return self.row(node.style, children, inner, scroll=True), tap_action(node)
        if node.type == "collapsible-view":
            return self.collapsible(node, children, inner), tap_action(node)
        if node.type == "map":
            return self.map_preview(node), tap_action(node)
        if node.type == "canvas":
            return self.canvas_preview(node), None
        if _is_flex_row(node.style):
            return self.row(node.style, children, inner, scroll=False), tap_action(node)
        row_gap, _ = css_values.gaps(node.style)
        if row_gap is not None and node.style.get("display", "").strip() == "flex":
            return self.stack(children, inner, row_gap), tap_action(node)
        # view, and any type this backend does not know: a block holding its children.
        return self.flow(children, inner), tap_action(node)

    def flow(self, children: list[RenderNode], inherited: Mapping[str, str]) -> list[Element]:
        """Block flow: consecutive inline text merges into one text element."""
        out: list[Element] = []
        pending: list[_Run] = []
        for child in children:
            if _is_inline_text(child):
                pending += self.runs(child, inherited, None)
                continue
            out += self.text(pending)
            pending = []
            out += self.node(child, inherited)
        out += self.text(pending)
        return out

    def stack(self, children: list[RenderNode], inherited: Mapping[str, str], gap: float) -> list[Element]:
        """A flex column with a row gap: each flex item's elements, the first of every item after
        the first spaced by the gap (text runs of two items never merge: they are two items)."""
        out: list[Element] = []
        for child in children:
            inline = _is_inline_text(child)
            items = self.text(self.runs(child, inherited, None)) if inline else self.node(child, inherited)
            if items and out:
                items[0]["spacing"] = spacing_bucket(gap)
            out += items
        return out

    def collapsible(self, node: RenderNode, children: list[RenderNode], inherited: Mapping[str, str]) -> list[Element]:
        """The content in a Container with an id, and the slot="button" child as an
        Action.ToggleVisibility of it. A card cannot clip at a height, so the content starts
        shown and the button folds it away and back (WeChat opens it in a half-screen view)."""
        content = [c for c in children if c.props.get("slot") != "button"]
        opener = next((c for c in children if c.props.get("slot") == "button" and not _hidden(c)), None)
        items = self.flow(content, inherited)
        if not items:
            return []
        target = f"collapsible-{node.id}"
        out: list[Element] = [{"type": "Container", "id": target, "items": items}]
        if opener is not None:
            title = opener.text_content().strip() or "More"
            self.lines.append(title)
            toggle = {"type": "Action.ToggleVisibility", "title": title, "targetElements": [target]}
            out.append({"type": "ActionSet", "actions": [toggle]})
        return out

    def map_preview(self, node: RenderNode) -> list[Element]:
        """A map's static preview: its centre and marker count, then the markers as facts."""
        props = map_props(node.props)
        caption = map_caption(props)
        self.lines.append(caption)
        items: list[Element] = [{"type": "TextBlock", "text": caption, "weight": "Bolder", "wrap": True}]
        facts = []
        for i, m in enumerate(props.markers[:MAX_MARKERS]):
            title = m.title or f"Marker {m.id if m.id is not None else i + 1}"
            value = f"{coordinate(m.latitude)}, {coordinate(m.longitude)}"
            facts.append({"title": title, "value": value})
            self.lines.append(f"{title}: {value}")
        if facts:
            items.append({"type": "FactSet", "facts": facts})
        more = len(props.markers) - MAX_MARKERS
        if more > 0:
            items.append({"type": "TextBlock", "text": f"… and {more} more", "isSubtle": True, "wrap": True})
        return [{"type": "Container", "style": "emphasis", "items": items}]

    def canvas_preview(self, node: RenderNode) -> list[Element]:
        """The picture the card painted (an SVG data URL), else a caption saying it is blank;
        a tap on the canvas is the element's own selectAction, as for an image."""
        drawing = canvas_drawing(node.props)
        action = tap_action(node)
        if drawing is None:
            self.lines.append(CANVAS_CAPTION)
            caption = {"type": "TextBlock", "text": CANVAS_CAPTION, "isSubtle": True, "wrap": True}
            box: Element = {"type": "Container", "style": "emphasis", "items": [caption]}
            if action is not None:
                box["selectAction"] = action
            return [box]
        image: Element = {"type": "Image", "url": drawing.src, "altText": "Canvas drawing"}
        width, height = css_values.px(node.style.get("width")), css_values.px(node.style.get("height"))
        if width is None and height is None and "width" not in node.style and "height" not in node.style:
            width, height = DEFAULT_WIDTH, DEFAULT_HEIGHT
        if width is not None and width > 0:
            image["width"] = f"{width:g}px"
        if height is not None and height > 0:
            image["height"] = f"{height:g}px"
        if action is not None:
            image["selectAction"] = action
        return [image]

    def runs(self, node: RenderNode, inherited: Mapping[str, str], action: Element | None) -> list[_Run]:
        if _hidden(node):
            return []
        inner = inherit(inherited, node.style)
        own = tap_action(node) or action
        if node.type == TEXT:
            text = node.text or ""
            return [_Run(text, text_look(inner, self.scheme), own)] if text else []
        out: list[_Run] = []
        for child in node.children or []:
            out += self.runs(child, inner, own)
        return out

    def text(self, runs: list[_Run]) -> list[Element]:
        joined = "".join(r.text for r in runs).strip()
        if not joined:
            return []
        self.lines.append(joined)
        first = runs[0].look
        if all(r.look == first and r.action is None for r in runs):
            return [text_block(joined, first)]
        # Mixed looks or a tappable run: TextRuns keep each run's look and action.
        inlines: list[Element] = []
        for r in runs:
            inline: Element = {"type": "TextRun", "text": r.text, **r.look.run_attributes()}
            if r.action is not None:
                inline["selectAction"] = r.action
            inlines.append(inline)
        block: Element = {"type": "RichTextBlock", "inlines": inlines}
        if first.align is not None:
            block["horizontalAlignment"] = first.align
        return [block]

    def image(self, node: RenderNode) -> list[Element]:
        src = node.props.get("src")
        if not isinstance(src, str) or not src.strip():
            return []
        image: Element = {"type": "Image", "url": src}
        width = css_values.px(node.style.get("width"))
        if width is not None:
            image["size"] = next((size for limit, size in _IMAGE_BUCKETS if width < limit), "Large")
        action = tap_action(node)
        if action is not None:
            image["selectAction"] = action
        return [image]

    def button(self, node: RenderNode) -> Element:
        title = node.text_content().strip() or "Button"
        self.lines.append(title)
        submit: Element = {"type": "Action.Submit", "title": title}
        tap = tap_action(node)
        if tap is not None:
            submit["data"] = tap["data"]
        if node.props.get("disabled") in (True, "true", ""):
            submit["isEnabled"] = False
        return {"type": "ActionSet", "actions": [submit]}

    def row(
        self, style: Mapping[str, str], children: list[RenderNode], inherited: Mapping[str, str], *, scroll: bool
    ) -> list[Element]:
        columns: list[Element] = []
        grown = False
        for child in children:
            items, action = self.content(child, inherited)
            if not items:
                continue
            column: Element = {"type": "Column", "width": self.column_width(child.style, scroll=scroll), "items": items}
            grown = grown or column["width"] == "stretch"
            if action is not None:
                column["selectAction"] = action
            columns.append(column)
        if not columns:
            return []
        _, column_gap = css_values.gaps(style)
        if column_gap is not None and style.get("display", "").strip() == "flex":
            for column in columns[1:]:
                column["spacing"] = spacing_bucket(column_gap)
        if not scroll and not grown and style.get("justify-content", "").strip() == "space-between":
            # Pushes the other columns to the right edge, like space-between does with two items.
            columns[0]["width"] = "stretch"
        valign = {"center": "Center", "flex-end": "Bottom", "end": "Bottom"}.get(style.get("align-items", "").strip())
        if valign is not None and not scroll:
            for column in columns:
                column["verticalContentAlignment"] = valign
        return [{"type": "ColumnSet", "columns": columns}]

    @staticmethod
    def column_width(style: Mapping[str, str], *, scroll: bool) -> str:
        # A card cannot scroll sideways: a scroll-view's items share the width equally.
        if scroll or _grows(style):
            return "stretch"
        width = css_values.px(style.get("width"))
        if width is not None and width > 0:
            return f"{width:g}px"
        return "auto"
