"""Consent for L3/L4 APIs over MCP: who may approve a call, and how the user is asked.

In order:

1. ``--approve-all``, or the API (or tool) name is on the ``--approve`` allow list: approved.
   Meant for tests and trusted single-user setups; the audit log still records every call.
2. The client speaks the 2026-07-28 protocol and declared the ``elicitation`` capability: the
   call answers ``InputRequiredResult`` with a form elicitation ("approve: yes/no") and a
   ``requestState`` that binds the answer to this tool and these exact arguments (HMAC with a
   per-process key, so a client cannot reuse a consent for other arguments or forge one). The
   client retries with the user's answer; only ``accept`` with ``approve: true`` approves.
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
from dataclasses import dataclass, field
from typing import Any

from mcp_types import (
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    InputRequiredResult,
)

from skillc.server.tools import ServedApi

MODERN_VERSION = "2026-07-28"
CONSENT_KEY = "skillc-consent"


@dataclass(frozen=True)
class ConsentPolicy:
    approve_all: bool = False
    approve: frozenset[str] = frozenset()  # API names or tool names
    elicit: bool = True
    key: bytes = field(default_factory=lambda: secrets.token_bytes(32), repr=False)

    def allows(self, api: ServedApi) -> bool:
        return self.approve_all or api.tool_name in self.approve or api.spec.name in self.approve

    def state_for(self, api: ServedApi, arguments: dict[str, Any]) -> str:
        canonical = json.dumps([api.tool_name, arguments], sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return hmac.new(self.key, canonical.encode(), hashlib.sha256).hexdigest()

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
        return InputRequiredResult(input_requests={CONSENT_KEY: request}, request_state=self.state_for(api, arguments))

    def answer(
        self, api: ServedApi, arguments: dict[str, Any], responses: dict[str, Any] | None, state: str | None
    ) -> bool | None:
        """True/False when this request carries the user's answer to our question, None when it does not."""
        if not responses or CONSENT_KEY not in responses or state is None:
            return None
        if not hmac.compare_digest(state, self.state_for(api, arguments)):
            return False  # an answer given for another tool or other arguments
        reply = responses[CONSENT_KEY]
        if not isinstance(reply, ElicitResult):
            return False
        return reply.action == "accept" and bool(reply.content and reply.content.get("approve") is True)
