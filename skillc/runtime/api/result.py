"""Turn whatever a handler returned into an :class:`AtomicApiResult`, enforcing the AI-mode rules.

``content`` is required (an array of ``{type, ...}`` blocks), ``structuredContent`` and ``_meta`` are
objects, and each of the three is at most 200 KB as JSON. A result that breaks a rule becomes an
``isError`` result that says which rule, so the agent sees a clear failure instead of a broken card.

:func:`normalise_json` takes the JSON text the VM produced: a result nested deeper than
:data:`~skillc.runtime.api.values.DEPTH_LIMIT` is refused before it is parsed (``RUN041``), and
lone surrogates in any of its strings are replaced by U+FFFD (``RUN042``, a warning).

Handoff mode: a result may carry ``handoff: {query, payload?, card?, path?}``, which asks WeChat to
open the API's ``_meta.ui.pagePath`` (or ``handoff.path``) with that query. It is validated into a
:class:`Handoff`; a bad shape is dropped with ``HND001`` and the rest of the result stands.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from skillc.diagnostics import Diagnostic
from skillc.runtime.api.values import DEPTH_LIMIT, clean, may_hold_surrogates, nests_past, replaced_note, too_deep
from skillc.runtime.contracts import AtomicApiResult

PART_LIMIT = 200 * 1024
PARTS = (("content", "content"), ("structuredContent", "structuredContent"), ("_meta", "_meta"))


class Handoff(BaseModel):
    """A validated handoff: the page to open and its query, in one canonical form."""

    model_config = ConfigDict(frozen=True)

    path: str | None = Field(description="the page route, '/pages/...'; None when the API names no page")
    query: str = Field(description="the query string, 'a=1&b=2'")
    params: dict[str, str] = Field(default_factory=dict, description="the query, key by key")
    payload: Any = None
    card: Any = None  # what the demo shows beside the page; its shape is not documented, so any JSON

    @property
    def url(self) -> str:
        return f"{self.path or ''}{'?' + self.query if self.query else ''}"

    def wire(self) -> dict[str, Any]:
        data = self.model_dump(mode="json", exclude_none=True)
        data["url"] = self.url
        return data


def _js_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object" if isinstance(value, dict) else type(value).__name__


def _scalar(value: str | int | float | bool) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _shape_problem(raw: Any) -> str | None:
    """What is wrong with a handoff's shape, or None."""
    if not isinstance(raw, dict):
        return f"`handoff` must be an object {{query, payload?, card?}}, got {_js_type(raw)}"
    query = raw.get("query")
    if query is not None and not isinstance(query, (str, dict)):
        return f"`handoff.query` must be a string 'a=1&b=2' or an object, got {_js_type(query)}"
    if isinstance(query, dict):
        for key, value in query.items():
            if not isinstance(value, (str, int, float, bool)):
                return f"`handoff.query.{key}` must be a string, number or boolean, got {_js_type(value)}"
    if raw.get("path") is not None and not isinstance(raw["path"], str):
        return f"`handoff.path` must be a string, got {_js_type(raw['path'])}"
    return None


def parse_handoff(api: str, raw: Any, page_path: str | None) -> tuple[Handoff | None, list[Diagnostic]]:
    """The handoff of a result, or None and why (``HND001`` a bad shape); ``HND002`` when no page
    is named. ``query`` may be a string (O6b) or an object of scalars (v0.2.1)."""
    problem = _shape_problem(raw)
    if problem is not None:
        message = f"{api} returned an invalid handoff: {problem}; it is dropped"
        hint = "return handoff: { query: 'id=1&from=agent', payload: {...} }"
        return None, [Diagnostic.make("HND001", message, hint=hint)]
    query_in = raw.get("query")
    if isinstance(query_in, dict):
        params = {str(k): _scalar(v) for k, v in query_in.items()}
        query = urlencode(params)
    else:
        query = (query_in or "").lstrip("?")
        params = dict(parse_qsl(query, keep_blank_values=True))
    path = raw.get("path") or page_path
    notes: list[Diagnostic] = []
    if path is None:
        message = f"{api} returned a handoff but declares no _meta.ui.pagePath; no page can open it"
        notes.append(Diagnostic.make("HND002", message, file="mcp.json"))
    handoff = Handoff(path=path, query=query, params=params, payload=raw.get("payload"), card=raw.get("card"))
    return handoff, notes


