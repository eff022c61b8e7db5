"""WXSS frontend: parsed stylesheets (golden JSON), typed values, spans, and every diagnostic."""

from __future__ import annotations

import pytest
from syrupy.extensions.json import JSONSnapshotExtension

from skillc.diagnostics import DiagnosticSink, Severity
from skillc.frontend.wxss import (
    Color,
    Compound,
    Dimension,
    Function,
    Keyword,
    Length,
    Number,
    Operator,
    String,
    Url,
    format_number,
    parse_style_attribute,
    parse_wxss,
    span_text,
    stylesheet_json,
    value_css,
)

from .conftest import COFFEE

CARDS = ["drink-list", "order-confirm", "payment-result"]


@pytest.fixture
def json_snapshot(snapshot):  # type: ignore[no-untyped-def]
    return snapshot.use_extension(JSONSnapshotExtension)


def parse(css: str, files: dict[str, str] | None = None, file: str = "c/index.wxss"):  # type: ignore[no-untyped-def]
    sink = DiagnosticSink()
    sheet = parse_wxss(css, file=file, sink=sink, load=(files or {}).get)
    return sheet, [(d.code, d.file, span_text(d.span) if d.span else None) for d in sink.sorted()], sink


# -- golden: the coffee cards and one sheet per feature ----------------------------------


@pytest.mark.parametrize("card", CARDS)
def test_coffee_card_stylesheet(card: str, json_snapshot) -> None:  # type: ignore[no-untyped-def]
    css = (COFFEE / "components" / card / "index.wxss").read_text()
    sheet, diags, _ = parse(css, file=f"components/{card}/index.wxss")
    assert diags == []
    assert json_snapshot == stylesheet_json(sheet)


FEATURES = {
    "selectors": "view, .a, #b, .a.b, view.c#d .e .f, text .g {\n  color: red;\n}\n",
    "values": (
        ".v {\n"
        "  width: calc(100% - 30rpx);\n"
        "  margin: 0 -8rpx 1.50em .5rem;\n"
        "  box-shadow: 0 4rpx 12rpx rgba(43, 29, 18, 0.08), inset 0 0 1px #FFF;\n"
        "  background: linear-gradient(180DEG, #FFF8F0 0%, White 100%);\n"
        "  background-image: url(a.png);\n"
        '  font: italic 600 28rpx/1.5 "PingFang SC", Helvetica, sans-serif;\n'
        "  font-family: Helvetica, 'Noto Sans';\n"
        "  transform: rotate(45deg) scale(1.20);\n"
        "  line-height: 1.0;\n"
        "  aspect-ratio: 16 / 9;\n"
        "  color: BLUE !IMPORTANT;\n"
        "  -wx-line-clamp: 2;\n"
        "}\n"
    ),
    "media": (
        "@media (min-width: 400px) and (max-width: 50em), not print and (orientation: landscape) {\n"
        "  .m { color: red; }\n"
        "  @media only screen and (prefers-color-scheme: dark) {\n"
        "    .n { color: blue; }\n"
        "  }\n"
        "}\n"
        "@media (width: 375px), (height: 667px), (min-height: 0) {\n"
        "  .o { color: green; }\n"
        "}\n"
    ),
    "font-face": '@charset "utf-8";\n@font-face {\n  font-family: "Brand";\n  src: url("https://x.cn/b.woff2");\n}\n',
}


@pytest.mark.parametrize("name", sorted(FEATURES))
def test_feature_stylesheet(name: str, json_snapshot) -> None:  # type: ignore[no-untyped-def]
    sheet, diags, _ = parse(FEATURES[name])
    # @font-face is kept; skillc says its renderers draw the fallback (tests/test_unsupported_features.py).
    assert diags == ([("WXSS030", "c/index.wxss", "2:1-2:11")] if name == "font-face" else [])
    assert json_snapshot == stylesheet_json(sheet)


