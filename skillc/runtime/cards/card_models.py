"""The contracts of cards: component actions, card views, and what a call or an event produced.

These are what the MCP server, the debugger and ``skillc run`` consume (docs/components.md).
Field names are snake_case with camelCase aliases; ``wire()`` gives the JSON form, with the
Render IR and patches in their own JSON forms (docs/render-ir.md, docs/patches.md).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr
from pydantic.alias_generators import to_camel

from skillc.diagnostics import Diagnostic
from skillc.ir.diff import Patch, patches_to_plain
from skillc.ir.render import RenderDocument, to_plain
from skillc.runtime.contracts import ApiCallOutcome, ConsoleEntry
from skillc.runtime.host.card_media import MediaSource


class _Wire(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, arbitrary_types_allowed=True)

    def wire(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")


# -- follow-up message blocks -----------------------------------------------------------------


class TextBlock(_Wire):
    type: Literal["text"] = "text"
    text: str


class ApiCallData(_Wire):
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class ApiCallBlock(_Wire):
    type: Literal["api/call"] = "api/call"
    data: ApiCallData


FollowUpBlock = Annotated[TextBlock | ApiCallBlock, Field(discriminator="type")]


# -- component actions ------------------------------------------------------------------------


class SendFollowUpMessage(_Wire):
    """Acts as a user message; its api/call blocks are for the agent (or ``CardHost.follow``) to run."""

    type: Literal["sendFollowUpMessage"] = "sendFollowUpMessage"
    card_id: str
    content: list[FollowUpBlock]

    @property
    def text(self) -> str:
        return "\n".join(b.text for b in self.content if isinstance(b, TextBlock))

    def api_calls(self) -> list[ApiCallData]:
        return [b.data for b in self.content if isinstance(b, ApiCallBlock)]


class ApiCallAction(_Wire):
    """``reapplyApiCall``: run the card's API again with new arguments (through the whole call chain)."""

    type: Literal["api/call"] = "api/call"
    card_id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class UpdateModelContext(_Wire):
    """``updateModelContext``: text the model should know from now on; it starts no turn."""

    type: Literal["updateModelContext"] = "updateModelContext"
    card_id: str
    content: list[TextBlock]


class OpenDetailPage(_Wire):
    type: Literal["openDetailPage"] = "openDetailPage"
    card_id: str
    url: str


class ExpirePreviousCards(_Wire):
    """Already applied by the card host; ``expired`` lists the cards it expired."""

    type: Literal["expirePreviousCards"] = "expirePreviousCards"
    card_id: str
    component_paths: list[str] | None = None
    match: str | None = None
    expired: list[str] = Field(default_factory=list)


class ExpireAllCards(_Wire):
    """``wx.modelContext.expireAllCards`` (from a card or an API); includes the caller; already applied."""

    type: Literal["expireAllCards"] = "expireAllCards"
    card_id: str | None = None
    component_paths: list[str] | None = None
    match: str | None = None
    expired: list[str] = Field(default_factory=list)


class SetRelatedPage(_Wire):
    type: Literal["setRelatedPage"] = "setRelatedPage"
    card_id: str
    path: str | None = None
    query: str | None = None


class TriggerEvent(_Wire):
    """``this.triggerEvent``: recorded only, a card has no parent component to receive it."""

    type: Literal["triggerEvent"] = "triggerEvent"
    card_id: str
    name: str
    detail: Any = None


class PreviewMedia(_Wire):
    """``wx.previewMedia``: the host shows the media full screen, starting at ``current``."""

    type: Literal["previewMedia"] = "previewMedia"
    card_id: str
    sources: list[MediaSource]
    current: int = 0


class MakePhoneCall(_Wire):
    """``wx.makePhoneCall``: the host offers to call ``phone_number`` (WeChat asks the user first)."""

    type: Literal["makePhoneCall"] = "makePhoneCall"
    card_id: str
    phone_number: str


ComponentAction = Annotated[
    SendFollowUpMessage
    | ApiCallAction
    | UpdateModelContext
    | OpenDetailPage
    | ExpirePreviousCards
    | ExpireAllCards
    | SetRelatedPage
    | TriggerEvent
    | PreviewMedia
    | MakePhoneCall,
    Field(discriminator="type"),
]


# -- cards ------------------------------------------------------------------------------------


class Dimensions(_Wire):
    """What ``getViewContext(this).getDimensions()`` answers: the card's height range at this width."""

    min_height: int
    max_height: int
    width: int


