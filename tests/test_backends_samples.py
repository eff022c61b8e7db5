"""Hand-built Render IR documents shaped like the coffee cards, shared by the backend tests.

They stand in for evaluator output: styles are resolved the way the evaluator resolves them
(rpx converted for the viewport, dark-scheme media rules applied), ids are stable and keyed.
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from hypothesis import strategies as st

from skillc.ir.render import TEXT, EventBinding, RenderDocument, RenderNode, from_plain, render_ir_schema, to_plain
from skillc.ir.viewport import Viewport

LIGHT_375 = Viewport(width=375, height=667, color_scheme="light")
DARK_414 = Viewport(width=414, height=896, color_scheme="dark")
VIEWPORTS = {"375-light": LIGHT_375, "414-dark": DARK_414}

DRINKS = [
    {"id": "latte", "name": "拿铁", "price": 28, "image": "https://img.example.com/latte.png"},
    {"id": "americano", "name": "美式咖啡", "price": 22, "image": "https://img.example.com/americano.png"},
    {"id": "flat-white", "name": "馥芮白", "price": 32, "image": "https://img.example.com/flat-white.png"},
]


def _px(vp: Viewport, rpx: float) -> str:
    return f"{vp.rpx(rpx)}px"


def _run(node_id: str, text: str) -> RenderNode:
    return RenderNode(node_id, TEXT, {"text": text})


def _text(node_id: str, text: str, style: dict[str, str]) -> RenderNode:
    return RenderNode(node_id, "text", {}, style, None, [_run(f"{node_id}/0", text)])


def _colors(vp: Viewport) -> tuple[str, str]:
    """(main text, secondary text) as the cards' dark-scheme media rules resolve them."""
    return ("#f3e9df", "#b9a898") if vp.color_scheme == "dark" else ("#2b1d12", "#8a7768")


def drink_list(vp: Viewport, selected: str = "americano") -> RenderDocument:
    main, secondary = _colors(vp)
    dark = vp.color_scheme == "dark"
    items = []
    for drink in DRINKS:
        key = f"0/1/0[{drink['id']}]"
        meta_children = [
            _text(
                f"{key}/2/0",
                f"¥{drink['price']}",
                {"color": "#c8742c", "font-size": _px(vp, 28), "font-weight": "600", "white-space": "nowrap"},
            )
        ]
        if drink["id"] == selected:
            meta_children.append(
                _text(
                    f"{key}/2/1",
                    "已选",
                    {
                        "background-color": "#c8742c",
                        "border-radius": _px(vp, 8),
                        "color": "#ffffff",
                        "font-size": _px(vp, 20),
                        "padding": f"{_px(vp, 2)} {_px(vp, 8)}",
                        "white-space": "nowrap",
                    },
                )
            )
        style = {
            "background-color": "#302721" if dark else "#ffffff",
            "border-radius": _px(vp, 16),
            "box-shadow": "none" if dark else "0 2px 6px rgba(43, 29, 18, 0.08)",
            "display": "inline-block",
            "margin-right": _px(vp, 20),
            "padding": _px(vp, 12),
            "vertical-align": "top",
            "white-space": "nowrap",
            "width": _px(vp, 220),
        }
        if drink["id"] == selected:
            style["border"] = "2px solid #c8742c"
        items.append(
            RenderNode(
                key,
                "view",
                {"hover-class": "drink-hover"},
                style,
                {"tap": EventBinding("onSelect", False, {"id": drink["id"], "name": drink["name"]})},
                [
                    RenderNode(
                        f"{key}/0",
                        "image",
                        {"src": drink["image"], "mode": "aspectFill"},
                        {"border-radius": _px(vp, 12), "height": _px(vp, 220), "width": _px(vp, 220)},
                    ),
                    _text(
                        f"{key}/1",
                        str(drink["name"]),
                        {
                            "display": "block",
                            "font-size": _px(vp, 26),
                            "line-height": "1.3",
                            "margin-top": _px(vp, 8),
                            "white-space": "normal",
                            "color": main,
                        },
                    ),
                    RenderNode(
                        f"{key}/2",
                        "view",
                        {},
                        {
                            "align-items": "center",
                            "display": "flex",
                            "justify-content": "space-between",
                            "margin-top": _px(vp, 6),
                        },
                        None,
                        meta_children,
                    ),
                ],
            )
        )
    root = RenderNode(
        "0",
        "view",
        {},
        {
            "background": (
                "linear-gradient(180deg, #2a211b 0%, #1c1714 100%)"
                if dark
                else "linear-gradient(180deg, #fff8f0 0%, #ffffff 100%)"
            ),
            "border-radius": _px(vp, 24),
            "color": main,
            "padding": _px(vp, 24),
        },
        None,
        [
            RenderNode(
                "0/0",
                "view",
                {},
                {
                    "align-items": "baseline",
                    "display": "flex",
                    "justify-content": "space-between",
                    "margin-bottom": _px(vp, 16),
                },
                None,
                [
                    _text("0/0/0", "今日推荐", {"font-size": _px(vp, 34), "font-weight": "600", "color": main}),
                    _text("0/0/1", f"{len(DRINKS)} 款", {"color": secondary, "font-size": _px(vp, 24)}),
                ],
            ),
            RenderNode("0/1", "scroll-view", {"scroll-x": True}, {"white-space": "nowrap"}, None, items),
        ],
    )
    return RenderDocument(1, vp, root)


