"""The wx.* host boundary of one card: storage, device and app info, and the card's own calls.

It extends the API host (same storage scope: userDid, merchantDid, skillId) with the ``card``
entries of the host-call table (``getContext`` / ``getViewContext``), which are validated here
and recorded as :mod:`component actions <skillc.runtime.cards.card_models>`. The table's
``dynamic`` calls (``wx.request``, ``wx.login``, timers) answer only when the component declares
``permissions["scope.dynamic"]``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from skillc.diagnostics import Diagnostic, Span
from skillc.runtime.cards.card_models import (
    ApiCallAction,
    ComponentAction,
    Dimensions,
    ExpireAllCards,
    ExpirePreviousCards,
    FollowUpBlock,
    MakePhoneCall,
    OpenDetailPage,
    PreviewMedia,
    SendFollowUpMessage,
    SetRelatedPage,
    TextBlock,
    TriggerEvent,
    UpdateModelContext,
)
from skillc.runtime.cards.card_timers import CardTimers, RealClock
from skillc.runtime.config import RuntimeConfig
from skillc.runtime.contracts import ApiCallContext
from skillc.runtime.host.api_host import ApiHost
from skillc.runtime.host.calls import (
    ContentArgs,
    ExpireArgs,
    HostCall,
    PageArgs,
    ReapplyArgs,
    TimerClearArgs,
    TimerSetArgs,
    TriggerArgs,
    WarnArgs,
)
from skillc.runtime.host.card_media import (
    PhoneCallArgs,
    PreviewMediaArgs,
    Refused,
    check_phone_call,
    check_preview_media,
)
from skillc.runtime.host.storage import Storage
from skillc.runtime.sandbox.engine import HostReply

_BLOCKS: TypeAdapter[list[FollowUpBlock]] = TypeAdapter(list[FollowUpBlock])


@dataclass(frozen=True)
class CardBinding:
    """Who the card is: its id, component, the API that produced it, and what it may do."""

    card_id: str
    component_path: str
    api_name: str
    dynamic: bool
    dimensions: Dimensions
    declared_apis: frozenset[str]


def _query_text(query: str | dict[str, Any] | None) -> str | None:
    if query is None or isinstance(query, str):
        return query
    return "&".join(f"{k}={v}" for k, v in query.items())


class ComponentHost(ApiHost):
    """The host functions of one card instance; actions and diagnostics accumulate until taken."""

    def __init__(
        self,
        binding: CardBinding,
        context: ApiCallContext,
        config: RuntimeConfig,
        storage: Storage,
        timers: CardTimers | None = None,
        *,
        app_id: str | None = None,
    ) -> None:
        self.binding = binding
        self.actions: list[ComponentAction] = []
        self._max_actions = config.card_max_actions
        self._spent = 0  # actions (and follow-up api/calls) since the last take
        self._capped = False
        # The card's timer schedule (scope.dynamic); the card passes the one its host's clock drives.
        self.timers = timers or CardTimers(
            RealClock(), min_interval_ms=config.card_timer_min_interval_ms, max_timers=config.card_max_timers
        )
        self._timers_refused = False  # CMPVM040 once per slice
        self._clamps_reported: set[str] = set()  # CMPVM041 once per card for each of the two
        self.replayable_calls = 0  # the calls whose table entry says they may be made again (a kept mount)
        super().__init__(context, config, storage, app_id=app_id)

    def serves(self, call: HostCall) -> bool:
        # The stand-ins need an API call's consent: a card has none (its wx gets the stubs instead).
        return call.surface != "api"

    def call_sync(self, name: str, args: Any) -> HostReply:
        call = self._calls.get(name)
        if call is not None and call.replayable:
            self.replayable_calls += 1
        return super().call_sync(name, args)

    def refusal(self, call: HostCall) -> str | None:
        if call.dynamic and not self.binding.dynamic:
            return f"{call.name} needs permissions['scope.dynamic'] in mcp.json components[]"
        return None

    def take(self) -> tuple[list[ComponentAction], list[Any]]:
        actions, diags = self.actions, self.diagnostics
        self.actions, self.diagnostics = [], []
        self._spent, self._capped = 0, False
        self._timers_refused = False
        return actions, diags

    def _add(self, action: ComponentAction, what: str, cost: int = 1) -> HostReply:
        """Record an action unless this event has used up card_max_actions (a follow-up message
        costs one more per api/call block: the host runs each of them)."""
        if self._spent + cost > self._max_actions:
            message = (
                f"{what}: this event's actions would number {self._spent + cost}, more than the limit of "
                f"{self._max_actions} (card_max_actions); the action was dropped"
            )
            if not self._capped:  # once per event: a loop of 10 000 calls gives one diagnostic
                self._capped = True
                self.diagnostics.append(Diagnostic.make("CMPVM017", message, file=self.binding.component_path + ".js"))
            return HostReply.fail(message)
        self._spent += cost
        self.actions.append(action)
        return HostReply.done()

    # -- getContext(this) ----------------------------------------------------------------------

    def _refuse(self, code: str, message: str) -> HostReply:
        self.diagnostics.append(Diagnostic.make(code, message, file=self.binding.component_path + ".js"))
        return HostReply.fail(message)

    def _follow_up(self, a: ContentArgs) -> HostReply:
        content = a.content
        if not isinstance(content, list) or not content:
            return self._refuse("CMPVM006", "sendFollowUpMessage: content must be a non-empty array of blocks")
        try:
            blocks = _BLOCKS.validate_python(content)
        except ValidationError as err:
            first = err.errors()[0]
            where = "/".join(str(p) for p in first["loc"])
            return self._refuse("CMPVM006", f"sendFollowUpMessage: content/{where}: {first['msg']}")
        if not isinstance(blocks[0], TextBlock):
            return self._refuse("CMPVM006", "sendFollowUpMessage: the first block must be {type: 'text', text}")
        action = SendFollowUpMessage(card_id=self.binding.card_id, content=blocks)
        for call in action.api_calls():
            if call.name not in self.binding.declared_apis:
                return self._refuse(
                    "CMPVM006", f'sendFollowUpMessage: api/call names "{call.name}", which mcp.json does not declare'
                )
        return self._add(action, "sendFollowUpMessage", 1 + len(action.api_calls()))

    def _reapply(self, a: ReapplyArgs) -> HostReply:
        arguments = a.arguments
        if not isinstance(arguments, dict):
            return self._refuse("CMPVM013", "reapplyApiCall: arguments must be an object")
        return self._add(
            ApiCallAction(card_id=self.binding.card_id, name=self.binding.api_name, arguments=arguments),
            "reapplyApiCall",
        )

    def _update_model_context(self, a: ContentArgs) -> HostReply:
        if not isinstance(a.content, list):
            return self._refuse("CMPVM013", "updateModelContext: content must be an array of text blocks")
        texts = [
            b for b in a.content if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        ]
        if len(texts) != len(a.content):
            return self._refuse(
                "CMPVM013", "updateModelContext: content must be an array of {type: 'text', text} blocks"
            )
        blocks = [TextBlock(text=b["text"]) for b in texts]
        return self._add(UpdateModelContext(card_id=self.binding.card_id, content=blocks), "updateModelContext")

    # -- getViewContext(this) ------------------------------------------------------------------

    def _expire_previous(self, a: ExpireArgs) -> HostReply:
        return self._add(
            ExpirePreviousCards(card_id=self.binding.card_id, component_paths=a.componentPaths, match=a.match),
            "expirePreviousCards",
        )

    def _expire_all(self, a: ExpireArgs) -> HostReply:
        return self._add(
            ExpireAllCards(card_id=self.binding.card_id, component_paths=a.paths, match=a.match), "expireAllCards"
        )

    def _set_related_page(self, a: PageArgs) -> HostReply:
        if a.path is None and a.query is None:
            return self._refuse("CMPVM013", "setRelatedPage: give a path, a query or both")
        return self._add(
            SetRelatedPage(card_id=self.binding.card_id, path=a.path, query=_query_text(a.query)), "setRelatedPage"
        )

    def _open_detail_page(self, a: PageArgs) -> HostReply:
        url = a.url
        if url is None and a.path:
            query = _query_text(a.query)
            url = a.path + (f"?{query}" if query else "")
        if not url:
            return self._refuse("CMPVM013", "openDetailPage: url is required ({url: '/pages/detail/detail?id=1'})")
        return self._add(OpenDetailPage(card_id=self.binding.card_id, url=url), "openDetailPage")

    # -- card actions of wx (previewMedia, makePhoneCall): the host carries them out ----------

    def _wx_refuse(self, api: str, refused: Refused) -> HostReply:
        """WeChat's parameter error as the call's fail, and a CMPVM013 saying the action was refused."""
        message = f"wx.{api} was refused: {refused.message}"
        self.diagnostics.append(Diagnostic.make("CMPVM013", message, file=self.binding.component_path + ".js"))
        return HostReply.fail(refused.message)

    def _preview_media(self, a: PreviewMediaArgs) -> HostReply:
        checked = check_preview_media(a)
        if isinstance(checked, Refused):
            return self._wx_refuse("previewMedia", checked)
        sources, current = checked
        action = PreviewMedia(card_id=self.binding.card_id, sources=sources, current=current)
        return self._add(action, "previewMedia")

    def _make_phone_call(self, a: PhoneCallArgs) -> HostReply:
        checked = check_phone_call(a)
        if isinstance(checked, Refused):
            return self._wx_refuse("makePhoneCall", checked)
        return self._add(MakePhoneCall(card_id=self.binding.card_id, phone_number=checked), "makePhoneCall")

    def _trigger(self, a: TriggerArgs) -> HostReply:
        return self._add(TriggerEvent(card_id=self.binding.card_id, name=a.name, detail=a.detail), "triggerEvent")

    def _warn(self, a: WarnArgs) -> HostReply:
        self.diagnostics.append(Diagnostic.make(a.code, a.message, file=self.binding.component_path + ".js"))
        return HostReply.done()

    def _dimensions(self, _a: BaseModel) -> HostReply:
        return HostReply(ok=True, value=self.binding.dimensions.wire())

    def _noop(self, _a: BaseModel) -> HostReply:
        return HostReply.done()

    # -- timers (scope.dynamic): the schedule is the card host's ------------------------------------

    def _timer_set(self, a: TimerSetArgs) -> HostReply:
        api = "setInterval" if a.repeat else "setTimeout"
        placed = self.timers.set(a.id, a.ms, a.repeat)
        file, span = self._where(a.at)
        if not placed.accepted:
            message = (
                f"{api}: {self.binding.component_path} already has {self.timers.max_timers} live timers, the most "
                "a card may have (card_max_timers); this timer was not started"
            )
            if not self._timers_refused:
                self._timers_refused = True
                self.diagnostics.append(Diagnostic.make("CMPVM040", message, file=file, span=span))
            return HostReply.fail(message)
        if placed.clamped:
            kind = api if a.repeat else "nested setTimeout"
            if kind not in self._clamps_reported:
                self._clamps_reported.add(kind)
                asked = f"{a.ms:g} ms" if a.ms > 0 else "0 ms"
                runs = "it runs every" if a.repeat else "inside a timer callback it waits"
                message = (
                    f"{api}: {asked} is shorter than the minimum interval of a card's timers; {runs} "
                    f"{placed.delay_ms:g} ms (card_timer_min_interval_ms)"
                )
                self.diagnostics.append(Diagnostic.make("CMPVM041", message, file=file, span=span))
        return HostReply.done()

    def _timer_clear(self, a: TimerClearArgs) -> HostReply:
        self.timers.clear(a.id)
        return HostReply.done()

    def _where(self, at: dict[str, Any] | None) -> tuple[str, Span | None]:
        """The skill's file and position a JS call came from (``I.where`` of its stack), if known."""
        fallback = self.binding.component_path + ".js"
        if not at or not isinstance(at.get("file"), str):
            return fallback, None
        line, column = at.get("line"), at.get("column")
        if isinstance(line, int) and line >= 1:
            return at["file"], Span.point(line, column if isinstance(column, int) and column >= 1 else 1)
        return at["file"], None
