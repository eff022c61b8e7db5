"""The wx APIs a skill may name that skillc does not provide: one table, read by the runtime
(wx.js installs a stub for each, which fails with a message that names the API) and by
``skillc check`` (JS008 where skill code uses one).

An entry says where WeChat offers the API in AI mode (the API context, cards, neither; see the
AI-mode notes, section 4). Called where WeChat offers it, the API is missing from skillc only:
"not available outside WeChat". Called elsewhere, WeChat would refuse it too, and the message
says where it does belong. Five have stand-ins in API code (host/standins.py: requestPayment,
getPhoneNumber, chooseAddress, getLocation, getFuzzyLocation): their entries say so, and only a
card still gets a stub for them. ``wx.cloud.init`` is the one no-op: skills call it first thing in
index.js, and failing it would stop every API of a skill over a call that does nothing but
configure the calls that fail anyway (docs/runtime.md).

A name in neither this table nor the wx a context builds (:data:`PROVIDED`) still names itself:
wx.js answers any other ``wx.<name>`` with a stub saying skillc does not provide it, and ``check``
warns where code uses one (JS010).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from typing import Literal

from pydantic import BaseModel, ConfigDict

from skillc.diagnostics import Diagnostic, Span

Where = Literal["api", "card"]
_API: frozenset[Where] = frozenset({"api"})
_CARD: frozenset[Where] = frozenset({"card"})
_BOTH: frozenset[Where] = frozenset({"api", "card"})
_NOWHERE: frozenset[Where] = frozenset()

_CLOUD = "skillc runs no cloud functions or cloud database"
_DEVICE = "skillc has no device hardware"
_UI = "skillc shows no mini-program UI"
_USER = "skillc has no WeChat account data"
_FILES = "skillc has no file system"
_SOCKETS = "skillc opens no sockets"
_CLOUD_AI = "skillc runs no cloud AI models or agents"


@dataclass(frozen=True)
class Unavailable:
    """One wx API skillc lacks. ``name`` is the path under ``wx`` (``cloud.callFunction``);
    ``sync``: it throws (Sync forms, factories) instead of failing through the fail callback or a
    rejected promise; ``wechat``: the contexts WeChat offers it in; ``why``: what skillc lacks;
    ``noop``: where WeChat offers it, skillc answers with nothing instead of failing;
    ``stand_in``: the contexts where skillc answers it with a stand-in (no stub there);
    ``needs``: for an API WeChat offers in neither context, what it needs that a skill lacks."""

    name: str
    sync: bool
    wechat: frozenset[Where]
    why: str
    noop: bool = False
    stand_in: frozenset[Where] = frozenset()
    needs: str = ""

    def message(self, where: Where) -> str | None:
        """Why a call from ``where`` fails, or None when it does not (a no-op or a stand-in)."""
        api = f"wx.{self.name}"
        if where in self.stand_in:
            return None
        if where in self.wechat:
            return None if self.noop else f"{api} is not available outside WeChat ({self.why})"
        if not self.wechat and self.stand_in:
            offered = f"skillc offers it to {_PLURAL[other(where)]} only, behind the user's consent"
            return f"{api} is not available in {_PLURAL[where]} ({offered})"
        if not self.wechat:
            needs = f"; {self.needs}" if self.needs else ""
            return f"{api} is not available in AI-mode skills (WeChat offers it neither to APIs nor to cards{needs})"
        return f"{api} is not available in {_PLURAL[where]} (WeChat offers it to {_PLURAL[other(where)]} only)"


_PLURAL: dict[Where, str] = {"api": "APIs", "card": "cards"}


def other(where: Where) -> Where:
    return "card" if where == "api" else "api"


def _u(
    name: str,
    wechat: frozenset[Where],
    why: str,
    *,
    sync: bool = False,
    noop: bool = False,
    stand_in: frozenset[Where] = _NOWHERE,
    needs: str = "",
) -> Unavailable:
    return Unavailable(name, sync or name.endswith("Sync"), wechat, why, noop, stand_in, needs)


def _page(name: str, needs: str, *, sync: bool = False) -> Unavailable:
    """An API of mini-program pages, which AI mode offers neither to APIs nor to cards: the
    message says what the API needs, so the skill's author knows no context will have it."""
    return _u(name, _NOWHERE, _UI, sync=sync, needs=needs)


_FROM_PAGE = "from a mini-program page"
# What check suggests for them: a page can, and an API reaches one through a handoff.
PAGE_HINT = "call it from a page of the mini program and hand off to that page (_meta.ui.pagePath and a handoff result)"