def order_confirm(vp: Viewport) -> RenderDocument:
    main, secondary = _colors(vp)
    dark = vp.color_scheme == "dark"
    rule = f"1px solid {'#3a2f27' if dark else '#f0e6dc'}"
    lines = []
    for drink, qty in ((DRINKS[0], 2), (DRINKS[2], 1)):
        key = f"0/1[{drink['id']}]"
        lines.append(
            RenderNode(
                key,
                "view",
                {},
                {"align-items": "center", "display": "flex", "padding": f"{_px(vp, 20)} 0"},
                None,
                [
                    RenderNode(
                        f"{key}/0",
                        "image",
                        {"src": drink["image"]},
                        {
                            "border-radius": _px(vp, 12),
                            "height": _px(vp, 96),
                            "margin-right": _px(vp, 20),
                            "width": _px(vp, 96),
                        },
                    ),
                    RenderNode(
                        f"{key}/1",
                        "view",
                        {},
                        {"flex": "1"},
                        None,
                        [
                            _text(
                                f"{key}/1/0",
                                str(drink["name"]),
                                {"display": "block", "font-size": _px(vp, 28), "color": main},
                            ),
                            _text(
                                f"{key}/1/1",
                                f"大杯 · 少冰 × {qty}",
                                {
                                    "color": secondary,
                                    "display": "block",
                                    "font-size": _px(vp, 22),
                                    "margin-top": _px(vp, 4),
                                },
                            ),
                        ],
                    ),
                    _text(f"{key}/2", f"¥{int(drink['price']) * qty}", {"font-size": _px(vp, 28), "color": main}),
                ],
            )
        )
    root = RenderNode(
        "0",
        "view",
        {},
        {
            "background-color": "#1c1714" if dark else "#ffffff",
            "border-radius": _px(vp, 24),
            "color": main,
            "padding": _px(vp, 28),
        },
        None,
        [
            RenderNode(
                "0/0",
                "view",
                {},
                {
                    "align-items": "baseline",
                    "border-bottom": rule,
                    "display": "flex",
                    "justify-content": "space-between",
                    "padding-bottom": _px(vp, 16),
                },
                None,
                [
                    _text("0/0/0", "确认订单", {"font-size": _px(vp, 34), "font-weight": "600", "color": main}),
                    _text("0/0/1", "NO.20260728001", {"color": secondary, "font-size": _px(vp, 22)}),
                ],
            ),
            *lines,
            RenderNode(
                "0/2",
                "view",
                {},
                {
                    "border-top": rule,
                    "display": "flex",
                    "justify-content": "space-between",
                    "padding": f"{_px(vp, 16)} 0 {_px(vp, 24)}",
                },
                None,
                [
                    _text("0/2/0", "合计", {"font-size": _px(vp, 28), "color": main}),
                    _text("0/2/1", "¥88", {"color": "#c8742c", "font-size": _px(vp, 36), "font-weight": "700"}),
                ],
            ),
            RenderNode(
                "0/3",
                "button",
                {},
                {
                    "background-color": "#c8742c",
                    "border-radius": _px(vp, 40),
                    "color": "#ffffff",
                    "font-size": _px(vp, 30),
                },
                {"tap": EventBinding("onConfirm", False, {"orderId": "NO.20260728001"})},
                [_run("0/3/0", "确认并支付")],
            ),
        ],
    )
    return RenderDocument(1, vp, root)


