"""The HTML of the static previews of ``map`` and ``canvas`` (docs/backends.md, "html").

Both stay one ``div`` per node, as every other element, and the preview is appended after the
node's own children as elements without ``data-uid`` (marked ``data-preview``), so patches that
address children by index still land where they should. A map lists its centre and markers; a
canvas the card painted shows the picture (an ``<img>`` of the SVG data URL), one it has not a
caption. The MCP Apps card view (skillc/server/static/card-view.js) builds the same markup.
"""

from __future__ import annotations

from html import escape

from skillc.ir.previews import canvas_drawing, map_caption, map_props, marker_line
from skillc.ir.render import RenderNode

# At zero specificity (as BASE_CSS), so the node's own style (its size above all) wins; only
# documents that hold a map or a canvas carry these rules.
PREVIEW_CSS = """\
:where([data-type=map],[data-type=canvas]){display:block;position:relative;overflow:hidden;width:300px;height:150px}
:where([data-type=map]){background:#e6edf2;color:#33424f;font-size:12px;line-height:1.5}
:where([data-type=canvas]){color:#8a9099;font-size:12px}
:where([data-preview=caption]){padding:6px 8px;font-weight:600}
:where([data-preview=markers]){margin:0;padding:0 8px 0 28px}
:where([data-preview=drawing]){display:block;width:100%;height:100%}
"""
CANVAS_CAPTION = "Canvas · not drawn"
# The painted picture is content, so it has a name (html_a11y: no alt="" but for decoration).
CANVAS_ALT = "Canvas drawing"


def has_preview(root: RenderNode) -> bool:
    return any(node.type in ("map", "canvas") for node in root.walk())


def preview_markup(node: RenderNode) -> str:
    """What follows the node's children: the map's caption and markers, or the canvas picture."""
    if node.type == "map":
        props = map_props(node.props)
        out = f'<div data-preview="caption"\n>{escape(map_caption(props), quote=False)}</div\n>'
        if props.markers:
            items = "".join(f"<li\n>{escape(marker_line(m), quote=False)}</li\n>" for m in props.markers)
            out += f'<ol data-preview="markers"\n>{items}</ol\n>'
        return out
    if node.type == "canvas":
        drawing = canvas_drawing(node.props)
        if drawing is not None:
            return f'<img data-preview="drawing" src="{escape(drawing.src, quote=True)}" alt="{CANVAS_ALT}"\n>'
        return f'<div data-preview="caption"\n>{CANVAS_CAPTION}</div\n>'
    return ""
