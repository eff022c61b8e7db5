"""Reading declaration lists, and typing their values and checking them against the card rules.

A declaration cards cannot render (an unknown or unsupported property, var(), a refused
unit, a value that is not CSS for its property, or one cards do not render) is reported once
and kept with ``supported=False``. What WeChat's own validator refuses is an error code
(WXSS007/008/009); what only skillc knows cards lack is a warning code (WXSS019/020/022).
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from skillc.diagnostics import Span
from skillc.frontend.wxss.card_rules import (
    _BORDER_STYLE_BAD,
    _BORDER_STYLE_PROPS,
    _DISPLAY_OK,
    _END_STATE_PREFIXES,
    _GLOBAL_KEYWORDS,
    _KNOWN_CSS,
    _OFFICIAL_DISPLAY,
    _OFFICIAL_POSITION,
    _POSITION_OK,
    _TRANSITION_OK,
    DRAWN_PROPERTIES,
    SUPPORTED_PROPERTIES,
    _gate_message,
    _is_color_name,
    _is_official_property,
    _property_hint,
    _unsupported_reason,
)
from skillc.frontend.wxss.grammar import check_value
from skillc.frontend.wxss.nodes import Declaration
from skillc.frontend.wxss.reader import Found, _FileReader
from skillc.frontend.wxss.tokens import Token, _significant, _split, computed_end, last_token
from skillc.frontend.wxss.values import (
    LENGTH_UNITS,
    UNSUPPORTED_UNITS,
    Color,
    Dimension,
    Function,
    Keyword,
    Length,
    Number,
    Operator,
    Part,
    Raw,
    String,
    Url,
)


class _DeclarationReader(_FileReader):
    def declaration_list(self, tokens: Sequence[Token], font_face: bool, close: int = -1) -> tuple[Declaration, ...]:
        """``close``: the offset of the '}' closing these tokens' block, -1 when not known."""
        result: list[Declaration] = []
        i, n = 0, len(tokens)
        while i < n:
            tok = tokens[i]
            kind = tok.type
            if kind in ("whitespace", "error", "comment") or (kind == "literal" and tok.value == ";"):
                i += 1
                continue
            j = i
            colon = _colon_after(tokens, i + 1) if kind == "ident" else -1
            if colon >= 0:
                # One pass finds the ';' ending the value, its significant tokens and any error token.
                sig: list[Token] = []
                error = False
                j = colon + 1
                while j < n:
                    t = tokens[j]
                    t_kind = t.type
                    if t_kind in _INSIGNIFICANT:
                        error = error or t_kind == "error"
                    elif t_kind == "literal" and t.value == ";":
                        break
                    else:
                        sig.append(t)
                    j += 1
                stop = self.src.tok_start(tokens[j]) if j < n else close  # where tinycss2 puts the ';'
                decl = self.declaration(tok, tokens[colon], tokens[colon + 1 : j], sig, error, font_face, stop)
                if decl is not None:
                    result.append(decl)
                i = j + 1
                continue
            # Not "name:": a nested rule, a nested at-rule, or garbage up to ';' or a block.
            while (
                j < n and tokens[j].type != "{} block" and not (tokens[j].type == "literal" and tokens[j].value == ";")
            ):
                j += 1
            stmt = _significant(tokens[i:j])
            if kind == "at-keyword":
                self.emit(
                    "WXSS011" if tok.lower_value.endswith("keyframes") else "WXSS021",
                    f"@{tok.value} inside a rule is not supported in cards; it is ignored",
                    self.src.tok_span(tok),
                )
            elif j < n and tokens[j].type == "{} block":
                self.emit(
                    "WXSS001",
                    "nested rules are not supported in WXSS; move this rule to the top level",
                    self.src.tok_span(stmt[0], stmt[-1]) if stmt else self.src.tok_span(tok),
                )
            elif kind == "ident":
                nxt = stmt[1] if len(stmt) > 1 else tok
                self.emit(
                    "WXSS001",
                    f"expected ':' after the property name '{tok.value}'",
                    self.src.tok_span(nxt),
                    hint=f"{tok.value}: <value>;",
                )
            else:
                self.emit(
                    "WXSS001",
                    f"expected a declaration 'property: value', found '{tok.serialize()}'",
                    self.src.tok_span(tok),
                )
            i = j + 1
        return tuple(result)

    def declaration(
        self,
        name_tok: Token,
        colon: Token,
        value_toks: Sequence[Token],
        sig: list[Token],
        error: bool,
        font_face: bool,
        stop: int = -1,
    ) -> Declaration | None:
        """``name_tok`` ``colon`` ``value_toks``: one declaration, up to (not including) its ';'.
        ``sig`` are the significant tokens of the value, ``error`` whether an error token is among
        the others; a value ending in !important is searched again once that is cut off. ``stop``
        is the offset of the ';', -1 when the declaration ends its block."""
        raw_name: str = name_tok.value
        # The last token before the ';' other than whitespace: the span is read from the text only
        # when it is the declaration's last (a stray ')' after !important is cut off with it).
        tail = last_token(value_toks) or colon
        important = False
        if (
            len(sig) >= 2
            and sig[-2].type == "literal"
            and sig[-2].value == "!"
            and sig[-1].type == "ident"
            and sig[-1].lower_value == "important"
        ):
            important = True
            end_tok = sig[-1]
            cut = value_toks.index(sig[-2])
            value_toks = value_toks[:cut]
            sig = sig[:-2]
            error = error and any(t.type == "error" for t in value_toks)
        else:
            end_tok = sig[-1] if sig else colon
        if error:
            return None  # a bad string or url, already reported
        src = self.src
        span = None
        if stop >= 0 and tail is end_tok and not self.pruned:
            span = src.bounded(name_tok, end_tok, stop)
        exact = span is not None
        if span is None:
            span = src.tok_span(name_tok, end_tok)
        start, end = src.tok_range(name_tok, end_tok)
        text = src.text[start:end]
        if not exact and (self.pruned or computed_end(text)):
            # Emptied blocks (the tokens no longer match the text), or an end computed from a
            # value, which may not be where the text ends: the text does not say what this is.
            return self._read(raw_name, name_tok, sig, important, span, font_face)
        # A declaration reads the same wherever its text recurs (Vant and TDesign repeat theirs
        # across components): read once per build, replayed with its spans moved.
        key = "\0" + text if font_face else text
        memo = self.p.declarations
        known = memo.get(key)
        if known is None:
            found: list[Found] = []
            self.recording, self.recording_at = found, start
            decl = self._read(raw_name, name_tok, sig, important, span, font_face)
            self.recording = None
            memo[key] = (decl, tuple(found))
            return decl
        decl, replayed = known
        if replayed:
            if "\n" in text:
                for code, message, s, e, hint in replayed:
                    self.emit(code, message, src.span(start + s, start + e), hint)
            else:  # on the declaration's line: no search for where each span starts
                line, col = name_tok.source_line, name_tok.source_column
                for code, message, s, e, hint in replayed:
                    self.emit(code, message, src.span_at(line, col + s, start + s, start + e), hint)
        if decl is None:
            return None
        return Declaration(decl.name, decl.value, decl.important, span, decl.supported, decl.drawn)

    def _read(
        self, raw_name: str, name_tok: Token, sig: list[Token], important: bool, span: Span, font_face: bool
    ) -> Declaration | None:
        """Type and check one declaration's value (``sig``, !important cut off): what the memo keeps."""
        custom = raw_name.startswith("--")
        name = raw_name if custom else raw_name.lower()
        if not sig:
            self.emit("WXSS001", f"'{raw_name}' has no value", span, hint=f"{raw_name}: <value>;")
            return None
        state = _ValueCheck(self, name, font_face)
        parts = state.convert(sig)  # the same parts as from value_toks: convert skips what sig leaves out
        supported = state.ok
        if font_face:
            return Declaration(name, parts, important, span, supported)
        if custom:
            self.emit(
                "WXSS009",
                f"CSS variables are not supported in cards: '{raw_name}' is ignored",
                self.src.tok_span(name_tok),
                hint=_VAR_HINT,
            )
            supported = False
        elif name not in SUPPORTED_PROPERTIES:
            drawn = self._unsupported_property(raw_name, name, self.src.tok_span(name_tok), sig, supported)
            return Declaration(name, parts, important, span, False, drawn)
        elif supported and name == "display" and len(sig) == 1 and sig[0].type == "ident":
            if sig[0].lower_value == "-webkit-box":
                self.emit("WXSS008", _WEBKIT_BOX_MESSAGE, self.src.tok_span(sig[0]), _WEBKIT_BOX_HINT)
                return Declaration(name, parts, important, span, False, True)
            supported = self._check_value(name, sig)
        elif supported:
            supported = self._check_value(name, sig)
        return Declaration(name, parts, important, span, supported)

    def _unsupported_property(self, raw_name: str, name: str, span: Span, sig: Sequence[Token], value_ok: bool) -> bool:
        """Report a property cards lack; True when the renderer still draws it (see DRAWN_PROPERTIES).
        ``value_ok`` is False when the value was already refused (var(), a unit cards lack)."""
        hint = _property_hint(name)
        if _is_official_property(name):
            if name in DRAWN_PROPERTIES and value_ok:
                problem = None if _is_global_keyword(sig) else check_value(name, sig)
                if problem is None and name == "-webkit-box-orient" and not _is_word(sig, "vertical"):
                    self.emit(
                        "WXSS007",
                        f"'{raw_name}' is refused by WeChat's gate (V005), and only -webkit-box-orient: vertical "
                        "draws (as part of a line clamp); the declaration is ignored",
                        span,
                        hint,
                    )
                    return False
                if problem is None:
                    self.emit("WXSS007", _gate_message(raw_name, name), span, hint)
                    return True
                self.emit(
                    "WXSS007",
                    f"'{raw_name}' is refused by WeChat's gate (V005), and '{_clip(self.text_of(sig), 48)}' is not "
                    f"a valid {name}: expected {problem[0]}; the declaration is ignored",
                    span,
                    hint,
                )
                return False
            if name in ("transition", "transition-property") and _transition_of_allowed(sig):
                self.emit("WXSS019", f"'{raw_name}' does not animate in cards: the renderer draws its end state, "
                          "the element's declared style", span, _TRANSITION_HINT)  # fmt: skip
                return False
            if name.startswith(_END_STATE_PREFIXES):
                self.emit("WXSS007", _gate_message(raw_name, name), span, hint)
                return False
            self.emit("WXSS007", f"'{raw_name}' is not supported in cards; the declaration is ignored", span, hint)
            return False
        reason = _unsupported_reason(name)
        if reason is not None:
            why, fix = reason
            self.emit(
                "WXSS019", f"'{raw_name}' is not supported in cards: {why}; the declaration is ignored", span, fix
            )
            return False
        if hint is not None or name in _KNOWN_CSS or name.startswith("-"):
            self.emit("WXSS019", f"'{raw_name}' is not supported in cards; the declaration is ignored", span, hint)
            return False
        close = difflib.get_close_matches(name, SUPPORTED_PROPERTIES, n=1, cutoff=0.75)
        self.emit(
            "WXSS019",
            f"unknown property '{raw_name}'; the declaration is ignored",
            span,
            hint=f"did you mean '{close[0]}'?" if close else None,
        )
        return False

    def _check_value(self, name: str, sig: Sequence[Token]) -> bool:
        """Is the value CSS for this property (WXSS022), and one cards render (WXSS008, WXSS020)?"""
        first = sig[0]
        keyword = first.lower_value if first.type == "ident" else None
        if keyword in _GLOBAL_KEYWORDS and len(sig) == 1:
            return True
        problem = check_value(name, sig)
        if problem is not None and self.pruned:
            return False
        if problem is not None:
            expected, hint = problem
            self.emit(
                "WXSS022",
                f"'{_clip(self.text_of(sig), 48)}' is not a valid {name}: expected {expected}; "
                "the declaration is ignored",
                self.src.tok_span(sig[0], sig[-1]),
                hint,
            )
            return False
        if name == "display" and keyword is not None and keyword not in _DISPLAY_OK:
            hint = "use display: flex" if keyword in _OFFICIAL_DISPLAY and not keyword.startswith("table") else None
            code = "WXSS008" if keyword in _OFFICIAL_DISPLAY else "WXSS020"
            self.emit(code, f"display: {keyword} is not supported in cards", self.src.tok_span(first), hint)
            return False
        if name == "position" and keyword is not None and keyword not in _POSITION_OK:
            self.emit(
                "WXSS008" if keyword in _OFFICIAL_POSITION else "WXSS020",
                f"position: {keyword} is not supported in cards",
                self.src.tok_span(first),
                hint="a card does not scroll; use position: relative or absolute",
            )
            return False
        if name in _BORDER_STYLE_PROPS:
            for tok in sig:
                if tok.type == "ident" and tok.lower_value in _BORDER_STYLE_BAD:
                    self.emit(
                        "WXSS020",
                        f"border style '{tok.lower_value}' is not supported in cards (only solid and none)",
                        self.src.tok_span(tok),
                    )
                    return False
        if name == "filter":
            for tok in sig:
                if tok.type == "function" and tok.lower_name != "blur":
                    self.emit(
                        "WXSS020",
                        f"filter {tok.lower_name}() is not supported in cards (only blur())",
                        self.src.tok_span(tok),
                    )
                    return False
        return True


