"""The events a card delivers: the one table that lowering, the runtime and the server read.

WeChat's AI mode delivers few events to cards. Each is a :class:`CardEvent`: on which tags it
fires, whether it bubbles to the ancestors' handlers, and the ``detail`` a handler receives when
the host gives none. Adding an event here makes lowering accept ``bind<name>``/``catch<name>``
for it and the diagnostics' wording follow.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Annotated, Any

from pydantic import AfterValidator, Field


@dataclass(frozen=True, slots=True)
class CardEvent:
    """One event a card delivers (a row of CARD_EVENTS)."""

    name: str
    tags: frozenset[str] | None  # None: every tag
    bubbles: bool
    # Read-only: the table is shared, so a handler's detail is a copy (see default_detail()).
    default_detail: Mapping[str, Any] = field(hash=False)


def _event(name: str, tags: Iterable[str] | None, bubbles: bool, detail: Mapping[str, Any]) -> CardEvent:
    return CardEvent(name, frozenset(tags) if tags is not None else None, bubbles, MappingProxyType(dict(detail)))


# In the order tools and schemas list them.
CARD_EVENTS: dict[str, CardEvent] = {
    e.name: e
    for e in (
        _event("tap", None, True, {"x": 0, "y": 0}),
        _event("load", ["image"], False, {}),
        _event("error", ["image"], False, {}),
    )
}
EVENT_NAMES: tuple[str, ...] = tuple(CARD_EVENTS)


def event_allowed(name: str, tag: str) -> bool:
    """Whether a card delivers the event ``name`` to a ``<tag>``."""
    event = CARD_EVENTS.get(name)
    return event is not None and (event.tags is None or tag in event.tags)


def bubbles(name: str) -> bool:
    """Whether the event ``name`` goes on to the ancestors' handlers (an unknown event does not)."""
    event = CARD_EVENTS.get(name)
    return event is not None and event.bubbles


def default_detail(name: str) -> dict[str, Any]:
    """A fresh ``detail`` for an event the host sent without one (``{}`` for an unknown event)."""
    event = CARD_EVENTS.get(name)
    return dict(event.default_detail) if event is not None else {}


def tags_text(event: CardEvent) -> str:
    """Where ``event`` is delivered, for messages: ``"<image>"``, ``"every tag"``."""
    if event.tags is None:
        return "every tag"
    return _and([f"<{t}>" for t in sorted(event.tags)])


def events_hint() -> str:
    """What cards deliver, for diagnostics: golden snapshots hold this text, so the wording of
    today's table is fixed: "cards deliver tap (bindtap / catchtap) and, on <image>, load and error"."""
    # Every refused event's diagnostic carries it: built once per state of the table.
    global _HINT
    key = tuple(CARD_EVENTS.values())
    if _HINT is None or _HINT[0] != key:
        _HINT = (key, _events_hint())
    return _HINT[1]


_HINT: tuple[tuple[CardEvent, ...], str] | None = None


def _events_hint() -> str:
    everywhere = [f"{e.name} (bind{e.name} / catch{e.name})" for e in CARD_EVENTS.values() if e.tags is None]
    on_tags: dict[str, list[str]] = {}
    for e in CARD_EVENTS.values():
        if e.tags is not None:
            on_tags.setdefault(tags_text(e), []).append(e.name)
    parts = [_and(everywhere)] if everywhere else []
    parts += [f"on {where}, {_and(names)}" for where, names in on_tags.items()]
    return "cards deliver " + " and, ".join(parts)


def check_event(name: str) -> str:
    """``name`` if a card delivers it; else a ValueError (pydantic turns it into a field error)."""
    if name not in CARD_EVENTS:
        raise ValueError(f"a card delivers only {', '.join(CARD_EVENTS)}")
    return name


def _enum_schema(schema: dict[str, Any]) -> None:
    schema["enum"] = list(CARD_EVENTS)


# An event name field of a pydantic model (flow steps, the server's card-event tool): checked
# against the table, with the table's names as its JSON Schema enum.
EventName = Annotated[str, AfterValidator(check_event), Field(json_schema_extra=_enum_schema)]


def _and(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]