def payment_result(vp: Viewport) -> RenderDocument:
    main, secondary = _colors(vp)
    dark = vp.color_scheme == "dark"
    block = {"display": "block"}
    root = RenderNode(
        "0",
        "view",
        {},
        {
            "background-color": "#1c1714" if dark else "#ffffff",
            "border-radius": _px(vp, 24),
            "color": main,
            "padding": _px(vp, 32),
            "text-align": "center",
        },
        None,
        [
            RenderNode(
                "0/0",
                "view",
                {},
                {"text-align": "center"},
                None,
                [
                    _text("0/0/0", "✓", {**block, "color": "#2e9d5b", "font-size": _px(vp, 64)}),
                    _text(
                        "0/0/1",
                        "支付成功",
                        {**block, "font-size": _px(vp, 36), "font-weight": "600", "margin-top": _px(vp, 8)},
                    ),
                    _text(
                        "0/0/2",
                        "¥88",
                        {**block, "font-size": _px(vp, 44), "font-weight": "700", "margin": f"{_px(vp, 12)} 0"},
                    ),
                    RenderNode(
                        "0/0/3",
                        "view",
                        {},
                        {
                            "background-color": "#3a2f27" if dark else "#fff3e6",
                            "border-radius": _px(vp, 16),
                            "margin": f"{_px(vp, 16)} auto",
                            "padding": _px(vp, 16),
                            "width": _px(vp, 320),
                        },
                        None,
                        [
                            _text("0/0/3/0", "取餐码", {**block, "color": secondary, "font-size": _px(vp, 22)}),
                            _text(
                                "0/0/3/1",
                                "A 042",
                                {
                                    **block,
                                    "color": "#c8742c",
                                    "font-size": _px(vp, 56),
                                    "font-weight": "700",
                                    "letter-spacing": _px(vp, 8),
                                },
                            ),
                        ],
                    ),
                    # Mixed runs in one <text>: the order id is a separate run, as the evaluator emits
                    # for `订单 {{orderId}} · 请到柜台出示取餐码`.
                    RenderNode(
                        "0/0/4",
                        "text",
                        {},
                        {**block, "color": secondary, "font-size": _px(vp, 24), "margin-top": _px(vp, 8)},
                        None,
                        [
                            _run("0/0/4/0", "订单 "),
                            _run("0/0/4/1", "NO.20260728001"),
                            _run("0/0/4/2", " · 请到柜台出示取餐码"),
                        ],
                    ),
                ],
            ),
        ],
    )
    return RenderDocument(1, vp, root)


def all_documents() -> dict[str, RenderDocument]:
    """Every sample at every viewport, named `<card>-<viewport>`."""
    docs: dict[str, RenderDocument] = {}
    for vp_name, vp in VIEWPORTS.items():
        docs[f"drink-list-{vp_name}"] = drink_list(vp)
        docs[f"order-confirm-{vp_name}"] = order_confirm(vp)
        docs[f"payment-result-{vp_name}"] = payment_result(vp)
    return docs


