"""Consent for L3/L4 APIs over MCP: who may approve a call, and how the user is asked.

In order:

1. ``--approve-all``, or the tool is on the ``--approve`` allow list, named by its tool name or
   as ``skill/API`` (a bare API name is a tool name only where one skill declares it, so it never
   approves a same-named API of another skill): approved. Meant for tests and trusted
   single-user setups; the audit log still records every call.
2. The client speaks the 2026-07-28 protocol and declared the ``elicitation`` capability: the
   call answers ``InputRequiredResult`` with a form elicitation ("approve: yes/no") and a
   ``requestState`` that binds the answer to this tool, these exact arguments, one nonce and an
   expiry (HMAC with the server's key, so a client can neither forge a consent, nor reuse it for
   other arguments, nor replay it: each consent approves one call, within ``CONSENT_TTL_S``).
   A served policy takes its key and its ledger of spent consents from the state store, so the
   retried call may land on any instance of a fleet and a consent is spent once across all.
   The client retries with the user's answer; only ``accept`` with ``approve: true`` approves.
3. Otherwise the call is refused: an ``isError`` result that tells the agent to get the user's
   confirmation (RUN019). Nothing is ever approved silently.

Stateless JSON transport cannot send the 2025-era ``elicitation/create`` request mid-call, which
is why step 2 needs the 2026-07-28 multi-round-trip form.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import threading
import time
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from mcp_types import (
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    InputRequiredResult,
)

from skillc.runtime.state import StateStore
from skillc.runtime.state.keys import shared_key
from skillc.server.tools import ServedApi

MODERN_VERSION = "2026-07-28"
CONSENT_KEY = "skillc-consent"
CONSENT_TTL_S = 600.0  # how long a user's answer may take to come back with the retried call


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


@dataclass(frozen=True)
class ConsentPolicy:
    approve_all: bool = False
    approve: frozenset[str] = frozenset()  # tool names or skill/API names
    elicit: bool = True
    key: bytes = field(default_factory=lambda: secrets.token_bytes(32), repr=False)
    spent: SpentConsents = field(default_factory=MemorySpent, repr=False, compare=False)

    def shared(self, store: StateStore) -> ConsentPolicy:
        """This policy with the store's consent key and spent consents (what a server serves with)."""
        return replace(self, key=shared_key(store, "consent"), spent=StoredSpent(store))

    def allows(self, api: ServedApi) -> bool:
        return self.approve_all or not self.approve.isdisjoint(approval_names(api))

    def unknown(self, apis: list[ServedApi]) -> list[str]:
        """The ``--approve`` names that name no served tool (a typo, or an API two skills share)."""
        known = frozenset().union(*(approval_names(a) for a in apis)) if apis else frozenset()
        return sorted(self.approve - known)

    def state_for(self, api: ServedApi, arguments: dict[str, Any], nonce: str, expires: int) -> str:
        """``nonce.expires.mac``: ``expires`` in Unix milliseconds."""
        canonical = json.dumps(
            [api.tool_name, arguments, nonce, expires], sort_keys=True, ensure_ascii=False, separators=(",", ":")
        )
        mac = hmac.new(self.key, canonical.encode(), hashlib.sha256).hexdigest()
        return f"{nonce}.{expires}.{mac}"

    def _new_state(self, api: ServedApi, arguments: dict[str, Any]) -> str:
        return self.state_for(api, arguments, secrets.token_hex(16), int((time.time() + CONSENT_TTL_S) * 1000))

    def _spend(self, state: str, api: ServedApi, arguments: dict[str, Any]) -> bool:
        """Whether ``state`` is ours, for this call, unexpired and unused; it is used up if so."""
        nonce, _, rest = state.partition(".")
        stamp, _, _mac = rest.partition(".")
        if not stamp.isdecimal() or len(stamp) > 16:
            return False
        expires = int(stamp)
        if not hmac.compare_digest(state, self.state_for(api, arguments, nonce, expires)):
            return False  # forged, or an answer given for another tool or other arguments
        now = int(time.time() * 1000)
        if expires < now:
            return False  # too late
        return self.spent.spend(nonce, expires, now)  # False: replayed

    def ask(self, api: ServedApi, arguments: dict[str, Any]) -> InputRequiredResult:
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
        return InputRequiredResult(input_requests={CONSENT_KEY: request}, request_state=self._new_state(api, arguments))

    def answer(
        self, api: ServedApi, arguments: dict[str, Any], responses: dict[str, Any] | None, state: str | None
    ) -> bool | None:
        """True/False when this request carries the user's answer to our question, None when it does not."""
        if not responses or CONSENT_KEY not in responses or state is None:
            return None
        reply = responses[CONSENT_KEY]
        if not isinstance(reply, ElicitResult) or not self._spend(state, api, arguments):
            return False
        return reply.action == "accept" and bool(reply.content and reply.content.get("approve") is True)
