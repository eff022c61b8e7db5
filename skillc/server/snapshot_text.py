"""Quoting for the snapshot text an agent reads (take_snapshot's tree, ui_control's summary).

Card data reaches that text (wx:key values inside ids, class names, text, data-* values), and the
agent cannot tell a forged line from a real one, so every data value is a JSON string literal with
everything that could end a line or hide one escaped, and a bare token is printed only when it
matches a strict pattern that cannot contain a space, a quote or a line break.
"""

from __future__ import annotations

import re
import unicodedata

# A Render IR id: template positions and the loop keys in brackets (``0.1.0[d01].2``). A key with a
# ``]`` or ``\`` in it is escaped with ``\`` by the renderer, so such ids never match and are quoted.
SAFE_ID = re.compile(r"[A-Za-z0-9_.:\[\]-]+")
# A tag (view, scroll-view, my-widget) or an attribute name (class, data-order-id, aria-label).
SAFE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.:-]*")

_SHORT = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}
# Categories a reader (or str.splitlines, or a terminal) may treat as a line break or that hide
# or reorder what follows: controls (C0, DEL, C1 with NEL), format characters (bidi overrides,
# zero-width joiners, BOM), the line and paragraph separators, and lone surrogates (which would
# also fail to encode as UTF-8).
_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})


def _escape(ch: str) -> str:
    short = _SHORT.get(ch)
    if short is not None:
        return short
    if unicodedata.category(ch) not in _UNSAFE_CATEGORIES:
        return ch
    code = ord(ch)
    if code > 0xFFFF:
        # JSON spells an astral character as its UTF-16 surrogate pair.
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def quote(value: str) -> str:
    """``value`` as a JSON string literal that stays on one line and shows no invisible character."""
    if value.isprintable():
        # Nearly every value: no control, format or separator character, so only the two JSON
        # specials; the per-character path below runs only when there is something to find.
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return '"' + "".join(map(_escape, value)) + '"'


def token(value: str, safe: re.Pattern[str] = SAFE_ID) -> str:
    """``value`` bare when it fully matches ``safe``, else quoted."""
    return value if safe.fullmatch(value) else quote(value)
