"""What a call produced, as MCP results: ``content`` for the model, the card only in ``_meta``.

A tool result carries the AtomicApiResult's ``content`` and ``structuredContent``; the API's own
``_meta`` and everything the card view needs (the Render IR, the card id, the tool that takes
taps, the tool names its api/call blocks map to, a CardSpec fallback) go into the result's
``_meta`` and never into ``content``.

A handoff (the API asks WeChat to open a page of the mini program) is shown three ways: a text
block the model reads (the route, the query), ``structuredContent.handoff`` when the API returned
no structuredContent of its own (otherwise its outputSchema would no longer hold), and in
``_meta``: the handoff itself and, when no component card is bound, a CardSpec handoff card with
an "Open in mini program" action.
"""

from __future__ import annotations

import json
from typing import Any, TypeVar

import pydantic_core
from mcp_types import CallToolResult, ContentBlock, InputRequiredResult, TextContent
from pydantic import TypeAdapter, ValidationError
from pydantic_core import PydanticSerializationError

from skillc.backends.cardspec_backend import new_card
from skillc.backends.cardspec_fallback import fallback_card
from skillc.diagnostics import Diagnostic
from skillc.ir.render import json_bytes
from skillc.runtime.api.result import Handoff, handoff_of
from skillc.runtime.api.values import clean, replaced_note
from skillc.runtime.cards.card_models import CallOutcome, CardUpdatesView, EventOutcome
from skillc.runtime.contracts import ConsoleEntry
from skillc.runtime.contracts import ContentBlock as ApiBlock
from skillc.runtime.state import StateError
from skillc.server.artefacts import ArtefactStore, ArtefactTooLarge, FileRef
from skillc.server.registry import error_result
from skillc.server.tools import CARD_EVENT_TOOL, CARD_UPDATES_TOOL, CARD_VISIBILITY_TOOL

CARD_META = "skillc/card"
FALLBACK_META = "skillc/fallback"
ACTIONS_META = "skillc/actions"
DIAGNOSTICS_META = "skillc/diagnostics"
HANDOFF_META = "skillc/handoff"
UPDATES_META = "skillc/updates"  # a dynamic card's update cursor around an event's patches
CONSOLE_META = "skillc/console"
# A result carries at most this many console lines (the last ones), each cut to this many characters:
# enough to see what a call printed, never a log dump in every result.
RESULT_CONSOLE_LINES = 50
RESULT_CONSOLE_TEXT = 2000
OPEN_PAGE_ACTION = "skillc.openMiniProgramPage"

_BLOCK: TypeAdapter[ContentBlock] = TypeAdapter(ContentBlock)
ToolResultT = TypeVar("ToolResultT", CallToolResult, InputRequiredResult)


def _block(block: ApiBlock) -> ContentBlock:
    if block.type == "text":
        return TextContent(text=block.text or "")
    try:
        return _BLOCK.validate_python(block.model_dump(by_alias=True, exclude_none=True))
    except ValidationError:
        # A block type MCP does not know still reaches the model, as its JSON.
        return TextContent(text=json.dumps(block.model_dump(exclude_none=True), ensure_ascii=False))


def _wire_diagnostics(diagnostics: list[Diagnostic]) -> list[dict[str, Any]]:
    return [d.model_dump(mode="json", exclude_none=True) for d in diagnostics]


def call_result(outcome: CallOutcome, tools: dict[str, str]) -> CallToolResult:
    """``tools``: API name -> tool name for the card's skill (api/call blocks become tools/call)."""
    result = outcome.api.result
    content = [_block(b) for b in result.content] or [TextContent(text="")]
    if result.is_error:
        return CallToolResult(content=content, is_error=True)
    meta: dict[str, Any] = dict(result.meta or {})
    card = outcome.card
    if card is not None:
        view = card.wire(with_data=False)  # the card's data is the component's business
        view["eventTool"] = CARD_EVENT_TOOL
        view["tools"] = tools
        if card.cursor is not None:  # scope.dynamic: its timers change it later, read through these
            view["updatesTool"] = CARD_UPDATES_TOOL
            view["visibilityTool"] = CARD_VISIBILITY_TOOL
        meta[CARD_META] = view
    if outcome.fallback is not None:
        f = outcome.fallback
        meta[FALLBACK_META] = {
            "card": fallback_card(f.structured_content, title=f.title, text=f.text),
            "reason": f.reason,
            "componentPath": f.component_path,
        }
    structured = result.structured_content
    handoff = handoff_of(result)
    if handoff is not None:
        content.append(TextContent(text=handoff_text(handoff)))
        meta[HANDOFF_META] = handoff.wire()
        if structured is None:
            structured = {"handoff": handoff.wire()}
        if card is None and outcome.fallback is None:
            meta[FALLBACK_META] = {"card": handoff_card(handoff), "reason": "handoff", "componentPath": None}
    if outcome.actions:
        meta[ACTIONS_META] = [a.wire() for a in outcome.actions]
    diagnostics = outcome.api.diagnostics + outcome.diagnostics + outcome.findings
    if diagnostics:
        meta[DIAGNOSTICS_META] = _wire_diagnostics(diagnostics)
    return CallToolResult(
        content=content,
        structured_content=structured,
        is_error=False,
        _meta=meta or None,
    )


