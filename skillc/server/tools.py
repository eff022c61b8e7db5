"""mcp.json APIs as MCP tool definitions: names, schemas, annotations from the risk level, ui links.

The risk level decides the annotations a client shows its user: only L0 is read-only (a level is
L0 only when pinned so, or when the API was shown to be a read: frontend/risk.py infers L1 for an
API nothing shows to be one), L3/L4 are destructive (money, commitments, identity; they also ask
for consent), and an API of a skill whose code can reach the network (``wx.request`` and the other
network members of ``wx``, frontend/open_world.py) reaches the open world. That is read from the
tokens of its API code (index.js and every .js outside components/; comments and strings never
count), not from each handler alone, because handlers share modules freely.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from mcp.server.apps import APP_MIME_TYPE
from mcp_types import Icon, Tool, ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from skillc.frontend.manifest import ApiSpec
from skillc.frontend.open_world import reaches_network
from skillc.frontend.package import SkillPackage
from skillc.ir.events import EVENT_NAMES, EventName
from skillc.runtime.cards.card_models import CardEventView, CardUpdatesView
from skillc.runtime.contracts import RiskLevel
from skillc.server.host_meta import with_host_keys
from skillc.server.registry import output_schema

__all__ = [
    "APP_MIME_TYPE",
    "CARD_EVENT_TOOL",
    "CARD_UPDATES_TOOL",
    "CARD_VIEW_TOOL",
    "CARD_VISIBILITY_TOOL",
    "CONSENT_TOOL",
    "HANDOFF_VIEW",
    "CardEventArgs",
    "CardUpdatesArgs",
    "CardViewArgs",
    "CardVisibilityArgs",
    "ConsentArgs",
    "ServedApi",
    "card_event_tool",
    "card_updates_tool",
    "card_view_tool",
    "card_visibility_tool",
    "consent_tool",
    "handoff_uri",
    "tool_for",
    "ui_uri",
]

CARD_EVENT_TOOL = "skillc_card_event"
CARD_VIEW_TOOL = "skillc_card_view"
CARD_UPDATES_TOOL = "skillc_card_updates"
CARD_VISIBILITY_TOOL = "skillc_card_visibility"
CONSENT_TOOL = "skillc_consent"
_TOOL_NAME_BAD = re.compile(r"[^A-Za-z0-9_.-]+")
# A description that already names its risk level or consent needs no second sentence about it.
_SAYS_CONSENT = re.compile(r"\b(?:risk\s*L[34]|L[34]\b|consent)", re.I)


def uses_wx_request(package: SkillPackage) -> bool:
    """Whether the skill's API code can reach the network (the name is older than the check)."""
    return any(
        path.endswith(".js") and not path.startswith("components/") and reaches_network(text)
        for path, text in package.sources.items()
    )


# The card view's "component" for handoff APIs: it renders the CardSpec handoff card of a result.
HANDOFF_VIEW = "handoff/page"


def handoff_uri(skill: str) -> str:
    """``ui://<skill>/handoff-page``: the MCP Apps view of a skill's handoff results."""
    return ui_uri(skill, HANDOFF_VIEW)


def ui_uri(skill: str, component_path: str) -> str:
    """``ui://<skill>/<component>`` for ``components/<component>/index``."""
    parts = component_path.split("/")
    name = parts[1] if len(parts) == 3 else component_path.replace("/", "-")
    return f"ui://{_TOOL_NAME_BAD.sub('-', skill)}/{name}"


@dataclass(frozen=True)
class ServedApi:
    """One API of one skill as the server exposes it."""

    tool_name: str
    skill: str
    spec: ApiSpec
    risk: RiskLevel
    open_world: bool
    resource_uri: str | None  # set when the API is bound to a component that can be served
    icons: list[Icon] = field(default_factory=list)  # the skill's (skill_icon.py)