UNAVAILABLE: tuple[Unavailable, ...] = (
    # WeChat's cloud: APIs only, never cards.
    _u("cloud.init", _API, _CLOUD, sync=True, noop=True),
    _u("cloud.callFunction", _API, _CLOUD),
    _u("cloud.callContainer", _API, _CLOUD),
    _u("cloud.database", _API, _CLOUD, sync=True),
    _u("cloud.uploadFile", _API, _CLOUD),
    _u("cloud.downloadFile", _API, _CLOUD),
    _u("cloud.getTempFileURL", _API, _CLOUD),
    _u("cloud.deleteFile", _API, _CLOUD),
    # wx.cloud.extend.AI: cloud AI models and agents (base library 3.7.1+); createModel and
    # registerFunctionTool answer at once, the bot calls through callbacks or a promise.
    _u("cloud.extend.AI.createModel", _API, _CLOUD_AI, sync=True),
    _u("cloud.extend.AI.registerFunctionTool", _API, _CLOUD_AI, sync=True),
    _u("cloud.extend.AI.bot.get", _API, _CLOUD_AI),
    _u("cloud.extend.AI.bot.list", _API, _CLOUD_AI),
    _u("cloud.extend.AI.bot.sendMessage", _API, _CLOUD_AI),
    _u("cloud.extend.AI.bot.getChatRecords", _API, _CLOUD_AI),
    _u("cloud.extend.AI.bot.sendFeedback", _API, _CLOUD_AI),
    _u("cloud.extend.AI.bot.getFeedback", _API, _CLOUD_AI),
    _u("cloud.extend.AI.bot.getRecommendQuestions", _API, _CLOUD_AI),
    # The API context's other wx APIs that skillc does not implement.
    _u("uploadFile", _API, _FILES),
    _u("downloadFile", _BOTH, _FILES),
    _u("getNetworkType", _API, _DEVICE),
    # Stand-ins in API code (host/standins.py): a card still gets the stub.
    _u("getLocation", _API, _DEVICE, stand_in=_API),
    _u("getFuzzyLocation", _API, _DEVICE, stand_in=_API),
    _u("getPhoneNumber", _API, _USER, stand_in=_API),
    # Not among AI mode's APIs (the AI-mode notes, section 4); skillc offers them to API code,
    # where consent and the audit log are, as stand-ins for WeChat Pay and the address book.
    _u("requestPayment", _NOWHERE, _USER, stand_in=_API),
    _u("chooseAddress", _NOWHERE, _USER, stand_in=_API),
    _u("getRealtimePhoneNumber", _API, _USER),
    _u("requestSubscribeMessage", _API, _USER),
    _u("requestAgentPrivacyAuthorization", _API, _USER),
    _u("authorize", _API, _USER),
    _u("getSetting", _API, _USER),
    _u("getImageInfo", _API, _FILES),
    _u("getUserCryptoManager", _API, _USER, sync=True),
    _u("getWeRunData", _API, _USER),
    _u("startFacialRecognitionVerify", _API, _DEVICE),
    _u("startWifi", _API, _DEVICE),
    _u("getConnectedWifi", _API, _DEVICE),
    _u("openBluetoothAdapter", _API, _DEVICE),
    _u("connectSocket", _API, _SOCKETS),
    _u("createTCPSocket", _API, _SOCKETS, sync=True),
    _u("createUDPSocket", _API, _SOCKETS, sync=True),
    _u("startLocalServiceDiscovery", _API, _SOCKETS),
    _u("startAccelerometer", _API, _DEVICE),
    _u("startCompass", _API, _DEVICE),
    _u("startGyroscope", _API, _DEVICE),
    # Cards only.
    _u("showToast", _CARD, _UI),
    _u("hideToast", _CARD, _UI),
    # Card actions the host receives (card_models.PreviewMedia), not stubs.
    _u("previewMedia", _CARD, _UI, stand_in=_CARD),
    _u("getWindowInfo", _CARD, _DEVICE, sync=True),
    _u("openDocument", _CARD, _FILES),
    _u("openLocation", _CARD, _UI),
    _u("makePhoneCall", _CARD, _DEVICE, stand_in=_CARD),  # card_models.MakePhoneCall
    _u("openSetting", _CARD, _UI),
    _u("shareAppMessage", _CARD, _UI),
    _u("vibrateShort", _CARD, _DEVICE),
    _u("vibrateLong", _CARD, _DEVICE),
    _u("getPrivacySetting", _CARD, _USER),
    _u("openPrivacyContract", _CARD, _UI),
    # Nowhere in AI mode: pages, navigation, modal UI, pickers, the clipboard, user profiles.
    _u("showModal", _NOWHERE, _UI),
    _u("showLoading", _NOWHERE, _UI),
    _u("hideLoading", _NOWHERE, _UI),
    _u("showActionSheet", _NOWHERE, _UI),
    _u("navigateTo", _NOWHERE, _UI),
    _u("redirectTo", _NOWHERE, _UI),
    _u("switchTab", _NOWHERE, _UI),
    _u("reLaunch", _NOWHERE, _UI),
    _u("navigateBack", _NOWHERE, _UI),
    _u("pageScrollTo", _NOWHERE, _UI),
    _u("chooseImage", _NOWHERE, _UI),
    _u("chooseVideo", _NOWHERE, _UI),
    _u("chooseMedia", _NOWHERE, _UI),
    _u("previewImage", _NOWHERE, _UI),
    _u("setClipboardData", _NOWHERE, _UI),
    _u("getClipboardData", _NOWHERE, _UI),
    _u("getUserInfo", _NOWHERE, _USER),
    _u("getUserProfile", _NOWHERE, _USER),
    _u("createSelectorQuery", _NOWHERE, _UI, sync=True),
    _u("createCanvasContext", _NOWHERE, _UI, sync=True),
    _u("createAnimation", _NOWHERE, _UI, sync=True),
    # Seen failing in published skills: each needs a page, a picker or a WeChat screen of its own.
    _page("scanCode", "it needs the camera UI of a mini-program page"),
    _page("chooseLocation", "it needs the map picker of a mini-program page"),
    _page("chooseInvoice", "it needs the invoice picker of a mini-program page"),
    _page(
        "requestOrderPayment",
        "it needs WeChat Pay's order checkout page; skillc's payment stand-in is wx.requestPayment, in API code",
    ),
    _page("createRewardedVideoAd", "it needs a mini-program page to show the ad on", sync=True),
    _page("navigateToMiniProgram", f"it opens another mini program {_FROM_PAGE}"),
    _page("openCustomerServiceChat", f"it opens the customer service chat {_FROM_PAGE}"),
    _page("openChannelsActivity", f"it opens a Channels video {_FROM_PAGE}"),
    _page("openBusinessView", f"it opens another mini program's business view {_FROM_PAGE}"),
    _page("openOfficialAccountProfile", f"it opens an official account's profile {_FROM_PAGE}"),
)
BY_NAME: dict[str, Unavailable] = {u.name: u for u in UNAVAILABLE}

