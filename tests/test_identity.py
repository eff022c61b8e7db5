"""Identity: wx.login's capability tokens, wx.checkSession, anonymous callers of L1+ APIs, and the
identity headers wx.request carries to allow-listed hosts, through `skillc call`, `run` and `serve`.

The fixture skill (tests/fixtures/identity/member-skill) logs in, checks its session, fetches a
profile with headers that try to forge an identity, and has an L1 and an L3 API. The headers are
observed by real HTTP servers on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import http.server
import json
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from mcp.client import Client
from mcp_types import ElicitResult

from skillc.cli import main
from skillc.runtime.config import Identity, RuntimeConfig
from skillc.runtime.contracts import ANONYMOUS_USER_DID, ApiCallContext
from skillc.runtime.host.identity import CallIdentity, CapabilityClaims, IdentityError, sign, verify
from skillc.runtime.state import open_state, state_url_of
from skillc.runtime.state.keys import shared_key
from skillc.server.runner import ServeHandle, ServeOptions

from .conftest import FIXTURES

MEMBER = FIXTURES / "identity" / "member-skill"
EXPIRED = "checkSession:fail session time out, need relogin (the capability token has expired)"
RUN060 = (
    "{api} needs a signed-in user (risk {risk}) and the caller is anonymous; "
    "call it with a user DID (skillc call / run / serve --user DID)"
)


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def call(state: Path, api: str, *extra: str, skill: Path = MEMBER) -> tuple[int, dict[str, Any]]:
    """`skillc call ... --json`: the exit code and the whole outcome."""
    code, out, err = invoke("call", str(skill), api, "--state-dir", str(state), "--json", *extra)
    assert out, err
    return code, json.loads(out)


def sign_in(state: Path, *extra: str) -> str:
    code, outcome = call(state, "signIn", *extra)
    assert code == 0, outcome
    assert outcome["result"]["structuredContent"]["checked"] == "checkSession:ok"
    token: str = outcome["result"]["structuredContent"]["code"]
    return token


def session_status(state: Path, *extra: str, skill: Path = MEMBER) -> tuple[str, list[tuple[str, str]]]:
    """What wx.checkSession answered, and the diagnostics (code, message) of the call."""
    code, outcome = call(state, "sessionStatus", *extra, skill=skill)
    assert code == 0, outcome
    return outcome["result"]["structuredContent"]["errMsg"], [(d["code"], d["message"]) for d in outcome["diagnostics"]]


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def claims_of(token: str) -> dict[str, Any]:
    payload = token.split(".")[1]
    parsed: dict[str, Any] = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    return parsed


# -- wx.login / wx.checkSession -------------------------------------------------------------------


def test_login_issues_a_signed_token_that_a_later_call_finds_valid(tmp_path: Path) -> None:
    before = time.time()
    token = sign_in(tmp_path)
    header, payload, signature = token.split(".")
    assert json.loads(base64.urlsafe_b64decode(header + "==")) == {"alg": "HS256", "typ": "JWT"}
    claims = claims_of(token)
    scope = claims.pop("skillScope")
    assert scope.startswith("member-skill@") and len(scope) == len("member-skill@") + 16
    assert len(claims.pop("jti")) == 32
    iat, exp = claims.pop("iat"), claims.pop("exp")
    assert before - 1 <= iat <= time.time() + 1 and exp == pytest.approx(iat + 7200, abs=0.002)
    assert claims == {
        "iss": "skillc",
        "sub": "did:example:user",
        "agentDid": "did:example:agent",
        "merchantDid": "did:example:merchant",
        "skillId": "member-skill",
    }
    # The key lives with the state, private to its owner; a backend holding it verifies the token.
    url = state_url_of(RuntimeConfig(state_dir=tmp_path))
    if url.kind == "postgresql":  # in the store, shared by every instance
        key = shared_key(open_state(url), "identity")
    else:
        key_file = tmp_path / "identity.key"
        assert key_file.stat().st_mode & 0o777 == 0o600
        key = bytes.fromhex(key_file.read_text())
    assert len(key) == 32
    assert b64(hmac.new(key, f"{header}.{payload}".encode(), hashlib.sha256).digest()) == signature
    # Another process, another call: the session wx.login opened is still valid, with the same key.
    assert session_status(tmp_path) == ("checkSession:ok", [])
    assert session_status(tmp_path, "--token", token) == ("checkSession:ok", [])
    stored = (
        shared_key(open_state(url), "identity") if url.kind == "postgresql" else bytes.fromhex(key_file.read_text())
    )
    assert stored == key


def test_check_session_without_a_login_fails(tmp_path: Path) -> None:
    assert session_status(tmp_path) == ("checkSession:fail not logged in (call wx.login first)", [])


def test_an_expired_token_fails_the_session_check(tmp_path: Path) -> None:
    token = sign_in(tmp_path, "--login-ttl", "0.3")
    assert claims_of(token)["exp"] == pytest.approx(claims_of(token)["iat"] + 0.3, abs=0.002)
    time.sleep(max(0.0, claims_of(token)["exp"] - time.time()) + 0.05)
    assert session_status(tmp_path) == (EXPIRED, [])
    assert session_status(tmp_path, "--token", token) == (EXPIRED, [])
    # A new login opens a new session.
    sign_in(tmp_path)
    assert session_status(tmp_path) == ("checkSession:ok", [])


def _tampered(token: str) -> str:
    header, _payload, signature = token.split(".")
    claims = claims_of(token)
    claims["sub"] = "did:example:mallory"
    forged = b64(json.dumps(claims, sort_keys=True, separators=(",", ":")).encode())
    return f"{header}.{forged}.{signature}"


def _resigned_other_key(token: str) -> str:
    header, payload, _signature = token.split(".")
    return f"{header}.{payload}.{b64(hmac.new(b'k' * 32, f'{header}.{payload}'.encode(), hashlib.sha256).digest())}"


def _alg_none(token: str) -> str:
    _header, payload, _signature = token.split(".")
    return b64(json.dumps({"alg": "none", "typ": "JWT"}).encode()) + f".{payload}."


@pytest.mark.parametrize(
    ("forge", "reason"),
    [
        (_tampered, "has a signature that does not match (tampered with, or signed with another key)"),
        (_resigned_other_key, "has a signature that does not match (tampered with, or signed with another key)"),
        (_alg_none, "is malformed (only HS256 JWTs are issued)"),
        (lambda _t: "not-a-token", "is malformed (not a JWT of three parts)"),
        (lambda _t: "a.b!.c", "is malformed (not base64url JSON)"),
    ],
)
def test_a_tampered_or_malformed_token_is_refused(tmp_path: Path, forge: Any, reason: str) -> None:
    token = sign_in(tmp_path)
    got = session_status(tmp_path, "--token", forge(token))
    message = f"the capability token {reason}"
    assert got == (f"checkSession:fail {message}", [("RUN061", f"wx.checkSession: {message}")])


def test_a_token_of_another_skill_user_or_agent_is_refused(tmp_path: Path) -> None:
    token = sign_in(tmp_path)
    rival = tmp_path / "skills" / "rival-skill"
    shutil.copytree(MEMBER, rival)
    # The same skill in another folder is another skill too (its scope differs).
    moved = tmp_path / "skills" / "member-skill"
    shutil.copytree(MEMBER, moved)
    for skill, extra, bound in [
        (rival, (), "skill"),
        (moved, (), "skill"),
        (MEMBER, ("--user", "did:example:mallory"), "user"),
    ]:
        message = f"the capability token is bound to another {bound}"
        got = session_status(tmp_path, "--token", token, *extra, skill=skill)
        assert got == (f"checkSession:fail {message}", [("RUN061", f"wx.checkSession: {message}")])
    # The rival's own login is its own; the member's session is untouched.
    assert claims_of(sign_in(tmp_path, "--user", "did:example:mallory"))["sub"] == "did:example:mallory"
    assert session_status(tmp_path) == ("checkSession:ok", [])


def test_verify_checks_every_binding_and_the_clock() -> None:
    """The module's own contract, with an injected clock: agent and merchant bindings, expiry at exp."""
    ctx = ApiCallContext(
        user_did="did:u", agent_did="did:a", merchant_did="did:m", skill_id="s", skill_scope="s@1", session_id="x"
    )
    key = bytes(32)
    token = sign(CapabilityClaims.of(ctx, now=1000.0, ttl_s=60), key)
    assert verify(token, key, ctx, now=1059.999).sub == "did:u"
    for update, bound in [({"agent_did": "did:b"}, "agent"), ({"merchant_did": "did:n"}, "merchant")]:
        with pytest.raises(IdentityError) as refused:
            verify(token, key, ctx.model_copy(update=update), now=1000.0)
        assert refused.value.reason == f"the capability token is bound to another {bound}"
    with pytest.raises(IdentityError) as late:
        verify(token, key, ctx, now=1060.0)
    assert (late.value.reason, late.value.diagnostic) == (EXPIRED.removeprefix("checkSession:fail "), None)