def handoff_text(handoff: Handoff) -> str:
    """What the model reads: where the user continues, and with which query."""
    if handoff.path is None:
        return f"Handoff (no page declared) with query {handoff.query or '(empty)'}."
    query = f" with {handoff.query}" if handoff.query else ""
    return f"Continue in the mini program: open {handoff.path}{query}."


def handoff_card(handoff: Handoff) -> dict[str, Any]:
    """An Adaptive Cards 1.5 card for a handoff: the route, the query, an "Open in mini program"
    action. The action is an Action.Submit carrying the route: only a WeChat client can open a
    mini-program page, so the host decides what the action does."""
    facts = [{"title": "page", "value": handoff.path or "(none declared)"}]
    facts += [{"title": key, "value": value} for key, value in list(handoff.params.items())[:20]]
    body: list[dict[str, Any]] = [
        {
            "type": "TextBlock",
            "text": "Continue in the mini program",
            "size": "Medium",
            "weight": "Bolder",
            "wrap": True,
        },
        {"type": "FactSet", "facts": facts},
    ]
    card = new_card(body, handoff_text(handoff))
    if handoff.path is not None:
        # Views that draw only the body (skillc's MCP Apps card view) still show where it leads.
        line = f"Open in mini program: {handoff.url}"
        body.append({"type": "TextBlock", "text": line, "isSubtle": True, "wrap": True})
        card["actions"] = [
            {
                "type": "Action.Submit",
                "title": "Open in mini program",
                "data": {"action": OPEN_PAGE_ACTION, "path": handoff.path, "query": handoff.query, "url": handoff.url},
            }
        ]
    return card


def event_result(outcome: EventOutcome) -> CallToolResult:
    """An app-only result: the patches and the actions the view carries out."""
    if outcome.document is None and not outcome.handled and outcome.diagnostics:
        return error_result("; ".join(d.message for d in outcome.diagnostics))
    # Only the parts the view uses are serialised (outcome.wire() would add the whole document).
    structured = outcome.view().wire()
    ran = ", ".join(outcome.handled) or "no handler"
    meta: dict[str, Any] | None = (
        {DIAGNOSTICS_META: _wire_diagnostics(outcome.diagnostics)} if outcome.diagnostics else None
    )
    if outcome.cursor is not None:
        # In _meta, not structuredContent: the tool's outputSchema is the same for every card.
        meta = meta or {}
        meta[UPDATES_META] = {"after": outcome.after, "cursor": outcome.cursor, "timers": outcome.timers}
    return CallToolResult(
        content=[TextContent(text=f"card {outcome.card_id}: {ran} ran, {len(outcome.patches)} patches")],
        structured_content=structured,
        is_error=False,
        _meta=meta,
    )


def updates_result(view: CardUpdatesView, diagnostics: list[Diagnostic]) -> CallToolResult:
    """An app-only result: what a dynamic card's timers (and taps) changed since the view's cursor."""
    patches = sum(len(u.get("patches", [])) for u in view.updates)
    state = "expired" if view.expired else "hidden" if view.hidden else f"{view.timers} live timers"
    text = f"card {view.card_id}: {len(view.updates)} updates, {patches} patches ({state})"
    meta = {DIAGNOSTICS_META: _wire_diagnostics(diagnostics)} if diagnostics else None
    return CallToolResult(content=[TextContent(text=text)], structured_content=view.wire(), is_error=False, _meta=meta)


def wire_safe(result: CallToolResult | InputRequiredResult) -> CallToolResult | InputRequiredResult:
    """The last check before a result is serialised: it must be valid UTF-8 JSON.

    The runtime already cleans what an API returns; this catches what else reaches a result (a
    card's data, patches, a message): lone surrogates become U+FFFD with a ``RUN042`` diagnostic
    in ``_meta``. A result that still cannot be serialised becomes an ``isError`` result, never
    an HTTP 500.
    """
    try:
        result.model_dump_json(by_alias=True, exclude_none=True)
        return result
    except PydanticSerializationError:
        pass
    raw, replaced = clean(result.model_dump(by_alias=True, exclude_none=True))
    if replaced and isinstance(raw, dict):
        note = Diagnostic.make("RUN042", replaced_note(replaced, "the tool result"))
        meta = raw.setdefault("_meta", {})
        if isinstance(meta, dict):
            meta.setdefault(DIAGNOSTICS_META, []).append(note.model_dump(mode="json", exclude_none=True))
    try:
        fixed = type(result).model_validate(raw)
        fixed.model_dump_json(by_alias=True, exclude_none=True)
        return fixed
    except (ValidationError, PydanticSerializationError, ValueError) as err:
        return error_result(f"skillc could not serialise the result: {type(err).__name__}")


