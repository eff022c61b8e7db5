"""Structured fuzzing of the four parsers (WXSS, WXML, {{ }} expressions, mcp.json through
`skillc check`): deep nesting, huge numbers, lone surrogates and odd Unicode give diagnostics,
never an exception, in bounded time per example.

`make test` runs a small fixed budget; `make fuzz` runs the same tests with
SKILLC_FUZZ_EXAMPLES examples each and a random seed (SKILLC_HYPOTHESIS_SEED=random).
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st

from skillc.check import check_skill
from skillc.diagnostics import CATALOGUE, DiagnosticSink
from skillc.frontend.expr import parse_expression, split_mustaches
from skillc.frontend.wxml import document_to_json, parse_wxml
from skillc.frontend.wxss import parse_style_attribute, parse_wxss, stylesheet_json
from skillc.ir.lower import lower_document
from skillc.ir.styles import ElementKey, StyleResolver, compile_stylesheet
from skillc.ir.viewport import Viewport

EXAMPLES = int(os.environ.get("SKILLC_FUZZ_EXAMPLES", "0") or 0) or 12
SECONDS_PER_EXAMPLE = 20.0  # CPU seconds: the parsers' cost, not the machine's load
SETTINGS = settings(max_examples=EXAMPLES, deadline=None)

# Odd text: Unicode digits ("²", "٣"), lone surrogates, combining marks, RTL, NUL, a BOM, emoji.
ODD = st.sampled_from(["²", "٣", "\ud800", "\udfff", "\u0301", "\u202e", "\0", "\ufeff", "𝟘", "😀", "\u2028", "中"])
HUGE = st.sampled_from(["1e999", "-1e999", "1e309", "9" * 400, "1e-999", "0." + "0" * 400 + "1", "9" * 5000])
ODD_TEXT = st.lists(st.one_of(ODD, HUGE, st.text(max_size=4)), max_size=6).map("".join)


def _bounded(started: float) -> None:
    assert time.process_time() - started < SECONDS_PER_EXAMPLE


def _known(sink: DiagnosticSink) -> None:
    for d in sink:
        assert d.code in CATALOGUE, d


# -- WXSS ---------------------------------------------------------------------------------------


@st.composite
def wxss_sheets(draw: st.DrawFn) -> str:
    depth = draw(st.sampled_from([0, 1, 5, 33, 100, 600, 5000]))
    opener = draw(st.sampled_from(["(", "[", "{", "calc(", "@media (min-width: 1px) {", "rgb("]))
    closer = {"(": ")", "[": "]", "{": "}", "calc(": ")", "@media (min-width: 1px) {": "}", "rgb(": ")"}[opener]
    number = draw(st.one_of(HUGE, st.sampled_from(["1", "0.5", "-2"])))
    unit = draw(st.sampled_from(["rpx", "px", "vw", "%", "em", "", "deg"]))
    prop = draw(st.sampled_from(["width", "font-size", "color", "margin", "font-weight", "line-height"]))
    inner = f"{number}{unit}"
    if opener.startswith("@media"):
        body = opener * depth + f".a{{{prop}:{inner}}}" + closer * draw(st.sampled_from([depth, 0, depth // 2]))
    else:
        body = f".a{{{prop}:" + opener * depth + inner + closer * draw(st.sampled_from([depth, 0])) + "}"
    return body + draw(ODD_TEXT) + draw(st.sampled_from(["", f".b{{color:rgb({number},{number},0)}}", "}" * 3]))


def _wxss(text: str) -> None:
    started = time.process_time()
    sink = DiagnosticSink()
    sheet = parse_wxss(text, file="c/a.wxss", sink=sink, load={"c/a.wxss": text}.get)
    stylesheet_json(sheet)
    compiled = compile_stylesheet(sheet, sink=sink)
    for vp in (Viewport(), Viewport(width=414, color_scheme="dark")):
        resolver = StyleResolver(compiled, vp)
        resolver.resolve([ElementKey("view", None, ("b",))], ElementKey("text", "x", ("a", "b")), text[:200])
    parse_style_attribute(text[:2000], sink=sink)
    _known(sink)
    _bounded(started)


@SETTINGS
@given(wxss_sheets())
@example(".a{width:" + "(" * 5000 + "1px" + ")" * 5000 + "}")
@example("@media (min-width: 1px) {" * 5000 + ".a{color:red}" + "}" * 5000)
@example(".a{font-size:1e999rpx;width:calc(1e309px + 1rpx);height:-1e999vw}")
@example(".a{width:" + "calc(" * 40 + "1e15px * 1e15" + ")" * 40 + "}")
@example(".a{color:rgb(1e999,1e999,1e999);font-weight:²}")
@example(".a{width:1e999rpx}" + "9" * 5000)  # found by make fuzz: tinycss2's int() of 5000 digits
def test_wxss_parses_to_diagnostics(text: str) -> None:
    _wxss(text)


# -- {{ }} expressions ----------------------------------------------------------------------------


@st.composite
def expressions(draw: st.DrawFn) -> str:
    depth = draw(st.sampled_from([0, 3, 65, 201, 1000, 5000]))
    opener, closer = draw(
        st.sampled_from([("(", ")"), ("[", "]"), ("{a: ", "}"), ("!", ""), ("-", ""), ("a ? ", " : b")])
    )
    atom = draw(st.one_of(HUGE, st.sampled_from(["a", "a.b[0]", "'x'", "1", "a[1e999]", "²"]), ODD_TEXT))
    return opener * depth + atom + closer * draw(st.sampled_from([depth, 0]))


@SETTINGS
@given(expressions(), st.booleans())
@example("9" * 5000, False)
@example("(" * 5000 + "a" + ")" * 5000, False)
@example("a.b" + ".c" * 5000, False)
def test_expressions_parse_to_diagnostics(source: str, object_form: bool) -> None:
    started = time.process_time()
    sink = DiagnosticSink()
    parse_expression(source, file="f.wxml", line=1, column=1, sink=sink, object_form=object_form)
    split_mustaches("x{{" + source + "}}y", file="f.wxml", line=1, column=1, sink=sink)
    _known(sink)
    _bounded(started)


# -- WXML -----------------------------------------------------------------------------------------


@st.composite
def wxml_documents(draw: st.DrawFn) -> str:
    depth = draw(st.sampled_from([0, 2, 201, 1000, 5000]))
    tag = draw(st.sampled_from(["view", "text", "block", "template", "x-²"]))
    attr = draw(
        st.sampled_from(
            ["", ' wx:if="{{a}}"', ' class="{{' + "(" * 300 + "a" + ")" * 300 + '}}"', ' wx:for="{{9e999}}"']
        )
    )
    inner = draw(
        st.one_of(ODD_TEXT, st.sampled_from(["&#9999999;", "&#x110000;", "&#xD800;", "{{" + "9" * 5000 + "}}"]))
    )
    return f"<{tag}{attr}>" * depth + inner + f"</{tag}>" * draw(st.sampled_from([depth, 0]))


@SETTINGS
@given(wxml_documents())
@example("<view>" * 5000 + "</view>" * 5000)
@example("<view>{{" + "[" * 5000 + "]" * 5000 + "}}</view>")
def test_wxml_parses_to_diagnostics(text: str) -> None:
    started = time.process_time()
    sink = DiagnosticSink()
    file = "components/card/index.wxml"
    doc = parse_wxml(text, file=file, sink=sink)
    document_to_json(doc)
    lower_document(doc, load={file: text}.get, sink=sink).to_json()
    _known(sink)
    _bounded(started)


# -- mcp.json through `skillc check` ------------------------------------------------------------------

_JSON_STRINGS = st.one_of(
    st.text(max_size=8),
    st.sampled_from(["\\ud800", "\\udfff", "a\\udc00b", "\\ud83d\\ude00", "²", "٣", "components/c/index"]),
)


def _raw_string(s: str) -> str:
    """A JSON string literal; escapes written as ``\\uXXXX`` by the strategy stay escapes."""
    if "\\u" in s:
        return '"' + s.replace('"', "") + '"'
    return json.dumps(s)


_SCALARS = st.one_of(
    _JSON_STRINGS.map(_raw_string),
    HUGE,
    st.sampled_from(["0", "-1", "1.5", "true", "false", "null", "1e308"]),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3).map(lambda xs: "[" + ",".join(xs) + "]"),
        st.lists(st.tuples(_JSON_STRINGS.map(_raw_string), inner), max_size=3).map(
            lambda kv: "{" + ",".join(f"{k}:{v}" for k, v in kv) + "}"
        ),
    ),
    max_leaves=12,
)


@st.composite
def manifests(draw: st.DrawFn) -> str:
    depth = draw(st.sampled_from([0, 1, 63, 66, 150, 199, 201, 5000]))
    key = draw(st.sampled_from(['"items"', '"properties"', '"\\ud800"', '"²"']))
    schema = "{" + f"{key}:{{" * depth + '"type":"object"' + "}" * depth + "}"
    api = (
        '{"name":'
        + draw(_JSON_STRINGS.map(_raw_string))
        + ',"description":"d","inputSchema":'
        + schema
        + ',"_meta":{"ui":{"componentPath":"components/c/index"}},'
        + draw(_JSON_STRINGS.map(_raw_string))
        + ":"
        + draw(_VALUES)
        + "}"
    )
    count = draw(st.sampled_from([1, 2, 501]))
    return (
        '{"apis":['
        + ",".join([api] * count)
        + '],"components":[{"path":"components/c/index"}],'
        + (draw(_JSON_STRINGS.map(_raw_string)) + ":" + draw(_VALUES) + "}")
    )


def _skill(root: Path, mcp: str) -> Path:
    skill = root / "s"
    (skill / "components" / "c").mkdir(parents=True)
    (skill / "SKILL.md").write_text("# s\n\nFuzzed.\n", encoding="utf-8")
    (skill / "mcp.json").write_text(mcp, encoding="utf-8", errors="surrogatepass")
    (skill / "index.js").write_text("const s = wx.modelContext.createSkill('s')\n", encoding="utf-8")
    for name, text in (("index.js", "Component({})"), ("index.json", '{"component": true}')):
        (skill / "components" / "c" / name).write_text(text, encoding="utf-8")
    (skill / "components" / "c" / "index.wxml").write_text("<view>x</view>", encoding="utf-8")
    (skill / "components" / "c" / "index.wxss").write_text(".a{color:red}", encoding="utf-8")
    return skill


@SETTINGS
@given(manifests())
@example('{"apis":[],"\\ud800":1}')
@example('{"apis":[{"name":"a","description":"d","inputSchema":{"type":"object","maxLength":' + "9" * 5000 + "}}]}")
@example('{"apis":[{"name":"a","description":"d","inputSchema":' + '{"items":' * 190 + "{}" + "}" * 190 + "}]}")
def test_manifest_checks_to_diagnostics(mcp: str) -> None:
    started = time.process_time()
    with tempfile.TemporaryDirectory() as tmp:
        report = check_skill(_skill(Path(tmp), mcp))
    for d in report.diagnostics:
        assert d.code in CATALOGUE, d
        d.model_dump_json()  # every message and span can be written out (no lone surrogate)
        d.message.encode("utf-8")
    _bounded(started)