def test_a_key_readable_by_others_or_broken_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SKILLC_STATE_URL", raising=False)  # the key file's checks: on PostgreSQL there is none
    sign_in(tmp_path)
    key_file = tmp_path / "identity.key"
    key_file.chmod(0o644)
    code, outcome = call(tmp_path, "signIn")
    message = f"the identity key {key_file} is readable by other users (mode 0644); chmod 600 {key_file}"
    assert code == 0
    assert outcome["result"]["structuredContent"] == {
        "login": f"login:fail {message}",
        "code": None,
        "checked": f"checkSession:fail {message}",
    }
    assert [(d["code"], d["message"]) for d in outcome["diagnostics"]] == [("RUN062", message)] * 2
    key_file.write_text("abcd\n")
    key_file.chmod(0o600)
    message = f"the identity key {key_file} does not hold 32 hex-encoded bytes"
    assert session_status(tmp_path) == (f"checkSession:fail {message}", [("RUN062", message)])


# -- anonymous callers ----------------------------------------------------------------------------


def test_an_anonymous_caller_is_refused_at_l1_and_above(tmp_path: Path) -> None:
    code, out, err = invoke("call", str(MEMBER), "saveNote", "--anonymous", "--state-dir", str(tmp_path))
    message = RUN060.format(api="saveNote", risk="L1")
    assert (code, err) == (1, "")
    first, *rest = out.splitlines()
    assert first.startswith("saveNote: error (risk L1, ")
    assert rest == [f"  {message}.", f"{MEMBER}: error[RUN060]: {message}"]
    # L3: refused for the identity, before any approval is asked for; audited as a refusal.
    code, outcome = call(tmp_path, "clearNotes", "--anonymous", "--approve")
    message = RUN060.format(api="clearNotes", risk="L3")
    assert code == 1
    assert outcome["result"] == {"isError": True, "content": [{"type": "text", "text": message + "."}]}
    assert [(d["code"], d["message"]) for d in outcome["diagnostics"]] == [("RUN060", message)]
    assert "approved" not in outcome  # never asked
    assert (outcome["audit"]["outcome"], outcome["audit"]["userDid"]) == ("refused", ANONYMOUS_USER_DID)
    # L0 runs; an anonymous caller has no session to log in to or check.
    code, outcome = call(tmp_path, "signIn", "--anonymous")
    anonymous = "the caller is anonymous: there is no user to log in (give a user DID: --user DID)"
    assert (code, outcome["result"]["structuredContent"]) == (
        0,
        {"login": f"login:fail {anonymous}", "code": None, "checked": f"checkSession:fail {anonymous}"},
    )
    # With a user DID the same L1 call runs.
    code, outcome = call(tmp_path, "saveNote", "--user", "did:example:ann")
    assert (code, outcome["result"]["content"][0]["text"]) == (0, "saved hello")


