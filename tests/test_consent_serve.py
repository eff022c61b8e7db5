"""Consent for L3/L4 calls over HTTP with the SDK client: in the card (a host that shows cards but
cannot elicit) and by elicitation, each consent bound to its call, its caller and its session.

A consent token answers one call, once, for the caller it was given to, within its time: a
forged, tampered, expired, replayed, other-caller or other-call token is refused with its code
(SRV030-SRV034) and nothing runs. What ran is read from the audit log (every L3/L4 call that runs
is audited) and the coffee skill's storage (each confirmed order is kept), never assumed.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import pytest
from mcp.client import Client
from mcp.client.extension import advertise
from mcp_types import CallToolResult, ElicitResult, Implementation, InputRequiredResult, ReadResourceResult

from skillc.frontend.manifest import ApiSpec
from skillc.runtime.api.audit import AuditLog
from skillc.runtime.config import RuntimeConfig
from skillc.runtime.contracts import AuditOutcome, RiskLevel
from skillc.runtime.state import open_state, state_url_of
from skillc.server.caller import Caller, calling_as
from skillc.server.consent import CONSENT_KEY, CONSENT_TTL_S, Consent, ConsentPolicy, Refusal
from skillc.server.request_log import REQUEST_LOGGER
from skillc.server.runner import ServeHandle, ServeOptions
from skillc.server.tools import ServedApi
from tests.conftest import COFFEE

ORDER = {"drinkId": "d02", "size": "grande"}
APPS = advertise("io.modelcontextprotocol/ui", {"mimeTypes": ["text/html;profile=mcp-app"]})
YES = {CONSENT_KEY: ElicitResult(action="accept", content={"approve": True})}


class Clock:
    """The consent policy's clock, moved by the test (no sleeps)."""

    def __init__(self) -> None:
        import time

        self.now = time.time()

    def __call__(self) -> float:
        return self.now


@dataclass
class Served:
    handle: ServeHandle
    config: RuntimeConfig
    clock: Clock

    @property
    def url(self) -> str:
        return self.handle.url

    def audited(self, api: str) -> list[AuditOutcome]:
        return [r.outcome for r in AuditLog.of(self.config).records() if r.api_name == api and r.wx_api is None]

    def storage(self) -> list[tuple[Any, ...]]:
        return [tuple(r) for r in open_state(state_url_of(self.config)).execute("SELECT * FROM storage")]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    config = RuntimeConfig(state_dir=tmp_path_factory.mktemp("consent-serve"))
    clock = Clock()
    options = ServeOptions(paths=(COFFEE,), port=0, runtime=config, consent=ConsentPolicy(clock=clock))
    with ServeHandle.start(options) as handle:
        yield Served(handle, config, clock)


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def legacy(url: str, name: str = "apps-host") -> Client:
    """A 2025-era MCP Apps host: it shows cards and cannot elicit."""
    return Client(url, mode="legacy", client_info=Implementation(name=name, version="1.0"))


def own(client: Client) -> Any:
    """The session this client's last result named, sent back as a host does (docs/serve.md,
    "Sessions"): each client here is one conversation, and two clients are two."""
    session = getattr(client, "skillc_session", None)
    return {"skillc/session": session} if session is not None else None


def remember(client: Client, result: Any) -> Any:
    named = (getattr(result, "meta", None) or {}).get("skillc/session")
    if isinstance(named, str):
        client.skillc_session = named  # type: ignore[attr-defined]
    return result


async def call(client: Client, tool: str, arguments: dict[str, Any], **kw: Any) -> CallToolResult:
    result = await client.session.call_tool(tool, arguments, allow_input_required=True, meta=own(client), **kw)
    assert isinstance(result, CallToolResult), result
    return cast("CallToolResult", remember(client, result))


def ask_in_card(url: str, arguments: dict[str, Any] = ORDER) -> CallToolResult:
    async def session() -> CallToolResult:
        async with legacy(url) as client:
            return await call(client, "confirmOrder", arguments)

    return cast("CallToolResult", run(session()))


def answer(url: str, token: Any, approve: Any = True, client_name: str = "apps-host") -> CallToolResult:
    async def session() -> CallToolResult:
        async with legacy(url, client_name) as client:
            return await call(client, "skillc_consent", {"token": token, "approve": approve})

    return cast("CallToolResult", run(session()))


def token_of(result: CallToolResult) -> str:
    assert result.meta is not None
    token = result.meta["skillc/consent"]["token"]
    assert isinstance(token, str)
    return token