def with_console(result: ToolResultT, sources: list[tuple[str, list[ConsoleEntry]]]) -> ToolResultT:
    """``_meta["skillc/console"]``: the call's console lines (API VM, card VM), bounded, so a host or
    an agent sees what the skill printed without a debugger. An error result gets them too: that
    is where they help most."""
    lines = [(source, line) for source, entries in sources for line in entries]
    if not lines or not isinstance(result, CallToolResult):
        return result
    kept = lines[-RESULT_CONSOLE_LINES:]
    wire: list[dict[str, Any]] = []
    for source, line in kept:
        entry: dict[str, Any] = {"source": source, "level": line.level, "text": line.text[:RESULT_CONSOLE_TEXT]}
        if line.file:
            entry.update(file=line.file, line=line.line, column=line.column)
        entry["timestamp"] = line.timestamp
        wire.append({k: v for k, v in entry.items() if v is not None})
    meta = dict(result.meta or {})
    meta[CONSOLE_META] = wire
    if len(lines) > len(kept):
        meta["skillc/consoleDropped"] = len(lines) - len(kept)
    return result.model_copy(update={"meta": meta})


RENDER_IR_MIME = "application/vnd.skillc.render-ir+json"


def _surely_within(value: Any, limit: int) -> bool:
    """Whether ``value`` as :func:`json_bytes` writes it is surely within ``limit`` bytes, judged
    by pydantic's serialiser, 4-5x faster than the json module on a Render IR document. The two
    differ only in how they spell some numbers (``1e-7`` against ``1e-07``: a byte or so each),
    never by half, so a size within two thirds of the limit settles it; anything closer, or what
    pydantic cannot write (a lone surrogate), is measured as it will be written."""
    try:
        size = len(pydantic_core.to_json(value))
    except ValueError:  # PydanticSerializationError is one
        return False
    return 3 * size <= 2 * limit


def _stored(
    store: ArtefactStore, body: bytes, mime: str, name: str, session_id: str, tool_call_id: str | None
) -> FileRef | None:
    """``body`` as an artefact of the caller's session; None when the store cannot take it (the
    value then stays inline, as before: a state-store fault after the call ran must not lose it)."""
    try:
        return store.put(body, mime=mime, display_name=name, session_id=session_id, tool_call_id=tool_call_id)
    except (ArtefactTooLarge, StateError):
        return None


def document_by_reference(
    result: CallToolResult,
    store: ArtefactStore,
    limit: int,
    *,
    session_id: str,
    tool_call_id: str | None,
    document_bytes: int | None = None,
) -> CallToolResult:
    """A card whose Render IR is over ``limit`` bytes as JSON travels as an artefact: the card in
    ``_meta`` gets ``documentRef`` (a FileRef) instead of ``document``, and the view reads the bytes
    with ``resources/read``, so a huge card never sits in a host's context. ``document_bytes``: the
    document's size when the card already knows it (a view of a first render it shares)."""
    meta = result.meta or {}
    card = meta.get(CARD_META)
    if not isinstance(card, dict) or "document" not in card:
        return result
    if document_bytes is not None and document_bytes <= limit:
        return result
    if document_bytes is None and _surely_within(card["document"], limit):
        return result
    body = json_bytes(card["document"])
    if len(body) <= limit:
        return result
    name = f"{card.get('cardId', 'card')}.render-ir.json"
    ref = _stored(store, body, RENDER_IR_MIME, name, session_id, tool_call_id)
    if ref is None:
        return result
    slim = {k: v for k, v in card.items() if k != "document"}
    slim["documentRef"] = ref.wire()
    return result.model_copy(update={"meta": {**meta, CARD_META: slim}})


def fallback_data_by_reference(
    result: CallToolResult, store: ArtefactStore, *, session_id: str, tool_call_id: str | None
) -> CallToolResult:
    """A component card that fell back shows only what fits an Adaptive Card (long lists and texts
    are cut): the whole ``structuredContent`` it was built from is kept as an artefact, ``dataRef``
    in ``_meta["skillc/fallback"]``, so nothing of an oversized result is lost. (An API with no
    component, or a handoff, shows its data in the result itself: nothing to keep.)"""
    meta = result.meta or {}
    fallback = meta.get(FALLBACK_META)
    if not isinstance(fallback, dict) or not fallback.get("componentPath") or result.structured_content is None:
        return result
    body = json_bytes(result.structured_content)
    ref = _stored(store, body, "application/json", "structuredContent.json", session_id, tool_call_id)
    if ref is None:
        return result
    return result.model_copy(update={"meta": {**meta, FALLBACK_META: {**fallback, "dataRef": ref.wire()}}})