def test_anonymous_and_user_together_are_a_usage_error(tmp_path: Path) -> None:
    message = "skillc: error: --anonymous and --user cannot be given together (pick one caller)\n"
    for command in (
        ["call", str(MEMBER), "saveNote", "--state-dir", str(tmp_path)],
        ["run", str(MEMBER), "--script", str(MEMBER / "flows" / "sign-in.json")],
        ["serve", str(MEMBER), "--port", "0", "--state-dir", str(tmp_path)],
    ):
        code, out, err = invoke(*command, "--anonymous", "--user", "did:example:ann")
        assert (code, out, err) == (2, "", message)


# -- wx.request carries the identity to allow-listed hosts only -----------------------------------


class _Recorder(http.server.BaseHTTPRequestHandler):
    """Answers every GET, records (path, headers); ``/bounce`` redirects to the server's ``bounce_to``."""

    def do_GET(self) -> None:
        self.server.seen.append((self.path, {k.lower(): v for k, v in self.headers.items()}))  # type: ignore[attr-defined]
        if self.path == "/bounce":
            self.send_response(302)
            self.send_header("location", self.server.bounce_to + "/landing")  # type: ignore[attr-defined]
            self.send_header("content-length", "0")
            self.end_headers()
            return
        body = b'{"member": "ann"}'
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args: object) -> None:
        pass


class Recording:
    def __init__(self) -> None:
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
        self.server.seen = []  # type: ignore[attr-defined]
        self.server.bounce_to = ""  # type: ignore[attr-defined]
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def take(self) -> list[tuple[str, dict[str, str]]]:
        seen: list[tuple[str, dict[str, str]]] = self.server.seen  # type: ignore[attr-defined]
        taken = list(seen)
        seen.clear()
        return taken

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def servers() -> Iterator[tuple[Recording, Recording, Recording]]:
    made = (Recording(), Recording(), Recording())
    made[0].server.bounce_to = made[1].url  # type: ignore[attr-defined]
    yield made
    for r in made:
        r.close()


