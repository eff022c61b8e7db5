"""An API's risk level from what the skill says: a pinned level, else one inferred from its name,
description and the code it runs.

Published skills never pin a level (no ``_meta.x_skillc.risk``), so without inference a payment
API would be served as a read with no consent. Inference is conservative: the highest level any
signal gives wins, and an API is called a read (L0) only when its name says so and nothing else
does. The levels (the runtime's RiskLevel, kept as strings here: the frontend imports no runtime):

    L0 a read                        search/get/list/query/查询
    L1 a write nothing shows harmless (no signal either way): not read-only, no consent
    L2 personal context, remote writes  location, addresses, wx.request POST/PUT/DELETE: audited
    L3 money, commitments, removal    payment, order submission, refunds, delete/cancel/unbind: consent
    L4 identity                       phone numbers, ID documents, face verification: consent
                                      and code that reads the user's own address or location
                                      (wx.chooseAddress, wx.get(Fuzzy)Location): skillc's stand-ins
                                      for them answer only with consent at L4 (runtime/host/standins.py)
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from skillc.diagnostics import DiagnosticSink
from skillc.frontend.consistency import Script, Segment, api_code
from skillc.frontend.jsonsrc import JArray, JNode, JObject, lookup
from skillc.frontend.manifest import ApiSpec
from skillc.frontend.modpaths import CodeRoot

Level = Literal["L0", "L1", "L2", "L3", "L4"]
LEVELS: tuple[Level, ...] = ("L0", "L1", "L2", "L3", "L4")
# Where a level may be pinned, in order of precedence.
PIN_KEYS = ("_meta.x_skillc.risk", "_meta.anp.risk", "x_anp.risk")


@dataclass(frozen=True)
class _Rule:
    level: Level
    what: str
    words: tuple[str, ...] = ()  # name tokens / English description words
    phrases: tuple[str, ...] = ()  # substrings of the description (Chinese has no word breaks)
    code: str | None = None  # a regex over the API's code
    name_only: bool = False  # the English words count in the name only, not in the description


_RULES = (
    _Rule(
        "L4",
        "identity",
        ("idcard", "identity", "realname", "facial", "faceverify", "passport"),
        ("身份证", "实名", "人脸", "身份信息", "护照"),
        r"\bwx\s*\.\s*(?:startFacialRecognitionVerify\w*|checkIsSupportFacialRecognition)\b",
    ),
    _Rule(
        "L4",
        "phone number",
        ("phone", "phonenumber", "mobile"),
        ("手机号", "电话号码", "手机号码"),
        r"\bwx\s*\.\s*get(?:Realtime)?PhoneNumber\b|\bgetPhoneNumber\b",
    ),
    _Rule(
        "L3",
        "payment",
        ("pay", "payment", "checkout", "charge", "purchase"),
        ("支付", "付款", "结算", "扣款", "收款"),
        r"\bwx\s*\.\s*request(?:Payment|OrderPayment|CommonPayment|VirtualPayment)\b",
    ),
    _Rule("L3", "order submission", ("submit", "placeorder", "createorder"), ("下单", "提交订单", "创建订单")),
    _Rule("L3", "refund", ("refund", "refunds"), ("退款", "退货")),
    # The official V019 list of destructive actions (account removal, deletion, cancelling,
    # unbinding): names only for the English words, which descriptions use loosely.
    _Rule(
        "L3",
        "a destructive action",
        ("delete", "remove", "cancel", "clear", "unbind", "unsubscribe", "logout", "logoff", "dissolve", "kick"),
        ("注销", "销户", "删除", "移除", "取消订单", "清空", "解绑", "退订", "解散", "踢出"),
        name_only=True,
    ),
    _Rule("L4", "the user's address", code=r"\bwx\s*\.\s*chooseAddress\b"),
    _Rule("L4", "the user's location", code=r"\bwx\s*\.\s*get(?:Fuzzy)?Location\b"),
    _Rule("L2", "address", ("address",), ("收货地址", "地址")),
    _Rule(
        "L2",
        "location",
        ("location", "locate", "geolocation"),
        ("定位", "位置"),
        r"\bwx\s*\.\s*(?:chooseLocation|startLocationUpdate\w*)\b",
    ),
    _Rule(
        "L2",
        "a wx.request that writes",
        code=r"\bwx\s*\.\s*request\s*\(\s*\{[^}]*?\bmethod\s*:\s*['\"`](?:POST|PUT|PATCH|DELETE)['\"`]",
    ),
)
_READ_WORDS = ("search", "get", "list", "query", "find", "fetch", "show", "view", "lookup", "check", "load", "read")
_READ_PHRASES = ("查询", "搜索", "查看", "获取", "列出")
# Sections of a description that say what the API must NOT be used for (【严禁场景】 ...): words there
# are not what the API does.
_FORBIDDEN = re.compile(r"【[^】]*(?:严禁|禁止|不要|不可)[^】]*】[^【]*|(?:严禁|禁止|不要)[^。；;\n]*")


@dataclass(frozen=True)
class Evidence:
    level: Level
    what: str  # "payment"
    where: str  # "name payOrder", "code apis/pay.js:3 (wx.requestPayment)"

    def __str__(self) -> str:
        return f"{self.what} ({self.where})"


@dataclass(frozen=True)
class RiskAssessment:
    """The level of one API and why. ``pinned`` names the key that set it; otherwise it was
    inferred from ``evidence`` (empty: nothing showed a read or a write, so L1)."""

    level: Level
    pinned: str | None
    evidence: tuple[Evidence, ...]
    invalid: Any = None  # a pinned value that is not a level (the level is then L4)

    def because(self) -> str:
        """Why, as the tail of a sentence: "from payment (name payOrder)"."""
        top = [e for e in self.evidence if e.level == self.level] or list(self.evidence)
        if not top:
            return "since nothing shows it is a read or names what it changes"
        return "from " + "; ".join(str(e) for e in top)


def _tokens(name: str) -> list[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    words = [w.lower() for w in re.split(r"[^A-Za-z0-9]+", spaced) if w]
    joined = "".join(words)
    # Pairs too: "place order" -> "placeorder", "phone number" -> "phonenumber".
    return words + [a + b for a, b in itertools.pairwise(words)] + [joined]


def pinned_level(spec: ApiSpec) -> tuple[str, Any] | None:
    """(key, raw value) of the first pinned risk, or None."""
    meta = spec.vendor_meta
    extra = spec.model_extra or {}
    candidates = (
        ("_meta.x_skillc.risk", meta.get("x_skillc")),
        ("_meta.anp.risk", meta.get("anp")),
        ("x_anp.risk", extra.get("x_anp")),
    )
    for key, holder in candidates:
        if isinstance(holder, dict) and holder.get("risk") is not None:
            return key, holder["risk"]
    return None


def assess(
    spec: ApiSpec,
    sources: Mapping[str, str] | None,
    root: CodeRoot | None = None,
    cache: dict[str, Script] | None = None,
) -> RiskAssessment:
    """The level of ``spec``: pinned, else inferred from its name, description and, when
    ``sources`` are given, the code its handler runs."""
    pin = pinned_level(spec)
    if pin is not None:
        key, raw = pin
        if isinstance(raw, str) and raw in LEVELS:
            return RiskAssessment(raw, key, ())
        return RiskAssessment("L4", key, (), invalid=raw)
    evidence: list[Evidence] = []
    tokens = _tokens(spec.name)
    description = _FORBIDDEN.sub(" ", spec.description)
    desc_words = set(re.findall(r"[a-z]+", description.lower()))
    code = api_code(sources, spec.name, root or CodeRoot(), cache) if sources is not None else []
    for rule in _RULES:
        hit = next((w for w in rule.words if w in tokens), None)
        if hit is not None:
            evidence.append(Evidence(rule.level, rule.what, f"name {spec.name}"))
            continue
        words = () if rule.name_only else rule.words
        hit = next((w for w in words if w in desc_words), None) or next(
            (p for p in rule.phrases if p in description), None
        )
        if hit is not None:
            evidence.append(Evidence(rule.level, rule.what, f'description "{hit}"'))
            continue
        if rule.code is not None:
            found = _code_hit(rule.code, code)
            if found is not None:
                evidence.append(Evidence(rule.level, rule.what, found))
    if evidence:
        level = max((e.level for e in evidence), key=LEVELS.index)
        return RiskAssessment(level, None, tuple(evidence))
    read = next((w for w in _READ_WORDS if w in tokens[:1]), None) or next(
        (p for p in _READ_PHRASES if p in description), None
    )
    if read is not None:
        return RiskAssessment("L0", None, (Evidence("L0", "a read", f"name {spec.name}" if read in tokens else read),))
    return RiskAssessment("L1", None, ())


def _code_hit(pattern: str, segments: list[Segment]) -> str | None:
    regex = re.compile(pattern)
    for seg in segments:
        script = seg.script
        m = regex.search(script.masked, seg.start, seg.end)
        if m is not None:
            line, _ = script.index.loc(m.start())
            call = re.search(r"wx\s*\.\s*\w+", m.group())
            method = re.search(r"method\s*:\s*['\"`](\w+)", m.group())
            shown = re.sub(r"\s+", "", call.group() if call else m.group())[:40]
            shown += f" {method.group(1)}" if method else ""
            return f"code {script.path}:{line} {shown}"
    return None


def check_risks(
    apis: list[ApiSpec],
    sources: Mapping[str, str],
    root: CodeRoot,
    manifest: JNode | None,
    sink: DiagnosticSink,
    cache: dict[str, Script] | None = None,
) -> None:
    """RISK001 (info) at each API inferred to be L2 or above: the author should pin it. Lower
    inferred levels change only a tool's annotations (no audit, no consent), so they stay quiet."""
    names = _name_nodes(manifest)
    for spec in apis:
        found = assess(spec, sources, root, cache)
        if found.pinned is not None or LEVELS.index(found.level) < 2:
            continue
        node = names.get(spec.name)
        sink.emit(
            "RISK001",
            f"{spec.name}: risk {found.level} inferred {found.because()}; pin it with _meta.x_skillc.risk",
            file="mcp.json",
            span=node.span if node is not None else None,
            hint=f'"_meta": {{"x_skillc": {{"risk": "{found.level}"}}}}',
        )


def _name_nodes(manifest: JNode | None) -> dict[str, JNode]:
    found: dict[str, JNode] = {}
    apis = manifest.get("apis") if isinstance(manifest, JObject) else None
    for i, _item in enumerate(apis.items if isinstance(apis, JArray) else []):
        node = lookup(apis, (i, "name")) if apis is not None else None
        value = node.to_python() if node is not None else None
        if node is not None and isinstance(value, str):
            found.setdefault(value, node)
    return found
