"""Reading media query lists: ``@media`` preludes and the media part of ``@import``.

Cards evaluate a small subset (media types all, screen, print; width and height with
min-/max-; orientation; prefers-color-scheme). Anything else is reported and the query is
kept with ``supported=False``, so it never matches, as CSS treats an unknown query.
"""

from __future__ import annotations

from collections.abc import Sequence

from skillc.diagnostics import Span
from skillc.frontend.wxss.card_rules import _MEDIA_KEYWORD_FEATURES, _MEDIA_LENGTH_FEATURES, _MEDIA_TYPES
from skillc.frontend.wxss.nodes import MediaFeature, MediaQuery, MediaQueryList
from skillc.frontend.wxss.reader import _FileReader
from skillc.frontend.wxss.tokens import Token, _significant, _split


class _MediaReader(_FileReader):
    def media_query_list(self, prelude: Sequence[Token], span: Span) -> MediaQueryList:
        queries: list[MediaQuery] = []
        for part in _split(prelude, ","):
            sig = _significant(part)
            if not sig:
                self.emit("WXSS012", "empty media query; it never matches", span)
                queries.append(MediaQuery(False, "all", (), supported=False))
                continue
            queries.append(self.media_query(sig))
        return MediaQueryList(tuple(queries), self.text_of(_significant(prelude)))

    def media_query(self, sig: Sequence[Token]) -> MediaQuery:
        negated = False
        media_type = "all"
        features: list[MediaFeature] = []
        i, n = 0, len(sig)

        def bad(tok: Token, message: str) -> MediaQuery:
            self.emit("WXSS012", f"{message}; the media query never matches", self.src.tok_span(tok))
            return MediaQuery(negated, media_type, tuple(features), supported=False)

        if sig[0].type == "ident" and sig[0].lower_value in ("not", "only"):
            negated = sig[0].lower_value == "not"
            i = 1
        if i < n and sig[i].type == "ident":
            media_type = sig[i].lower_value
            if media_type not in _MEDIA_TYPES:
                return bad(sig[i], f"unknown media type '{sig[i].value}'")
            i += 1
            need_and = True
        else:
            need_and = False
        while i < n:
            tok = sig[i]
            if need_and:
                if tok.type == "ident" and tok.lower_value == "and":
                    i += 1
                    need_and = False
                    continue
                return bad(tok, f"expected 'and', found '{tok.serialize()}'")
            if tok.type != "() block":
                return bad(tok, f"expected a (feature: value), found '{tok.serialize()}'")
            feature = self.media_feature(tok)
            if feature is None:
                return MediaQuery(negated, media_type, tuple(features), supported=False)
            features.append(feature)
            need_and = True
            i += 1
        if i == 0 or (not need_and and features):
            return bad(sig[-1], "incomplete media query")
        return MediaQuery(negated, media_type, tuple(features))

    def media_feature(self, block: Token) -> MediaFeature | None:
        sig = _significant(block.content)
        span = self.src.tok_span(block)
        if len(sig) != 3 or sig[0].type != "ident" or not (sig[1].type == "literal" and sig[1].value == ":"):
            self.emit(
                "WXSS012",
                f"unsupported media feature {block.serialize()}; the media query never matches",
                span,
                hint="use (min-width: 400px), (orientation: landscape) or (prefers-color-scheme: dark)",
            )
            return None
        name, value = sig[0].lower_value, sig[2]
        if name in _MEDIA_LENGTH_FEATURES:
            if value.type == "dimension" and value.lower_unit in ("px", "em", "rem"):
                return MediaFeature(name, number=value.value, unit=value.lower_unit)
            if value.type == "number" and value.value == 0:
                return MediaFeature(name, number=0.0, unit="px")
            self.emit("WXSS012", f"({name}) needs a px, em or rem length; the media query never matches", span)
            return None
        if name in _MEDIA_KEYWORD_FEATURES:
            allowed = _MEDIA_KEYWORD_FEATURES[name]
            if value.type == "ident" and value.lower_value in allowed:
                return MediaFeature(name, keyword=value.lower_value)
            self.emit(
                "WXSS012",
                f"({name}) must be {' or '.join(allowed)}; the media query never matches",
                span,
            )
            return None
        self.emit(
            "WXSS012",
            f"media feature '{sig[0].value}' is not supported in cards; the media query never matches",
            span,
            hint="cards support width, height (and min-/max-), orientation and prefers-color-scheme",
        )
        return None