def tool_for(api: ServedApi, *, strict_output: bool = False) -> Tool:
    """``strict_output``: advertise the outputSchema (the server then enforces it). Advertised
    without enforcement, a client that checks it (the official SDKs do) rejects a mismatching
    result outright, while WeChat only warns; so by default it is not advertised."""
    spec = api.spec
    annotations = ToolAnnotations(
        read_only_hint=api.risk is RiskLevel.L0,
        destructive_hint=api.risk.needs_approval,
        open_world_hint=api.open_world,
    )
    meta: dict[str, Any] = {"skillc/risk": api.risk.value, "skillc/skill": api.skill, "skillc/api": spec.name}
    if api.resource_uri is not None:
        meta["ui"] = {"resourceUri": api.resource_uri, "visibility": ["model", "app"]}
    description = spec.description
    if api.risk.needs_approval and not _SAYS_CONSENT.search(description):
        description += f" (Risk {api.risk.value}: runs only with the user's consent.)"
    return Tool(
        name=api.tool_name,
        title=tool_title(api),
        description=description,
        input_schema=spec.input_schema,
        output_schema=spec.output_schema if strict_output else None,
        annotations=annotations,
        icons=api.icons or None,
        _meta=with_host_keys(meta),
    )


_SENTENCE_END = re.compile(r"[。！？；.!?;](?:\s|$)|[。！？；]")
TITLE_LIMIT = 64


def tool_title(api: ServedApi) -> str:
    """A display name: mcp.json's ``title`` when the API has one, else the description's first
    sentence (cut at a word to fit ``TITLE_LIMIT``); the API name beside it when the tool is
    served under another name, so a person sees what the skill calls it."""
    spec = api.spec
    given = (spec.model_extra or {}).get("title")
    title = given.strip() if isinstance(given, str) and given.strip() else ""
    if not title:
        first = _SENTENCE_END.split(spec.description.strip(), maxsplit=1)[0].strip()
        title = first or spec.name
    if len(title) > TITLE_LIMIT:
        cut = title[: TITLE_LIMIT - 1]
        title = (cut.rsplit(" ", 1)[0] if " " in cut else cut) + "…"
    if api.tool_name != spec.name and spec.name not in title:
        title = f"{title} ({spec.name})"
    return title


# A host whose bridge cannot put _meta on a view's tools/call (OpenAI's window.openai.callTool
# takes a name and arguments only) gets the card's session capability here instead.
_SESSION_ARG = "the card's session (_meta['skillc/session']), for hosts whose view calls carry no _meta"


# The card-event tool's inputSchema is generated from this model, its event enum from the ir table.
class CardEventArgs(BaseModel):
    """A user event on one node of a card."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    card_id: str = Field(description="the card the event happened on")
    session: str | None = Field(None, description=_SESSION_ARG)
    node_id: str = Field(description="the Render IR id of the innermost node that was tapped")
    event: EventName = "tap"
    detail: dict[str, Any] | None = Field(None, description="event.detail (image size for load, errMsg for error)")

    @classmethod
    def parse(cls, arguments: dict[str, Any] | None) -> CardEventArgs | str:
        """The arguments, or the error text the tool answers with."""
        try:
            return cls.model_validate(arguments or {})
        except ValidationError:
            return (
                f"invalid arguments for {CARD_EVENT_TOOL}: cardId and nodeId must be strings, "
                f"event one of {', '.join(EVENT_NAMES)}"
            )


def _app_only_tool(
    name: str,
    title: str,
    description: str,
    args: type[BaseModel],
    *,
    read_only: bool,
    output: type[BaseModel] | None = CardEventView,
) -> Tool:
    """A tool only card views call (``visibility: ["app"]``): hosts hide it from the model."""
    return Tool(
        name=name,
        title=title,
        description=description + " Called by the card view, never by the model.",
        input_schema=args.model_json_schema(by_alias=True),
        output_schema=output_schema(output) if output is not None else None,
        annotations=ToolAnnotations(read_only_hint=read_only, destructive_hint=False, open_world_hint=False),
        _meta=with_host_keys({"ui": {"visibility": ["app"]}}),
    )


def card_event_tool() -> Tool:
    """The app-only tool a card view calls when the user taps: runs the event in the Component VM."""
    return _app_only_tool(
        CARD_EVENT_TOOL,
        "Card event",
        "Deliver a user event (tap) on a skill card to its component; returns Render IR patches.",
        CardEventArgs,
        read_only=False,
    )


class CardViewArgs(BaseModel):
    """How the host shows a card: its colour scheme and the width of its container."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    card_id: str = Field(description="the card to show")
    session: str | None = Field(None, description=_SESSION_ARG)
    color_scheme: Literal["light", "dark"] | None = Field(None, description="the host theme (hostContext.theme)")
    width: int | None = Field(None, ge=120, le=4096, description="the container width in px")

    @classmethod
    def parse(cls, arguments: dict[str, Any] | None) -> CardViewArgs | str:
        try:
            return cls.model_validate(arguments or {})
        except ValidationError:
            return (
                f"invalid arguments for {CARD_VIEW_TOOL}: cardId must be a string, colorScheme light or dark, "
                "width an integer from 120 to 4096"
            )


