"""Lowering one element's attributes: values, data-*, events, and the card rules on them.

:class:`AttributeLowering` is the half of a lowering that needs no file or template context,
only the diagnostics sink; ``skillc.ir.lower`` builds the tree on top of it.
"""

from __future__ import annotations

import re

from skillc.diagnostics import DiagnosticSink, Severity, Span
from skillc.frontend import wxml
from skillc.frontend.expr import Mustache, parse_expression
from skillc.ir.events import CARD_EVENTS, event_allowed, events_hint, tags_text
from skillc.ir.official_tags import v003_refuses_event
from skillc.ir.template import Binding, Element, Event, Part

# The official validator's V003 patterns, read against one attribute value as written: it fails
# scroll-y="true" / "{{ true }}" (a prefix match, as its regex), and image sources in formats
# cards do not show.
_OFFICIAL_SCROLL_Y = re.compile(r"^(?:true|\{\{\s*true\s*\}\})")
_BANNED_IMAGE = re.compile(r"\.(webp|gif|svg|bmp|avif)(?=$|[?#'\"\s])", re.IGNORECASE)
_EVENT_ATTR = re.compile(r"^(bind|catch|capture-bind|capture-catch|mut-bind):?([A-Za-z][\w-]*)$")
DIRECTIVES = frozenset(
    {"wx:if", "wx:elif", "wx:else", "wx:for", "wx:for-items", "wx:for-item", "wx:for-index", "wx:key"}
)


# What an attribute name is, by name: a directive, an unknown wx: directive, an event (its
# prefix and name), or anything else. A corpus has a few hundred names over many thousand uses.
_DIRECTIVE = ("wx", "directive")
_UNKNOWN_DIRECTIVE = ("wx", "unknown")
_PLAIN = ("", "")
_KINDS: dict[str, tuple[str, str]] = {}
_KINDS_LIMIT = 4096


def _kind(name: str) -> tuple[str, str]:
    if name.startswith("wx:"):
        kind = _DIRECTIVE if name in DIRECTIVES else _UNKNOWN_DIRECTIVE
    else:
        m = _EVENT_ATTR.match(name)
        kind = (m.group(1), m.group(2)) if m is not None else _PLAIN
    if len(_KINDS) >= _KINDS_LIMIT:
        _KINDS.clear()
    _KINDS[name] = kind
    return kind


def dataset_key(name: str) -> str:
    """``data-order-id`` -> ``orderId``: WeChat lowercases, then camel-cases at each hyphen."""
    parts = name[5:].lower().split("-")
    return parts[0] + "".join(p[:1].upper() + p[1:] for p in parts[1:])


