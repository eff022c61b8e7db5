"""The parsers' fast paths build exactly what their general paths build.

WXML: the LEAF token (an element with only text inside) and runs of close tags in one
CLOSE_TAG token are shortcuts through the lexer; a reference grammar without them must give
the same tree and the same diagnostics. Expressions: a plain name chain (`item.price`) is built
from one regex match; the token-by-token parser must give the same nodes and spans.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from lark import Lark

from skillc.diagnostics import DiagnosticSink
from skillc.frontend.expr import parser as expr_parser
from skillc.frontend.expr.lexer import _Abort, _Locator
from skillc.frontend.expr.nodes import Expr
from skillc.frontend.wxml import document_to_json, parse_wxml
from skillc.frontend.wxml import parser as wxml_parser

FIXTURES = Path(__file__).parent / "fixtures"


def _reference_grammar() -> str:
    """wxml.lark without its two shortcuts: no LEAF, one close tag per CLOSE_TAG token."""
    grammar = wxml_parser._GRAMMAR.read_text(encoding="utf-8")
    lines = []
    for line in grammar.splitlines():
        if line.strip() in ("| leaf", "leaf: LEAF") or line.startswith("LEAF."):
            continue
        if line.startswith("CLOSE_TAG.1:"):
            line = "CLOSE_TAG.1: _CLOSE _WS_TO_TAG"
        lines.append(line)
    reference = "\n".join(lines)
    rules = "\n".join(line for line in lines if not line.lstrip().startswith("//"))
    assert "LEAF" not in rules.replace("_LEAF_TEXT", ""), "the grammar's shortcuts changed shape"
    return reference


@pytest.fixture(scope="module")
def reference_parser() -> tuple[Lark, wxml_parser._Callbacks]:
    callbacks = wxml_parser._Callbacks()
    lark = Lark(
        _reference_grammar(), parser="lalr", lexer="contextual", transformer=callbacks, maybe_placeholders=False
    )
    return lark, callbacks


def _parse(text: str) -> tuple[object, list[str]]:
    sink = DiagnosticSink()
    doc = parse_wxml(text, file="t.wxml", sink=sink)
    return document_to_json(doc), [f"{d.code} {d.span} {d.message}" for d in sink]


def _both(text: str, reference: tuple[Lark, wxml_parser._Callbacks]) -> tuple[object, object]:
    fast = _parse(text)
    saved = getattr(wxml_parser._local, "parser", None)
    wxml_parser._local.parser = reference
    try:
        slow = _parse(text)
    finally:
        wxml_parser._local.parser = saved
    return fast, slow


CASES = {
    "leaf": "<text>{{name}}</text>",
    "empty_leaf": "<view></view>",
    "whitespace_leaf": "<view>   \n  </view>",
    "leaf_text_and_mustaches": "<text class='a' data-x=\"{{x}}\">Hi, {{a}}{{b}} &amp; bye</text>",
    "leaf_mustache_with_lt": '<text>{{a < b ? "<" : "</text>"}}</text>',
    "leaf_single_brace": "<text>a { b } c</text>",
    "leaf_unterminated_mustache": "<text>{{a</text><text>b</text>",
    "leaf_multiline": '<view\n  class="a"\n>\n  line one\n  {{ two }}\n</view>',
    "leaf_mismatched_close": "<view>x</text>",
    "leaf_close_spaces": "<view >x</ view >",
    "leaf_leading_trailing_ws": "<text>  a  </text>\n  <text>\tb\t</text>",
    "close_run": "<view><view><text>a</text></view>  </view>\n</view>",
    "close_run_mismatched": "<view><view>x</view></text></view>",
    "close_run_extra": "<view>x</view></view></view>",
    "close_run_across_lines": "<a>\n  <b>\n    <c>t</c>\n  </b>\n</a>\n",
    "leaf_in_comment": "<view><!-- <text>x</text> --><text>y</text></view>",
    "leaf_then_wxs": '<text>x</text><wxs module="m">var a = "</text>";</wxs>',
    "self_closing_beside_leaf": "<image src='a'/><text>b</text><input/>",
    "unclosed_before_leaf": "<view><text>a</text>",
    "leaf_entity_split": "<text>&l</text><text>t;</text>",
    "stray_lt_in_leaf": "<text>a < b</text>",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_shortcut_tokens_build_the_reference_tree(
    name: str, reference_parser: tuple[Lark, wxml_parser._Callbacks]
) -> None:
    fast, slow = _both(CASES[name], reference_parser)
    assert fast == slow


def test_shortcut_tokens_build_the_reference_tree_on_every_fixture(
    reference_parser: tuple[Lark, wxml_parser._Callbacks],
) -> None:
    files = sorted(FIXTURES.rglob("*.wxml"))
    assert len(files) > 50
    for path in files:
        fast, slow = _both(path.read_text(encoding="utf-8"), reference_parser)
        assert fast == slow, path


def _plain_grammar() -> str:
    """wxml.lark with its possessive runs and atomic loops written plain: each run of a class
    one character at a time, every loop free to backtrack. The language must not change."""
    grammar = wxml_parser._GRAMMAR.read_text(encoding="utf-8")
    assert "]++" in grammar and ")*+" in grammar, "the grammar's possessive forms changed shape"
    return grammar.replace("]++", "]").replace("*+", "*").replace(r"\s++", r"\s+")


@pytest.fixture(scope="module")
def plain_parser() -> tuple[Lark, wxml_parser._Callbacks]:
    callbacks = wxml_parser._Callbacks()
    lark = Lark(_plain_grammar(), parser="lalr", lexer="contextual", transformer=callbacks, maybe_placeholders=False)
    return lark, callbacks


def test_possessive_runs_parse_as_the_plain_grammar(plain_parser: tuple[Lark, wxml_parser._Callbacks]) -> None:
    texts = [p.read_text(encoding="utf-8") for p in sorted(FIXTURES.rglob("*.wxml"))]
    texts += list(CASES.values())
    # Values and mustaches where a run meets what may end it: quotes, braces, escapes.
    texts += [
        "<view a=\"{{ '}}' }}\" b='{{ \"x\" }}'>{{ 'a\\'b' }} {x} {{ {a: {b: 1}} }}</view>",
        '<text c="x{y}{{z}}w">{{ "}}" }}</text><view d=\'{{"a\\"b"}}\'/>',
        '<view a="{{ b " c>{{ d </view>',
        "<a x='1' y = \"2\"  z\n w='{{ q }}'  >t</a>  <b/>",
    ]
    rng = random.Random(5)
    alphabet = [*"<>/=\"'{}\\ \n\tax", "{{", "}}", "<view ", "</view>"]
    for text in list(texts):
        for _ in range(20):
            chars = list(text[:400])
            for _ in range(rng.randint(1, 4)):
                chars.insert(rng.randrange(len(chars) + 1), rng.choice(alphabet))
            texts.append("".join(chars))
    for text in texts:
        fast, plain = _both(text, plain_parser)
        assert fast == plain, text


def _full_parse(source: str, line: int, column: int) -> tuple[Expr | None, list[str]]:
    sink = DiagnosticSink()
    parser = expr_parser._Parser(source, "t.wxml", _Locator(source, line, column), sink, False)
    try:
        parser.tokenize()
        tree = parser.parse_root(False)
    except _Abort:
        tree = None
    return tree, [d.code for d in sink]


def _fast_parse(source: str, line: int, column: int) -> tuple[Expr | None, list[str]]:
    sink = DiagnosticSink()
    tree = expr_parser.parse_expression(source, file="t.wxml", line=line, column=column, sink=sink)
    return tree, [d.code for d in sink]


CHAIN = ".".join(f"n{i}" for i in range(71))
EXPRESSIONS = [
    "a",
    " title ",
    "\titem.price\t",
    "$a._b.c9",
    "a.true",
    "a.null",
    "true",
    "undefined.x",
    "typeof.x",
    "a.typeof",
    "a.in",
    "in",
    "a.instanceof.b",
    "a..b",
    "a.",
    ".a",
    "a.1",
    "a. b",
    "a.b\n.c",
    CHAIN,
    ".".join(f"n{i}" for i in range(expr_parser._CHAIN_LIMIT)),
]


@pytest.mark.parametrize("source", EXPRESSIONS, ids=range(len(EXPRESSIONS)))
def test_name_chain_fast_path_matches_the_parser(source: str) -> None:
    assert _fast_parse(source, 3, 7) == _full_parse(source, 3, 7)


def test_name_chain_fast_path_is_taken() -> None:
    """The fast path answers on its own for a plain chain (so the comparisons above test it)."""
    assert expr_parser._member_chain(" item.price ", 1, 1) is not None
    assert expr_parser._member_chain("a.true", 1, 1) is None
    assert expr_parser._member_chain(CHAIN, 1, 1) is None
