"""Consent for L3/L4 APIs over MCP: who may approve a call, and how the user is asked.

In order:

1. ``--approve-all``, or the tool is on the ``--approve`` allow list, named by its tool name or
   as ``skill/API`` (a bare API name is a tool name only where one skill declares it, so it never
   approves a same-named API of another skill): approved. Meant for tests and trusted
   single-user setups; the audit log still records every call.
2. The client speaks the 2026-07-28 protocol and declared the ``elicitation`` capability: the
   call answers ``InputRequiredResult`` with a form elicitation ("approve: yes/no") and a
   ``requestState``; the client retries with the user's answer; only ``accept`` with
   ``approve: true`` approves.
3. The client shows cards (an MCP Apps host, e.g. a 2025-era one that cannot elicit) and the tool
   has a card: the call answers a result whose card area shows the user an approve / decline
   control, bound to the call by a consent token in the result's ``_meta`` only; the view sends
   the user's answer to the app-only tool ``skillc_consent`` (skill_server/consent_card.py).
4. Otherwise the call is refused: an ``isError`` result that tells the agent to get the user's
   confirmation (RUN019). Nothing is ever approved silently. ``elicit=False`` (``--no-elicit``)
   skips 2 and 3: nobody is asked.

A ``requestState`` and a card's consent token are both sealed consents: HMAC with the server's
key over the way of asking, the tool, the call's arguments, one nonce, an expiry, the caller's
scope (skillc.server.caller) and the session the question was asked in. So a client can neither
forge a consent, nor use it for another call or the other way of asking, nor for another user,
nor replay it: each consent answers one call once, within ``ttl_s``. The approved call runs in
the session the consent names (a retry may arrive without the client's session), so its card
and events land in the conversation that asked. A served policy takes its key and its ledger of
spent consents from the state store, so the answer may land on any instance of a fleet and a
consent is spent once across all.

Stateless JSON transport cannot send the 2025-era ``elicitation/create`` request mid-call, which
is why step 2 needs the 2026-07-28 multi-round-trip form.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol

from mcp_types import (
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    InputRequiredResult,
)
from pydantic import BaseModel, ConfigDict, ValidationError

from skillc.runtime.state import StateStore
from skillc.runtime.state.keys import shared_key
from skillc.server.caller import caller_scope, current_caller
from skillc.server.tools import ServedApi

MODERN_VERSION = "2026-07-28"
CONSENT_KEY = "skillc-consent"
CONSENT_TTL_S = 600.0  # how long a user's answer may take to come back (the retry, or the card's tap)

# The codes of a consent token that approves nothing (skillc/diagnostics.py says what each means).
FORGED = "SRV030"
EXPIRED = "SRV031"
SPENT = "SRV032"
OTHER_CALLER = "SRV033"
OTHER_CALL = "SRV034"

# The two ways of asking: a consent sealed for one is no consent for the other.
Way = Literal["elicit", "card"]


def approval_names(api: ServedApi) -> frozenset[str]:
    """The names ``--approve`` knows a tool by: its tool name and ``skill/API``."""
    return frozenset({api.tool_name, f"{api.skill}/{api.spec.name}"})


class SpentConsents(Protocol):
    def spend(self, nonce: str, expires: int, now: int) -> bool:
        """Mark ``nonce`` (good until ``expires``) used; False if it already was. Times in Unix ms."""


class MemorySpent:
    """One process's spent consents: nonce -> expiry, kept until it would have expired anyway."""

    def __init__(self) -> None:
        self._spent: dict[str, int] = {}
        self._lock = threading.Lock()

    def spend(self, nonce: str, expires: int, now: int) -> bool:
        with self._lock:
            for old in [n for n, until in self._spent.items() if until < now]:
                del self._spent[old]
            if nonce in self._spent:
                return False
            self._spent[nonce] = expires
            return True


