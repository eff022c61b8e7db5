"""The html backend: structure, determinism, escaping of hostile strings, self-containment."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from html.parser import HTMLParser

from hypothesis import HealthCheck, given, settings

from skillc.backends.base import RenderOptions
from skillc.backends.html_backend import BASE_CSS, HtmlBackend, inline_style, render_html, render_html_fragment
from skillc.ir.render import TEXT, EventBinding, RenderDocument, RenderNode
from tests.test_backends_samples import DARK_414, LIGHT_375, drink_list, order_confirm, render_documents

HOSTILE = [
    "</script><script>alert(1)</script>",
    '"><img src=x onerror=alert(1)>',
    "' onmouseover='x",
    "</style>",
    "&amp;",
]


@dataclass
class Element:
    tag: str
    attrs: dict[str, str | None]


@dataclass
class Parsed(HTMLParser):
    """Every start tag with its attributes, and the text, as a browser's tokenizer sees them."""

    elements: list[Element] = field(default_factory=list)
    text: list[str] = field(default_factory=list)
    in_style: bool = False

    def __post_init__(self) -> None:
        super().__init__(convert_charrefs=True)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append(Element(tag, dict(attrs)))
        self.in_style = tag == "style"

    def handle_endtag(self, tag: str) -> None:
        self.in_style = False

    def handle_data(self, data: str) -> None:
        if not self.in_style:
            self.text.append(data)


def parse(html: str) -> Parsed:
    parser = Parsed()
    parser.feed(html)
    parser.close()
    return parser


def by_uid(parsed: Parsed, uid: str) -> Element:
    return next(e for e in parsed.elements if e.attrs.get("data-uid") == uid)


def test_document_head_viewport_and_color_scheme() -> None:
    html = HtmlBackend().render(drink_list(DARK_414), options=RenderOptions(title="饮品 <list>"))
    assert html.startswith('<!DOCTYPE html>\n<html data-color-scheme="dark" style="color-scheme:dark">\n')
    assert '<meta name="viewport" content="width=414, initial-scale=1">' in html
    assert '<meta name="color-scheme" content="dark">' in html
    assert "<title>饮品 &lt;list&gt;</title>" in html
    assert '<body style="width:414px;min-height:103px;max-height:414px;overflow:hidden">' in html
    assert BASE_CSS in html


def test_elements_by_type_with_ids_styles_and_events() -> None:
    parsed = parse(render_html(drink_list(LIGHT_375)))
    root = by_uid(parsed, "0")
    assert root.tag == "div" and root.attrs["data-type"] == "view"
    assert root.attrs["style"] == (
        "background:linear-gradient(180deg, #fff8f0 0%, #ffffff 100%);border-radius:12px;color:#2b1d12;padding:12px"
    )
    scroller = by_uid(parsed, "0/1")
    assert (scroller.tag, scroller.attrs["data-type"], scroller.attrs["data-prop-scroll-x"]) == (
        "div",
        "scroll-view",
        "true",
    )
    item = by_uid(parsed, "0/1/0[latte]")
    assert item.attrs["data-bind-tap"] == "onSelect"
    assert (item.attrs["role"], item.attrs["tabindex"], item.attrs["aria-label"]) == ("button", "0", "拿铁 ¥28")
    assert json.loads(item.attrs["data-dataset"] or "") == {"id": "latte", "name": "拿铁"}
    assert item.attrs["data-prop-hover-class"] == "drink-hover"
    image = by_uid(parsed, "0/1/0[latte]/0")
    assert image.tag == "img"
    assert image.attrs == {
        "data-uid": "0/1/0[latte]/0",
        "data-type": "image",
        "src": "https://img.example.com/latte.png",
        "alt": "拿铁",  # the item's text names its picture
        "data-mode": "aspectFill",
        "style": "border-radius:6px;height:110px;width:110px",
    }
    assert by_uid(parsed, "0/1/0[latte]/1").tag == "span"
    assert "拿铁" in parsed.text


def test_button_and_catch_binding() -> None:
    parsed = parse(render_html(order_confirm(LIGHT_375)))
    button = by_uid(parsed, "0/3")
    assert button.tag == "button" and button.attrs["type"] == "button"
    assert button.attrs["data-bind-tap"] == "onConfirm"
    node = RenderNode("0", "view", {}, {}, {"tap": EventBinding("onStop", True, {})})
    assert parse(render_html_fragment(RenderDocument(1, LIGHT_375, node))).elements[0].attrs == {
        "data-uid": "0",
        "data-type": "view",
        "role": "button",
        "tabindex": "0",  # no text, so no name to give
        "data-catch-tap": "onStop",
        "data-dataset": "{}",
    }


