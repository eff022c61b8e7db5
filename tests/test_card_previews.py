"""map and canvas as static previews: typed Render IR props, every backend, the 2d canvas drawn
through this.createSelectorQuery(), and the SelectorQuery answers (docs/render-ir.md, "map and
canvas"; docs/components.md, "SelectorQuery and canvas").

Everything goes through the CLI (`skillc render`, `skillc run`) on the fixture skill
tests/fixtures/card-builtins/preview-skill: a map of tea shops, a sales chart painted on a
`<canvas type="2d">`, a canvas nobody paints, and a card that queries its own nodes.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from skillc.cli import main
from skillc.ir.canvas2d import paint
from skillc.ir.previews import DRAWING_URL, map_props, normalise_map_props
from tests.test_backends_cardspec import assert_valid

PREVIEW = Path(__file__).parent / "fixtures" / "card-builtins" / "preview-skill"
SALES = {
    "content": [{"type": "text", "text": "sales"}],
    "structuredContent": {"week": "W23", "sales": [12, 30, 22, 8, 17]},
}
MARKERS = [
    {"id": 1, "latitude": 31.2304, "longitude": 121.4737, "title": "南京西路店"},
    {"id": 2, "latitude": 31.2235, "longitude": 121.4452, "title": "Jing An Temple"},  # from text
    {"id": 3, "latitude": 31.2401, "longitude": 121.4903, "title": "外滩店"},  # from its callout
]  # the fourth shop ("latitude": "north") has no coordinates and is left out
CHART_SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" width="400" height="200" viewBox="0 0 400 200">'
    '<path d="M0 0 L400 0 L400 200 L0 200 Z" fill="#fff8f0"/>'
    '<path d="M8 128 L72 128 L72 200 L8 200 Z" fill="{c}"/>'
    '<path d="M88 20 L152 20 L152 200 L88 200 Z" fill="{c}"/>'
    '<path d="M168 68 L232 68 L232 200 L168 200 Z" fill="{c}"/>'
    '<path d="M248 152 L312 152 L312 200 L248 200 Z" fill="{c}"/>'
    '<path d="M328 98 L392 98 L392 200 L328 200 Z" fill="{c}"/>'
    '<path d="M0 199 L400 199" fill="none" stroke="#2b1d12" stroke-width="2" stroke-linecap="butt" '
    'stroke-linejoin="miter"/>'
    '<path d="M392 20 C392 26.627 386.627 32 380 32 C373.373 32 368 26.627 368 20 C368 13.373 373.373 8 380 8 '
    'C386.627 8 392 13.373 392 20" fill="{c}"/>'
    '<text x="100" y="12" font-size="10" font-family="sans-serif" font-weight="bold" text-anchor="middle" '
    'transform="matrix(2 0 0 2 0 0)" fill="{c}">max 30</text></svg>'
)
LEFT_OUT = (
    "components/sales-chart/index.js: warning[CMPVM030]: canvas 0.1: the preview leaves out createImage, drawImage"
)
WHERE = str(PREVIEW) + "/"  # render prints paths as given, run relative to the skill


def render(tmp_path: Path, component: str, backend: str) -> Result:
    args = ["render", str(PREVIEW), component, "--backend", backend]
    if component == "sales-chart":
        result_file = tmp_path / "sales.json"
        result_file.write_text(json.dumps(SALES), encoding="utf-8")
        args += ["--result", str(result_file)]
    elif component == "blank-canvas":
        data = tmp_path / "empty.json"
        data.write_text("{}", encoding="utf-8")
        args += ["--data", str(data)]
    return CliRunner().invoke(main, args)


def svg_of(drawing: dict[str, Any]) -> str:
    assert DRAWING_URL.match(drawing["src"])
    return base64.b64decode(drawing["src"].split(",", 1)[1]).decode("utf-8")


def node_by_type(node: dict[str, Any], kind: str) -> dict[str, Any]:
    if node["type"] == kind:
        return node
    for child in node.get("children") or []:
        found = node_by_type(child, kind) if child["type"] != "#text" else None
        if found is not None:
            return found
    return None  # type: ignore[return-value]


# -- the Render IR ----------------------------------------------------------------------------------


def test_map_props_are_typed_numbers_and_markers(tmp_path: Path) -> None:
    result = render(tmp_path, "store-map", "json")
    assert result.exit_code == 0, result.output
    node = node_by_type(json.loads(result.stdout)["root"], "map")
    # "15" (static text) is a number; the fourth marker has no numeric latitude.
    assert node["props"] == {"id": "shops", "latitude": 31.2304, "longitude": 121.4737, "scale": 15, "markers": MARKERS}
    assert node["style"] == {"border-radius": "8px", "height": "160px", "width": "100%"}
    assert result.stderr == (
        f"{WHERE}components/store-map/index.wxml:3:4: info[TPL002]: <map> is "
        "shown by skillc as a static preview: a box of its size listing its centre and markers (no map tiles, "
        "no gestures)\n"
        ' 3 |   <map id="shops" class="map" latitude="{{center.latitude}}" longitude="{{center.longitude}}" '
        'scale="15" markers="{{shops}}"></map>\n'
        "   |    ^^^\n"
    )


def test_map_props_from_odd_data() -> None:
    raw = {
        "latitude": "x",
        "longitude": True,
        "scale": "12.5",
        "markers": [
            {"latitude": 91, "longitude": 0},  # off the globe
            {"latitude": 1, "longitude": 2, "label": {"content": "L"}, "id": True},
            "not a marker",
        ],
    }
    assert normalise_map_props(raw) == {"scale": 12.5, "markers": [{"latitude": 1.0, "longitude": 2.0, "title": "L"}]}
    props = map_props({"latitude": 100, "longitude": 2, "markers": "none"})
    assert (props.latitude, props.longitude, props.scale, props.markers) == (None, 2, 16, [])


def test_the_card_paints_its_canvas_after_the_first_render(tmp_path: Path) -> None:
    result = render(tmp_path, "sales-chart", "json")
    assert result.exit_code == 0, result.output
    node = node_by_type(json.loads(result.stdout)["root"], "canvas")
    drawing = node["props"].pop("drawing")
    assert node["props"] == {"id": "chart", "type": "2d"}
    # The bitmap is the element's CSS size times the scale the card set (200x100 at 2x).
    assert (drawing["width"], drawing["height"]) == (400, 200)
    assert svg_of(drawing) == CHART_SVG.replace("{c}", "#c8742c")
    assert result.stderr == WHERE + LEFT_OUT + "\n"


# -- the backends (golden) ------------------------------------------------------------------------

CASES = ["store-map", "sales-chart", "blank-canvas"]


@pytest.mark.parametrize("component", CASES)
def test_json_backend(tmp_path: Path, component: str, snapshot: Any) -> None:
    result = render(tmp_path, component, "json")
    assert result.exit_code == 0, result.output
    assert result.stdout == snapshot


@pytest.mark.parametrize("component", CASES)
def test_cardspec_backend(tmp_path: Path, component: str, snapshot: Any) -> None:
    result = render(tmp_path, component, "cardspec")
    assert result.exit_code == 0, result.output
    card = json.loads(result.stdout)
    assert_valid(card)
    assert result.stdout == snapshot


@pytest.mark.parametrize("component", CASES)
def test_html_backend(tmp_path: Path, component: str, snapshot: Any) -> None:
    result = render(tmp_path, component, "html")
    assert result.exit_code == 0, result.output
    assert result.stdout == snapshot


def test_cardspec_forms_of_the_three_previews(tmp_path: Path) -> None:
    shops = json.loads(render(tmp_path, "store-map", "cardspec").stdout)
    assert shops["body"][1] == {
        "type": "Container",
        "style": "emphasis",
        "items": [
            {"type": "TextBlock", "text": "Map 31.2304, 121.4737 · 3 markers", "weight": "Bolder", "wrap": True},
            {
                "type": "FactSet",
                "facts": [
                    {"title": "南京西路店", "value": "31.2304, 121.4737"},
                    {"title": "Jing An Temple", "value": "31.2235, 121.4452"},
                    {"title": "外滩店", "value": "31.2401, 121.4903"},
                ],
            },
        ],
    }
    chart = json.loads(render(tmp_path, "sales-chart", "cardspec").stdout)
    image = chart["body"][1]
    assert {k: v for k, v in image.items() if k != "url"} == {
        "type": "Image",
        "altText": "Canvas drawing",
        "width": "200px",
        "height": "100px",
        "selectAction": {
            "type": "Action.Submit",
            "data": {"event": "tap", "handler": "onTap", "nodeId": "0.1", "dataset": {}},
        },
    }
    assert svg_of({"src": image["url"]}) == CHART_SVG.replace("{c}", "#c8742c")
    blank = json.loads(render(tmp_path, "blank-canvas", "cardspec").stdout)
    assert blank["body"] == [
        {
            "type": "Container",
            "style": "emphasis",
            "items": [{"type": "TextBlock", "text": "Canvas · not drawn", "isSubtle": True, "wrap": True}],
        }
    ]
    assert blank["fallbackText"] == "Canvas · not drawn"


def test_html_forms_of_the_three_previews(tmp_path: Path) -> None:
    shops = render(tmp_path, "store-map", "html").stdout
    assert (
        '><div data-preview="caption"\n>Map 31.2304, 121.4737 · 3 markers</div\n>'
        '<ol data-preview="markers"\n><li\n>南京西路店 · 31.2304, 121.4737</li\n>'
        "<li\n>Jing An Temple · 31.2235, 121.4452</li\n><li\n>外滩店 · 31.2401, 121.4903</li\n></ol\n></div\n>"
    ) in shops
    chart = render(tmp_path, "sales-chart", "html").stdout
    start = chart.index('<img data-preview="drawing" src="') + len('<img data-preview="drawing" src="')
    src = chart[start : chart.index('"', start)]
    assert svg_of({"src": src}) == CHART_SVG.replace("{c}", "#c8742c")
    assert "data-prop-drawing" not in chart  # the picture is the <img>, not a copy in an attribute
    blank = render(tmp_path, "blank-canvas", "html").stdout
    assert '<div data-uid="0.0" data-type="canvas" data-prop-id="empty" data-prop-type="2d"\n>' in blank
    assert '><div data-preview="caption"\n>Canvas · not drawn</div\n></div\n>' in blank
    # The preview rules come with the document only when it holds a map or a canvas.
    assert ":where([data-type=map],[data-type=canvas])" in blank
    assert ":where([data-type=map]" not in CliRunner().invoke(main, ["render", str(PREVIEW), "contact-card"]).stdout


# -- skillc run: a tap repaints, queries are answered ------------------------------------------------


def test_run_paints_then_a_tap_repaints_as_one_setprop() -> None:
    script = PREVIEW / "flows" / "chart.json"
    text = CliRunner().invoke(main, ["run", str(PREVIEW), "--script", str(script)])
    assert text.exit_code == 0, text.output
    assert text.stdout.splitlines() == [
        "[1] call showSales",
        "  showSales: ok (risk L0)",
        "    接下来为用户展示销量图卡片",
        "  card card-1 components/sales-chart/index: 5 nodes, ~148px (max 375px)",
        "    view root",
        "      view 0",
        '        text 0.0 "W24 sales"',
        "        canvas 0.1 [drawn 400x200 (1184 bytes of base64 SVG)] @tap=onTap",
        "  " + LEFT_OUT,
        "[2] tap onTap on card-1 (node 0.1)",
        "  handled: onTap",
        "  patches (1):",
        "    setProp 0.1 drawing: drawn 400x200 (1184 bytes of base64 SVG)",
        "  " + LEFT_OUT,
    ]
    steps = json.loads(CliRunner().invoke(main, ["run", str(PREVIEW), "--script", str(script), "--json"]).stdout)
    (patch,) = steps[1]["patches"]
    assert (patch["op"], patch["id"], patch["name"]) == ("setProp", "0.1", "drawing")
    assert svg_of(patch["value"]) == CHART_SVG.replace("{c}", "#2e9d5b")


def test_run_answers_each_kind_of_selector_query() -> None:
    script = PREVIEW / "flows" / "probe.json"
    result = CliRunner().invoke(main, ["run", str(PREVIEW), "--script", str(script), "--json"])
    assert result.exit_code == 0, result.output
    (step,) = json.loads(result.stdout)
    assert step["cards"][0]["data"]["mapErr"] == "moveToLocation:fail skillc shows the map as a static preview"
    answers = json.loads(step["cards"][0]["data"]["out"])
    assert answers == [
        {
            "id": "box",
            "dataset": {"kind": "probe"},
            "left": 0,
            "top": 0,
            "right": 120,
            "bottom": 40,
            "width": 120,
            "height": 40,
        },
        None,  # .box: not an #id selector
        [{"width": 300, "height": 150, "latitude": 1, "border-radius": "4px"}],  # selectAll: a list
        {"node": None},  # a canvas without type="2d"
        None,  # #nope: no such node
        {"width": 375, "height": 667, "scrollLeft": 0, "scrollTop": 0},
    ]
    file = "components/query-probe/index.js"
    # In the order the requests were answered.
    assert [(d["code"], d["severity"], d["file"], d["message"]) for d in step["diagnostics"]] == [
        ("CMPVM030", "warning", file, 'SelectorQuery: ".box" is not an #id selector, which is all skillc finds'),
        ("CMPVM030", "warning", file, 'SelectorQuery node(): the canvas has no type="2d", so it has no 2d node'),
        (
            "CMPVM030",
            "warning",
            file,
            "SelectorQuery context(): the MapContext of a static map preview fails every call",
        ),
    ]


# -- the painter --------------------------------------------------------------------------------------


def test_the_painter_draws_the_subset_and_names_what_it_skips() -> None:
    ops: list[Any] = [
        ["set", "fillStyle", "#c8742c"],
        ["fillRect", 0, 0, 10, 20],
        ["save"],
        ["translate", 50, 25],
        ["scale", 2, 2],
        ["set", "globalAlpha", 0.5],
        ["beginPath"],
        ["arc", 0, 0, 5, 0, 3.141592653589793],
        ["closePath"],
        ["fill"],
        ["restore"],
        ["set", "strokeStyle", "red"],
        ["set", "lineWidth", 3],
        ["beginPath"],
        ["moveTo", 0, 49],
        ["lineTo", 100, 49],
        ["stroke"],
        ["set", "font", 'bold 12px "PingFang SC", sans-serif'],
        ["set", "textAlign", "right"],
        ["set", "textBaseline", "middle"],
        ["fillText", "¥<18>", 100, 10],
        ["clearRect", 0, 0, 5, 5],
        ["fillRect", 1, 2],
        ["unsupported", "drawImage"],
        ["set", "fillStyle", "url(x) <b>"],
        ["set", "shadowBlur", 4],
        ["teleport", 1],
    ]
    picture = paint(100, 50, ops)
    assert picture.svg == (
        '<svg xmlns="http://www.w3.org/2000/svg" width="100" height="50" viewBox="0 0 100 50">'
        '<path d="M0 0 L10 0 L10 20 L0 20 Z" fill="#c8742c"/>'
        # the half circle in the translated, scaled frame, half transparent; restore drops both
        '<path d="M60 25 C60 30.523 55.523 35 50 35 C44.477 35 40 30.523 40 25 Z" fill="#c8742c" '
        'fill-opacity="0.5"/>'
        '<path d="M0 49 L100 49" fill="none" stroke="red" stroke-width="3" stroke-linecap="butt" '
        'stroke-linejoin="miter"/>'
        '<text x="100" y="10" font-size="12" font-family=\'"PingFang SC", sans-serif\' font-weight="bold" '
        'text-anchor="end" dominant-baseline="central" fill="#c8742c">¥&lt;18&gt;</text></svg>'
    )
    assert picture.skipped == [
        "clearRect (part of the canvas)",
        "fillRect (bad arguments)",
        "drawImage",
        "fillStyle (not a colour string)",
        "shadowBlur",
        "teleport",
    ]


def test_clearing_the_whole_canvas_drops_what_was_painted() -> None:
    picture = paint(10, 10, [["fillRect", 0, 0, 10, 10], ["clearRect", 0, 0, 10, 10], ["strokeRect", 1, 1, 8, 8]])
    assert picture.svg == (
        '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10" viewBox="0 0 10 10">'
        '<path d="M1 1 L9 1 L9 9 L1 9 Z" fill="none" stroke="#000000" stroke-width="1" stroke-linecap="butt" '
        'stroke-linejoin="miter"/></svg>'
    )
    assert picture.skipped == []


def test_a_painted_canvas_keeps_its_picture_when_it_renders_again() -> None:
    """The renderer holds each canvas's drawing: an update that re-renders the element, or a full
    render (a restyle), keeps it; an authored `drawing` attribute never reaches the Render IR."""
    from skillc.diagnostics import DiagnosticSink
    from skillc.frontend.wxml import parse_wxml
    from skillc.ir.component import CompiledComponent
    from skillc.ir.diff import SetProp
    from skillc.ir.evaluate import CardRenderer
    from skillc.ir.lower import lower_document

    sink = DiagnosticSink()
    wxml = '<canvas type="2d" id="c" data-x="{{x}}" bindtap="t" drawing="authored"></canvas>'
    template = lower_document(parse_wxml(wxml, file="c.wxml", sink=sink), load=lambda _: None, sink=sink)
    renderer = CardRenderer(CompiledComponent("c", template, None))
    canvas = renderer.render({"x": 1}).root.children[0]  # type: ignore[index]
    assert canvas.props == {"type": "2d", "id": "c"}
    drawing = paint(4, 2, [["fillRect", 0, 0, 4, 2]]).drawing(4, 2)
    assert renderer.set_drawing("0", drawing) == [SetProp("0", "drawing", drawing.model_dump())]
    assert renderer.set_drawing("0", drawing) == []  # the same picture again: nothing to patch
    assert renderer.set_drawing("9", drawing) == []  # no such canvas
    renderer.update({"x": 2})  # the element is filled again from its bound values
    assert renderer.document.root.children[0].props["drawing"] == drawing.model_dump()  # type: ignore[index]
    again = renderer.render({"x": 3}).root.children[0]  # type: ignore[index]
    assert again.props == {"type": "2d", "id": "c", "drawing": drawing.model_dump()}


def test_a_restyled_card_keeps_its_canvas_picture(tmp_path: Path) -> None:
    """The host's theme changes (serve's view asks for dark): the card renders again in full, one
    replaceRoot, and the picture the card painted is still on its canvas."""
    from skillc.ir.diff import ReplaceRoot
    from tests.test_component_vm import Harness

    h = Harness(PREVIEW, tmp_path / "state")
    try:
        shown = h.call("showSales", {"week": "W25"})
        assert shown.card is not None
        painted = node_by_type(shown.card.wire()["document"]["root"], "canvas")["props"]["drawing"]
        outcome = h.run(h.host.restyle(shown.card.card_id, color_scheme="dark"))
        (replace,) = outcome.patches
        assert isinstance(replace, ReplaceRoot)
        canvas = next(n for n in replace.node.walk() if n.type == "canvas")
        assert canvas.props["drawing"] == painted
        assert svg_of(painted) == CHART_SVG.replace("{c}", "#c8742c")
    finally:
        h.close()
