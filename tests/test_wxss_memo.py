"""What the WXSS parser reuses within a check or build gives what reading afresh gives.

A declaration is read once per build and replayed wherever its text recurs, its spans moved to
each place (skillc/frontend/wxss/declarations.py); a sheet parsed under one path is replayed
for a copy of it under another (SheetCache); spans are read from the text up to the ';', '{'
or '}' tinycss2 places when nothing in between has a computed end (tokens.py ``bounded``); the
parser's diagnostics are built without validation (``Diagnostic.trusted``). Each test pins one
shortcut to the plain computation.
"""

from __future__ import annotations

import random

import pytest

import skillc.frontend.wxss.declarations as wxss_declarations
import skillc.frontend.wxss.parser as wxss_parser
import skillc.frontend.wxss.tokens as wxss_tokens
from skillc.diagnostics import Diagnostic, DiagnosticSink, Severity, Span
from skillc.frontend.wxss import SheetCache, Stylesheet, parse_style_attribute, parse_wxss

Result = tuple[Stylesheet, list[Diagnostic]]


def parse(text: str, file: str, cache: SheetCache | None = None) -> Result:
    sink = DiagnosticSink()
    sheet = parse_wxss(text, file=file, sink=sink, cache=cache)
    return sheet, list(sink)


# -- the declaration memo ---------------------------------------------------------------------

# The same declarations, with a var() (WXSS009), an unknown property (WXSS019) and a refused unit
# (WXSS010) among them, at other lines and columns in each file.
FIRST = ".a { color: var(--c, red); colr: blue; width: 3vmin; margin: 0 auto }\n"
SECOND = "\n\n.b .c {\n    margin: 0 auto;\n      colr: blue;   width: 3vmin;\n  color: var(--c, red) }\n"


def test_a_declaration_read_in_one_file_is_reported_at_its_own_place_in_another() -> None:
    cache = SheetCache()
    shared = [parse(FIRST, "one/index.wxss", cache), parse(SECOND, "two/index.wxss", cache)]
    fresh = [parse(FIRST, "one/index.wxss"), parse(SECOND, "two/index.wxss")]
    assert shared == fresh
    assert len(cache.declarations) == 4  # each text read once, the second file replayed it
    _, diags = shared[1]
    assert {d.file for d in diags} == {"two/index.wxss"}
    where = {d.code: (d.span.line, d.span.column) for d in diags if d.span is not None}
    assert where == {"WXSS019": (5, 7), "WXSS010": (5, 28), "WXSS009": (6, 10)}


def test_a_declaration_replayed_in_a_style_attribute_moves_to_its_origin() -> None:
    cache = SheetCache()
    parse(FIRST, "one/index.wxss", cache)  # fills the memo a style attribute does not share
    sink = DiagnosticSink()
    decls = parse_style_attribute("width: 3vmin; width: 3vmin", file="p.wxml", sink=sink, origin=(7, 20))
    assert [d.span.column for d in decls] == [20, 34]
    # WXSS010 at the unit, inside the declaration: moved with it
    assert [(d.code, d.span.line, d.span.column) for d in sink if d.span is not None] == [
        ("WXSS010", 7, 27),
        ("WXSS010", 7, 41),
    ]


# -- the shortcuts against the plain computation ----------------------------------------------

# Sheets where the text around a token does not say where it ends, or where more than whitespace
# lies before the ';', ',' or '{' that bounds it: each must take the plain computation.
EDGES = [
    ".a{color: red !important ) ;}",  # a stray ')' after !important: cut off with it
    ".a{color: red !important ];width:1px}",
    ".a ) {color:red}",  # a stray ')' ends the prelude
    ".a, .b ] {color:red}",
    ".a{color:red )}",
    ".a{width:1px !important )}",
    ".a{width:1px /* c */;height:2px/*d*/}",  # comments are no tokens
    ".a /* c */ {color:red}",
    ".a{content:'a\"b';x:1}",  # a string re-serialised longer than its text
    '.a{content:"\\e001"}.b{content:"\\e002"}',  # an escape: the computed end falls short
    ".a{background:url( a.png ) ;b:url(b c)}",
    ".i{unicode-range: U+0-7F; x: u+00??}",
    ".a\\:b{color:red}",
    ".a{color:red}/*}*/.b{color:red}",
    ".a{x:y(}",  # never closed: a stray '}' inside the function
    ".a{color:red}\n.a{color:red} ",
    "@font-face{font-family:b;width:3vmin;x:var(--a)}.a{width:3vmin;x:var(--a)}",  # units and var() pass there
]

PROPS = ["color", "width", "display", "position", "border", "filter", "transition", "--v", "colr", "gap", "content"]
VALUES = ["red", "1px", "var(--x,2px)", "flex", "fixed", "1px dotted red", "sepia(1)", "opacity 1s", "'a'", "url(x)"]
VALUES += ["calc(1px + 2px)", "1qq", "#fff", "0 auto", "u+0-7f", "\\41", "(1)", "[a]", "-webkit-box", "3vmin"]
TAILS = ["", "", " !important", "!important", " ! important", " !important )", " )", " ]", "/*c*/", "\n  "]
SELECTORS = [".a", ".a .b", ".a,.b", ".a:hover", "view", ".a )", ".a >.b", ".x::before", "#i.c", ".a /*c*/", ".a\n"]


