"""Payment providers: who answers ``wx.requestPayment`` once the user has consented to the call.

WeChat Pay shows its own sheet, the user pays (or cancels), and the mini program hears
``requestPayment:ok`` or ``requestPayment:fail ...``. skillc has no WeChat Pay: a
:class:`PaymentProvider` decides the outcome of each :class:`PaymentIntent` instead. The default,
:class:`ScriptedPaymentProvider`, moves no money: it answers ``success`` unless it was told
otherwise, by a flow step (``"payment": "fail"``) or ``skillc call --payment cancel``, which is how
tests and demos reach the failure paths of a skill. A host that settles real payments plugs in its
own provider (``ApiRuntime(..., payments=...)``).
"""

from __future__ import annotations

import threading
from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

PaymentOutcome = Literal["success", "fail", "cancel"]
PAYMENT_OUTCOMES: tuple[PaymentOutcome, ...] = ("success", "fail", "cancel")


class PaymentArgs(BaseModel):
    """The options of ``wx.requestPayment`` (WeChat's names): the signed prepay order the skill's
    backend created. The amount is not among them: WeChat reads it from the prepay order."""

    model_config = ConfigDict(populate_by_name=True)

    time_stamp: str = Field(alias="timeStamp", min_length=1)
    nonce_str: str = Field(alias="nonceStr", min_length=1)
    package: str = Field(min_length=1, description="prepay_id=...")
    sign_type: Literal["MD5", "HMAC-SHA256", "RSA"] = Field(default="MD5", alias="signType")
    pay_sign: str = Field(alias="paySign", min_length=1)


class PaymentIntent(BaseModel):
    """One payment the user consented to: the options, and who pays whom through which API."""

    args: PaymentArgs
    user_did: str
    merchant_did: str
    skill_id: str
    api_name: str
    session_id: str


class PaymentResult(BaseModel):
    """A provider's answer. ``reason`` follows ``requestPayment:fail`` for a failure; a cancel's
    errMsg is WeChat's ``requestPayment:fail cancel`` whatever the reason says."""

    outcome: PaymentOutcome
    reason: str | None = None


@runtime_checkable
class PaymentProvider(Protocol):
    """Answers each payment intent. ``name`` shows in diagnostics ("the test payment provider")."""

    name: str

    async def pay(self, intent: PaymentIntent) -> PaymentResult: ...


DECLINED = "payment declined (scripted)"
CANCELLED = "the user cancelled (scripted)"


class ScriptedPaymentProvider:
    """The default provider: no money moves; every payment ends as scripted (``success`` unless
    :meth:`script` said otherwise). Shared by concurrent calls, so its state is locked."""

    name = "the test payment provider"

    def __init__(self, outcome: PaymentOutcome = "success") -> None:
        self._default: PaymentOutcome = outcome
        self._scripted: PaymentOutcome | None = None
        self._lock = threading.Lock()
        self.intents: list[PaymentIntent] = []

    def script(self, outcome: PaymentOutcome | None) -> int:
        """Answer ``outcome`` from now on (None: back to the default); returns how many payments
        were made so far, so a caller can tell whether any used the scripted outcome."""
        with self._lock:
            self._scripted = outcome
            return len(self.intents)

    @property
    def paid(self) -> int:
        with self._lock:
            return len(self.intents)

    async def pay(self, intent: PaymentIntent) -> PaymentResult:
        with self._lock:
            self.intents.append(intent)
            outcome = self._scripted or self._default
        if outcome == "fail":
            return PaymentResult(outcome="fail", reason=DECLINED)
        if outcome == "cancel":
            return PaymentResult(outcome="cancel", reason=CANCELLED)
        return PaymentResult(outcome="success")