_WEBKIT_BOX_MESSAGE = (
    "display: -webkit-box is refused by WeChat's gate (V005), while the renderer draws it as a line clamp "
    "together with -webkit-line-clamp and -webkit-box-orient: vertical, as WeChat does"
)
_WEBKIT_BOX_HINT = "use -wx-line-clamp with display: block"
_VAR_HINT = "write the literal value where it is used, or a class per theme (.dark .title { color: ... })"
_TRANSITION_HINT = (
    "WeChat's v0.2.1 validator means to allow transitions of opacity and transform (its check flags "
    "them anyway); the newer official rules refuse every transition: remove it to pass both"
)
_TIMING = frozenset(
    {"ease", "linear", "ease-in", "ease-out", "ease-in-out", "step-start", "step-end", "normal", "allow-discrete"}
)


def _is_word(sig: Sequence[Token], word: str) -> bool:
    return len(sig) == 1 and sig[0].type == "ident" and sig[0].lower_value == word


def _is_global_keyword(sig: Sequence[Token]) -> bool:
    return len(sig) == 1 and sig[0].type == "ident" and sig[0].lower_value in _GLOBAL_KEYWORDS


def _transition_of_allowed(sig: Sequence[Token]) -> bool:
    """``transition`` / ``transition-property`` naming only opacity and transform."""
    for part in _split(list(sig), ","):
        names = [t.lower_value for t in part if t.type == "ident" and t.lower_value not in _TIMING]
        if len(names) != 1 or names[0] not in _TRANSITION_OK:
            return False
    return True


