"""Consent in the card: for a host that shows cards but cannot elicit (a 2025-era MCP Apps host),
an L3/L4 call answers a result whose card area asks the user to approve or decline it, and the
view sends the user's answer to the app-only tool ``skillc_consent``.

The asking result carries the consent token in ``_meta["skillc/consent"]`` only: a host hands a
tool result's content and structuredContent to the model, and a model holding the token could
approve the call itself. Its text tells the model that the user is being asked, and to wait.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from mcp.server.context import ServerRequestContext
from mcp_types import CallToolRequestParams, CallToolResult, TextContent

from skillc.server.consent import ConsentPolicy, Refusal
from skillc.server.registry import ToolResult, error_result
from skillc.server.skill_server.answer import current_answer
from skillc.server.tools import CONSENT_TOOL, ConsentArgs, ServedApi

CONSENT_META = "skillc/consent"
# Runs an approved call (the API, the request, its arguments, the session it was asked in).
RunApproved = Callable[[ServedApi, ServerRequestContext[Any], dict[str, Any], str], Awaitable[ToolResult]]
DECLINED = "SRV035"


def ask_in_card(policy: ConsentPolicy, api: ServedApi, arguments: dict[str, Any], session: str) -> CallToolResult:
    """The result that shows the user the approve / decline control for this call."""
    token = policy.seal("card", api, arguments, session)
    text = (
        f"{api.tool_name} (risk {api.risk.value}) needs the user's consent, and the user is being asked in the "
        f"card to approve or decline it. Wait for the user's answer; do not call {api.tool_name} again."
    )
    meta = {
        CONSENT_META: {
            "token": token,
            "tool": api.tool_name,
            "api": api.spec.name,
            "skill": api.skill,
            "risk": api.risk.value,
            "description": api.spec.description,
            "arguments": arguments,
            "consentTool": CONSENT_TOOL,
        }
    }
    return CallToolResult(content=[TextContent(text=text)], _meta=meta)


def refused_result(api: ServedApi | None, refusal: Refusal, tool: str | None = None) -> CallToolResult:
    """A consent that approves nothing: what it is, by its code. Begins as RUN019 does, so a
    reader of either knows the call did not run for want of the user's approval."""
    name = api.tool_name if api is not None else tool or "the call"
    risk = f" (risk {api.risk.value})" if api is not None else ""
    return error_result(
        f"{name} needs the user's approval{risk} and was not approved: the consent given with it is refused "
        f"({refusal.code}: {refusal.reason}); nothing ran. Ask the user to confirm, then call it again."
    )


class ConsentCard:
    """``skillc_consent``: the user's answer in the card. ``run(api, ctx, arguments, session)``
    runs an approved call in the session it was asked in and answers its normal result."""

    def __init__(self, apis: Mapping[str, ServedApi], policy: ConsentPolicy, run: RunApproved) -> None:
        self._apis = apis
        self._policy = policy
        self._run = run

    async def answer(self, ctx: ServerRequestContext[Any], params: CallToolRequestParams) -> ToolResult:
        args = ConsentArgs.parse(params.arguments)
        if isinstance(args, str):
            return error_result(args)
        got = self._policy.redeem(args.token)  # spent here, whatever the answer: one answer per ask
        record = current_answer()
        if isinstance(got, Refusal):
            if record is not None:
                record.outcome, record.detail = "refused", f"{got.code}: {got.reason}"
            return refused_result(None, got)
        api = self._apis.get(got.tool)
        if api is None or got.arguments is None:  # a token of a server that served other skills
            return refused_result(None, Refusal("SRV034", "its tool is not served here"), got.tool)
        if record is not None:
            record.skill = api.skill
            # The answer belongs to the conversation that asked, as the call would have.
            record.trace.session_id = got.session
            record.trace.consent("given" if args.approve else "declined", api.risk.value, api.tool_name)
        if args.approve:
            return await self._run(api, ctx, got.arguments, got.session)
        if record is not None:
            record.outcome, record.detail = "refused", f"{DECLINED}: the user declined {api.tool_name}"
        text = (
            f"The user declined {api.tool_name} {json.dumps(got.arguments, ensure_ascii=False, sort_keys=True)} "
            "in the card; it did not run. Do not call it again unless the user asks for it."
        )
        meta = {CONSENT_META: {"declined": True, "tool": api.tool_name, "code": DECLINED}}
        return CallToolResult(content=[TextContent(text=text)], _meta=meta)