def test_unknown_type_degrades_to_a_div_with_its_type() -> None:
    node = RenderNode(
        "0", "video", {"latitude": 39.9}, {"height": "200px"}, None, [RenderNode("0/0", TEXT, {"text": "x"})]
    )
    assert render_html_fragment(RenderDocument(1, LIGHT_375, node)) == (
        '<div data-uid="0" data-type="video" data-prop-latitude="39.9" style="height:200px"\n>x</div\n>'
    )


def test_fragment_is_the_root_element_the_document_embeds() -> None:
    doc = order_confirm(LIGHT_375)
    fragment = render_html_fragment(doc)
    assert fragment.startswith('<div data-uid="0" data-type="view"') and fragment.endswith("</div\n>")
    assert f"\n{fragment}\n</body>" in render_html(doc)


def test_style_order_is_sorted_and_insertion_order_free() -> None:
    assert inline_style({"padding": "4px", "color": "red", "border": "1px solid #000"}) == (
        "border:1px solid #000;color:red;padding:4px"
    )
    assert inline_style({"color": "red", "padding": "4px"}) == inline_style({"padding": "4px", "color": "red"})


def test_declarations_that_could_escape_their_slot_are_dropped() -> None:
    style = {"color": "red; position: fixed", "x}y": "1", "width": "1px}", "font-family": '"PingFang SC"', "top": "0"}
    assert inline_style(style) == 'font-family:"PingFang SC";top:0'


def test_hostile_strings_stay_data() -> None:
    for bad in HOSTILE:
        root = RenderNode(
            bad,
            "view",
            {bad: bad, "class": bad},
            {"color": bad},
            {"tap": EventBinding(bad, False, {bad: bad})},
            [
                RenderNode("t", TEXT, {"text": bad}),
                RenderNode("i", "image", {"src": bad, "mode": bad}),
                RenderNode("b", bad, {}, {}, None, []),
            ],
        )
        html = render_html(RenderDocument(1, LIGHT_375, root), title=bad)
        parsed = parse(html)
        # Exactly the elements the IR names (plus the page skeleton); nothing the strings smuggled in.
        tags = [e.tag for e in parsed.elements]
        assert tags == ["html", "head", "meta", "meta", "meta", "title", "style", "body", "div", "img", "div"], bad
        assert all(not name.startswith("on") for e in parsed.elements for name in e.attrs)
        assert "script" not in tags
        outer = parsed.elements[8]
        assert outer.attrs["data-uid"] == bad
        assert outer.attrs["data-bind-tap"] == bad
        assert json.loads(outer.attrs["data-dataset"] or "") == {bad: bad}
        assert "style" not in outer.attrs or "position" not in (outer.attrs["style"] or "")
        assert "src" not in parsed.elements[9].attrs  # not an http(s), data:image or relative URL
        assert parsed.elements[10].attrs["data-type"] == bad
        assert bad in "".join(parsed.text)


def test_image_urls_are_the_only_external_references() -> None:
    html = render_html(drink_list(LIGHT_375))
    parsed = parse(html)
    urls = [v for e in parsed.elements for k, v in e.attrs.items() if k in ("src", "href", "action", "srcset")]
    assert urls == [f"https://img.example.com/{d}.png" for d in ("latte", "americano", "flat-white")]
    assert not any(e.tag in ("script", "link", "iframe", "object") for e in parsed.elements)
    assert "url(" not in BASE_CSS and "@import" not in BASE_CSS


def test_unsafe_image_sources_are_dropped_and_safe_ones_kept() -> None:
    def src(value: str) -> str | None:
        node = RenderNode("0", "image", {"src": value})
        return parse(render_html_fragment(RenderDocument(1, LIGHT_375, node))).elements[0].attrs.get("src")

    assert src("javascript:alert(1)") is None
    assert src("vbscript:x") is None
    assert src("data:text/html,<script>") is None
    assert src("https://a.example/x.png") == "https://a.example/x.png"
    assert src("data:image/png;base64,AAAA") == "data:image/png;base64,AAAA"
    assert src("/images/latte.png") == "/images/latte.png"


@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(render_documents())
def test_any_document_renders_one_element_per_node(doc: RenderDocument) -> None:
    parsed = parse(render_html_fragment(doc))
    elements = [n for n in doc.root.walk() if n.type != TEXT]
    assert [e.attrs.get("data-uid") for e in parsed.elements] == [n.id for n in elements]
    assert all(not name.startswith("on") for e in parsed.elements for name in e.attrs)
    assert render_html(doc) == render_html(doc)
