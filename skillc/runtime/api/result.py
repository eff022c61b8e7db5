"""Turn whatever a handler returned into an :class:`AtomicApiResult`, enforcing the AI-mode rules.

``content`` is required (an array of ``{type, ...}`` blocks), ``structuredContent`` and ``_meta`` are
objects, and each of the three is at most 200 KB as JSON. A result that breaks a rule becomes an
``isError`` result that says which rule, so the agent sees a clear failure instead of a broken card.

:func:`normalise_json` takes the JSON text the VM produced: a result nested deeper than
:data:`~skillc.runtime.api.values.DEPTH_LIMIT` is refused before it is parsed (``RUN041``), and
lone surrogates in any of its strings are replaced by U+FFFD (``RUN042``, a warning).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from skillc.diagnostics import Diagnostic
from skillc.runtime.api.values import DEPTH_LIMIT, clean, json_depth, may_hold_surrogates, replaced_note, too_deep
from skillc.runtime.contracts import AtomicApiResult

PART_LIMIT = 200 * 1024
PARTS = (("content", "content"), ("structuredContent", "structuredContent"), ("_meta", "_meta"))


@dataclass
class Normalised:
    result: AtomicApiResult
    diagnostics: list[Diagnostic] = field(default_factory=list)


def _size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass"))


def normalise_json(api: str, value_json: str | None, depth_limit: int = DEPTH_LIMIT) -> Normalised:
    """The result from the VM's JSON text: depth bound first, then surrogates, then :func:`normalise`."""
    if value_json is None:
        return normalise(api, None)
    depth = json_depth(value_json)
    if depth > depth_limit:
        message = f"the result of {api} is too deeply nested: {too_deep(depth, depth_limit)}"
        diag = Diagnostic.make("RUN041", message, hint="return flatter data")
        return Normalised(
            AtomicApiResult.error(f"The result of {api} is too deeply nested: {too_deep(depth, depth_limit)}."), [diag]
        )
    try:
        raw = json.loads(value_json)
    except (ValueError, RecursionError):
        raw = None
    notes: list[Diagnostic] = []
    if may_hold_surrogates(value_json):
        raw, replaced = clean(raw)
        if replaced:
            notes.append(Diagnostic.make("RUN042", f"{api}: {replaced_note(replaced, 'the result')}"))
    normal = normalise(api, raw)
    normal.diagnostics[:0] = notes
    return normal


def normalise(api: str, raw: Any) -> Normalised:
    if not isinstance(raw, dict):
        got = "undefined" if raw is None else type(raw).__name__.replace("dict", "object").replace("list", "array")
        return _broken(api, f"returned {got}; an atomic API must return {{content: [{{type: 'text', text}}]}}")
    for key, label in PARTS:
        if key in raw and raw[key] is not None:
            size = _size(raw[key])
            if size > PART_LIMIT:
                message = f"{api}: {label} is {size} bytes as JSON (limit {PART_LIMIT})"
                diag = Diagnostic.make("RUN015", message, hint="return less data, or page it")
                return Normalised(AtomicApiResult.error(f"The result of {label} is too large: {message}."), [diag])
    if "content" not in raw:
        return _broken(api, "returned no `content`; it is required (an array of {type: 'text', text} blocks)")
    if not isinstance(raw["content"], list):
        return _broken(api, "returned `content` that is not an array")
    for i, block in enumerate(raw["content"]):
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            return _broken(api, f"returned `content[{i}]` without a string `type`")
        if block["type"] == "text" and not isinstance(block.get("text"), str):
            return _broken(api, f"returned `content[{i}]` of type text without a string `text`")
    for key in ("structuredContent", "_meta"):
        if raw.get(key) is not None and not isinstance(raw[key], dict):
            return _broken(api, f"returned `{key}` that is not an object")
    if raw.get("isError") is not None and not isinstance(raw["isError"], bool):
        return _broken(api, "returned `isError` that is not a boolean")
    try:
        result = AtomicApiResult.model_validate({k: v for k, v in raw.items() if v is not None})
    except ValidationError as err:
        return _broken(api, f"returned an invalid result: {err.errors()[0]['msg']}")
    if result.is_error:
        result.structured_content = None  # isError means no card; the data must not reach one
    return Normalised(result)


def _broken(api: str, what: str) -> Normalised:
    message = f"{api} {what}"
    return Normalised(AtomicApiResult.error(f"The API {message}."), [Diagnostic.make("RUN014", message)])
