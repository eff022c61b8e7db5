"""The ``elementTree`` string of ``cli agent render``, from the Render IR and the template IR.

WeChat prints the card's element tree one node a line, indented by depth, each element as
``<tag:component class="...">`` (``<view:view class="card">``, ``<text:default-component
class="temp"> 28°`` with a text element's text after it) and the nodes its directives make as
virtual ones (``<(virtual):wx:if>``). The Render IR drops directives (they are structure, not
nodes) but keeps their trace in node ids: an id is the template position of its node, so a
position between a node and its parent's that belongs to an ``IfChain``, ``For`` or ``Block``
of the template is a virtual node there. Class names come from the renderer, which evaluated
each element's ``class`` binding.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from skillc.ir.render import TEXT, RenderDocument, RenderNode
from skillc.ir.template import Block, Element, For, IfChain, Node, Template, TemplateCall

INDENT = "  "
# The component name WeChat prints after a built-in's tag: text elements are exparser's default
# component; other built-ins print their own name.
_COMPONENT = {"text": "default-component"}
_SEGMENT = re.compile(r"(\d+)((?:\[(?:\\.|[^\]\\])*\])*)")
_KEY = re.compile(r"\[(?:\\.|[^\]\\])*\]")


def steps(node_id: str) -> list[tuple[str, str]]:
    """(template path, id prefix) of every template position from the top down to ``node_id``.

    A loop item ``P[key]`` is two positions: the loop at ``P`` (prefix ``P``, one for all its
    items) and its body at ``P.0`` (prefix ``P[key]``, one per item). Keys may hold dots, so
    the id is read segment by segment rather than split."""
    out: list[tuple[str, str]] = []
    path: list[str] = []
    prefix = ""
    pos = 0
    while pos < len(node_id):
        m = _SEGMENT.match(node_id, pos)
        if m is None:
            break  # not an id of the template (the root)
        prefix = f"{prefix}.{m.group(1)}" if prefix else m.group(1)
        path.append(m.group(1))
        out.append((".".join(path), prefix))
        for key in _KEY.findall(m.group(2)):
            prefix += key
            path.append("0")
            out.append((".".join(path), prefix))
        pos = m.end() + 1  # the "." before the next segment
    return out


def _index(nodes: list[Node], into: dict[str, Node]) -> None:
    for node in nodes:
        if isinstance(node, TemplateCall):
            continue  # a call's body carries paths relative to its template, not to this tree
        into[node.path] = node
        if isinstance(node, Element | Block):
            _index(node.children, into)
        elif isinstance(node, IfChain):
            _index([b.node for b in node.branches], into)
        elif isinstance(node, For):
            _index([node.body], into)


def _virtual_name(node: Node) -> str | None:
    if isinstance(node, IfChain):
        return "wx:if"
    if isinstance(node, For):
        return "wx:for"
    if isinstance(node, Block):
        return "block"
    return None


def _quote(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


class _Printer:
    def __init__(self, template: Template, classes: dict[str, tuple[str, ...]]) -> None:
        self.nodes: dict[str, Node] = {}
        _index(template.root, self.nodes)
        self.classes = classes
        self.lines: list[str] = []

    def virtual_chain(self, parent: str, child: str) -> list[tuple[str, str]]:
        """(id prefix, name) of each directive between the nodes ``parent`` and ``child``: the
        prefix tells one loop item's block from the next item's."""
        below = len(steps(parent)) if parent != "root" else 0
        chain = []
        for path, prefix in steps(child)[below:-1]:
            node = self.nodes.get(path)
            name = _virtual_name(node) if node is not None else None
            if name is not None:
                chain.append((prefix, name))
        return chain

    def children(self, node: RenderNode, depth: int) -> None:
        kids = node.children or []
        if node.type == "text":
            kids = [k for k in kids if k.type != TEXT]  # a text element's runs are on its own line
        entries = [(self.virtual_chain(node.id, k.id), k) for k in kids]
        self.group(entries, depth)

    def group(self, entries: list[tuple[list[tuple[str, str]], RenderNode]], depth: int) -> None:
        i = 0
        while i < len(entries):
            chain, kid = entries[i]
            if not chain:
                self.element(kid, depth)
                i += 1
                continue
            head = chain[0]
            j = i
            while j < len(entries) and entries[j][0][:1] == [head]:
                j += 1
            self.lines.append(f"{INDENT * depth}<(virtual):{head[1]}>")
            self.group([(c[1:], k) for c, k in entries[i:j]], depth + 1)
            i = j

    def element(self, node: RenderNode, depth: int) -> None:
        pad = INDENT * depth
        if node.type == TEXT:
            if node.text and node.text.strip():
                self.lines.append(pad + node.text.strip())
            return
        names = self.classes.get(node.id, ())
        attr = f' class="{_quote(" ".join(names))}"' if names else ""
        line = f"{pad}<{node.type}:{_COMPONENT.get(node.type, node.type)}{attr}>"
        if node.type == "text":
            text = "".join(k.text or "" for k in node.children or [] if k.type == TEXT).strip()
            if text:
                line += " " + text
        self.lines.append(line)
        self.children(node, depth + 1)


def element_tree(doc: RenderDocument, template: Template, classes: dict[str, tuple[str, ...]]) -> str:
    """The card's tree in WeChat's notation, one node a line; the component root is not printed."""
    printer = _Printer(template, classes)
    printer.children(doc.root, 0)
    return "\n".join(printer.lines)


def element_lines(tree: str) -> Iterator[str]:
    """The lines of an elementTree without their indentation (for readers that match on nodes)."""
    return (line.strip() for line in tree.splitlines() if line.strip())
