"""Reading selector lists into compound selectors joined by descendant combinators.

Cards support ``.class``, ``#id``, ``tag`` and descendants of them; any other selector is
reported (WXSS006 where WeChat's validator refuses it, else WXSS018; with a hint where one
helps) and dropped from its rule.
"""

from __future__ import annotations

from collections.abc import Sequence

from skillc.frontend.wxss.card_rules import _PSEUDO_HINTS, _SELECTOR_HINT
from skillc.frontend.wxss.nodes import Compound, Selector
from skillc.frontend.wxss.reader import _FileReader
from skillc.frontend.wxss.tokens import Token, _significant


class _SelectorReader(_FileReader):
    def selector_list(self, prelude: Sequence[Token]) -> tuple[Selector, ...]:
        result: list[Selector] = []
        n = len(prelude)
        i = 0
        while i <= n:
            # One pass over a comma-separated part: its end, significant tokens and any error token.
            sig: list[Token] = []
            error = False
            j = i
            while j < n:
                t = prelude[j]
                kind = t.type
                if kind == "literal" and t.value == ",":
                    break
                if kind == "error":
                    error = True
                elif kind != "whitespace" and kind != "comment":
                    sig.append(t)
                j += 1
            part_start, i = i, j + 1
            if not sig:
                if len(_significant(prelude)) > 0 and not error:
                    comma = next((t for t in prelude if t.type == "literal" and t.value == ","), None)
                    where = self.src.tok_span(comma) if comma is not None else self.src.tok_span(prelude[0])
                    self.emit("WXSS005", "empty selector in a comma-separated list", where)
                continue
            if error:
                continue  # already reported by report_tree
            sel = self.selector(prelude, part_start, j, sig)
            if sel is not None:
                result.append(sel)
        return tuple(result)

    def selector(self, tokens: Sequence[Token], lo: int, hi: int, sig: list[Token]) -> Selector | None:
        """The selector ``tokens[lo:hi]`` (one part of a list); ``sig`` its significant tokens."""
        compounds: list[Compound] = []
        tag: str | None = None
        ident: str | None = None
        classes: list[str] = []
        started = False
        ids = cls = tags = 0
        # Outer whitespace stripped (comments are never tokens: they are skipped when tokenizing).
        while lo < hi and tokens[lo].type == "whitespace":
            lo += 1
        while hi > lo and tokens[hi - 1].type == "whitespace":
            hi -= 1
        i = lo
        while i < hi:
            tok = tokens[i]
            kind = tok.type
            if kind == "whitespace":
                if started:
                    compounds.append(Compound(tag, ident, tuple(classes)))
                    tag, ident, classes, started = None, None, [], False
                i += 1
                continue
            if kind == "literal" and tok.value == "." and i + 1 < hi and tokens[i + 1].type == "ident":
                classes.append(tokens[i + 1].value)
                cls += 1
                started = True
                i += 2
                continue
            if kind == "hash" and tok.is_identifier and ident is None:
                ident, started = tok.value, True
                ids += 1
                i += 1
                continue
            if kind == "ident" and not started:
                tag, started = tok.lower_value, True
                tags += 1
                i += 1
                continue
            unsupported = self._unsupported_selector_part(tokens[lo:hi], i - lo)
            if unsupported is not None:
                code, message, end_index, hint = unsupported
                self.emit(
                    code,
                    f"{message} is not supported in cards; the selector '{self.text_of(sig)}' is ignored",
                    self.src.tok_span(tok, tokens[lo + end_index]),
                    hint=hint,
                )
                return None
            what = tok.serialize()
            self.emit(
                "WXSS005",
                f"invalid selector '{self.text_of(sig)}': unexpected '{what}'",
                self.src.tok_span(tok),
                hint=_SELECTOR_HINT,
            )
            return None
        if started:
            compounds.append(Compound(tag, ident, tuple(classes)))
        return Selector(tuple(compounds), (ids, cls, tags), self.src.tok_span(sig[0], sig[-1]), self.text_of(sig))

    def _unsupported_selector_part(self, toks: Sequence[Token], i: int) -> tuple[str, str, int, str | None] | None:
        """(code, what, last token index, hint): WXSS006 for what WeChat's V006 refuses (its check
        matches ``[attr=``, combinators and pseudo selectors), WXSS018 for what only cards lack."""
        tok = toks[i]
        if tok.type == "[] block":
            matcher = any(t.type == "literal" and t.value.endswith("=") for t in tok.content)
            code = "WXSS006" if matcher else "WXSS018"
            return code, "attribute selector", i, "add a class to the element instead"
        if tok.type != "literal":
            return None
        if tok.value in (">", "+", "~"):
            names = {">": "child combinator '>'", "+": "adjacent sibling combinator '+'", "~": "sibling combinator '~'"}
            hint = "use a descendant selector (a space) or a class on the element"
            return "WXSS006", names[tok.value], i, hint
        if tok.value == "*":
            return "WXSS018", "universal selector '*'", i, "name the elements with a class"
        if tok.value == ":":
            j = i + 1
            element = j < len(toks) and toks[j].type == "literal" and toks[j].value == ":"
            if element:
                j += 1
            if j < len(toks) and toks[j].type in ("ident", "function"):
                name = toks[j].lower_value if toks[j].type == "ident" else toks[j].lower_name
                label = f"pseudo-element '::{name}'" if element else f"pseudo-class ':{name}'"
                return "WXSS006", label, j, _PSEUDO_HINTS.get(name)
            return None
        return None
