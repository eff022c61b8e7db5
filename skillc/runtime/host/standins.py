"""The stand-ins for WeChat-only APIs: ``wx.requestPayment``, ``wx.getPhoneNumber``,
``wx.chooseAddress``, ``wx.getLocation`` and ``wx.getFuzzyLocation``, in API code only.

In WeChat each of these asks the user (the payment sheet, the phone-number or location prompt).
skillc asks once, before the call runs, through the consent every L3/L4 API already gets (MCP
elicitation in ``serve``, ``--approve`` in ``call``, a flow step's ``approve``): risk inference
puts an API whose code pays at L3 and one that reads the phone, an address or the location at L4.
A stand-in answers only when the call was approved at its level or above
(``ApiCallContext.consent``); otherwise it fails as WeChat does when the user says no, and a
diagnostic says why. The answers come from the host: the user profile (``--profile FILE``) and the
payment provider (host/payment.py). Every use, answered or refused, leaves an audit record.

The handlers are a mixin of :class:`~skillc.runtime.host.api_host.ApiHost`, so each host-call
entry still has its ``_<handler>`` there.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from skillc.diagnostics import Diagnostic
from skillc.runtime.config import LocationProfile, RuntimeConfig, UserProfile
from skillc.runtime.contracts import ApiCallContext, AuditOutcome, AuditRecord, RiskLevel
from skillc.runtime.host.geo import wgs84_to_gcj02
from skillc.runtime.host.payment import PaymentArgs, PaymentIntent, PaymentProvider
from skillc.runtime.sandbox.engine import HostReply

# The level of consent each stand-in needs (frontend/risk.py infers the same from the code).
STAND_IN_RISK: dict[str, RiskLevel] = {
    "wx.requestPayment": RiskLevel.L3,
    "wx.getPhoneNumber": RiskLevel.L4,
    "wx.chooseAddress": RiskLevel.L4,
    "wx.getLocation": RiskLevel.L4,
    "wx.getFuzzyLocation": RiskLevel.L4,
}
# What WeChat answers when the user says no (the errMsg after ":fail ").
_DENIED = {"wx.requestPayment": "cancel", "wx.getPhoneNumber": "user deny"}
# getFuzzyLocation's precision: two decimals, about a kilometre.
FUZZY_DECIMALS = 2


class StandInUse(BaseModel):
    """One use of a stand-in, before the call chain turns it into an audit record."""

    wx_api: str
    risk: RiskLevel
    arguments: dict[str, Any]
    outcome: AuditOutcome
    detail: str | None = None
    time: str
    duration_ms: float


# The call chain's audit writer: records a use and answers the record it wrote.
StandInAudit = Callable[[StandInUse], AuditRecord]


class LocationArgs(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    type: Literal["wgs84", "gcj02"] = "wgs84"
    altitude: bool = False
    is_high_accuracy: bool = Field(default=False, alias="isHighAccuracy")
    high_accuracy_expire_time: int | None = Field(default=None, alias="highAccuracyExpireTime")


class FuzzyLocationArgs(BaseModel):
    type: Literal["wgs84", "gcj02"] = "wgs84"


class StandInHandlers:
    """The stand-ins' host-call handlers; :class:`ApiHost` sets the attributes below."""

    context: ApiCallContext
    config: RuntimeConfig
    diagnostics: list[Diagnostic]
    payments: PaymentProvider | None
    audit_stand_in: StandInAudit | None
    stand_in_audit: list[AuditRecord]

    # -- the handlers ------------------------------------------------------------------------

    async def _request_payment(self, a: PaymentArgs) -> HostReply:
        api, started = "wx.requestPayment", time.perf_counter()
        args = a.model_dump(by_alias=True)
        refused = self._consent(api, args, started)
        if refused is not None:
            return refused
        if self.payments is None:
            why = (
                "wx.requestPayment did not succeed: no payment provider is reachable (the call ran in a guard process)"
            )
            return self._failed("RUN103", api, args, started, "no payment provider", why, AuditOutcome.ERROR)
        c = self.context
        intent = PaymentIntent(
            args=a,
            user_did=c.user_did,
            merchant_did=c.merchant_did,
            skill_id=c.skill_id,
            api_name=c.api_name,
            session_id=c.session_id,
        )
        provider = self.payments
        try:
            result = await provider.pay(intent)
        except Exception as err:  # a broken provider is a failed payment, never a paid one
            why = f"wx.requestPayment did not succeed: {provider.name} raised {type(err).__name__}: {err}"
            return self._failed("RUN103", api, args, started, "payment provider error", why, AuditOutcome.ERROR)
        if result.outcome == "success":
            self._audit(api, args, AuditOutcome.OK, f"paid through {provider.name}", started)
            return HostReply.done()
        answered = f"wx.requestPayment did not succeed: {provider.name} answered {result.outcome}"
        if result.outcome == "cancel":
            why = answered + (f": {result.reason}" if result.reason else "")
            return self._failed("RUN103", api, args, started, "cancel", why, AuditOutcome.REFUSED)
        reason = result.reason or "the payment failed"
        why = f"{answered}: {reason}"
        return self._failed("RUN103", api, args, started, reason, why, AuditOutcome.ERROR)

    def _phone_number(self, _a: BaseModel) -> HostReply:
        api, started = "wx.getPhoneNumber", time.perf_counter()
        profile = self._profile(api, {}, started, "phone number")
        if isinstance(profile, HostReply):
            return profile
        phone = profile.phone
        if phone is None:
            return self._no_field(api, {}, started, "phone", "phone number")
        self._audit(api, {}, AuditOutcome.OK, None, started)
        value = {
            "phoneNumber": phone.phone_number,
            "purePhoneNumber": phone.pure_phone_number,
            "countryCode": phone.country_code,
        }
        return HostReply(ok=True, value=value)

    def _choose_address(self, _a: BaseModel) -> HostReply:
        api, started = "wx.chooseAddress", time.perf_counter()
        profile = self._profile(api, {}, started, "addresses")
        if isinstance(profile, HostReply):
            return profile
        address = profile.address
        if address is None:
            return self._no_field(api, {}, started, "addresses", "address")
        self._audit(api, {}, AuditOutcome.OK, None, started)
        value = address.model_dump(by_alias=True, exclude={"default"})
        value["detailInfoNew"] = address.detail_info
        return HostReply(ok=True, value=value)

    def _location(self, a: LocationArgs) -> HostReply:
        args = a.model_dump(by_alias=True, exclude_none=True)
        found = self._profile_location("wx.getLocation", args, a.type)
        if isinstance(found, HostReply):
            return found
        lat, lon, where = found
        value = {
            "latitude": lat,
            "longitude": lon,
            "speed": where.speed,
            "accuracy": where.accuracy,
            "altitude": where.altitude if a.altitude else 0,
            "verticalAccuracy": where.vertical_accuracy,
            "horizontalAccuracy": where.horizontal_accuracy,
        }
        return HostReply(ok=True, value=value)

    def _fuzzy_location(self, a: FuzzyLocationArgs) -> HostReply:
        found = self._profile_location("wx.getFuzzyLocation", a.model_dump(), a.type)
        if isinstance(found, HostReply):
            return found
        lat, lon, _ = found
        return HostReply(
            ok=True, value={"latitude": round(lat, FUZZY_DECIMALS), "longitude": round(lon, FUZZY_DECIMALS)}
        )

    def _profile_location(
        self, api: str, args: dict[str, Any], kind: str
    ) -> tuple[float, float, LocationProfile] | HostReply:
        """The profile's location in the coordinates ``kind`` asks for (audited), or the failure."""
        started = time.perf_counter()
        profile = self._profile(api, args, started, "location")
        if isinstance(profile, HostReply):
            return profile
        where = profile.location
        if where is None:
            return self._no_field(api, args, started, "location", "location")
        lat, lon = where.latitude, where.longitude
        if kind == "gcj02":
            lat, lon = wgs84_to_gcj02(lat, lon)
        self._audit(api, args, AuditOutcome.OK, None, started)
        return lat, lon, where

    # -- consent, profile, audit ---------------------------------------------------------------

    def _consent(self, api: str, args: dict[str, Any], started: float) -> HostReply | None:
        """None when the call was approved at the stand-in's level, else the refusal."""
        need = STAND_IN_RISK[api]
        got = self.context.consent
        if got is not None and got.rank >= need.rank:
            return None
        caller = self.context.api_name or "index.js"
        had = "ran without the user's consent" if got is None else f"was approved at {got.value} only"
        why = f"{api} needs the user's consent at {need.value}, and {caller} {had}"
        hint = (
            f'pin {caller} at {need.value} ("_meta": {{"x_skillc": {{"risk": "{need.value}"}}}}) so the user is asked'
        )
        tail = _DENIED.get(api, "auth deny")
        return self._failed("RUN100", api, args, started, tail, why, AuditOutcome.REFUSED, hint=hint)

    def _profile(self, api: str, args: dict[str, Any], started: float, what: str) -> UserProfile | HostReply:
        refused = self._consent(api, args, started)
        if refused is not None:
            return refused
        profile = self.config.profile
        if profile is None:
            why = f"{api} answers from the user profile the host supplies, and there is none (no {what} to give)"
            hint = "pass --profile FILE (a JSON with phone, addresses, location; docs/runtime.md)"
            return self._failed("RUN101", api, args, started, "no user profile", why, AuditOutcome.ERROR, hint=hint)
        return profile

    def _no_field(self, api: str, args: dict[str, Any], started: float, key: str, what: str) -> HostReply:
        why = f"{api} answers from the user profile, which has no {key}"
        hint = f'add "{key}" to the --profile file'
        tail = f"the user profile has no {what}"
        return self._failed("RUN101", api, args, started, tail, why, AuditOutcome.ERROR, hint=hint)

    def _failed(
        self,
        code: str,
        api: str,
        args: dict[str, Any],
        started: float,
        tail: str,
        why: str,
        outcome: AuditOutcome,
        *,
        hint: str | None = None,
    ) -> HostReply:
        """The WeChat-shaped failure (``<name>:fail <tail>``) and the diagnostic that says why."""
        name = api.removeprefix("wx.")
        message = f"{why}; it failed with {name}:fail {tail}"
        if not any(d.code == code and d.message == message for d in self.diagnostics):  # once per call
            self.diagnostics.append(Diagnostic.make(code, message, hint=hint))
        self._audit(api, args, outcome, why, started)
        return HostReply.fail(tail)

    def _audit(self, api: str, args: dict[str, Any], outcome: AuditOutcome, detail: str | None, started: float) -> None:
        if self.audit_stand_in is None:
            return
        use = StandInUse(
            wx_api=api,
            risk=STAND_IN_RISK[api],
            arguments=args,
            outcome=outcome,
            detail=detail,
            time=datetime.now(UTC).isoformat(timespec="milliseconds"),
            duration_ms=round((time.perf_counter() - started) * 1000, 3),
        )
        self.stand_in_audit.append(self.audit_stand_in(use))