def text(result: CallToolResult) -> str:
    return "".join(getattr(b, "text", "") for b in result.content)


def assert_refused(result: CallToolResult, code: str) -> None:
    assert result.is_error is True, text(result)
    assert f"({code}: " in text(result), text(result)
    assert result.structured_content is None


# -- in the card --------------------------------------------------------------------------------


def test_the_user_is_asked_in_the_card_and_the_token_is_only_in_meta(served: Served) -> None:
    before = served.audited("confirmOrder")
    asked = ask_in_card(served.url)
    # Not an error the model must act on: the model is told that the user is being asked, and to wait.
    assert asked.is_error is False
    assert text(asked) == (
        "confirmOrder (risk L3) needs the user's consent, and the user is being asked in the card to approve "
        "or decline it. Wait for the user's answer; do not call confirmOrder again."
    )
    token = token_of(asked)
    assert asked.structured_content is None
    assert token not in json.dumps([b.model_dump() for b in asked.content])
    consent = asked.meta["skillc/consent"] if asked.meta else {}
    assert (consent["tool"], consent["risk"], consent["arguments"], consent["consentTool"]) == (
        "confirmOrder",
        "L3",
        ORDER,
        "skillc_consent",
    )
    assert served.audited("confirmOrder") == before  # asking runs nothing

    done = answer(served.url, token)
    assert done.is_error is False, text(done)
    assert done.structured_content is not None and done.structured_content["order"]["orderId"].startswith("MB")
    assert done.meta is not None and done.meta["skillc/card"]["componentPath"] == "components/order-confirm/index"
    assert served.audited("confirmOrder") == [*before, AuditOutcome.OK]


def test_declining_runs_nothing_and_says_so(served: Served, caplog: pytest.LogCaptureFixture) -> None:
    token = token_of(ask_in_card(served.url))
    audit, storage = served.audited("confirmOrder"), served.storage()
    with caplog.at_level(logging.INFO, logger=REQUEST_LOGGER):
        declined = answer(served.url, token, approve=False)
    assert declined.is_error is False
    assert text(declined) == (
        'The user declined confirmOrder {"drinkId": "d02", "size": "grande"} in the card; it did not run. '
        "Do not call it again unless the user asks for it."
    )
    assert (served.audited("confirmOrder"), served.storage()) == (audit, storage)
    # The request log says so, and the session's trace too.
    lines = [r.getMessage() for r in caplog.records if r.name == REQUEST_LOGGER]
    assert any("skillc_consent" in line and "refused" in line and "SRV035" in line for line in lines), lines
    assert declined.meta is not None
    events = _events(served.url, declined.meta["skillc/events"])
    assert "consent declined for confirmOrder (risk L3)" in [e["message"] for e in events]
    # A declined consent is spent: approving it afterwards runs nothing.
    assert_refused(answer(served.url, token), "SRV032")
    assert served.audited("confirmOrder") == audit


def test_a_token_approves_once(served: Served) -> None:
    token = token_of(ask_in_card(served.url))
    assert answer(served.url, token).is_error is False
    audit = served.audited("confirmOrder")
    assert_refused(answer(served.url, token), "SRV032")
    assert_refused(answer(served.url, token, client_name="another-host"), "SRV032")
    assert served.audited("confirmOrder") == audit


