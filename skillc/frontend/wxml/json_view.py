"""The plain JSON view of a WXML tree, for golden snapshots.

Positions become ``"line:column-end_line:end_column"`` strings; empty attribute lists and
children and a false ``self_closing`` are left out.
"""

from __future__ import annotations

from skillc.frontend.wxml.nodes import Attribute, Comment, Document, Element, Node, Part, Text

__all__ = ["document_to_json", "node_to_json"]


def _parts_json(parts: tuple[Part, ...]) -> list[object]:
    return [p if isinstance(p, str) else {"mustache": p.source, "loc": p.loc.to_json()} for p in parts]


def _attr_json(attr: Attribute) -> dict[str, object]:
    out: dict[str, object] = {"name": attr.name, "name_loc": attr.name_loc.to_json()}
    if attr.value is not None and attr.value_loc is not None:
        out["value"] = _parts_json(attr.value)
        out["value_loc"] = attr.value_loc.to_json()
    return out


def node_to_json(node: Node) -> dict[str, object]:
    if isinstance(node, Element):
        out: dict[str, object] = {"element": node.tag, "loc": node.loc.to_json(), "tag_loc": node.tag_loc.to_json()}
        if node.attributes:
            out["attributes"] = [_attr_json(a) for a in node.attributes]
        if node.self_closing:
            out["self_closing"] = True
        if node.children:
            out["children"] = [node_to_json(c) for c in node.children]
        return out
    if isinstance(node, Text):
        return {"text": _parts_json(node.parts), "loc": node.loc.to_json()}
    if isinstance(node, Comment):
        return {"comment": node.text, "loc": node.loc.to_json()}
    return {
        "wxs": node.content,
        "loc": node.loc.to_json(),
        "attributes": [_attr_json(a) for a in node.attributes],
    }


def document_to_json(doc: Document) -> dict[str, object]:
    """Plain JSON of the AST; positions are "line:column-end_line:end_column" strings."""
    return {"file": doc.file, "children": [node_to_json(n) for n in doc.children]}