def generated(seed: int, count: int) -> list[str]:
    """Rules whose declarations recur, with the tails and values the edges above are made of."""
    rng = random.Random(seed)
    sheets = []
    for _ in range(count):
        decls = [
            rng.choice(PROPS)
            + rng.choice([":", ": ", " : ", ":\n"])
            + " ".join(rng.choice(VALUES) for _ in range(rng.randrange(0, 4)))
            + rng.choice(TAILS)
            for _ in range(rng.randrange(1, 7))
        ]
        body = ";".join(decls) + rng.choice(["", ";", " ", "\n"])
        sheets.append(f"{rng.choice(SELECTORS)}{{{body}}}\n.k{{{body}}}" + rng.choice(["", "\n", " ", "/*e*/"]))
    return sheets


def parse_all(sheets: list[str]) -> list[object]:
    cache = SheetCache()
    out: list[object] = []
    for i, text in enumerate(sheets):
        out.append(parse(text, f"c{i}/index.wxss", cache))
        sink = DiagnosticSink()
        out.append((parse_style_attribute(text, file=f"p{i}.wxml", sink=sink, origin=(2, 5)), list(sink)))
    return out


def test_the_memo_and_the_spans_read_from_the_text_give_what_the_plain_computation_gives(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sheets = EDGES + generated(seed=7, count=300)
    fast = parse_all(sheets)
    # Every token "may have a computed end": no span is read from the text, nothing is memoised.
    monkeypatch.setattr(wxss_tokens, "computed_end", lambda text: True)
    monkeypatch.setattr(wxss_declarations, "computed_end", lambda text: True)
    plain = parse_all(sheets)
    assert len(fast) == len(plain)
    for i, (mine, reference) in enumerate(zip(fast, plain, strict=True)):
        assert mine == reference, sheets[i // 2]


# -- the text as tinycss2 reads it -------------------------------------------------------------


def test_normalising_skips_the_digit_search_only_where_no_long_run_can_be() -> None:
    for run in (999, 1000, 1001, 1499, 2000):
        for lead in range(0, 1200, 41):
            text = "a:" + "x" * lead + "7" * run + ";b"
            expected = wxss_parser._LONG_DIGITS.sub(lambda m: "1e" + "9" * (len(m.group()) - 2), text)
            assert wxss_parser._normalise(text) == expected, (run, lead)
    # Newlines as tinycss2 makes them: CR LF is one, a lone CR one, a form feed one.
    assert wxss_parser._normalise("a\r\fb\r\nc\rd\0") == "a\n\nb\nc\nd\ufffd"


# -- a copy of a sheet under another path ------------------------------------------------------

COPIED = """.x { color: red; colr: blue }
@font-face { font-family: "Brand"; src: url("https://example.com/a.woff") }
@media (min-width: 100px) { .y:hover { margin: 1px } }
"""


def test_a_copy_of_a_sheet_under_another_path_is_replayed_naming_that_path() -> None:
    cache = SheetCache()
    parse(COPIED, "index.wxss", cache)
    replayed = parse(COPIED, "style/weui.wxss", cache)
    assert cache.parses == 1
    assert replayed == parse(COPIED, "style/weui.wxss")
    sheet, diags = replayed
    assert {r.file for r in sheet.rules} | {f.file for f in sheet.font_faces} == {"style/weui.wxss"}
    assert diags and {d.file for d in diags} == {"style/weui.wxss"}


def test_a_sheet_that_imports_is_not_replayed_for_a_copy() -> None:
    # Its @import resolves from its own folder: the copy's may name another sheet.
    files = {"a/t.wxss": ".a { color: red }", "b/t.wxss": ".b { color: blue }"}
    cache = SheetCache()
    text = "@import './t.wxss';\n.z { color: red }\n"
    for file in ("a/index.wxss", "b/index.wxss"):
        sheet = parse_wxss(text, file=file, sink=DiagnosticSink(), load=files.get, cache=cache)
        assert sheet.rules[0].file == file.replace("index", "t")
    assert cache.parses == 4


# -- diagnostics built without validation --------------------------------------------------------


def test_a_trusted_diagnostic_equals_a_validated_one_and_copies_like_one() -> None:
    span = Span(line=2, column=3, end_line=2, end_column=9)
    message, hint = "unknown property 'colr'", "did you mean?"
    made = Diagnostic.make("WXSS019", message, file="a.wxss", span=span, hint=hint)
    trusted = Diagnostic.trusted("WXSS019", Severity.WARNING, message, "a.wxss", span, hint)
    assert trusted == made
    assert hash(trusted) == hash(made)
    assert trusted.model_dump() == made.model_dump()
    assert trusted.model_fields_set == made.model_fields_set
    # model_copy adds to the copy's fields set: each diagnostic needs a set of its own.
    assert trusted.model_copy(update={"hint": "x"}) == made.model_copy(update={"hint": "x"})
    assert Diagnostic.trusted("WXSS019", Severity.WARNING, "m", None, None, None).model_fields_set == (
        Diagnostic.make("WXSS019", "m").model_fields_set
    )