def _colon_after(tokens: Sequence[Token], i: int) -> int:
    """Index of the ':' that follows position ``i`` past whitespace, or -1 when none does."""
    n = len(tokens)
    while i < n and tokens[i].type in ("whitespace", "comment"):
        i += 1
    return i if i < n and tokens[i].type == "literal" and tokens[i].value == ":" else -1


_INSIGNIFICANT = frozenset({"whitespace", "comment", "error"})
_NUMERIC = frozenset({"dimension", "number", "percentage"})


# Numbers beyond this (1e999 reads as infinity) are refused, so every computed length stays finite.
MAX_NUMBER = 1e15


def _clip(text: str, most: int = 24) -> str:
    return text if len(text) <= most else f"{text[: most // 2]}...{text[-most // 4 :]}"


class _ValueCheck:
    """Token list -> typed parts, reporting var() and units cards cannot render."""

    def __init__(self, f: _FileReader, prop: str, font_face: bool) -> None:
        self.f = f
        self.lower = prop not in ("font-family", "font") and not font_face
        self.font_face = font_face
        self.ok = True

    def convert(self, tokens: Sequence[Token]) -> tuple[Part, ...]:
        out: list[Part] = []
        self._parts(tokens, out)
        return tuple(out)

    def _parts(self, tokens: Sequence[Token], out: list[Part]) -> None:
        # Appends to one list rather than yielding: a generator per value and per function
        # argument list cost more than the typing itself. Kinds are tested most frequent first.
        add = out.append
        for tok in tokens:
            kind = tok.type
            if kind in _INSIGNIFICANT:
                continue
            if kind == "ident":
                low = tok.lower_value
                if _is_color_name(low):
                    add(Color(low))
                else:
                    add(Keyword(low if self.lower else tok.value))
            elif kind in _NUMERIC:
                if not abs(tok.value) <= MAX_NUMBER:
                    self._reject(
                        tok,
                        "WXSS017",
                        f"number {_clip(tok.serialize())} is out of range (at most {MAX_NUMBER:g} in size); "
                        "the declaration is ignored",
                        "write a smaller number",
                    )
                    add(Number(0))
                elif kind == "dimension":
                    unit = tok.lower_unit
                    if unit in LENGTH_UNITS:
                        add(Length(tok.value, unit))
                        continue
                    if unit in UNSUPPORTED_UNITS and not self.font_face:
                        self._reject(
                            tok,
                            "WXSS010",
                            f"unit '{tok.unit}' is not supported in cards; the declaration is ignored",
                            "use rpx, px, vw, em, rem or %",
                        )
                    add(Dimension(tok.value, unit))
                elif kind == "number":
                    add(Number(tok.value))
                else:
                    add(Length(tok.value, "%"))
            elif kind == "hash":
                add(Color("#" + tok.value.lower()))
            elif kind == "literal":
                add(Operator(tok.value) if tok.value in (",", "/", "+", "-", "*") else Raw(tok.value))
            elif kind == "string":
                add(String(tok.value))
            elif kind == "url":
                add(Url(tok.value))
            elif kind == "function":
                name = tok.lower_name
                if name == "var" and not self.font_face:
                    self._reject(
                        tok,
                        "WXSS009",
                        "CSS variables are not supported in cards: var() cannot be resolved; "
                        "the declaration is ignored",
                        _VAR_HINT,
                    )
                if name == "url":
                    args = _significant(tok.arguments)
                    if len(args) == 1 and args[0].type == "string":
                        add(Url(args[0].value))
                        continue
                add(Function(name, self.convert(tok.arguments)))
            elif kind == "() block":
                add(Function("", self.convert(tok.content)))
            else:
                add(Raw(tok.serialize()))

    def _reject(self, tok: Token, code: str, message: str, hint: str) -> None:
        if self.ok:  # one diagnostic per declaration
            self.f.emit(code, message, self.f.src.tok_span(tok), hint)
        self.ok = False
