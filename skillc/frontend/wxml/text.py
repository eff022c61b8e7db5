"""What one token's text holds: entities decoded, mustaches split out, positions inside it.

A text or attribute token arrives whole from the lexer; these helpers cut it into literal
parts and ``RawMustache`` parts with the same patterns as the grammar, and turn offsets in
the token into line and column.
"""

from __future__ import annotations

import functools
import re

from skillc.frontend.wxml.nodes import Loc, Part, RawMustache

__all__ = ["decode_entities"]

_ENTITY = re.compile(r"&(?:#([0-9]{1,7})|#[xX]([0-9a-fA-F]{1,6})|(lt|gt|amp|quot|apos|nbsp));")
_NAMED = {"lt": "<", "gt": ">", "amp": "&", "quot": '"', "apos": "'", "nbsp": "\u00a0"}


def _entity(m: re.Match[str]) -> str:
    dec, hexa, name = m.groups()
    if name is not None:
        return _NAMED[name]
    code = int(dec) if dec is not None else int(hexa, 16)
    # Surrogates and out-of-range code points stay as written, as a browser would show them.
    if code == 0 or code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
        return m.group(0)
    return chr(code)


def decode_entities(text: str) -> str:
    """Decode &lt; &gt; &amp; &quot; &apos; &nbsp; and numeric references; others stay as written."""
    return _ENTITY.sub(_entity, text) if "&" in text else text


# The same patterns as the grammar's, to split what one token holds.
# (Runs of plain characters are possessive, ++, as in the grammar: the same matches, faster.)
_MUSTACHE_IN_TEXT = re.compile(
    r"""\{\{(?:[^{}"']++|\{(?!\{)|\}(?!\})|"(?:[^"\\]++|\\[\s\S])*"|'(?:[^'\\]++|\\[\s\S])*')*\}\}"""
)
_MUSTACHE_IN_DQ = re.compile(r"""\{\{(?:[^{}"']++|\{(?!\{)|\}(?!\})|'(?:[^'"\\]++|\\[^"])*')*\}\}""")
_MUSTACHE_IN_SQ = re.compile(r"""\{\{(?:[^{}"']++|\{(?!\{)|\}(?!\})|"(?:[^"'\\]++|\\[^'])*")*\}\}""")
# Inside a FAST_TAG token the lexer has checked the syntax: a quoted value cannot hold its quote.
_FAST_ATTR = re.compile(r"""([A-Za-z_:@][\w\-.:@]*)(?:\s*=\s*("[^"]*"|'[^']*'))?""")
_TAG_NAME_END = re.compile(r"[\s/>]")
# The open tag at the start of a LEAF token, and each close tag of a LEAF or CLOSE_TAG token.
_FAST_OPEN = re.compile(r"""<[A-Za-z_][\w\-:.]*(?:\s+[A-Za-z_:@][\w\-.:@]*(?:\s*=\s*(?:"[^"]*"|'[^']*'))?)*\s*>""")
_CLOSE_TAG = re.compile(r"<\/\s*([A-Za-z_][\w\-:.]*)\s*>")
# A whole <wxs> element the piecewise rule would read without a defect, and nothing it reads
# otherwise: the grammar's own terminals (WXS_OPEN, ATTR_NAME, EQ, DQ/SQ with text but no '{',
# GT, SLASHGT, WXS_BODY, WXS_CLOSE) with lark's ignored whitespace (WS, not \s) between them,
# and an attribute after whitespace only. The body is WXS_BODY's: the shortest run of at least
# one character before a close tag, else none.
_WS = r"[ \t\r\n\f]"
_WXS_ATTR = rf"""([A-Za-z_:@][\w\-.:@]*)(?:{_WS}*={_WS}*("[^"{{]*"|'[^'{{]*'))?"""
_WXS_WHOLE = (
    rf"""<wxs(?![\w\-:])(?:{_WS}+{_WXS_ATTR})*{_WS}*"""
    r"""(?:(?P<empty>/>)|>(?P<body>[\s\S]+?(?=<\/wxs\s*>))?<\/wxs\s*>)"""
)


@functools.cache
def _wxs_patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The whole <wxs> element and one of its attributes, compiled when first parsing (not at
    import: start-up pays for every regular expression compiled then)."""
    return re.compile(_WXS_WHOLE), re.compile(_WXS_ATTR)


def _rel(value: str, line: int, column: int, offset: int) -> tuple[int, int]:
    """Line and column of ``value[offset]`` when ``value`` starts at ``line``, ``column``."""
    if "\n" not in value:
        return line, column + offset
    newlines = value.count("\n", 0, offset)
    if not newlines:
        return line, column + offset
    return line + newlines, offset - value.rfind("\n", 0, offset)


def _rel_loc(value: str, line: int, column: int, start: int, end: int) -> Loc:
    """The Loc of ``value[start:end]`` when ``value`` starts at ``line``, ``column``."""
    if "\n" not in value:
        return Loc(line, column + start, line, column + end)
    return Loc(*_rel(value, line, column, start), *_rel(value, line, column, end))


def _split(value: str, pattern: re.Pattern[str], line: int, column: int) -> list[Part]:
    """Literal text (entities decoded) and mustaches (with positions) of a text or value."""
    parts: list[Part] = []
    pos = 0
    for m in pattern.finditer(value):
        start, end = m.span()
        if start > pos:
            parts.append(decode_entities(value[pos:start]))
        parts.append(RawMustache(value[start + 2 : end - 2], _rel_loc(value, line, column, start, end)))
        pos = end
    if pos < len(value):
        parts.append(decode_entities(value[pos:]))
    return parts
