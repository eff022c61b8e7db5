"""The WXSS parser's fast paths give what the plain computations give.

Token spans are built from the token's own line and column (no search of the line table) and
the last one is reused; parsing holds the cycle collector off. These tests pin each shortcut
to the computation it replaces.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator, Sequence

import pytest
import tinycss2

from skillc.diagnostics import DiagnosticSink
from skillc.frontend.wxss import parse_wxss
from skillc.frontend.wxss.tokens import Token, _significant, _Source

SHEET = """.card { color: #333; margin: 0 auto 10rpx }
.a\\:b .c, view#x{
  background: linear-gradient(
    to right, red 10%, blue)  ;
  font-family: "PingFang SC", sans-serif;
  width: calc(100% - 2 * 8px);
}
@media (min-width: 400px) { .wide { padding: 1em 2em } }
.unclosed { content: "a\\
b"; transform: rotate(45deg) }
"""


def _lists(tokens: Sequence[Token]) -> Iterator[list[Token]]:
    """Every list of significant sibling tokens in the tree."""
    sig = _significant(tokens)
    yield sig
    for tok in sig:
        if tok.type == "function":
            yield from _lists(tok.arguments)
        elif tok.type in ("{} block", "() block", "[] block"):
            yield from _lists(tok.content)


@pytest.mark.parametrize("origin", [(1, 1), (3, 7)])
def test_token_spans_equal_the_offset_computation(origin: tuple[int, int]) -> None:
    src = _Source(SHEET, origin)
    tokens = tinycss2.parse_component_value_list(SHEET, skip_comments=True)
    pairs = 0
    for sig in _lists(tokens):
        for i, first in enumerate(sig):
            for last in sig[i:]:
                start, end = src.tok_start(first), src.tok_end(last)
                assert src.tok_span(first, last) == src.span(start, end)
                assert src.tok_range(first, last) == (start, end)  # just made: the reused offsets
                assert src.tok_span(first, last) == src.span(start, end)  # asked again: the reused span
                pairs += 1
        for tok in sig:
            assert src.tok_span(tok) == src.span(src.tok_start(tok), src.tok_end(tok))
    assert pairs > 100


def test_a_span_asked_again_for_other_tokens_is_not_reused() -> None:
    src = _Source(".a { color: red }\n.b { color: blue }", (1, 1))
    tokens = _significant(tinycss2.parse_component_value_list(src.text, skip_comments=True))
    first, second = tokens[1], tokens[4]  # the two ident tokens a and b
    assert src.tok_span(first).line == 1
    assert src.tok_span(second).line == 2
    assert src.tok_range(first, first) == (1, 2)


@pytest.mark.parametrize("enabled", [True, False])
def test_parsing_holds_the_collector_off_and_restores_it(enabled: bool) -> None:
    seen: list[bool] = []

    def load(path: str) -> str:
        seen.append(gc.isenabled())
        return ".b { color: red }"

    was = gc.isenabled()
    try:
        if not enabled:
            gc.disable()
        sheet = parse_wxss('@import "b.wxss"; .a { color: blue }', file="a.wxss", sink=DiagnosticSink(), load=load)
        assert gc.isenabled() is enabled
    finally:
        if was:
            gc.enable()
    assert seen == [False]  # the import was read while parsing, with the collector off
    assert [r.file for r in sheet.rules] == ["b.wxss", "a.wxss"]