def handoff_of(result: AtomicApiResult) -> Handoff | None:
    """The validated handoff a normalised result carries, if any."""
    if not isinstance(result.handoff, dict) or result.is_error:
        return None
    try:
        return Handoff.model_validate({k: v for k, v in result.handoff.items() if k != "url"})
    except ValidationError:
        return None


@dataclass
class Normalised:
    result: AtomicApiResult
    diagnostics: list[Diagnostic] = field(default_factory=list)


def _size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass"))


def normalise_json(
    api: str, value_json: str | None, depth_limit: int = DEPTH_LIMIT, *, page_path: str | None = None
) -> Normalised:
    """The result from the VM's JSON text: depth bound first, then surrogates, then :func:`normalise`."""
    if value_json is None:
        return normalise(api, None)
    depth = nests_past(value_json, depth_limit)
    if depth is not None:
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
    normal = normalise(api, raw, page_path=page_path, text_bytes=len(value_json.encode("utf-8", "surrogatepass")))
    normal.diagnostics[:0] = notes
    return normal


# The keys of an atomic API result (notes/ai-mode-spec.md section 3). A card's Result notification
# carries isError, content, structuredContent and _meta; anything else reaches no one.
RESULT_KEYS = ("isError", "content", "structuredContent", "_meta", "handoff", "apiCalls")


def normalise(api: str, raw: Any, *, page_path: str | None = None, text_bytes: int | None = None) -> Normalised:
    """``raw`` as an atomic API result, or the error result it makes. ``text_bytes``: the UTF-8 size
    of the JSON text ``raw`` was parsed from, when it was."""
    normal = _normalise(api, raw, page_path=page_path, text_bytes=text_bytes)
    if isinstance(raw, dict):
        stray = [k for k in raw if k not in RESULT_KEYS]
        if stray:
            normal.diagnostics.append(_stray_keys(api, stray))
    return normal


def _stray_keys(api: str, keys: list[str]) -> Diagnostic:
    listed = ", ".join(f"`{k}`" for k in keys[:5]) + (f" and {len(keys) - 5} more" if len(keys) > 5 else "")
    message = (
        f"{api} returned {listed}, which an atomic API result does not have ({', '.join(RESULT_KEYS)}): "
        "neither the model nor the card receives it"
    )
    if "x_anp" in keys:
        hint = "return it as _meta.anp: the card receives the result's _meta, the model never does"
    else:
        hint = "return what only the card needs in _meta, what the model needs in structuredContent"
    return Diagnostic.make("RUN080", message, hint=hint)


def _normalise(api: str, raw: Any, *, page_path: str | None, text_bytes: int | None) -> Normalised:
    if not isinstance(raw, dict):
        got = "undefined" if raw is None else type(raw).__name__.replace("dict", "object").replace("list", "array")
        return _broken(api, f"returned {got}; an atomic API must return {{content: [{{type: 'text', text}}]}}")
    # A part re-serialised compactly is at most twice the text it was parsed from (a number may
    # gain a character: 1e-7 becomes 1e-07): a text within half the limit needs no part measured.
    measure = text_bytes is None or 2 * text_bytes > PART_LIMIT
    for key, label in PARTS if measure else ():
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
        result.handoff = None  # nor a page
        return Normalised(result)
    if result.handoff is not None:
        handoff, notes = parse_handoff(api, result.handoff, page_path)
        result.handoff = handoff.wire() if handoff is not None else None
        return Normalised(result, notes)
    return Normalised(result)


def _broken(api: str, what: str) -> Normalised:
    message = f"{api} {what}"
    return Normalised(AtomicApiResult.error(f"The API {message}."), [Diagnostic.make("RUN014", message)])