# The network calls a card has only with permissions["scope.dynamic"] (they are host calls then).
DYNAMIC_ONLY = ("request", "login", "checkSession")

# What each context's wx really has at its top level (wx.js's makeWx, and what api_vm.js and
# component_vm.js add): with the table, every name the static scan knows. A test builds both
# VMs and compares, so this cannot drift from the JS.
_COMMON = frozenset(
    {
        "setStorage",
        "getStorage",
        "removeStorage",
        "clearStorage",
        "getStorageInfo",
        "setStorageSync",
        "getStorageSync",
        "removeStorageSync",
        "clearStorageSync",
        "getStorageInfoSync",
        "getDeviceInfo",
        "getAppBaseInfo",
        "getSystemInfo",
        "getSystemInfoSync",
        "getAccountInfoSync",
        "modelContext",
        "canIUse",
    }
)
PROVIDED: dict[Where, frozenset[str]] = {
    "api": _COMMON | set(DYNAMIC_ONLY) | {u.name for u in UNAVAILABLE if "api" in u.stand_in},
    "card": _COMMON | {"previewMedia", "makePhoneCall"},  # + DYNAMIC_ONLY with scope.dynamic
}


class Stub(BaseModel):
    """What wx.js installs for one unavailable API in one context."""

    model_config = ConfigDict(defer_build=True)  # `skillc check` imports this module, never builds one

    path: list[str]
    sync: bool
    message: str | None  # None: a no-op


def stubs(where: Where, *, dynamic: bool = True) -> list[Stub]:
    out = [
        Stub(path=u.name.split("."), sync=u.sync, message=u.message(where))
        for u in UNAVAILABLE
        if where not in u.stand_in
    ]
    if where == "card" and not dynamic:
        gate = 'WeChat gives a card it only with components[].permissions["scope.dynamic"] in mcp.json'
        out += [
            Stub(path=[n], sync=False, message=f"wx.{n} is not available in this card ({gate})") for n in DYNAMIC_ONLY
        ]
    return out


