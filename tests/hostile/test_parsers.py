"""Hostile input to the parsers and `skillc check` / `skillc build`: each class of input that used to
raise (RecursionError, OverflowError, ValueError, pydantic's ValidationError) or take quadratic
time now gives one exact diagnostic, and the limits hold.

Timing asserts here are gross bounds only (10x), never tight ones.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from skillc.build import BuildOptions, build_skill, parse_viewport
from skillc.check import check_skill
from skillc.diagnostics import Diagnostic, DiagnosticSink
from skillc.frontend.jsonsrc import parse_json
from skillc.frontend.manifest import MAX_APIS, MAX_COMPONENTS, MAX_SCHEMA_DEPTH, MCP_JSON_LIMIT
from skillc.frontend.wxss import parse_style_attribute, parse_wxss
from skillc.frontend.wxss.tokens import MAX_NESTING
from skillc.ir.css_values import color, font_weight, px
from skillc.ir.styles import compile_stylesheet
from skillc.ir.viewport import Viewport

COMPONENT = "components/c/index"


def _skill(
    root: Path,
    *,
    mcp: str | None = None,
    wxss: str = ".a{color:red}",
    wxml: str = '<view class="a">x</view>',
    index_js: str = "const skill = wx.modelContext.createSkill('s')\n"
    "skill.registerAPI('a', async () => ({ content: [] }))\n",
) -> Path:
    skill = root / "s"
    folder = skill / "components" / "c"
    folder.mkdir(parents=True)
    (skill / "SKILL.md").write_text("# s\n\nA hostile test skill.\n", encoding="utf-8")
    if mcp is None:
        api = {
            "name": "a",
            "description": "d",
            "inputSchema": {"type": "object"},
            "_meta": {"ui": {"componentPath": COMPONENT}},
        }
        mcp = json.dumps({"apis": [api], "components": [{"path": COMPONENT}]})
    (skill / "mcp.json").write_text(mcp, encoding="utf-8")
    (skill / "index.js").write_text(index_js, encoding="utf-8")
    (folder / "index.js").write_text("Component({})", encoding="utf-8")
    (folder / "index.json").write_text('{"component": true}', encoding="utf-8")
    (folder / "index.wxml").write_text(wxml, encoding="utf-8")
    (folder / "index.wxss").write_text(wxss, encoding="utf-8")
    return skill


def _codes(diags: list[Diagnostic], code: str) -> list[Diagnostic]:
    return [d for d in diags if d.code == code]


# -- WXSS nesting -------------------------------------------------------------------------------

NESTING_MESSAGE = (
    f"blocks ({{ }}, ( ), [ ], functions, @media) nest more than {MAX_NESTING} levels deep; deeper blocks are dropped"
)


def _nested(kind: str, depth: int) -> str:
    if kind == "()":
        return ".a{width:" + "(" * depth + "1px" + ")" * depth + "}"
    if kind == "[]":
        return ".a{width:" + "[" * depth + "]" * depth + "}"
    if kind == "{}":
        return ".a{" + "{" * depth + "}" * depth + "}"
    if kind == "calc(":
        return ".a{width:" + "calc(" * depth + "1px" + ")" * depth + "}"
    assert kind == "@media"
    return "@media (min-width: 1px) {" * depth + ".a{color:red}" + "}" * depth


@pytest.mark.parametrize("depth", [500, 5000])
@pytest.mark.parametrize("kind", ["()", "[]", "{}", "calc(", "@media"])
def test_wxss_nesting_is_bounded_in_check(tmp_path: Path, kind: str, depth: int) -> None:
    report = check_skill(_skill(tmp_path, wxss=_nested(kind, depth)))
    found = _codes(report.diagnostics, "WXSS016")
    assert [d.message for d in found] == [NESTING_MESSAGE]
    assert found[0].file == "components/c/index.wxss"
    assert found[0].span is not None and found[0].span.line == 1


@pytest.mark.parametrize("kind", ["()", "[]", "calc("])
def test_wxss_nesting_in_a_style_attribute(kind: str) -> None:
    sink = DiagnosticSink()
    text = _nested(kind, 5000)[3:-1]  # the declaration alone
    parse_style_attribute(text, sink=sink)
    assert [d.code for d in sink] == ["WXSS016"]


def test_wxss_nesting_at_the_limit_is_accepted() -> None:
    sink = DiagnosticSink()
    # A rule's { } is one level, so MAX_NESTING - 1 parentheses fit inside it.
    sheet = parse_wxss(_nested("()", MAX_NESTING - 1), file="a.wxss", sink=sink)
    compile_stylesheet(sheet, sink=sink)
    assert "WXSS016" not in [d.code for d in sink]
    sink = DiagnosticSink()
    parse_wxss(_nested("()", MAX_NESTING), file="a.wxss", sink=sink)
    assert "WXSS016" in [d.code for d in sink]


# -- numbers out of range ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("declaration", "shown"),
    [
        ("font-size: 1e999rpx", "1e999rpx"),
        ("width: 1e309px", "1e309px"),
        ("width: -1e999vw", "-1e999vw"),
        ("width: calc(100% - 1e999px)", "1e999px"),
        ("line-height: 1e999", "1e999"),
        ("width: 1e999%", "1e999%"),
        ("width: " + "9" * 400 + "rpx", "999999999999...999rpx"),
        # More digits than int() reads: rewritten at the same length as the out-of-range 1e99...9.
        ("width: " + "9" * 5000 + "px", "1e9999999999...9999px"),
    ],
)
def test_huge_numbers_in_check(tmp_path: Path, declaration: str, shown: str) -> None:
    report = check_skill(_skill(tmp_path, wxss=f".a{{{declaration}}}"))
    found = _codes(report.diagnostics, "WXSS017")
    assert [d.message for d in found] == [
        f"number {shown} is out of range (at most 1e+15 in size); the declaration is ignored"
    ]


@pytest.mark.parametrize("value", ["1e999rpx", "1e309px", "-1e999vw", "calc(1e999px + 1rpx)"])
def test_huge_numbers_in_render_and_build(tmp_path: Path, value: str) -> None:
    wxml = '<view class="a" style="font-size: {{size}}; width: 1e999rpx">x</view>'
    skill = _skill(tmp_path, wxml=wxml)
    data = tmp_path / "huge.json"
    data.write_text(json.dumps({"size": value}), encoding="utf-8")
    options = BuildOptions(out_dir=tmp_path / "out", backends=("json", "cardspec", "html"), data={"c": [data]})
    report = build_skill(skill, options)
    assert report is not None
    assert [c.status for c in report.components] == ["compiled"]
    rendered = (report.out / "components/c/render/huge.375-light.json").read_text("utf-8")
    assert "inf" not in rendered.lower()


def test_css_value_readers_refuse_what_they_cannot_hold() -> None:
    assert px("9" * 400 + "px") is None
    assert px("١٢px") is None  # Arabic-Indic digits are not CSS digits
    assert color("rgb(1e999, -1e999, 0)") is not None
    assert color("rgb(nan, 0, 0)") is None
    assert font_weight("²") is None
    assert font_weight("٣00") is None
    assert font_weight("700") == 700


# -- mcp.json: surrogates, huge numbers, deep schemas, many APIs ------------------------------------

SURROGATE_MESSAGE = "string contains a lone surrogate \\u{0}, which is not a character"


@pytest.mark.parametrize(
    ("where", "escape"),
    [
        ('{"apis":[],"\\ud800":1}', "d800"),
        ('{"apis":[{"name":"a","description":"d","inputSchema":{"type":"object"},"\\udfff":1}]}', "dfff"),
        ('{"apis":[{"name":"a\\ud800","description":"d","inputSchema":{"type":"object"}}]}', "d800"),
        ('{"apis":[{"name":"a","description":"\\udc00","inputSchema":{"type":"object"}}]}', "dc00"),
        (
            '{"apis":[{"name":"a","description":"d","inputSchema":{"type":"object","properties":{"\\ud83d":{}}}}]}',
            "d83d",
        ),
    ],
)
def test_lone_surrogates_in_mcp_json(tmp_path: Path, where: str, escape: str) -> None:
    report = check_skill(_skill(tmp_path, mcp=where))
    found = _codes(report.diagnostics, "JSON007")
    assert [d.message for d in found] == [SURROGATE_MESSAGE.format(escape)]
    assert found[0].file == "mcp.json"
    for d in report.diagnostics:
        d.model_dump_json().encode("utf-8")  # nothing downstream meets an unencodable string


def test_a_surrogate_pair_is_a_character() -> None:
    sink = DiagnosticSink()
    tree = parse_json('{"k":"\\ud83d\\ude00"}', "x.json", sink)
    assert tree is not None and tree.to_python() == {"k": "\U0001f600"}
    assert list(sink) == []


@pytest.mark.parametrize(
    ("number", "shown"),
    [
        ("1e999", "1e999"),
        ("-1e999", "-1e999"),
        ("1e309", "1e309"),
        ("9" * 5000, "999999999999...999999 (5000 characters)"),
        ("-" + "9" * 400, "-99999999999...999999 (401 characters)"),
    ],
)
def test_numbers_out_of_range_in_mcp_json(tmp_path: Path, number: str, shown: str) -> None:
    mcp = '{"apis":[{"name":"a","description":"d","inputSchema":{"type":"object","maxLength":' + number + "}}]}"
    report = check_skill(_skill(tmp_path, mcp=mcp))
    found = _codes(report.diagnostics, "JSON006")
    assert [d.message for d in found] == [f"number {shown} is out of range: JSON.parse reads it as Infinity"]


def test_big_but_finite_integers_stay_exact() -> None:
    tree = parse_json("[" + "9" * 300 + "]", "x.json", DiagnosticSink())
    assert tree is not None and tree.to_python() == [int("9" * 300)]


@pytest.mark.parametrize("key", ["items", "properties", "not"])
def test_deep_schemas_are_not_handed_to_jsonschema(tmp_path: Path, key: str) -> None:
    levels = 190 if key != "properties" else 95
    inner = '{"a":' if key == "properties" else ""
    close = "}" if key == "properties" else ""
    schema = (f'{{"{key}":' + inner) * levels + "{}" + ("}" + close) * levels
    mcp = '{"apis":[{"name":"a","description":"d","inputSchema":' + schema + "}]}"
    report = check_skill(_skill(tmp_path, mcp=mcp))
    found = _codes(report.diagnostics, "MCP023")
    assert [d.message for d in found] == [
        f"inputSchema nests more than {MAX_SCHEMA_DEPTH} levels of arrays and objects; it is not checked"
    ]


def _many_apis(root: Path, n: int, *, register: bool) -> Path:
    apis = [{"name": f"api{i}", "description": f"d{i}", "inputSchema": {"type": "object"}} for i in range(n)]
    js = "const skill = wx.modelContext.createSkill('s')\n"
    if register:
        js += "".join(f"skill.registerAPI('api{i}', async () => ({{ content: [] }}))\n" for i in range(n))
    return _skill(root, mcp=json.dumps({"apis": apis}), index_js=js)


def test_the_api_bound_follows_from_the_size_limit() -> None:
    smallest = '{"name":"a","description":"a","inputSchema":{}},'
    assert len(smallest) * (MAX_APIS + 1) > MCP_JSON_LIMIT
    assert len('{"path":"components/a/index"},') * (MAX_COMPONENTS + 1) > MCP_JSON_LIMIT


def test_apis_beyond_the_bound_are_reported_once(tmp_path: Path) -> None:
    report = check_skill(_many_apis(tmp_path / "a", 2000, register=True))
    assert [d.message for d in _codes(report.diagnostics, "MCP024")] == [
        f'"apis" has 2000 entries; a manifest within {MCP_JSON_LIMIT} characters holds at most {MAX_APIS}, '
        f"so only the first {MAX_APIS} are checked"
    ]
    assert [d.message for d in _codes(report.diagnostics, "JS006")] == [
        f"index.js registers 2000 APIs; mcp.json can declare at most {MAX_APIS}, "
        f"so only the first {MAX_APIS} registrations are checked"
    ]
    assert _codes(report.diagnostics, "JS001") == []  # every declared API is registered
    assert _codes(report.diagnostics, "JS002") == []
    unregistered = check_skill(_many_apis(tmp_path / "b", 2000, register=False))
    assert len(_codes(unregistered.diagnostics, "JS001")) == MAX_APIS


def _timed(root: Path, n: int, register: bool) -> float:
    skill = _many_apis(root, n, register=register)
    started = time.process_time()
    check_skill(skill)
    return time.process_time() - started


@pytest.mark.parametrize("register", [False, True], ids=["declared", "declared-and-registered"])
def test_checking_many_apis_is_linear(tmp_path: Path, register: bool) -> None:
    small = _timed(tmp_path / "small", 10_000, register)
    large = _timed(tmp_path / "large", 50_000, register)
    assert large < 120, f"50 000 APIs took {large:.1f} s of CPU"
    # Linear: 5x the APIs, about 5x the time. Quadratic would be 25x; allow up to 10x (+ slack).
    assert large < 10 * small + 1.0, f"10 000 APIs: {small:.2f} s, 50 000: {large:.2f} s"


# -- Unicode digits as keys ----------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["²", "٣", "𝟘", "¹²", "0²"])
def test_unicode_digit_keys_in_build_data(tmp_path: Path, key: str) -> None:
    wxml = (
        '<view class="a">{{item["' + key + '"]}}{{list["' + key + '"]}}'
        '<text wx:for="{{list}}" wx:key="*this">{{item}}</text></view>'
    )
    skill = _skill(tmp_path, wxml=wxml)
    data = tmp_path / "digits.json"
    values: dict[str, Any] = {key: 1, "item": {key: "x", "0": "y"}, "list": ["a", "b"]}
    data.write_text(json.dumps(values, ensure_ascii=False), encoding="utf-8")
    options = BuildOptions(out_dir=tmp_path / "out", data={"c": [data]})
    report = build_skill(skill, options)
    assert report is not None
    assert [c.status for c in report.components] == ["compiled"], report.diagnostics
    rendered = json.loads((report.out / "components/c/render/digits.375-light.json").read_text("utf-8"))
    assert "x" in json.dumps(rendered, ensure_ascii=False)


@pytest.mark.parametrize("spec", ["²", "375x²", "٣٧٥", "9999999999999"])
def test_unicode_digits_in_a_viewport_are_a_usage_error(spec: str) -> None:
    with pytest.raises(ValueError, match="expected WIDTH"):
        parse_viewport(spec)
    assert parse_viewport("375x667:dark") == Viewport(width=375, height=667, color_scheme="dark")