class AttributeLowering:
    """Attribute values, events and attribute rules, reported to ``sink``."""

    sink: DiagnosticSink
    # id(raw), object_form, attribute -> the raw (kept: an id is unique only while it lives)
    # and its Mustache.
    mustaches: dict[tuple[int, bool, bool], tuple[wxml.RawMustache, Mustache]]

    def emit(
        self, code: str, message: str, file: str, span: Span, hint: str | None = None, *, error: bool = False
    ) -> None:
        """Report ``code``; ``error`` raises a warning code to an error where wcc refuses the case."""
        self.sink.emit(code, message, file=file, span=span, hint=hint, severity=Severity.ERROR if error else None)

    def parts(self, parts: tuple[wxml.Part, ...], file: str, *, attribute: bool = False) -> tuple[Part, ...]:
        out: list[Part] = []
        for part in parts:
            if isinstance(part, str):
                out.append(part)
            else:
                out.append(self.mustache(part, file, attribute=attribute))
        return tuple(out)

    def mustache(
        self, raw: wxml.RawMustache, file: str, *, object_form: bool = False, attribute: bool = False
    ) -> Mustache:
        # A template body is lowered at its definition and at each call, an element under
        # wx:if at each branch: the same mustache of the same tree, parsed once per lowering.
        # Its reports would repeat ones already in the sink, which lower_document drops.
        key = (id(raw), object_form, attribute)
        found = self.mustaches.get(key)
        if found is not None and found[0] is raw:
            return found[1]
        expr = parse_expression(
            raw.source,
            file=file,
            line=raw.source_line,
            column=raw.source_column,
            sink=self.sink,
            object_form=object_form,
            attribute=attribute,
        )
        made = Mustache(raw.source, expr, raw.loc.span())
        self.mustaches[key] = (raw, made)
        return made

    def binding(self, attr: wxml.Attribute, file: str) -> Binding:
        return Binding(self.parts(attr.value or (), file, attribute=True))

    def check_attributes(self, el: wxml.Element, file: str) -> None:
        for attr in el.attributes:
            if attr.name.startswith("wx:") and attr.name not in DIRECTIVES:
                self.unknown_directive(attr, file)

    def unknown_directive(self, attr: wxml.Attribute, file: str) -> None:
        self.emit(
            "TPL012",
            f"unknown directive {attr.name}",
            file,
            attr.name_loc.span(),
            hint="WXML directives are wx:if, wx:elif, wx:else, wx:for, wx:for-item, wx:for-index and wx:key",
        )

    def attributes(self, el: wxml.Element, node: Element, file: str) -> None:
        events: list[Event] = []
        tag = el.tag
        for attr in el.attributes:
            name = attr.name
            kind = _KINDS.get(name)
            if kind is None:
                kind = _kind(name)
            if kind is _DIRECTIVE:
                continue
            if kind is _UNKNOWN_DIRECTIVE:
                self.unknown_directive(attr, file)
                continue
            if kind is not _PLAIN:
                event = self.event(attr, kind[0], kind[1], tag, file)
                if event is not None:
                    events.append(event)
                continue
            if attr.value is None:
                value: str | bool | Binding = True
            elif not is_static(attr.value):
                value = self.binding(attr, file)
            else:
                value = static_text(attr.value)
            if name.startswith("data-") and len(name) > 5:
                node.dataset[dataset_key(name)] = value if not isinstance(value, bool) else ""
            elif isinstance(value, Binding):
                node.bindings[name] = value
            else:
                node.attrs[name] = value
        node.events = tuple(events)
        if tag == "scroll-view":
            self.scroll_view(el, file)
        elif tag == "image" and (src := el.attribute("src")) is not None:
            self.image_source(src, file)
        elif tag == "button" and (open_type := el.attribute("open-type")) is not None:
            self.emit(
                "TPL007",
                "button open-type is not available in cards",
                file,
                open_type.loc.span(),
                hint="handle bindtap and call the API, or send a follow-up message",
            )

    def scroll_view(self, el: wxml.Element, file: str) -> None:
        scroll_x = el.attribute("scroll-x")
        scroll_y = el.attribute("scroll-y")
        if scroll_y is not None and _OFFICIAL_SCROLL_Y.match(scroll_y.raw or ""):
            self.emit(
                "TPL006",
                "scroll-view in a card scrolls horizontally only: scroll-y is not supported",
                file,
                scroll_y.loc.span(),
                hint="remove scroll-y; the card's height is fixed and overflow is clipped",
            )
        elif scroll_y is not None and not is_false(scroll_y):
            # The official rule fails only scroll-y="true" / "{{true}}"; a bare or bound scroll-y
            # passes its gate, so it is not an error here either.
            what = "a bare scroll-y" if scroll_y.value is None else f'scroll-y="{scroll_y.raw}"'
            self.emit(
                "TPL019",
                f"{what} passes the official validator, but cards scroll horizontally only",
                file,
                scroll_y.loc.span(),
                hint="remove scroll-y; the card's height is fixed and overflow is clipped",
            )
        if scroll_x is None or is_false(scroll_x):
            self.emit(
                "TPL005",
                "scroll-view in a card needs scroll-x",
                file,
                el.tag_loc.span(),
                hint='add scroll-x="{{true}}"',
            )

    def image_source(self, src: wxml.Attribute, file: str) -> None:
        m = _BANNED_IMAGE.search(src.raw or "")
        if m is None:
            return
        self.emit(
            "TPL021",
            f"<image> src ends in .{m.group(1).lower()}, a format cards do not show (official rule V003: "
            "no .webp, .gif, .svg, .bmp or .avif)",
            file,
            (src.value_loc or src.name_loc).span(),
            hint="use a .png or .jpg image",
        )

    def event(self, attr: wxml.Attribute, prefix: str, name: str, tag: str, file: str) -> Event | None:
        allowed = event_allowed(name, tag)
        if prefix not in ("bind", "catch") or not allowed:
            known = CARD_EVENTS.get(name)
            what = (
                f"{prefix} is not available in cards"
                if allowed
                else f"the {name} event is not delivered to cards"
                + (" (official rule V003)" if v003_refuses_event(name) else "")
                if known is None
                else f"the {name} event is only delivered to {tags_text(known)}"
            )
            self.emit(
                "TPL008",
                f"{attr.name}: {what}",
                file,
                attr.name_loc.span(),
                hint=events_hint(),
            )
            return None
        if attr.value is None:
            handler: str | Binding = ""
        elif not is_static(attr.value):
            handler = self.binding(attr, file)
        else:
            handler = static_text(attr.value).strip()
        return Event(name, prefix == "catch", handler, attr.name, attr.loc.span())


def is_static(parts: tuple[wxml.Part, ...]) -> bool:
    return all(isinstance(p, str) for p in parts)


def static_text(parts: tuple[wxml.Part, ...]) -> str:
    """The literal text of ``parts``, mustaches left out."""
    return "".join(p for p in parts if isinstance(p, str))


def is_false(attr: wxml.Attribute) -> bool:
    if attr.value is None:
        return False
    text = "".join(p if isinstance(p, str) else "{{" + p.source.strip() + "}}" for p in attr.value).strip()
    return text in ("{{false}}", "false", "")