def test_imports_inline_rules_in_order(json_snapshot) -> None:  # type: ignore[no-untyped-def]
    files = {
        "common/base.wxss": '@import "./reset";\n.base { color: red; }\n',
        "common/reset.wxss": ".reset { margin: 0; }\n",
        "c/theme.wxss": "@import '../common/base.wxss' (prefers-color-scheme: dark);\n.theme { color: blue; }\n",
    }
    css = '@import "../common/base.wxss";\n@import url("theme.wxss");\n.own { color: green; }\n'
    sheet, diags, _ = parse(css, files)
    assert diags == []
    order = [(r.order, r.selectors[0].text, r.file) for r in sheet.rules]
    assert order == [
        (0, ".reset", "common/reset.wxss"),
        (1, ".base", "common/base.wxss"),
        (2, ".reset", "common/reset.wxss"),
        (3, ".base", "common/base.wxss"),
        (4, ".theme", "c/theme.wxss"),
        (5, ".own", "c/index.wxss"),
    ]
    # The second import of base.wxss sits under the media list of its @import.
    assert [m.text for m in sheet.rules[3].media] == ["(prefers-color-scheme: dark)"]
    assert json_snapshot == stylesheet_json(sheet)


# -- typed values --------------------------------------------------------------------------


def test_typed_values() -> None:
    sheet, _, _ = parse(FEATURES["values"])
    decls = {d.name: d for d in sheet.rules[0].declarations}
    assert decls["width"].value == (Function("calc", (Length(100, "%"), Operator("-"), Length(30, "rpx"))),)
    assert decls["margin"].value == (Number(0), Length(-8, "rpx"), Length(1.5, "em"), Length(0.5, "rem"))
    assert decls["background-image"].value == (Url("a.png"),)
    assert decls["font-family"].value == (Keyword("Helvetica"), Operator(","), String("Noto Sans"))
    assert decls["transform"].value[0] == Function("rotate", (Dimension(45, "deg"),))
    assert decls["color"].value == (Color("blue"),) and decls["color"].important
    assert value_css(decls["background"].value) == "linear-gradient(180deg, #fff8f0 0%, white 100%)"
    assert value_css(decls["font"].value) == 'italic 600 28rpx / 1.5 "PingFang SC", Helvetica, sans-serif'
    assert value_css(decls["line-height"].value) == "1"


@pytest.mark.parametrize(
    ("value", "text"),
    [(1.0, "1"), (0.5, "0.5"), (-0.0, "0"), (1.25, "1.25"), (1 / 3, "0.333333"), (-12.0, "-12"), (1e-9, "0")],
)
def test_format_number(value: float, text: str) -> None:
    assert format_number(value) == text


def test_selectors_and_specificity() -> None:
    sheet, _, _ = parse(FEATURES["selectors"])
    sels = {s.text: s for s in sheet.rules[0].selectors}
    assert list(sels) == ["view", ".a", "#b", ".a.b", "view.c#d .e .f", "text .g"]
    assert sels["view.c#d .e .f"].compounds == (
        Compound("view", "d", ("c",)),
        Compound(None, None, ("e",)),
        Compound(None, None, ("f",)),
    )
    assert [s.specificity for s in sels.values()] == [(0, 0, 1), (0, 1, 0), (1, 0, 0), (0, 2, 0), (1, 3, 1), (0, 1, 1)]
    assert span_text(sels["view.c#d .e .f"].span) == "1:21-1:35"


def test_declaration_span_includes_important() -> None:
    sheet, _, _ = parse(".a {\n  color: red !important;\n  width: calc(1px + 2px)\n}")
    spans = [span_text(d.span) for d in sheet.rules[0].declarations]
    assert spans == ["2:3-2:24", "3:3-3:25"]


def test_crlf_and_style_attribute_positions() -> None:
    sheet, _, _ = parse(".a {\r\n  color: red;\r\n  z-index: 1;\r\n}\r\n")
    assert span_text(sheet.rules[0].declarations[0].span) == "2:3-2:13"
    sink = DiagnosticSink()
    decls = parse_style_attribute("color: red; z-index: 2", file="c/index.wxml", sink=sink, origin=(4, 20))
    assert [(d.name, d.supported) for d in decls] == [("color", True), ("z-index", False)]
    [diag] = list(sink)
    assert (diag.code, diag.file, span_text(diag.span)) == ("WXSS007", "c/index.wxml", "4:32-4:39")  # type: ignore[arg-type]


# -- diagnostics: one precise finding per defect -------------------------------------------