def plain(doc: RenderDocument) -> dict[str, Any]:
    return json.loads(json.dumps(to_plain(doc)))


@pytest.mark.parametrize("name", sorted(all_documents()))
def test_samples_are_valid_render_ir(name: str) -> None:
    doc = all_documents()[name]
    jsonschema.Draft202012Validator(render_ir_schema()).validate(plain(doc))
    assert from_plain(plain(doc)) == doc


def test_samples_resolve_rpx_for_their_viewport() -> None:
    # 24rpx is 12px at 375 wide and 13px at 414 wide (floor(24 / 750 * 414 + 0.0001)).
    assert drink_list(LIGHT_375).root.style["padding"] == "12px"
    assert drink_list(DARK_414).root.style["padding"] == "13px"


# -- random documents, for the fuzz tests of every backend ---------------------------------

_NAMES = st.text(alphabet="abcdefghijklmnopqrstuvwxyz-", min_size=1, max_size=12)
_HOSTILE = st.sampled_from(
    [
        "</script><script>alert(1)</script>",
        '"onmouseover="x',
        "<img src=x onerror=alert(1)>",
        "a & b",
        "**bold** _it_",
        "\u0000\u202e",
        "   ",
        "",
    ]
)
_STRINGS = st.one_of(st.text(max_size=20), _HOSTILE)
_STYLE_VALUES = st.one_of(
    st.sampled_from(
        [
            "12px",
            "0",
            "flex",
            "block",
            "none",
            "#c8742c",
            "rgb(46, 157, 91)",
            "600",
            "bold",
            "center",
            "nowrap",
            "column",
            "space-between",
            "1",
            "red; position:fixed",
            "}</style>",
        ]
    ),
    _STRINGS,
)
_STYLE_KEYS = st.sampled_from(
    [
        "display",
        "flex-direction",
        "color",
        "font-size",
        "font-weight",
        "text-align",
        "white-space",
        "width",
        "justify-content",
        "align-items",
        "flex",
        "padding",
    ]
)
_JSON = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**31), 2**31), _STRINGS),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_NAMES, inner, max_size=3),
    max_leaves=6,
)


@st.composite
def render_nodes(draw: st.DrawFn, depth: int = 0, prefix: str = "0") -> RenderNode:
    kind = draw(
        st.sampled_from(["view", "text", "image", "button", "scroll-view", "collapsible-view", TEXT, "x-custom"])
    )
    if kind == TEXT:
        return RenderNode(prefix, TEXT, {"text": draw(_STRINGS)})
    props: dict[str, Any] = draw(st.dictionaries(_NAMES, _JSON, max_size=2))
    if kind == "image":
        props["src"] = draw(st.one_of(st.just("https://img.example.com/a.png"), _STRINGS))
    if kind == "button" and draw(st.booleans()):
        props["slot"] = "button"  # the opener of an enclosing collapsible-view
    events = None
    if draw(st.booleans()):
        events = {
            "tap": EventBinding(draw(_NAMES), draw(st.booleans()), draw(st.dictionaries(_NAMES, _JSON, max_size=2)))
        }
    children = None
    if kind != "image" and depth < 3:
        count = draw(st.integers(0, 3))
        children = [draw(render_nodes(depth + 1, f"{prefix}/{i}")) for i in range(count)]
    style = draw(st.dictionaries(_STYLE_KEYS, _STYLE_VALUES, max_size=4))
    return RenderNode(prefix, kind, props, style, events, children)


@st.composite
def render_documents(draw: st.DrawFn) -> RenderDocument:
    return RenderDocument(1, draw(st.sampled_from([LIGHT_375, DARK_414])), draw(render_nodes()))
