"""ECMAScript tokens: names, punctuators, strings, numbers, template and regular-expression
literals, with comments and whitespace dropped.

QuickJS (what runs and syntax-checks skill code) has no API that hands out its tokens or syntax
tree, so facts about the code's shape are read from these tokens: text inside a comment, a string,
a template or a regular expression can never look like code. The one context-dependent choice of
a lexer, whether ``/`` starts a regular expression or divides, follows the previous token as
parsers do (after a value it divides; after an operator, a keyword such as ``return``, or at the
start, it starts a literal). A ``${`` inside a template is lexed as code up to its closing ``}``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

Kind = Literal["name", "punct", "string", "number", "template", "regex"]


@dataclass(frozen=True)
class Token:
    kind: Kind
    text: str  # as written (a string's value is ``value``)
    offset: int

    @property
    def value(self) -> str:
        """A string literal's value (escapes decoded); other tokens' text."""
        return _unescape(self.text[1:-1]) if self.kind == "string" else self.text


_SPACE = re.compile(r"(?:[\s\ufeff]|/\*[\s\S]*?(?:\*/|\Z)|//[^\n\r\u2028\u2029]*)+")
_NAME = re.compile(r"(?:[\w$]|\\u\{[0-9a-fA-F]+\}|\\u[0-9a-fA-F]{4})+")
_NUMBER = re.compile(
    r"(?:0[xX][0-9a-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+|(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][+-]?\d+)?)n?"
)
_STRING = {q: re.compile(rf"{q}(?:[^{q}\\\n\r]|\\[\s\S]?)*(?:{q}|(?=[\n\r])|\Z)") for q in "'\""}
_REGEX = re.compile(r"/(?:[^/\\\[\n\r]|\\.|\[(?:[^\]\\\n\r]|\\.)*\])+/[\w$]*")
_TEMPLATE_PART = re.compile(r"(?:[^`\\$]|\\[\s\S]|\$(?!\{))*")
_PUNCT = re.compile(
    r">>>=|\.\.\.|===|!==|\*\*=|<<=|>>=|>>>|&&=|\|\|=|\?\?=|=>|==|!=|<=|>=|&&|\|\||\?\?|\?\.(?!\d)|\+\+|--"
    r"|\+=|-=|\*=|/=|%=|&=|\|=|\^=|\*\*|<<|>>|[{}()\[\];,<>+\-*/%&|^!~?:=.@#]"
)
# After these a "/" starts a regular expression, not a division.
_BEFORE_REGEX_WORDS = frozenset(
    {"return", "typeof", "instanceof", "in", "of", "new", "delete", "void", "throw", "case", "do", "else"}
    | {"yield", "await", "extends"}
)
_ESCAPE = re.compile(r"\\(u\{[0-9a-fA-F]+\}|u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|\r\n|[\s\S])")
_DIGITS = frozenset("0123456789")
_SIMPLE = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}


def tokens(source: str) -> Iterator[Token]:
    pos = 0
    n = len(source)
    if source.startswith("#!"):  # a hashbang line is a comment
        pos = source.find("\n") if "\n" in source else n
    braces: list[int] = []  # per open ${ of a template: the brace depth its } closes
    depth = 0
    previous: Token | None = None
    while True:
        space = _SPACE.match(source, pos)
        if space is not None:
            pos = space.end()
        if pos >= n:
            return
        char = source[pos]
        token: Token
        if char == "`" or (char == "}" and braces and braces[-1] == depth):
            if char == "}":
                braces.pop()
            end = pos + 1 + len(_text(_TEMPLATE_PART, source, pos + 1, empty=True))
            if source.startswith("${", end):
                braces.append(depth)
                end += 2
            elif end < n:
                end += 1  # the closing `
            token = Token("template", source[pos:end], pos)
        elif char in "'\"":
            token = Token("string", _text(_STRING[char], source, pos), pos)
        elif char in _DIGITS or (char == "." and source[pos + 1 : pos + 2] in _DIGITS and pos + 1 < n):
            token = Token("number", _text(_NUMBER, source, pos), pos)
        elif char == "/" and _regex_allowed(previous) and (literal := _REGEX.match(source, pos)) is not None:
            token = Token("regex", literal.group(), pos)
        elif (name := _NAME.match(source, pos)) is not None:
            token = Token("name", name.group(), pos)
        else:
            punct = _PUNCT.match(source, pos)
            token = Token("punct", punct.group() if punct is not None else char, pos)
            if token.text == "{":
                depth += 1
            elif token.text == "}":
                depth -= 1
        pos += len(token.text)
        previous = token
        yield token


def _text(pattern: re.Pattern[str], source: str, pos: int, *, empty: bool = False) -> str:
    """What ``pattern`` matches at ``pos``; the one character there should it match nothing (never
    for the patterns above: a guard, so that no text can stop or stall the lexer)."""
    match = pattern.match(source, pos)
    if match is not None and (match.group() or empty):
        return match.group()
    return "" if empty else source[pos]


def _regex_allowed(previous: Token | None) -> bool:
    if previous is None:
        return True
    if previous.kind == "punct":
        return previous.text not in (")", "]", "}", "++", "--")
    if previous.kind == "name":
        return previous.text in _BEFORE_REGEX_WORDS
    return previous.kind == "template" and previous.text.endswith("${")


def _unescape(body: str) -> str:
    def one(match: re.Match[str]) -> str:
        escape = match.group(1)
        if escape[0] in "ux" and len(escape) > 1:
            code = int(escape[1:].strip("{}"), 16)
            return chr(code) if code <= 0x10FFFF else match.group()  # out of range: a syntax error
        if escape in ("\n", "\r\n", "\r", "\u2028", "\u2029"):
            return ""  # a line continuation
        return _SIMPLE.get(escape, escape)

    return _ESCAPE.sub(one, body)