BAD: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "child": (".a > .b {}", [("WXSS006", "1:4-1:5")]),
    "sibling": (".a + .b, .c ~ .d {}", [("WXSS006", "1:4-1:5"), ("WXSS006", "1:13-1:14")]),
    "universal": ("* { color: red }", [("WXSS018", "1:1-1:2")]),
    "attribute": (".a[x='1'] {}", [("WXSS006", "1:3-1:10")]),
    "pseudo-class": (".a:nth-child(2n) {}", [("WXSS006", "1:3-1:17")]),
    "pseudo-element": (".a::after {}", [("WXSS006", "1:3-1:10")]),
    "bad selector": (".a $b {}", [("WXSS005", "1:4-1:5")]),
    "empty selector": (".a, { color: red }", [("WXSS005", "1:3-1:4")]),
    "no selector": ("{ color: red }", [("WXSS005", "1:1-1:2")]),
    "position sticky": (".a { position: sticky }", [("WXSS008", "1:16-1:22")]),
    "display table": (".a { display: table-cell }", [("WXSS008", "1:15-1:25")]),
    "display inline-flex": (".a { display: inline-flex }", [("WXSS008", "1:15-1:26")]),
    "dotted border": (".a { border: 1px dotted red }", [("WXSS020", "1:18-1:24")]),
    "filter": (".a { filter: grayscale(1) }", [("WXSS020", "1:14-1:26")]),
    "z-index": (".a { z-index: 1 }", [("WXSS007", "1:6-1:13")]),
    "float": (".a { float: left }", [("WXSS007", "1:6-1:11")]),
    "transition": (".a { transition: opacity 1s }", [("WXSS019", "1:6-1:16")]),
    "animation": (".a { animation-name: x }", [("WXSS007", "1:6-1:20")]),
    "overflow-x": (".a { overflow-x: auto }", [("WXSS007", "1:6-1:16")]),
    "row-gap": (".a { row-gap: 2px }", [("WXSS007", "1:6-1:13")]),
    "grid-template": (".a { grid-template-columns: 1fr }", [("WXSS019", "1:6-1:27")]),
    "cursor": (".a { cursor: pointer }", [("WXSS007", "1:6-1:12")]),
    "unknown property": (".a { colr: red }", [("WXSS019", "1:6-1:10")]),
    "custom property": (".a { --x: 1px }", [("WXSS009", "1:6-1:9")]),
    "var()": (".a { width: calc(var(--x) + 1px) }", [("WXSS009", "1:18-1:26")]),
    "vh": (".a { height: 100vh }", [("WXSS010", "1:14-1:19")]),
    "pt": (".a { font-size: 12pt }", [("WXSS010", "1:17-1:21")]),
    "keyframes": ("@keyframes k { from { opacity: 0 } }", [("WXSS011", "1:1-1:11")]),
    "supports": ("@supports (display: grid) { .a {} }", [("WXSS021", "1:1-1:10")]),
    "nested at-rule": (".a { @media (x) { } }", [("WXSS021", "1:6-1:12")]),
    "import in media": ('@media (min-width: 1px) { @import "a.wxss"; }', [("WXSS021", "1:27-1:34")]),
    "media feature": ("@media (hover: hover) { .a {} }", [("WXSS012", "1:8-1:22")]),
    "media scheme value": ("@media (prefers-color-scheme: blue) {}", [("WXSS012", "1:8-1:36")]),
    "media rpx": ("@media (min-width: 750rpx) {}", [("WXSS012", "1:8-1:27")]),
    "media type": ("@media tv {}", [("WXSS012", "1:8-1:10")]),
    "media and": ("@media screen (min-width: 1px) {}", [("WXSS012", "1:15-1:31")]),
    "unclosed": (".a {\n  color: red;\n", [("WXSS002", "1:4-1:5")]),
    "unclosed function": (".a { width: calc(1px + 2px", [("WXSS002", "1:4-1:5"), ("WXSS002", "1:17-1:18")]),
    "bad string": ('.a { content: "x\n; color: red }', [("WXSS003", "1:15-1:17")]),
    "bad url": (".a { background: url(a b.png) }", [("WXSS003", "1:18-1:19")]),
    "stray brace": (".a {} } .b {}", [("WXSS004", "1:7-1:8")]),
    "stray paren": (".a { width: 1px) }", [("WXSS004", "1:16-1:17")]),
    "missing colon": (".a { color red }", [("WXSS001", "1:12-1:15")]),
    "no value": (".a { color: ; }", [("WXSS001", "1:6-1:12")]),
    "nested rule": (".a { .b { color: red } }", [("WXSS001", "1:6-1:8")]),
    "not a declaration": (".a { ;: red }", [("WXSS001", "1:7-1:8")]),
    "no block": (".a {} .b", [("WXSS001", "1:7-1:9")]),
    "import no path": ("@import foo;", [("WXSS001", "1:1-1:12")]),
    "import absolute": ('@import "/x.wxss";', [("WXSS015", "1:9-1:18")]),
    "import url scheme": ('@import "https://x.cn/a.wxss";', [("WXSS015", "1:9-1:30")]),
    "import escapes": ('@import "../../x.wxss";', [("WXSS015", "1:9-1:23")]),
    "import not wxss": ('@import "a.css";', [("WXSS015", "1:9-1:16")]),
    "import missing": ('@import "a.wxss";', [("WXSS013", "1:9-1:17")]),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_input_gives_exact_diagnostic(name: str) -> None:
    css, expected = BAD[name]
    _, diags, _ = parse(css)
    assert [(code, span) for code, _file, span in diags] == expected