def _identity(headers: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in headers.items() if k.startswith("x-skillc-") or k == "x-trace"}


def test_wx_request_carries_the_identity_to_allow_listed_hosts_only(
    tmp_path: Path, servers: tuple[Recording, Recording, Recording]
) -> None:
    listed, second, unlisted = servers
    allow = ("--allow-host", listed.url, "--allow-host", second.url)

    def fetch(url: str, *extra: str) -> tuple[int, dict[str, Any]]:
        return call(tmp_path, "fetchProfile", "--args", json.dumps({"url": url}), *allow, *extra)

    token = sign_in(tmp_path)
    signed_in = {
        "x-skillc-user-did": "did:example:user",
        "x-skillc-agent-did": "did:example:agent",
        "x-skillc-merchant-did": "did:example:merchant",
        "x-skillc-capability": token,
        "x-trace": "t-1",
    }
    # Both listed hosts get the caller's DIDs and token; the skill's forged X-Skillc-* headers are gone.
    for host in (listed, second):
        code, outcome = fetch(host.url + "/profile")
        assert (code, outcome["result"]["structuredContent"]) == (0, {"status": 200})
        assert [(path, _identity(h)) for path, h in host.take()] == [("/profile", signed_in)]
    # A redirect is handed to the skill, not followed: the other host never sees the identity.
    code, outcome = fetch(listed.url + "/bounce")
    assert (code, outcome["result"]["structuredContent"]) == (0, {"status": 302})
    assert [path for path, _h in listed.take()] == ["/bounce"]
    assert second.take() == []
    # A host off the list is refused before anything is sent.
    code, outcome = fetch(unlisted.url + "/profile")
    assert (code, outcome["result"]["content"][0]["text"]) == (
        1,
        f"request:fail url not in domain list: {unlisted.url}/profile",
    )
    assert unlisted.take() == []
    # Anonymous: no identity at all, and still none of the skill's forgeries.
    code, _outcome = fetch(listed.url + "/profile", "--anonymous")
    assert code == 0
    assert [_identity(h) for _path, h in listed.take()] == [{"x-trace": "t-1"}]
    # A token that is not valid for the caller is not forwarded; the DIDs still are.
    fetch(listed.url + "/profile", "--user", "did:example:bob", "--token", token)
    bob = {**signed_in, "x-skillc-user-did": "did:example:bob"}
    del bob["x-skillc-capability"]
    assert [_identity(h) for _path, h in listed.take()] == [bob]


def test_a_did_cannot_inject_headers(tmp_path: Path, servers: tuple[Recording, Recording, Recording]) -> None:
    listed = servers[0]
    user = "did:example:ann\r\nX-Evil: 1 ü"
    code, _outcome = call(
        tmp_path, "fetchProfile", "--args", json.dumps({"url": listed.url + "/p"}), "--allow-host", listed.url,
        "--user", user,
    )  # fmt: skip
    assert code == 0
    [(_path, headers)] = listed.take()
    assert headers["x-skillc-user-did"] == "did:example:ann%0D%0AX-Evil:%201%20%C3%BC"
    assert "x-evil" not in headers


def test_request_headers_follow_the_injected_clock(tmp_path: Path) -> None:
    """CallIdentity with a clock: the token is forwarded until exp, then only the DIDs are."""
    ctx = ApiCallContext(
        user_did="did:u", agent_did="did:a", merchant_did="did:m", skill_id="s", skill_scope="s@1", session_id="x"
    )
    now = [1000.0]
    config = RuntimeConfig(state_dir=tmp_path, login_ttl_s=10)
    identity = CallIdentity(ctx, config, [], clock=lambda: now[0])
    token = identity.login()
    dids = {"X-Skillc-User-DID": "did:u", "X-Skillc-Agent-DID": "did:a", "X-Skillc-Merchant-DID": "did:m"}
    assert identity.request_headers() == {**dids, "X-Skillc-Capability": token}
    now[0] = 1010.0
    assert identity.request_headers() == dids


# -- skillc run ------------------------------------------------------------------------------------


def _flow(*extra: str) -> tuple[int, list[dict[str, Any]]]:
    code, out, err = invoke("run", str(MEMBER), "--script", str(MEMBER / "flows" / "sign-in.json"), "--json", *extra)
    assert out, err
    return code, json.loads(out)


