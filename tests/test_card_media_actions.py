"""wx.previewMedia and wx.makePhoneCall in a card: card actions the host receives.

WeChat offers both to cards only. skillc shows no media viewer and dials no phone, so the card
host records a typed action (PreviewMedia {sources: [{url, type, poster?}], current},
MakePhoneCall {phoneNumber}) that `skillc run` prints and `serve` hands to the MCP Apps view
with the event's result. The card's callbacks and promise get WeChat's `{errMsg}`; bad arguments
fail with WeChat's parameter error and a CMPVM013 warning. API code gets the stub that says the
APIs belong to cards. Fixtures: tests/fixtures/card-builtins/preview-skill (contact-card) and
api-media-skill.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from skillc.cli import main
from skillc.runtime.config import RuntimeConfig
from skillc.runtime.host.card_media import (
    PhoneCallArgs,
    PreviewMediaArgs,
    Refused,
    check_phone_call,
    check_preview_media,
)
from skillc.server.runner import ServeHandle, ServeOptions
from tests.test_server import apps_client

BUILTINS = Path(__file__).parent / "fixtures" / "card-builtins"
PREVIEW = BUILTINS / "preview-skill"
API_MEDIA = BUILTINS / "api-media-skill"
PHOTOS = [
    {"type": "image", "url": "https://img.example.com/shop-1.jpg"},
    {"type": "image", "url": "https://img.example.com/shop-2.jpg"},
]
VIDEO = {"poster": "https://img.example.com/shop-1.jpg", "type": "video", "url": "https://img.example.com/tour.mp4"}
FILE = "components/contact-card/index.js"


def test_run_prints_each_action_and_what_the_callbacks_got() -> None:
    script = PREVIEW / "flows" / "contact.json"
    result = CliRunner().invoke(main, ["run", str(PREVIEW), "--script", str(script)])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[7] == '        text 0.1 "canIUse true true"'  # the card has both, as in WeChat
    start = lines.index("[2] tap onPhotos on card-1 (node 0.2)")
    photos = json.dumps({"cardId": "card-1", "current": 1, "sources": PHOTOS}, ensure_ascii=False, sort_keys=True)
    video = json.dumps({"cardId": "card-1", "current": 0, "sources": [VIDEO]}, sort_keys=True)
    bad_media = (
        "fail previewMedia:fail parameter error: parameter.sources should be Array instead of Undefined;,"
        'catch previewMedia:fail parameter error: parameter.sources[0].type should be \\"image\\" or \\"video\\";'
    )
    bad_call = (
        "fail makePhoneCall:fail parameter error: parameter.phoneNumber should be String instead of Number;,"
        "catch makePhoneCall:fail parameter error: parameter.phoneNumber should be String instead of Undefined;"
    )
    assert lines[start:] == [
        "[2] tap onPhotos on card-1 (node 0.2)",
        "  handled: onPhotos",
        "  patches (1):",
        '    setText 0.7.0 {"text": "success previewMedia:ok,complete previewMedia:ok"}',
        f"  action previewMedia {photos}",
        "[3] tap onVideo on card-1 (node 0.3)",
        "  handled: onVideo",
        "  patches (1):",
        '    setText 0.7.0 {"text": "then previewMedia:ok"}',
        f"  action previewMedia {video}",
        "[4] tap onCall on card-1 (node 0.4)",
        "  handled: onCall",
        "  patches (1):",
        '    setText 0.7.0 {"text": "then makePhoneCall:ok"}',
        '  action makePhoneCall {"cardId": "card-1", "phoneNumber": "021-5555-0101"}',
        "[5] tap onBadMedia on card-1 (node 0.5)",
        "  handled: onBadMedia",
        "  patches (1):",
        f'    setText 0.7.0 {{"text": "{bad_media}"}}',
        f"  {FILE}: warning[CMPVM013]: wx.previewMedia was refused: parameter error: parameter.sources should be "
        "Array instead of Undefined;",
        "  ",
        f"  {FILE}: warning[CMPVM013]: wx.previewMedia was refused: parameter error: parameter.sources[0].type "
        'should be "image" or "video";',
        "[6] tap onBadCall on card-1 (node 0.6)",
        "  handled: onBadCall",
        "  patches (1):",
        f'    setText 0.7.0 {{"text": "{bad_call}"}}',
        f"  {FILE}: warning[CMPVM013]: wx.makePhoneCall was refused: parameter error: parameter.phoneNumber "
        "should be String instead of Number;",
        "  ",
        f"  {FILE}: warning[CMPVM013]: wx.makePhoneCall was refused: parameter error: parameter.phoneNumber "
        "should be String instead of Undefined;",
    ]


def test_run_json_carries_the_typed_actions() -> None:
    script = PREVIEW / "flows" / "contact.json"
    steps = json.loads(CliRunner().invoke(main, ["run", str(PREVIEW), "--script", str(script), "--json"]).stdout)
    assert [s["actions"] for s in steps] == [
        [],
        [{"type": "previewMedia", "cardId": "card-1", "sources": PHOTOS, "current": 1}],
        [{"type": "previewMedia", "cardId": "card-1", "sources": [VIDEO], "current": 0}],
        [{"type": "makePhoneCall", "cardId": "card-1", "phoneNumber": "021-5555-0101"}],
        [],  # refused calls are no actions
        [],
    ]


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"sources": [{"url": " https://a/x.jpg "}]}, ([{"url": "https://a/x.jpg", "type": "image"}], 0)),
        ({"sources": [{"url": "u", "type": "video", "poster": "p"}, {"url": "v"}], "current": 1.0}, 1),
        ({}, "parameter.sources should be Array instead of Undefined;"),
        ({"sources": None}, "parameter.sources should be Array instead of Null;"),
        ({"sources": "x.jpg"}, "parameter.sources should be Array instead of String;"),
        ({"sources": []}, "parameter.sources should not be empty;"),
        ({"sources": ["x.jpg"]}, "parameter.sources[0] should be Object instead of String;"),
        ({"sources": [{}]}, "parameter.sources[0].url should be String instead of Undefined;"),
        ({"sources": [{"url": " "}]}, "parameter.sources[0].url should not be empty;"),
        ({"sources": [{"url": "u", "poster": 1}]}, "parameter.sources[0].poster should be String instead of Number;"),
        ({"sources": [{"url": "u"}], "current": "0"}, "parameter.current should be Number instead of String;"),
        ({"sources": [{"url": "u"}], "current": 1.5}, "parameter.current should be Number instead of Number;"),
        ({"sources": [{"url": "u"}], "current": 1}, "parameter.current should be an index of sources (0 to 0);"),
    ],
)
def test_preview_media_arguments(options: dict[str, Any], expected: Any) -> None:
    checked = check_preview_media(PreviewMediaArgs.model_validate(options))
    if isinstance(expected, str):
        assert checked == Refused("parameter error: " + expected)
    elif isinstance(expected, int):
        assert not isinstance(checked, Refused) and checked[1] == expected
    else:
        assert not isinstance(checked, Refused)
        assert ([s.model_dump(exclude_none=True) for s in checked[0]], checked[1]) == expected


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"phoneNumber": " 10086 "}, "10086"),
        ({}, Refused("parameter error: parameter.phoneNumber should be String instead of Undefined;")),
        ({"phoneNumber": 10086}, Refused("parameter error: parameter.phoneNumber should be String instead of Number;")),
        ({"phoneNumber": ""}, Refused("parameter error: parameter.phoneNumber should not be empty;")),
    ],
)
def test_phone_call_arguments(options: dict[str, Any], expected: Any) -> None:
    assert check_phone_call(PhoneCallArgs.model_validate(options)) == expected


def test_api_code_gets_the_card_only_stub_and_check_warns() -> None:
    called = CliRunner().invoke(main, ["call", str(API_MEDIA), "callShop", "--json"])
    assert called.exit_code == 0, called.output
    text = json.loads(called.stdout)["result"]["content"][0]["text"]
    assert text.splitlines() == [
        "makePhoneCall:fail wx.makePhoneCall is not available in APIs (WeChat offers it to cards only)",
        "previewMedia:fail wx.previewMedia is not available in APIs (WeChat offers it to cards only)",
        "canIUse false false",
    ]
    checked = CliRunner().invoke(main, ["check", str(API_MEDIA), "--format", "json"])
    found = [
        (d["code"], d["span"]["line"], d["span"]["column"], d["message"])
        for d in json.loads(checked.stdout)["units"][0]["diagnostics"]
    ]
    tail = "(WeChat offers it to cards only); the call fails when skillc runs it"
    assert found == [
        ("JS008", 5, 9, f"wx.makePhoneCall is not available in APIs {tail}"),
        ("JS008", 6, 34, f"wx.previewMedia is not available in APIs {tail}"),
    ]
    # In a card both are real: no JS008 there.
    card_check = CliRunner().invoke(main, ["check", str(PREVIEW), "--format", "json"])
    codes = [d["code"] for d in json.loads(card_check.stdout)["units"][0]["diagnostics"]]
    assert "JS008" not in codes


# -- serve: the event tool's result carries the action to the MCP Apps view --------------------------


@pytest.fixture(scope="module")
def preview_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeHandle]:
    state = tmp_path_factory.mktemp("preview-state")
    options = ServeOptions(paths=(PREVIEW,), port=0, runtime=RuntimeConfig(state_dir=state))
    with ServeHandle.start(options) as handle:
        yield handle


def test_serve_hands_the_actions_to_the_view(preview_server: ServeHandle) -> None:
    async def session() -> tuple[str, Any, Any]:
        async with apps_client(preview_server.url) as client:
            shown = await client.call_tool("showContact", {})
            card_id = shown.meta["skillc/card"]["cardId"]
            tap = {"cardId": card_id, "event": "tap"}
            photos = await client.call_tool("skillc_card_event", {**tap, "nodeId": "0.2"})
            call = await client.call_tool("skillc_card_event", {**tap, "nodeId": "0.4"})
            return card_id, photos, call

    card_id, photos, call = asyncio.run(session())
    assert photos.is_error is False and call.is_error is False
    assert photos.structured_content["handled"] == ["onPhotos"]
    assert photos.structured_content["actions"] == [
        {"type": "previewMedia", "cardId": card_id, "sources": PHOTOS, "current": 1}
    ]
    assert call.structured_content["actions"] == [
        {"type": "makePhoneCall", "cardId": card_id, "phoneNumber": "021-5555-0101"}
    ]
