"""Recovering from a syntax error: report the defect, finish the broken tag, choose a restart.

When lark stops, the tag it was reading is rebuilt from the parser's value stack and closed
where it most likely ends; the parser then runs again from there over a copy of the text
whose consumed part is blanked, so every position stays true.
"""

from __future__ import annotations

import re
from typing import Any

from lark import Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from skillc.frontend.wxml.builder import _Builder, _tok_loc
from skillc.frontend.wxml.nodes import Attribute, Loc, Wxs
from skillc.frontend.wxml.text import decode_entities

_NOT_NEWLINE = re.compile(r"[^\n]")


def _too_many_errors(b: _Builder, resume: int, limit: int) -> None:
    """WXML013 at ``resume``: the parse gives up after ``limit`` restarts (the parser's and the driver's)."""
    b.emit(
        "WXML013",
        f"more than {limit} syntax errors; the rest of the file is not checked",
        b.loc_at(resume, resume + 1),
    )


def _blank(text: str, upto: int) -> str:
    """``text`` with everything before ``upto`` turned to spaces, newlines kept: positions stay true."""
    return _NOT_NEWLINE.sub(" ", text[:upto]) + text[upto:]


def _error_offset(err: UnexpectedInput, length: int) -> int:
    if isinstance(err, UnexpectedCharacters):
        return int(err.pos_in_stream or 0)
    if isinstance(err, UnexpectedToken):
        tok: Token = err.token
        if tok.type == "$END" or tok.start_pos is None:
            return length
        return int(tok.start_pos)
    return length


def _describe(text: str, offset: int) -> str:
    if offset >= len(text):
        return "the end of the file"
    char = text[offset]
    return {"\n": "a line break", "\r": "a line break"}.get(char, f"'{char}'")


def _recover(err: UnexpectedInput, b: _Builder) -> int:
    """Report the defect behind a lark error and decide where the next parser run starts.

    A tag left open by the error is rebuilt from the parser's value stack (lark's ``e.token``
    says little: the message is made from the position and the parser's state instead).
    """
    text = b.text
    offset = max(_error_offset(err, len(text)), b.floor)
    interactive = getattr(err, "interactive_parser", None)
    stack: list[Any] = list(interactive.parser_state.value_stack) if interactive is not None else []
    opener = next(
        (i for i in range(len(stack) - 1, -1, -1) if isinstance(stack[i], Token) and stack[i].type in _OPENERS),
        None,
    )
    if opener is None:
        # Content-level terminals cover every character, so this is not expected; skip one.
        b.emit("WXML001", f"unexpected {_describe(text, offset)}", b.loc_at(offset, offset + 1))
        return offset + 1
    b.flush()
    tag_tok: Token = stack[opener]
    name = str(tag_tok)[1:]
    # Repetitions (attr*, parts*) sit on the value stack as lists: flatten them.
    rest = _flatten(stack[opener + 1 :])
    attrs: list[Attribute] = [item for item in rest if isinstance(item, Attribute)]
    tail = [item for item in rest if isinstance(item, Token)]
    if tag_tok.type == "WXS_OPEN" and tail and tail[0].type == "GT":
        b.emit(
            "WXML011",
            "<wxs> is never closed with </wxs>",
            _tok_loc(tag_tok),
            hint="end the script with </wxs>",
        )
        _append_wxs(b, tag_tok, attrs, _tok_loc(tail[0]))
        return len(text)
    pending, quote = _pending_attribute(b, tail)
    if quote is not None:
        # The value runs to the end of the file: cut it at the first '>' after the quote.
        assert quote.end_pos is not None and quote.start_pos is not None
        gt = text.find(">", quote.end_pos)
        cut = gt if gt >= 0 else len(text)
        b.emit(
            "WXML005",
            f"attribute value opened with {quote} is never closed",
            _tok_loc(quote),
            hint=f"close the value with {quote}",
        )
        if tail and tail[0].type == "ATTR_NAME":
            value = decode_entities(text[quote.end_pos : cut])
            loc = b.loc_at(quote.start_pos, cut)
            attrs.append(Attribute(str(tail[0]), _tok_loc(tail[0]), (value,) if value else (), loc, value))
        return _close_at(b, tag_tok, attrs, gt, name)
    if pending is not None:
        attrs.append(pending)
    if offset >= len(text) or text[offset] == "<":
        b.emit(
            "WXML010",
            f"<{name}> is not closed with '>' before {_describe(text, offset)}",
            b.loc_at(offset, offset + 1) if offset < len(text) else _tok_loc(tag_tok),
            hint="add '>' (or '/>' for an empty element) at the end of the tag",
        )
        _open(b, tag_tok, attrs, b.loc_at(offset, offset), self_closing=False)
        return offset
    b.emit(
        "WXML001",
        f"unexpected {_describe(text, offset)} in <{name}>: expected an attribute name, '>' or '/>'",
        b.loc_at(offset, offset + 1),
        hint="attribute names start with a letter, '_', ':' or '@'; values are quoted",
    )
    return _close_at(b, tag_tok, attrs, text.find(">", offset), name)


_OPENERS = ("TAG_OPEN", "WXS_OPEN")


def _flatten(items: list[Any]) -> list[Any]:
    out: list[Any] = []
    for item in items:
        if isinstance(item, Tree):
            out.extend(_flatten(item.children))
        else:
            out.append(item)
    return out


def _pending_attribute(b: _Builder, tail: list[Token]) -> tuple[Attribute | None, Token | None]:
    """The attribute the parser had read but not reduced when it failed, or its unclosed quote."""
    if not tail or tail[0].type != "ATTR_NAME":
        return None, None
    name = tail[0]
    attr = Attribute(str(name), _tok_loc(name))
    if len(tail) < 3 or tail[1].type != "EQ":
        return attr, None
    first = tail[2]
    if first.type == "UNQUOTED":
        attr.value, attr.value_loc, attr.raw = b.attr_value([first])
        return attr, None
    last = tail[-1]
    if len(tail) < 4 or last.type != first.type:
        return None, first
    attr.value, attr.value_loc, attr.raw = b.attr_value(tail[2:])
    return attr, None


def _close_at(b: _Builder, tag_tok: Token, attrs: list[Attribute], gt: int, name: str) -> int:
    """Finish the broken tag at the '>' at ``gt`` (or at the end of the file) and resume after it."""
    text = b.text
    if gt < 0:
        _open(b, tag_tok, attrs, b.loc_at(len(text), len(text)), self_closing=False)
        return len(text)
    _open(b, tag_tok, attrs, b.loc_at(gt, gt + 1), self_closing=gt > 0 and text[gt - 1] == "/")
    return gt + 1


def _open(b: _Builder, tag_tok: Token, attrs: list[Attribute], end: Loc, *, self_closing: bool) -> None:
    if tag_tok.type == "WXS_OPEN":
        _append_wxs(b, tag_tok, attrs, end)
    else:
        b.open_element(tag_tok, attrs, end, self_closing)


def _append_wxs(b: _Builder, tag_tok: Token, attrs: list[Attribute], end: Loc) -> None:
    start = _tok_loc(tag_tok)
    b.children.append(
        Wxs(
            attrs, "", start.to(end), start.to(end), Loc(start.line, start.column + 1, start.end_line, start.end_column)
        )
    )