class CardView(_Wire):
    """A card as its host shows it. Read it, never change it: a card that shows a kept first
    render shares its document (and the document's wire form) with other cards' views."""

    card_id: str
    component_path: str
    api_name: str
    session_id: str
    document: RenderDocument
    data: dict[str, Any]
    expired: bool = False
    expired_text: str | None = None
    dimensions: Dimensions
    content_height: float = Field(description="the layout estimate of the rendered height, px")
    pending_timers: int = Field(default=0, description="live timers (cards with scope.dynamic)")
    cursor: str | None = Field(default=None, description="the card's update stream position (scope.dynamic)")
    # The document's wire form and its size as compact JSON, when known without making them (a
    # kept first render's, first_renders.py).
    _document_plain: dict[str, Any] | None = PrivateAttr(default=None)
    _document_bytes: int | None = PrivateAttr(default=None)

    @property
    def document_bytes(self) -> int | None:
        return self._document_bytes

    def share_wire(self, plain: dict[str, Any], size: int) -> None:
        """Take the document's wire form and its size from where they were made once. Like the
        document they may be shared with other views: a view is read, never changed."""
        self._document_plain, self._document_bytes = plain, size

    def wire(self, *, with_data: bool = True) -> dict[str, Any]:
        """camelCase JSON; ``with_data=False`` leaves out the card's data (up to 200 KB), which a
        host rendering the document does not need."""
        exclude = {"document"} if with_data else {"document", "data"}
        out = self.model_dump(by_alias=True, exclude_none=True, mode="json", exclude=exclude)
        plain = self._document_plain
        out["document"] = plain if plain is not None else to_plain(self.document)
        return out


class FallbackRequest(_Wire):
    """The data for a generic card when the bound component could not render (or there is none)."""

    structured_content: dict[str, Any]
    title: str | None = None
    text: str | None = None
    reason: str
    component_path: str | None = None


class CallOutcome(_Wire):
    api: ApiCallOutcome
    card: CardView | None = None
    fallback: FallbackRequest | None = None
    actions: list[ComponentAction] = Field(default_factory=list)
    diagnostics: list[Diagnostic] = Field(default_factory=list)
    # What the gate finds in the drawn card's component (check's rules): reported beside the card,
    # never a failure of the call; a finding that left no tree to draw is in ``diagnostics``.
    findings: list[Diagnostic] = Field(default_factory=list)
    console: list[ConsoleEntry] = Field(default_factory=list)

    def wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {"api": self.api.wire()}
        if self.card is not None:
            out["card"] = self.card.wire()
        if self.fallback is not None:
            out["fallback"] = self.fallback.wire()
        out["actions"] = [a.wire() for a in self.actions]
        out["diagnostics"] = [d.model_dump(mode="json", exclude_none=True) for d in self.diagnostics]
        if self.findings:
            out["findings"] = [d.model_dump(mode="json", exclude_none=True) for d in self.findings]
        out["console"] = [c.wire() for c in self.console]
        return out


# The one card-event result shape: the server's card-event tool answers with it (its outputSchema
# is generated from this model) and EventOutcome.wire() starts with it.
class CardEventView(_Wire):
    """What a card view needs from one event: the handlers that ran, the Render IR patches to
    apply and the component actions to carry out."""

    card_id: str
    handled: list[str] = Field(description="the handlers that ran, innermost first")
    patches: list[dict[str, Any]] = Field(description="Render IR patches, docs/patches.md")
    actions: list[dict[str, Any]] = Field(description="component actions the view carries out")
    content_height: float = Field(description="the layout estimate of the rendered height, px")


class EventOutcome(_Wire):
    card_id: str
    handled: list[str] = Field(default_factory=list, description="the handlers that ran, innermost first")
    patches: list[Patch] = Field(default_factory=list)
    actions: list[ComponentAction] = Field(default_factory=list)
    document: RenderDocument | None = None
    content_height: float = 0.0
    diagnostics: list[Diagnostic] = Field(default_factory=list)
    console: list[ConsoleEntry] = Field(default_factory=list)
    # Cards with scope.dynamic only: the update-stream cursor these patches follow and the one
    # after them (card_updates.py), and how many timers the card has left.
    after: str | None = None
    cursor: str | None = None
    timers: int | None = None

    def view(self) -> CardEventView:
        return CardEventView(
            card_id=self.card_id,
            handled=self.handled,
            patches=patches_to_plain(self.patches),
            actions=[a.wire() for a in self.actions],
            content_height=self.content_height,
        )

    def wire(self) -> dict[str, Any]:
        out = self.view().wire()
        if self.document is not None:
            out["document"] = to_plain(self.document)
        out["diagnostics"] = [d.model_dump(mode="json", exclude_none=True) for d in self.diagnostics]
        out["console"] = [c.wire() for c in self.console]
        return out


class TimerFiring(_Wire):
    """One timer callback of a dynamic card: which timer, when (the host clock, ms: virtual time
    in ``skillc run``) and what it did, in the shape of an event."""

    card_id: str
    timer_id: int
    at_ms: float
    outcome: EventOutcome

    def wire(self) -> dict[str, Any]:
        out = {"cardId": self.card_id, "timerId": self.timer_id, "atMs": self.at_ms, **self.outcome.wire()}
        out["timers"] = self.outcome.timers  # live timers left on the card after this callback
        out["cursor"] = self.outcome.cursor
        return out


class CardUpdatesView(_Wire):
    """What the card view reads from a dynamic card's update stream (``skillc_card_updates``)."""

    card_id: str
    cursor: str = Field(description="pass it as since next time")
    updates: list[dict[str, Any]] = Field(
        description="{seq, kind: timer|event|expire|restyle|reset, patches, actions, timerId?}, oldest first"
    )
    expired: bool
    hidden: bool
    timers: int = Field(description="live timers: none left, nothing more comes on its own")
    poll_ms: int = Field(description="how often a view should ask while timers are live")
