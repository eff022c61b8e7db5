"""Limits on values that cross the process boundary: nesting depth, and text that is valid UTF-8.

**Depth.** A value (call arguments, a result, its ``structuredContent`` or ``_meta``) may nest at
most :data:`DEPTH_LIMIT` arrays/objects deep. The check is iterative and runs before anything
recursive (``json.loads``, ``copy_json``, jsonschema, pydantic) touches the value: on JSON text
(:func:`json_depth`) or on a Python value (:func:`value_depth`).

**Text.** Every string that leaves the process (result text, ``structuredContent``, ``_meta``,
console lines, diagnostics, the CLI's output, the MCP response) is valid UTF-8: a lone UTF-16
surrogate (U+D800..U+DFFF, which has no UTF-8 form) is replaced by U+FFFD, in keys and values
alike. Paired surrogates are proper characters by then and are kept.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

DEPTH_LIMIT = 64  # arrays/objects; the top-level value is depth 1

_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_BRACKETS = {ord("["): "(", ord("{"): "(", ord("]"): ")", ord("}"): ")"}
_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


class _Keep(dict[int, str | None]):
    """translate() table: brackets become ( and ), every other character is dropped."""

    def __missing__(self, key: int) -> str | None:
        return None


_BRACKET_TABLE = _Keep(_BRACKETS)


def json_depth(text: str) -> int:
    """The deepest nesting of arrays/objects in JSON ``text`` (strings skipped), without parsing it."""
    skeleton = _JSON_STRING.sub("", text).translate(_BRACKET_TABLE)
    if not skeleton:
        return 0
    return max(itertools.accumulate(1 if c == "(" else -1 for c in skeleton))


def nests_past(text: str, limit: int = DEPTH_LIMIT) -> int | None:
    """The depth of JSON ``text`` when it nests past ``limit``, else None. A text with no more
    opening brackets than ``limit`` (strings included: an upper bound) cannot, and most results
    are such texts: two counts in C instead of :func:`json_depth`'s scan (~40 us for 3 KB)."""
    if text.count("[") + text.count("{") <= limit:
        return None
    depth = json_depth(text)
    return depth if depth > limit else None


def value_depth(value: Any, limit: int = DEPTH_LIMIT) -> int:
    """The nesting depth of a JSON-like Python value; stops counting once it passes ``limit``."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: Any = node.values()
        elif isinstance(node, (list, tuple)):
            children = node
        else:
            continue
        deepest = max(deepest, depth)
        if deepest > limit:
            return deepest
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list, tuple)))
    return deepest


def too_deep(depth: int, limit: int = DEPTH_LIMIT, *, at_least: bool = False) -> str:
    """How deep a value nested past the limit is (``at_least``: the count stopped at the limit)."""
    return f"arrays/objects nested {depth}{'+' if at_least else ''} deep (limit {limit})"


def may_hold_surrogates(json_text: str) -> bool:
    """Whether JSON text may decode to a lone surrogate (only ``\\uD800``..``\\uDFFF`` escapes can)."""
    return _SURROGATE.search(json_text) is not None or _SURROGATE_ESCAPE.search(json_text) is not None


def clean_text(text: str) -> tuple[str, int]:
    """``text`` with lone surrogates replaced by U+FFFD, and how many were replaced."""
    return _SURROGATE.subn("\ufffd", text)


def _has_surrogate(value: Any) -> bool:
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            if _SURROGATE.search(node):
                return True
        elif isinstance(node, dict):
            stack.extend(k for k in node if isinstance(k, str))
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return False


def clean(value: Any) -> tuple[Any, int]:
    """A JSON-like value with every lone surrogate (keys too) replaced by U+FFFD; the count replaced.

    Iterative; the value is rebuilt only when something was replaced.
    """
    count = 0

    def fix(s: str) -> str:
        nonlocal count
        new, n = clean_text(s)
        count += n
        return new

    if isinstance(value, str):
        return fix(value), count
    if not isinstance(value, (dict, list)) or not _has_surrogate(value):
        return value, 0
    root: list[Any] = [value]
    stack: list[tuple[Any, Any]] = [(root, 0)]  # (container, key) whose value is cleaned in place
    while stack:  # the containers are copied on the way down, so the caller's value is untouched
        holder, key = stack.pop()
        node = holder[key]
        if isinstance(node, str):
            if _SURROGATE.search(node):
                holder[key] = fix(node)
        elif isinstance(node, dict):
            copy = {fix(k) if isinstance(k, str) else k: v for k, v in node.items()}
            holder[key] = copy
            stack.extend((copy, k) for k in copy)
        elif isinstance(node, list):
            copy_list = list(node)
            holder[key] = copy_list
            stack.extend((copy_list, i) for i in range(len(copy_list)))
    return (root[0] if count else value), count


def replaced_note(count: int, where: str) -> str:
    return f"{count} lone UTF-16 surrogate{'s' if count != 1 else ''} in {where} replaced by U+FFFD"