@cache
def stubs_json(where: Where, dynamic: bool = True) -> str:
    """The stubs of a context as the JSON wx.js reads (built once per process)."""
    return json.dumps([s.model_dump() for s in stubs(where, dynamic=dynamic)], ensure_ascii=False)


# -- the static scan (skillc check) ---------------------------------------------------------------

_IDENT = r"[A-Za-z_$][\w$]*"
_WX = re.compile(r"(?<![\w$.])wx(?![\w$])")
_MEMBER = re.compile(rf"\s*\.\s*({_IDENT})")


def _namespaces() -> dict[str, frozenset[str]]:
    """Each namespace the table creates under wx ('' for wx itself, 'cloud', 'cloud.extend', ...)
    and the names it knows there (the top level also knows what the contexts provide)."""
    known: dict[str, set[str]] = {"": set(PROVIDED["api"] | PROVIDED["card"])}
    for u in UNAVAILABLE:
        parts = u.name.split(".")
        for i, part in enumerate(parts):
            known.setdefault(".".join(parts[:i]), set()).add(part)
    return {k: frozenset(v) for k, v in known.items()}


NAMESPACES = _namespaces()


def mask_code(text: str) -> str:
    """Comments and the insides of string and template literals replaced by spaces (newlines
    kept), so positions stay true and nothing quoted or commented out is mistaken for a call."""
    out = list(text)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "/" and text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
        elif c == "/" and text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
        elif c in "'\"`":
            j = i + 1
            while j < n and text[j] != c and (c == "`" or text[j] != "\n"):
                j += 2 if text[j] == "\\" else 1
            i += 1  # keep the quotes themselves
            j = min(j, n)
        else:
            i += 1
            continue
        for k in range(i, j):
            if out[k] != "\n":
                out[k] = " "
        i = j + 1 if c in "'\"`" else j
    return "".join(out)


def _chain(masked: str, start: int) -> list[tuple[str, int]]:
    """The names of ``wx.a.b.c`` read from just after ``wx``, each with the offset where it ends."""
    names: list[tuple[str, int]] = []
    pos = start
    while (m := _MEMBER.match(masked, pos)) is not None:
        names.append((m.group(1), m.end()))
        pos = m.end()
    return names


def _finding(where: Where, names: list[str]) -> tuple[str, str, int, str | None] | None:
    """(code, message, how many names the finding spans, hint) for one ``wx.`` chain, or None."""
    for n in range(len(names), 0, -1):
        entry = BY_NAME.get(".".join(names[:n]))
        if entry is not None:
            message = entry.message(where)
            if message is None:
                return None
            return "JS008", message, n, PAGE_HINT if entry.needs else None
    # Not in the table: the first name a namespace of the table does not know is not provided.
    for n in range(1, len(names) + 1):
        known = NAMESPACES.get(".".join(names[: n - 1]))
        if known is None:
            return None  # under something skillc provides (wx.modelContext.*) or a stub
        if names[n - 1] not in known:
            return "JS010", f"wx.{'.'.join(names[:n])} is not provided by skillc", n, None
    return None


def unavailable_uses(path: str, text: str, *, card: bool) -> list[Diagnostic]:
    """JS008 at every ``wx.<name>`` in ``text`` that fails when skillc runs it from this context
    (a card's code when ``card``, else the API context), JS010 at every one skillc has never
    heard of."""
    where: Where = "card" if card else "api"
    masked = mask_code(text)
    diags: list[Diagnostic] = []
    # A card's wx.request / wx.login depend on scope.dynamic, which the card rules (V021) report.
    line, scanned = 1, 0
    for m in _WX.finditer(masked):
        chain = _chain(masked, m.end())
        found = _finding(where, [name for name, _ in chain]) if chain else None
        if found is None:
            continue
        code, message, count, hint = found
        end = chain[count - 1][1]
        line += masked.count("\n", scanned, m.start())
        nl = masked.rfind("\n", 0, m.start())
        line_start = nl + 1 if nl >= 0 else 0
        scanned = m.start()
        column = m.start() - line_start + 1
        # `wx . cloud\n .callFunction` is one use over two lines: the span ends where the name does
        breaks = masked.count("\n", m.start(), end)
        end_column = end - masked.rfind("\n", 0, end) if breaks else column + end - m.start()
        diags.append(
            Diagnostic.make(
                code,
                f"{message}; the call fails when skillc runs it",
                file=path,
                span=Span(line=line, column=column, end_line=line + breaks, end_column=end_column),
                hint=hint,
            )
        )
    return diags