def test_run_logs_in_and_keeps_the_session_across_steps() -> None:
    code, steps = _flow()
    assert code == 0
    results = [s["api"][0]["result"] for s in steps]
    assert [r["content"][0]["text"] for r in results] == ["login:ok / checkSession:ok", "checkSession:ok", "saved hi"]
    assert claims_of(results[0]["structuredContent"]["code"])["sub"] == "did:example:user"


def test_run_anonymous_refuses_the_l1_step() -> None:
    code, steps = _flow("--anonymous")
    assert code == 1
    anonymous = "the caller is anonymous: there is no user to log in (give a user DID: --user DID)"
    assert [s["failed"] for s in steps] == [False, False, True]
    assert steps[1]["api"][0]["result"]["content"][0]["text"] == f"checkSession:fail {anonymous}"
    message = RUN060.format(api="saveNote", risk="L1")
    assert [(d["code"], d["message"]) for d in steps[2]["diagnostics"]] == [("RUN060", message)]


def test_run_carries_the_identity_to_an_allowed_host(
    tmp_path: Path, servers: tuple[Recording, Recording, Recording]
) -> None:
    listed = servers[0]
    flow = tmp_path / "fetch.json"
    steps = [{"call": "signIn"}, {"call": "fetchProfile", "arguments": {"url": listed.url + "/profile"}}]
    flow.write_text(json.dumps({"steps": steps}), "utf-8")
    code, out, err = invoke("run", str(MEMBER), "--script", str(flow), "--allow-host", listed.url, "--json")
    assert code == 0, err
    token = json.loads(out)[0]["api"][0]["result"]["structuredContent"]["code"]
    [(_path, headers)] = listed.take()
    assert (headers["x-skillc-user-did"], headers["x-skillc-capability"]) == ("did:example:user", token)


# -- skillc serve ----------------------------------------------------------------------------------


def _tool(url: str, name: str, asked: list[str] | None = None) -> tuple[bool, str, Any]:
    """One tools/call; with ``asked``, over 2026-07-28 by a client that answers consent requests
    (recording them) by accepting."""

    async def consent(_ctx: Any, params: Any) -> ElicitResult:
        assert asked is not None
        asked.append(params.message)
        return ElicitResult(action="accept", content={"approve": True})

    async def session() -> Any:
        if asked is None:
            async with Client(url, mode="legacy") as client:
                return await client.call_tool(name, {})
        async with Client(url, elicitation_callback=consent) as client:
            assert client.protocol_version == "2026-07-28"
            return await client.call_tool(name, {})

    result = asyncio.run(session())
    return result.is_error, result.content[0].text, result.structured_content


def test_serve_keeps_the_session_between_tool_calls(tmp_path: Path) -> None:
    options = ServeOptions(paths=(MEMBER,), port=0, runtime=RuntimeConfig(state_dir=tmp_path))
    with ServeHandle.start(options) as handle:
        assert _tool(handle.url, "sessionStatus")[1] == "checkSession:fail not logged in (call wx.login first)"
        error, text, structured = _tool(handle.url, "signIn")
        assert (error, text) == (False, "login:ok / checkSession:ok")
        assert claims_of(structured["code"])["skillId"] == "member-skill"
        assert _tool(handle.url, "sessionStatus")[:2] == (False, "checkSession:ok")
    anonymous = RuntimeConfig(state_dir=tmp_path, identity=Identity(user_did=ANONYMOUS_USER_DID))
    with ServeHandle.start(ServeOptions(paths=(MEMBER,), port=0, runtime=anonymous)) as handle:
        # L3 too: refused for the identity, and nobody is asked to consent for a caller no one is.
        asked: list[str] = []
        for api, risk in (("saveNote", "L1"), ("clearNotes", "L3")):
            assert _tool(handle.url, api, asked)[:2] == (True, RUN060.format(api=api, risk=risk) + ".")
        assert asked == []


def test_cli_serve_anonymous(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    command = [sys.executable, "-m", "skillc", "serve", str(MEMBER), "--anonymous", "--port", str(port)]
    proc = subprocess.Popen([*command, "--state-dir", str(tmp_path)], stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        for _ in range(300):
            try:
                httpx.get(f"http://127.0.0.1:{port}/", timeout=5)
                break
            except httpx.TransportError:
                time.sleep(0.1)
        assert _tool(url, "saveNote")[:2] == (True, RUN060.format(api="saveNote", risk="L1") + ".")
    finally:
        proc.terminate()
        proc.communicate(timeout=30)
