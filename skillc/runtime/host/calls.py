"""The host-call table: every function a skill's JS can reach in Python, in one place.

JS reaches Python only through ``I.callSync(name, args)`` and ``I.callAsync(name, args)`` (wx.js,
the VM scripts, the prelude's timers). Each name has one :class:`HostCall` entry here: the
argument model its JSON is validated against before the handler runs, how JS may call it, whether
a card's event waits for it, and whether a card needs ``permissions["scope.dynamic"]`` for it.
The API host and the card host build their dispatch from this table; adding a host call is one
entry here plus its handler method (``_<handler>`` on :class:`~skillc.runtime.host.api_host.ApiHost`
for a ``wx`` call, on the card host for a ``card`` call). docs/architecture.md shows an example.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

from skillc.runtime.host.card_media import PhoneCallArgs, PreviewMediaArgs
from skillc.runtime.host.payment import PaymentArgs
from skillc.runtime.host.standins import FuzzyLocationArgs, LocationArgs
from skillc.runtime.host.wxrequest import RequestArgs
from skillc.runtime.sandbox.engine import JsFile

# The wx.* surface both VMs install (its calls are the ``wx`` entries below).
WX_JS = JsFile("skillc.runtime.host", "wx.js")

MAX_TIMER_MS = 24 * 3600 * 1000

Mode = Literal["sync", "async"]
SYNC: frozenset[Mode] = frozenset({"sync"})
ASYNC: frozenset[Mode] = frozenset({"async"})
BOTH: frozenset[Mode] = frozenset({"sync", "async"})


# -- argument models ------------------------------------------------------------------------


class NoArgs(BaseModel):
    pass


class KeyArgs(BaseModel):
    key: str


class SetArgs(BaseModel):
    key: str
    data: Any = None


class ExpireArgs(BaseModel):
    """The options of expireAllCards / expirePreviousCards."""

    componentPaths: list[str] | None = None
    componentPath: str | None = None
    match: str | None = None

    @property
    def paths(self) -> list[str] | None:
        """``componentPaths``, else the one ``componentPath``; None means every card."""
        if self.componentPaths is not None:
            return self.componentPaths
        return [self.componentPath] if self.componentPath else None


class SleepArgs(BaseModel):
    ms: float = 0

    @property
    def seconds(self) -> float:
        return min(max(self.ms, 0), MAX_TIMER_MS) / 1000


class TimerSetArgs(BaseModel):
    """A dynamic card's setTimeout / setInterval: the card host keeps the schedule
    (runtime/cards/card_timers.py); ``at`` is where the skill called it, for a diagnostic."""

    id: int
    ms: float = 0
    repeat: bool = False
    at: dict[str, Any] | None = None


class TimerClearArgs(BaseModel):
    id: int


class ContentArgs(BaseModel):
    """sendFollowUpMessage / updateModelContext: ``content`` is checked by the handler, whose
    messages name the block that is wrong."""

    content: Any = None


class ReapplyArgs(BaseModel):
    arguments: Any = None


class PageArgs(BaseModel):
    url: str | None = None
    path: str | None = None
    query: str | dict[str, Any] | None = None


class WarnArgs(BaseModel):
    code: str
    message: str


class TriggerArgs(BaseModel):
    name: str
    detail: Any = None


# -- the table --------------------------------------------------------------------------------


@dataclass(frozen=True)
class HostCall:
    """One host call. ``surface``: ``wx`` calls exist in every VM, ``card`` calls only in a card's,
    ``api`` calls only in the API VM (the stand-ins of host/standins.py, which need the call's consent).
    ``blocking``: a card's event waits for it before it returns (a sleeping timer does not).
    ``dynamic``: a card may use it only with ``permissions["scope.dynamic"]``. ``offload``: the
    async form runs on a worker thread (SQLite may wait on a lock held by another process).
    ``replayable``: its answer follows from the card's viewport alone and it changes nothing, so a
    mount that made no other call may be kept and run again later (cards/kept_mounts.py)."""

    name: str
    args: type[BaseModel]
    handler: str
    modes: frozenset[Mode] = SYNC
    surface: Literal["wx", "card", "api"] = "wx"
    blocking: bool = True
    dynamic: bool = False
    offload: bool = False
    replayable: bool = False


_CALLS = (
    HostCall("storage.set", SetArgs, "storage_set", BOTH, offload=True),
    HostCall("storage.get", KeyArgs, "storage_get", BOTH, offload=True),
    HostCall("storage.remove", KeyArgs, "storage_remove", BOTH, offload=True),
    HostCall("storage.clear", NoArgs, "storage_clear", BOTH, offload=True),
    HostCall("storage.info", NoArgs, "storage_info", BOTH, offload=True),
    HostCall("session.id", NoArgs, "session_id"),
    HostCall("cards.expireAll", ExpireArgs, "expire_all"),
    HostCall("device.info", NoArgs, "device_info"),
    HostCall("app.info", NoArgs, "app_info"),
    HostCall("account.info", NoArgs, "account_info"),
    HostCall("login", NoArgs, "login", ASYNC, dynamic=True, offload=True),
    HostCall("checkSession", NoArgs, "check_session", ASYNC, dynamic=True, offload=True),
    HostCall("request", RequestArgs, "request", ASYNC, dynamic=True),
    HostCall("timer.sleep", SleepArgs, "sleep", ASYNC, blocking=False, dynamic=True),
    HostCall("payment.request", PaymentArgs, "request_payment", ASYNC, surface="api"),
    HostCall("profile.phoneNumber", NoArgs, "phone_number", ASYNC, surface="api"),
    HostCall("profile.address", NoArgs, "choose_address", ASYNC, surface="api"),
    HostCall("profile.location", LocationArgs, "location", ASYNC, surface="api"),
    HostCall("profile.fuzzyLocation", FuzzyLocationArgs, "fuzzy_location", ASYNC, surface="api"),
    HostCall("card.followUp", ContentArgs, "follow_up", surface="card"),
    HostCall("card.reapply", ReapplyArgs, "reapply", surface="card"),
    HostCall("card.updateModelContext", ContentArgs, "update_model_context", surface="card"),
    HostCall("card.dimensions", NoArgs, "dimensions", surface="card", replayable=True),
    HostCall("card.expirePrevious", ExpireArgs, "expire_previous", surface="card"),
    HostCall("card.setRelatedPage", PageArgs, "set_related_page", surface="card"),
    HostCall("card.openDetailPage", PageArgs, "open_detail_page", surface="card"),
    HostCall("card.previewMedia", PreviewMediaArgs, "preview_media", surface="card"),
    HostCall("card.makePhoneCall", PhoneCallArgs, "make_phone_call", surface="card"),
    HostCall("card.trigger", TriggerArgs, "trigger", surface="card"),
    HostCall("card.warn", WarnArgs, "warn", surface="card"),
    HostCall("timer.set", TimerSetArgs, "timer_set", surface="card", dynamic=True),
    HostCall("timer.clear", TimerClearArgs, "timer_clear", surface="card", dynamic=True),
    HostCall("card.noop", NoArgs, "noop", surface="card"),
)
HOST_CALLS: dict[str, HostCall] = {c.name: c for c in _CALLS}


def blocking(name: str) -> bool:
    """Whether a card's event waits for an in-flight call of ``name``."""
    call = HOST_CALLS.get(name)
    return call is None or call.blocking
