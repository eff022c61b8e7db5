"""The wx.* host boundary of one card: storage, device and app info, and the card's own calls.

It extends the API host (same storage scope: userDid, merchantDid, skillId) with the
``getContext`` / ``getViewContext`` calls, which are validated here and recorded as
:mod:`component actions <skillc.runtime.card_models>`. ``wx.request``, ``wx.login`` and timers
exist only when the component declares ``permissions["scope.dynamic"]``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from skillc.runtime.card_models import (
    ApiCallAction,
    ComponentAction,
    Dimensions,
    ExpireAllCards,
    ExpirePreviousCards,
    FollowUpBlock,
    OpenDetailPage,
    SendFollowUpMessage,
    SetRelatedPage,
    TextBlock,
    TriggerEvent,
)
from skillc.runtime.config import RuntimeConfig
from skillc.runtime.contracts import ApiCallContext
from skillc.runtime.engine import HostReply
from skillc.runtime.host import ApiHost, ExpireArgs, runtime_diagnostic
from skillc.runtime.storage import Storage

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


class _PageArgs(BaseModel):
    url: str | None = None
    path: str | None = None
    query: str | dict[str, Any] | None = None


class _WarnArgs(BaseModel):
    code: str
    message: str


class _TriggerArgs(BaseModel):
    name: str
    detail: Any = None


def _query_text(query: str | dict[str, Any] | None) -> str | None:
    if query is None or isinstance(query, str):
        return query
    return "&".join(f"{k}={v}" for k, v in query.items())


class ComponentHost(ApiHost):
    """The host functions of one card instance; actions and diagnostics accumulate until taken."""

    def __init__(self, binding: CardBinding, context: ApiCallContext, config: RuntimeConfig, storage: Storage) -> None:
        super().__init__(context, config, storage)
        self.binding = binding
        self.actions: list[ComponentAction] = []
        if not binding.dynamic:
            del self._sync["login"], self._sync["checkSession"]
        card: dict[str, Callable[[Any], HostReply]] = {
            "card.followUp": self._follow_up,
            "card.reapply": self._reapply,
            "card.updateModelContext": self._update_model_context,
            "card.dimensions": lambda _a: HostReply(ok=True, value=binding.dimensions.wire()),
            "card.expirePrevious": self._expire_previous,
            "card.setRelatedPage": self._set_related_page,
            "card.openDetailPage": self._open_detail_page,
            "card.trigger": self._trigger,
            "card.warn": self._warn,
            "card.noop": lambda _a: HostReply(ok=True, value={}),
        }
        self._sync.update(card)

    def take(self) -> tuple[list[ComponentAction], list[Any]]:
        actions, diags = self.actions, self.diagnostics
        self.actions, self.diagnostics = [], []
        return actions, diags

    async def call_async(self, name: str, args: Any) -> HostReply:
        if name in ("request", "timer.sleep") and not self.binding.dynamic:
            return HostReply.fail(f"{name} needs permissions['scope.dynamic'] in mcp.json components[]")
        return await super().call_async(name, args)

    # -- getContext(this) ----------------------------------------------------------------------

    def _refuse(self, code: str, message: str) -> HostReply:
        self.diagnostics.append(runtime_diagnostic(code, message, file=self.binding.component_path + ".js"))
        return HostReply.fail(message)

    def _follow_up(self, args: Any) -> HostReply:
        content = args.get("content") if isinstance(args, dict) else None
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
        self.actions.append(action)
        return HostReply(ok=True, value={})

    def _reapply(self, args: Any) -> HostReply:
        arguments = args.get("arguments") if isinstance(args, dict) else None
        if not isinstance(arguments, dict):
            return self._refuse("CMPVM013", "reapplyApiCall: arguments must be an object")
        self.actions.append(
            ApiCallAction(card_id=self.binding.card_id, name=self.binding.api_name, arguments=arguments)
        )
        return HostReply(ok=True, value={})

    def _update_model_context(self, args: Any) -> HostReply:
        content = args.get("content") if isinstance(args, dict) else None
        if not isinstance(content, list):
            return self._refuse("CMPVM013", "updateModelContext: content must be an array of text blocks")
        return HostReply(ok=True, value={})

    # -- getViewContext(this) ------------------------------------------------------------------

    def _expire_previous(self, args: Any) -> HostReply:
        a = ExpireArgs.model_validate(args or {})
        self.actions.append(
            ExpirePreviousCards(card_id=self.binding.card_id, component_paths=a.componentPaths, match=a.match)
        )
        return HostReply(ok=True, value={})

    def _expire_all(self, args: Any) -> HostReply:
        a = ExpireArgs.model_validate(args or {})
        self.actions.append(ExpireAllCards(card_id=self.binding.card_id, component_paths=a.paths, match=a.match))
        return HostReply(ok=True, value={})

    def _set_related_page(self, args: Any) -> HostReply:
        a = _PageArgs.model_validate(args or {})
        if a.path is None and a.query is None:
            return self._refuse("CMPVM013", "setRelatedPage: give a path, a query or both")
        self.actions.append(SetRelatedPage(card_id=self.binding.card_id, path=a.path, query=_query_text(a.query)))
        return HostReply(ok=True, value={})

    def _open_detail_page(self, args: Any) -> HostReply:
        a = _PageArgs.model_validate(args or {})
        url = a.url
        if url is None and a.path:
            query = _query_text(a.query)
            url = a.path + (f"?{query}" if query else "")
        if not url:
            return self._refuse("CMPVM013", "openDetailPage: url is required ({url: '/pages/detail/detail?id=1'})")
        self.actions.append(OpenDetailPage(card_id=self.binding.card_id, url=url))
        return HostReply(ok=True, value={})

    def _trigger(self, args: Any) -> HostReply:
        a = _TriggerArgs.model_validate(args or {})
        self.actions.append(TriggerEvent(card_id=self.binding.card_id, name=a.name, detail=a.detail))
        return HostReply(ok=True, value={})

    def _warn(self, args: Any) -> HostReply:
        a = _WarnArgs.model_validate(args or {})
        self.diagnostics.append(runtime_diagnostic(a.code, a.message, file=self.binding.component_path + ".js"))
        return HostReply(ok=True, value={})