class StoredSpent:
    """A fleet's spent consents, in the state store's ``consent_spent`` table."""

    def __init__(self, store: StateStore) -> None:
        self.store = store

    def spend(self, nonce: str, expires: int, now: int) -> bool:
        with self.store.transaction("consent_spent") as tx:
            tx.execute("DELETE FROM consent_spent WHERE expires < ?", (now,))
            if tx.execute("SELECT 1 FROM consent_spent WHERE nonce = ?", (nonce,)):
                return False
            tx.execute("INSERT INTO consent_spent (nonce, expires) VALUES (?, ?)", (nonce, expires))
            return True


class _Sealed(BaseModel):
    """What a consent token carries (its MAC covers all of it)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    way: Way
    tool: str
    call: str  # sha256 of the canonical [tool, arguments]
    arguments: dict[str, Any] | None  # the card's token only: skillc_consent runs exactly this call
    nonce: str
    expires: int  # Unix ms
    scope: str  # caller_scope of the caller that was asked
    session: str  # the session the question was asked in


@dataclass(frozen=True)
class Consent:
    """A consent token that checked out and is now spent. ``approved`` is the elicitation's answer
    (a card's token says nothing of the answer: the app-only tool's ``approve`` does)."""

    tool: str
    arguments: dict[str, Any] | None
    session: str
    approved: bool = False


@dataclass(frozen=True)
class Refusal:
    """A consent token that approves nothing: ``code`` from SRV030-SRV034, ``reason`` in words."""

    code: str
    reason: str


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def call_digest(tool: str, arguments: dict[str, Any]) -> str:
    return hashlib.sha256(_canonical([tool, arguments]).encode()).hexdigest()


@dataclass(frozen=True)
class ConsentPolicy:
    """``ttl_s`` and ``clock`` (Unix seconds) decide when a consent expires (tests move the clock)."""

    approve_all: bool = False
    approve: frozenset[str] = frozenset()  # tool names or skill/API names
    elicit: bool = True  # False: never ask the user (neither by elicitation nor in the card)
    key: bytes = field(default_factory=lambda: secrets.token_bytes(32), repr=False)
    spent: SpentConsents = field(default_factory=MemorySpent, repr=False, compare=False)
    ttl_s: float = CONSENT_TTL_S
    clock: Callable[[], float] = field(default=time.time, repr=False, compare=False)

    def shared(self, store: StateStore) -> ConsentPolicy:
        """This policy with the store's consent key and spent consents (what a server serves with)."""
        return replace(self, key=shared_key(store, "consent"), spent=StoredSpent(store))

    def allows(self, api: ServedApi) -> bool:
        return self.approve_all or not self.approve.isdisjoint(approval_names(api))

    def unknown(self, apis: list[ServedApi]) -> list[str]:
        """The ``--approve`` names that name no served tool (a typo, or an API two skills share)."""
        known = frozenset().union(*(approval_names(a) for a in apis)) if apis else frozenset()
        return sorted(self.approve - known)

    # -- sealed consents ---------------------------------------------------------------------

    def _now_ms(self) -> int:
        return int(self.clock() * 1000)

    def _mac(self, body: str) -> str:
        return hmac.new(self.key, body.encode("ascii"), hashlib.sha256).hexdigest()

    def seal(self, way: Way, api: ServedApi, arguments: dict[str, Any], session: str) -> str:
        """A consent token for this call, asked now of the current caller in ``session``:
        ``<base64url JSON>.<hex HMAC-SHA256>``."""
        sealed = _Sealed(
            way=way,
            tool=api.tool_name,
            call=call_digest(api.tool_name, arguments),
            arguments=arguments if way == "card" else None,  # a retry brings its own arguments
            nonce=secrets.token_hex(16),
            expires=self._now_ms() + int(self.ttl_s * 1000),
            scope=caller_scope(current_caller()),
            session=session,
        )
        body = base64.urlsafe_b64encode(_canonical(sealed.model_dump()).encode()).decode("ascii").rstrip("=")
        return f"{body}.{self._mac(body)}"

    def unseal(self, token: object, way: Way) -> _Sealed | Refusal:
        """The token's content if it is ours, of this way of asking, for the current caller and
        not expired (whether it was used is :meth:`spend`'s to say)."""
        if not isinstance(token, str) or token.count(".") != 1:
            return Refusal(FORGED, "it is not a consent this server gave")
        body, mac = token.split(".")
        if not hmac.compare_digest(mac, self._mac(body) if body.isascii() else ""):
            return Refusal(FORGED, "it is not a consent this server gave")
        try:
            sealed = _Sealed.model_validate_json(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
        except (ValidationError, ValueError):  # our own MAC over something we never wrote: a bug
            return Refusal(FORGED, "it is not a consent this server gave")
        if sealed.way != way:
            return Refusal(OTHER_CALL, "it was given for the other way of asking")
        if sealed.scope != caller_scope(current_caller()):
            return Refusal(OTHER_CALLER, "it was given to another caller")
        if sealed.expires < self._now_ms():
            return Refusal(EXPIRED, "it has expired")
        return sealed

    def spend(self, sealed: _Sealed) -> Refusal | None:
        """Use the consent up (across every worker and instance), or say it already was."""
        if not self.spent.spend(sealed.nonce, sealed.expires, self._now_ms()):
            return Refusal(SPENT, "it was already used")
        return None

    def redeem(self, token: object) -> Consent | Refusal:
        """A card's consent token, checked and spent: the call it was given for."""
        sealed = self.unseal(token, "card")
        if isinstance(sealed, Refusal):
            return sealed
        if sealed.arguments is None or sealed.call != call_digest(sealed.tool, sealed.arguments):
            return Refusal(FORGED, "it is not a consent this server gave")
        refused = self.spend(sealed)
        if refused is not None:
            return refused
        return Consent(sealed.tool, sealed.arguments, sealed.session)

    # -- elicitation (2026-07-28) ------------------------------------------------------------

    def ask(self, api: ServedApi, arguments: dict[str, Any], session: str = "") -> InputRequiredResult:
        args = json.dumps(arguments, ensure_ascii=False, sort_keys=True)
        message = (
            f"{api.spec.name} (risk {api.risk.value}) needs your consent.\n{api.spec.description}\nArguments: {args}"
        )
        schema = {
            "type": "object",
            "properties": {
                "approve": {"type": "boolean", "title": "Approve", "description": f"Allow {api.spec.name} to run"}
            },
            "required": ["approve"],
        }
        request = ElicitRequest(params=ElicitRequestFormParams(message=message, requested_schema=schema))
        state = self.seal("elicit", api, arguments, session)
        return InputRequiredResult(input_requests={CONSENT_KEY: request}, request_state=state)

    def answered(
        self, api: ServedApi, arguments: dict[str, Any], responses: dict[str, Any] | None, state: str | None
    ) -> Consent | Refusal | None:
        """The user's answer to our question (spent now), a refusal of a state that is no consent
        for this call, or None when this request carries no answer."""
        if not responses or CONSENT_KEY not in responses or state is None:
            return None
        sealed = self.unseal(state, "elicit")
        if isinstance(sealed, Refusal):
            return sealed
        if sealed.tool != api.tool_name or sealed.call != call_digest(api.tool_name, arguments):
            return Refusal(OTHER_CALL, "it was given for another tool or other arguments")
        refused = self.spend(sealed)
        if refused is not None:
            return refused
        reply = responses[CONSENT_KEY]
        yes = isinstance(reply, ElicitResult) and reply.action == "accept"
        approved = yes and bool(reply.content and reply.content.get("approve") is True)
        return Consent(sealed.tool, None, sealed.session, approved=approved)

    def answer(
        self, api: ServedApi, arguments: dict[str, Any], responses: dict[str, Any] | None, state: str | None
    ) -> bool | None:
        """True/False when this request carries the user's answer to our question, None when it does not."""
        got = self.answered(api, arguments, responses, state)
        return None if got is None else isinstance(got, Consent) and got.approved