def test_unsupported_parts_are_dropped_but_the_rest_kept() -> None:
    css = ".a > .b, .c { z-index: 2; color: red; display: grid; width: 10vh }"
    sheet, _, _ = parse(css)
    [rule] = sheet.rules
    assert [s.text for s in rule.selectors] == [".c"]
    assert [(d.name, d.supported) for d in rule.declarations] == [
        ("z-index", False),
        ("color", True),
        ("display", False),
        ("width", False),
    ]


def test_messages_and_hints() -> None:
    _, _, sink = parse(".a:hover { colr: red; position: fixed }")
    by_code = {d.code: d for d in sink}
    assert (
        by_code["WXSS006"].message
        == "pseudo-class ':hover' is not supported in cards; the selector '.a:hover' is ignored"
    )
    assert by_code["WXSS006"].hint == 'use hover-class="..." on the element'
    assert by_code["WXSS019"].message == "unknown property 'colr'; the declaration is ignored"
    assert by_code["WXSS019"].hint == "did you mean 'color'?"
    assert by_code["WXSS019"].severity is Severity.WARNING  # skillc's own finding
    assert by_code["WXSS008"].severity is Severity.ERROR  # position: fixed fails WeChat's V005


def test_import_cycle_reported_in_the_closing_file() -> None:
    files = {"c/a.wxss": '@import "b.wxss";\n.a {}', "c/b.wxss": '@import "./a.wxss";\n.b { color: red }'}
    sheet, diags, sink = parse(files["c/a.wxss"], files, file="c/a.wxss")
    assert diags == [("WXSS014", "c/b.wxss", "1:9-1:19")]
    assert next(iter(sink)).message == "@import cycle: c/a.wxss -> c/b.wxss -> c/a.wxss"
    assert [r.selectors[0].text for r in sheet.rules] == [".b", ".a"]


def test_import_self_is_a_cycle() -> None:
    _, diags, _ = parse('@import "./index.wxss";', {"c/index.wxss": ""})
    assert diags == [("WXSS014", "c/index.wxss", "1:9-1:23")]


def test_diagnostics_of_a_file_imported_twice_are_given_once() -> None:
    files = {"c/x.wxss": ".x { z-index: 1 }"}
    sheet, diags, _ = parse('@import "x.wxss";\n@import "x.wxss";', files)
    assert diags == [("WXSS007", "c/x.wxss", "1:6-1:13")]
    assert len(sheet.rules) == 2


def test_without_loader_imports_are_recorded_not_followed() -> None:
    sink = DiagnosticSink()
    sheet = parse_wxss('@import "x.wxss";', file="c/index.wxss", sink=sink)
    assert list(sink) == []
    assert [(i.path, i.found) for i in sheet.imports] == [("c/x.wxss", False)]


def test_empty_and_comment_only_sheets() -> None:
    for css in ("", "   \n", "/* nothing */", "/* unterminated"):
        sheet, diags, _ = parse(css)
        assert sheet.rules == () and diags == []
