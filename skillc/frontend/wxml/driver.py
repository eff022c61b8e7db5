"""Running the WXML parser over a text: most items without lark's parse loop, tags through it.

Between items the grammar is always in the same state, and almost every item is one token
(a text run, a whole open tag, a leaf element, a run of close tags, a comment): its rule is
reduced as soon as it is shifted, so lark's machinery (a Token object, the state stack, the
reductions through the transformer) costs several times what the builder does with it. The
driver matches those tokens with lark's own scanner for that state, the very regular
expression lark would use, and hands each to the builder directly. An item of several tokens
(a tag lark reads piecewise: ``<wxs>``, or an open tag the one-token pattern refuses) is fed
to lark's LALR parser from its first token until the tag is complete, with lark's own lexers,
tables, callbacks and errors; after an error the recovery works exactly as after a whole-file
parse, and the driver goes on where it says. Which terminals are one-token items, and which
builder method each reduces to, is read from the parse table, so a grammar without some
shortcut is driven the same way. One piecewise tag is read whole here: ``<wxs>``, which most
component libraries open every template with; only a well-formed one (text._WXS_WHOLE, built
from the grammar's own terminals), and anything else it starts goes to lark as before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lark import Lark, Token
from lark.exceptions import UnexpectedInput
from lark.lexer import LexerState, LexerThread, LineCounter
from lark.parsers.lalr_analysis import Reduce, Shift
from lark.parsers.lalr_interactive_parser import InteractiveParser
from lark.parsers.lalr_parser_state import ParseConf, ParserState
from lark.utils import TextSlice

from skillc.frontend.wxml.builder import _Builder
from skillc.frontend.wxml.recovery import _recover, _too_many_errors
from skillc.frontend.wxml.text import _wxs_patterns

__all__: list[str] = []

# A one-token item: the builder method its rule reduces to, by the rule's name in wxml.lark.
_Item = Callable[[_Builder, str, int, int, int, int], None]
_ITEMS: dict[str, _Item] = {
    "text": _Builder.text_item,
    "tag": _Builder.fast_tag_item,
    "leaf": _Builder.leaf_item,
    "close_tag": _Builder.close_tag_item,
    "comment": _Builder.comment_item,
    "unclosed_comment": _Builder.unclosed_comment_item,
    "open_mustache": _Builder.open_mustache_item,
    "stray_lt": _Builder.stray_lt_item,
}


class Unsupported(Exception):
    """The driver cannot read this parser's tables (another lark); parse with lark alone."""


class _Driver:
    """What the driver needs of one lark parser, read once."""

    def __init__(self, lark: Lark) -> None:
        frontend: Any = lark.parser
        self.lexer = frontend.lexer  # the contextual lexer
        self.lalr = frontend.parser.parser
        table = self.lalr.parse_table
        self.conf = ParseConf(table, self.lalr.callbacks, "start")
        self.states: dict[Any, dict[str, tuple[Any, Any]]] = table.states
        start = self.conf.start_state
        content = self.lexer.lexers[start]
        scanner = content.scanner
        if len(scanner._mres) != 1 or content.callback:
            raise Unsupported("the content scanner is not one regular expression without callbacks")
        self.match = scanner._mres[0].match
        self.whole_wxs = _wxs_patterns()[0].match
        self.ignore: frozenset[str] = content.ignore_types
        # The states where an item is complete: the end of input (like any next item) reduces it.
        self.complete = {
            state
            for state, actions in self.states.items()
            if "$END" in actions and len(set(actions.values())) == 1 and actions["$END"][0] is Reduce
        }
        # terminal -> builder method, for each terminal that is a whole item on its own
        self.items: dict[str, _Item] = {}
        for terminal, (action, target) in self.states[start].items():
            if action is not Shift or terminal not in scanner.allowed_types:
                continue
            after = set(self.states[target].values())
            if len(after) != 1:
                continue  # more tokens follow: a tag read piecewise
            ((then, rule),) = after
            if then is Reduce and len(rule.expansion) == 1 and rule.origin.name in _ITEMS:
                self.items[terminal] = _ITEMS[rule.origin.name]

    def run(self, b: _Builder, max_restarts: int) -> tuple[int, int] | None:
        """Parse all of ``b.text`` into ``b``; returns None, or the offset from which lark must
        parse the rest alone (a character the content scanner does not match: not expected)
        with the number of restarts so far."""
        text = b.text
        n = len(text)
        match = self.match
        items = self.items
        ignore = self.ignore
        pos = 0
        line = 1
        line_start = 0  # offset of the first character of ``line``
        restarts = 0
        while pos < n:
            m = match(text, pos)
            if m is None:
                return pos, restarts
            kind = m.lastgroup
            value = m.group()
            item = items.get(kind)
            if item is not None:
                item(b, value, pos, m.end(), line, pos - line_start + 1)
            elif kind == "WXS_OPEN" and (whole := self.whole_wxs(text, pos)) is not None:
                b.whole_wxs(whole, line, pos - line_start + 1)
                m = whole
                value = whole.group()
            elif kind not in ignore:
                resume, line, line_start, failed = self.tag(b, pos, line, line_start)
                if not failed:
                    pos = resume
                    continue
                # A syntax error, recovered from: go on where the recovery says, as lark would
                # run again from there.
                if resume >= n:
                    break
                restarts += 1
                if restarts > max_restarts:
                    _too_many_errors(b, resume, max_restarts)
                    break
                # (No floor: the driver never reads before ``resume`` again, as lark would.)
                pos = resume
                line = text.count("\n", 0, resume) + 1
                line_start = text.rfind("\n", 0, resume) + 1
                continue
            newlines = value.count("\n")
            if newlines:
                line += newlines
                line_start = pos + value.rindex("\n") + 1
            pos = m.end()
        return None

    def tag(self, b: _Builder, pos: int, line: int, line_start: int) -> tuple[int, int, int, bool]:
        """Feed lark's parser from the tag at ``pos`` until the tag is reduced. Returns where the
        text goes on (offset, line, offset of that line) and whether a syntax error was
        recovered from on the way (then the line is counted afresh from the text)."""
        text = b.text
        counter = LineCounter("\n")  # type: ignore[no-untyped-call]
        counter.char_pos = pos
        counter.line = line
        counter.line_start_pos = line_start
        counter.column = pos - line_start + 1
        state = LexerState(TextSlice(text, pos, len(text)), counter)
        thread = LexerThread(self.lexer, state)
        parser = ParserState(self.conf, thread)
        complete = self.complete
        try:
            tok: Token | None = None
            for tok in self.lexer.lex(state, parser):
                parser.feed_token(tok)
                if parser.position in complete:
                    # The tag is complete: the end of input reduces it, as the next item would.
                    parser.feed_token(Token.new_borrow_pos("$END", "", tok), True)
                    return counter.char_pos, counter.line, counter.line_start_pos, False
            # The text ended: lark reports an unexpected end inside a tag.
            parser.feed_token(Token.new_borrow_pos("$END", "", tok) if tok else Token("$END", "", 0, 1, 1), True)
            return len(text), counter.line, counter.line_start_pos, False
        except UnexpectedInput as err:
            err.interactive_parser = InteractiveParser(self.lalr, parser, thread)
            resume = _recover(err, b)
        return resume, text.count("\n", 0, resume) + 1, text.rfind("\n", 0, resume) + 1, True


def driver_for(lark: Lark) -> _Driver | None:
    """The driver of ``lark``, or None when its tables cannot be read (lark parses alone)."""
    try:
        return _Driver(lark)
    except (Unsupported, AttributeError, KeyError, TypeError, ValueError):
        return None