def card_view_tool() -> Tool:
    """The app-only tool a card view calls when the host's theme or container width differs from
    the card's: the card is rendered again (no component code runs) and comes back whole."""
    return _app_only_tool(
        CARD_VIEW_TOOL,
        "Card view",
        "Render a skill card again for the host's colour scheme or container width; returns a replaceRoot patch.",
        CardViewArgs,
        read_only=True,
    )


# Dynamic cards (scope.dynamic): their timers change them with no request to answer, so the view
# reads what changed through these two (registered only when a served component is dynamic).
class CardUpdatesArgs(BaseModel):
    """Where the view's copy of a dynamic card stands in the card's update stream."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    card_id: str = Field(description="the dynamic card to read")
    session: str | None = Field(None, description=_SESSION_ARG)
    since: str | None = Field(
        None, max_length=100, description="the cursor the view's copy is at (none: the whole card again)"
    )

    @classmethod
    def parse(cls, arguments: dict[str, Any] | None) -> CardUpdatesArgs | str:
        try:
            return cls.model_validate(arguments or {})
        except ValidationError:
            return f"invalid arguments for {CARD_UPDATES_TOOL}: cardId must be a string, since a cursor string"


def card_updates_tool() -> Tool:
    """The app-only tool a card view polls while a dynamic card has live timers."""
    return _app_only_tool(
        CARD_UPDATES_TOOL,
        "Card updates",
        "Read the Render IR patches a dynamic skill card made since a cursor (its timers run on their own).",
        CardUpdatesArgs,
        read_only=True,
        output=CardUpdatesView,
    )


class CardVisibilityArgs(BaseModel):
    """The host shows or hides a card (the view's document visibility, or its teardown)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    card_id: str = Field(description="the dynamic card shown or hidden")
    session: str | None = Field(None, description=_SESSION_ARG)
    visible: bool = Field(description="false: its timers pause; true: they resume with the time they had left")
    since: str | None = Field(None, max_length=100, description="as for skillc_card_updates: what changed after it")

    @classmethod
    def parse(cls, arguments: dict[str, Any] | None) -> CardVisibilityArgs | str:
        try:
            return cls.model_validate(arguments or {})
        except ValidationError:
            return (
                f"invalid arguments for {CARD_VISIBILITY_TOOL}: cardId must be a string, visible a boolean, "
                "since a cursor string"
            )


def card_visibility_tool() -> Tool:
    """The app-only tool a card view calls when the host hides or shows it."""
    return _app_only_tool(
        CARD_VISIBILITY_TOOL,
        "Card visibility",
        "Tell a dynamic skill card that the host hid or showed it: its timers pause while hidden; "
        "returns the patches since a cursor.",
        CardVisibilityArgs,
        read_only=False,
        output=CardUpdatesView,
    )


class ConsentArgs(BaseModel):
    """The user's answer in the card to an L3/L4 call's consent control."""

    model_config = ConfigDict(extra="forbid")

    token: str = Field(description="the consent token of the control (the asking result's _meta)")
    approve: bool = Field(description="true: the user approved the call; false: the user declined it")

    @classmethod
    def parse(cls, arguments: dict[str, Any] | None) -> ConsentArgs | str:
        try:
            return cls.model_validate(arguments or {}, strict=True)
        except ValidationError:
            return f"invalid arguments for {CONSENT_TOOL}: token must be a string, approve a boolean"


def consent_tool() -> Tool:
    """The app-only tool a card view calls when the user approves or declines an L3/L4 call in the
    card: approved, the call runs and its result comes back; declined, nothing runs."""
    return _app_only_tool(
        CONSENT_TOOL,
        "Consent",
        "Approve or decline, as the user chose in the card, the L3/L4 call a consent token names; "
        "approved, returns that call's result.",
        ConsentArgs,
        read_only=False,
        output=None,  # the approved call's own result
    )