def _reseal(token: str, change: dict[str, Any]) -> str:
    body, mac = token.split(".")
    content = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    content.update(change)
    raw = json.dumps(content, sort_keys=True, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=") + "." + mac


@pytest.mark.parametrize(
    "forge",
    [
        pytest.param(lambda t: t[:-1] + ("0" if t[-1] != "0" else "1"), id="mac"),
        pytest.param(lambda t: _reseal(t, {"arguments": {"drinkId": "d01"}}), id="other-arguments"),
        pytest.param(lambda t: _reseal(t, {"tool": "payOrder"}), id="other-tool"),
        pytest.param(lambda t: _reseal(t, {"scope": "did:example:other"}), id="other-scope"),
        pytest.param(lambda t: _reseal(t, {"expires": 9_999_999_999_999}), id="later-expiry"),
        pytest.param(lambda _t: "not.a-token", id="garbage"),
        pytest.param(lambda _t: "x" * 5000, id="no-dot"),
    ],
)
def test_a_forged_token_runs_nothing(served: Served, forge: Any) -> None:
    token = token_of(ask_in_card(served.url))
    audit = served.audited("confirmOrder")
    assert_refused(answer(served.url, forge(token)), "SRV030")
    assert served.audited("confirmOrder") == audit
    assert answer(served.url, token).is_error is False  # the real one still works: nothing was spent


@pytest.mark.parametrize("approve", ["yes", 1, None])
def test_only_a_boolean_answer_is_an_answer(served: Served, approve: Any) -> None:
    token = token_of(ask_in_card(served.url))
    audit = served.audited("confirmOrder")
    bad = answer(served.url, token, approve=approve)
    assert bad.is_error is True and "approve a boolean" in text(bad)
    assert served.audited("confirmOrder") == audit


def test_an_expired_token_runs_nothing(served: Served) -> None:
    token = token_of(ask_in_card(served.url))
    audit = served.audited("confirmOrder")
    served.clock.now += CONSENT_TTL_S + 1
    try:
        assert_refused(answer(served.url, token), "SRV031")
        assert_refused(answer(served.url, token, approve=False), "SRV031")
    finally:
        served.clock.now -= CONSENT_TTL_S + 1
    assert served.audited("confirmOrder") == audit


def test_the_approved_call_runs_in_the_session_that_asked(served: Served) -> None:
    async def asked_in() -> tuple[str, str]:
        async with legacy(served.url, "asking-host") as client:
            result = await call(client, "confirmOrder", ORDER)
            assert result.meta is not None
            return token_of(result), str(result.meta["skillc/events"])

    token, events_uri = run(asked_in())
    # Answered from a request that lands in another session: the call still runs in the one that asked.
    done = answer(served.url, token, client_name="another-host")
    assert done.is_error is False and done.meta is not None
    assert done.meta["skillc/events"] == events_uri
    [record] = [r for r in AuditLog.of(served.config).records()[-1:]]
    assert record.session_id == events_uri.removeprefix("events://session/").split("?")[0]


def test_without_cards_or_elicitation_the_call_is_refused(served: Served) -> None:
    async def session() -> CallToolResult:
        async with Client(served.url) as client:  # 2026-07-28, no MCP Apps, no elicitation
            return await call(client, "confirmOrder", ORDER)

    refused = run(session())
    assert refused.is_error is True
    assert text(refused).startswith("confirmOrder needs the user's approval (risk L3) and was not approved")
    assert not (refused.meta or {}).get("skillc/consent")


def test_an_agents_tap_is_refused_not_asked_in_a_card_nobody_sees(served: Served) -> None:
    async def session() -> dict[str, Any]:
        async with legacy(served.url) as client:
            listed = await call(client, "searchDrinks", {"keyword": "latte"})
            card = (listed.meta or {})["skillc/card"]["cardId"]
            snap = await call(client, "ui_control__snapshot", {"card_id": card})
            assert snap.structured_content is not None
            sid = snap.structured_content["snapshot_id"]
            tap = {"card_id": card, "node_id": "0.1.0[d02]", "snapshot_id": sid, "action": "tap"}
            acted = await call(client, "ui_control__act", tap)
            assert acted.structured_content is not None
            return dict(acted.structured_content)

    audit = served.audited("confirmOrder")
    [follow] = cast("dict[str, Any]", run(session()))["follow_up"]
    assert (follow["api_name"], follow["status"]) == ("confirmOrder", "error")
    assert follow["text"].startswith("confirmOrder needs the user's approval (risk L3) and was not approved")
    assert served.audited("confirmOrder") == [*audit, AuditOutcome.REFUSED]


def test_no_elicit_asks_nobody(tmp_path: Path) -> None:
    options = ServeOptions(
        paths=(COFFEE,), port=0, runtime=RuntimeConfig(state_dir=tmp_path), consent=ConsentPolicy(elicit=False)
    )
    with ServeHandle.start(options) as handle:
        refused = ask_in_card(handle.url)
    assert refused.is_error is True and "skillc/consent" not in (refused.meta or {})


# -- elicitation (2026-07-28) -------------------------------------------------------------------


async def _never_asked(_ctx: Any, _params: Any) -> ElicitResult:  # declares the capability
    raise AssertionError("the server asks through InputRequiredResult, not mid-call")


_never: Any = _never_asked


def _elicited(url: str, name: str = "eliciting") -> tuple[str, str]:
    """A requestState for confirmOrder(ORDER), and the events URI of the session that asked."""

    async def session() -> tuple[str, str]:
        async with Client(url, elicitation_callback=_never, client_info=Implementation(name=name, version="1")) as c:
            asked = remember(c, await c.session.call_tool("confirmOrder", ORDER, allow_input_required=True))
            assert isinstance(asked, InputRequiredResult), asked
            listed = await c.session.call_tool("searchDrinks", {"keyword": "latte"}, meta=own(c))
            assert isinstance(listed, CallToolResult) and listed.meta is not None
            assert asked.request_state is not None
            return asked.request_state, str(listed.meta["skillc/events"])

    return cast("tuple[str, str]", run(session()))


def _retry(url: str, state: str, name: str, arguments: dict[str, Any] = ORDER, tool: str = "confirmOrder") -> Any:
    async def session() -> CallToolResult:
        async with Client(url, elicitation_callback=_never, client_info=Implementation(name=name, version="1")) as c:
            return await call(c, tool, arguments, input_responses=YES, request_state=state)

    return run(session())


def test_a_request_state_runs_in_its_session_once(served: Served) -> None:
    state, events_uri = _elicited(served.url)
    audit = served.audited("confirmOrder")
    # Retried by a client in another session: it runs in the session that asked, once.
    done = _retry(served.url, state, "another-client")
    assert done.is_error is False, text(done)
    assert done.meta is not None and done.meta["skillc/events"] == events_uri
    assert served.audited("confirmOrder") == [*audit, AuditOutcome.OK]
    again = _retry(served.url, state, "eliciting")
    assert_refused(again, "SRV032")
    assert text(again).startswith("confirmOrder needs the user's approval (risk L3)")
    assert served.audited("confirmOrder") == [*audit, AuditOutcome.OK]


def test_a_request_state_is_for_its_call_only(served: Served) -> None:
    state, _ = _elicited(served.url)
    audit = served.audited("confirmOrder")
    assert_refused(_retry(served.url, state, "eliciting", {"drinkId": "d01"}), "SRV034")
    assert_refused(_retry(served.url, state, "eliciting", {"orderId": "x"}, tool="payOrder"), "SRV034")
    # Neither way of asking takes the other's consent.
    assert_refused(answer(served.url, state), "SRV034")
    card_token = token_of(ask_in_card(served.url))
    assert_refused(_retry(served.url, card_token, "eliciting"), "SRV034")
    assert served.audited("confirmOrder") == audit
    assert _retry(served.url, state, "eliciting").is_error is False  # none of that spent it


# -- the caller a consent was given to (the policy, as the auth middleware binds callers) --------


def _api() -> ServedApi:
    spec = ApiSpec.model_validate({"name": "pay", "description": "d", "inputSchema": {"type": "object"}})
    return ServedApi("pay", "lab-skill", spec, RiskLevel.L3, False, "ui://lab-skill/pay")


ALICE = Caller(did="did:example:alice", subject="alice")
BOB = Caller(did="did:example:bob", subject="bob")


def test_a_card_token_is_the_callers_only() -> None:
    policy, api = ConsentPolicy(), _api()
    with calling_as(ALICE):
        token = policy.seal("card", api, {"n": 1}, "s-alice")
    with calling_as(BOB):
        assert policy.redeem(token) == Refusal("SRV033", "it was given to another caller")
    assert policy.redeem(token) == Refusal("SRV033", "it was given to another caller")  # nor without auth
    with calling_as(ALICE):
        assert policy.redeem(token) == Consent("pay", {"n": 1}, "s-alice")


def test_a_request_state_is_the_callers_only() -> None:
    policy, api = ConsentPolicy(), _api()
    with calling_as(ALICE):
        state = policy.ask(api, {"n": 1}, "s-alice").request_state
    with calling_as(BOB):
        assert policy.answered(api, {"n": 1}, YES, state) == Refusal("SRV033", "it was given to another caller")
    with calling_as(ALICE):
        assert policy.answered(api, {"n": 1}, YES, state) == Consent("pay", None, "s-alice", approved=True)
        assert policy.answered(api, {"n": 1}, YES, state) == Refusal("SRV032", "it was already used")


def _events(url: str, uri: str) -> list[dict[str, Any]]:
    async def session() -> list[dict[str, Any]]:
        async with legacy(url) as client:
            read = await client.session.read_resource(uri + "?limit=1000", meta=own(client))
            assert isinstance(read, ReadResourceResult)
            page = json.loads(getattr(read.contents[0], "text", "{}"))
            return list(page["events"])

    return cast("list[dict[str, Any]]", run(session()))
