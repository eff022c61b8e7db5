"""``skillc serve`` as an OAuth 2.1 protected resource (docs/serve.md, "Authentication"): a real
JWKS over HTTP and in a file, real signed tokens (fresh RSA and EC test keys), a real introspection
endpoint, the official SDK client over HTTP. Two users on one server keep their storage, cards,
events, artefacts and audit lines apart. Without auth the server is single-user and loopback-only."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp.client.streamable_http import streamable_http_client
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import Implementation

from skillc.runtime.api.audit import AuditLog
from skillc.runtime.config import RuntimeConfig
from skillc.runtime.contracts import ConsoleEntry
from skillc.server.auth.config import AuthConfig
from skillc.server.auth.identity import did_of
from skillc.server.caller import current_caller
from skillc.server.consent import ConsentPolicy
from skillc.server.runner import ServeHandle, ServeOptions, UnsafeBind
from tests.conftest import ROOT
from tests.debug_servers import free_port
from tests.identity_provider import (
    INTROSPECTION_CLIENT,
    IdentityProvider,
    KeyPair,
    ec_pair,
    hs256_with_public_key,
    identity_provider,
    rsa_pair,
    sign,
    unsigned,
    write_jwks,
)
from tests.session_client import SessionClient
from tests.test_serve_workers import serve as serve_cli
from tests.test_server import APPS

NOTES = ROOT / "tests" / "fixtures" / "auth" / "notes-skill"
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
ARTEFACT = re.compile(r"artefact://sha256/[0-9a-f]{64}(?:\?session=[\w-]+)?")
LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
ADD = "0.3"  # the counter's +1 button in its Render IR


@pytest.fixture(scope="module")
def keys() -> tuple[KeyPair, KeyPair]:
    return rsa_pair("rsa-1"), ec_pair("ec-1")


@pytest.fixture(scope="module")
def idp(keys: tuple[KeyPair, KeyPair]) -> Iterator[IdentityProvider]:
    with identity_provider(*keys) as provider:
        yield provider


def _options(state_dir: Path, port: int, auth: AuthConfig | None, **extra: Any) -> ServeOptions:
    return ServeOptions(
        paths=(NOTES,),
        port=port,
        runtime=RuntimeConfig(state_dir=state_dir),
        consent=ConsentPolicy(approve=frozenset({"clearNote"})),
        auth=auth,
        **extra,
    )


@pytest.fixture(scope="module")
def served(idp: IdentityProvider, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeHandle]:
    port = free_port()
    auth = AuthConfig(issuer=idp.url, resource_url=f"http://127.0.0.1:{port}/mcp", jwks_url=idp.jwks_url)
    # Every card's Render IR goes by artefact reference, so each call leaves an artefact.
    options = _options(tmp_path_factory.mktemp("auth-state"), port, auth, inline_document_bytes=16)
    with ServeHandle.start(options) as handle:
        yield handle


def token_for(idp: IdentityProvider, handle: ServeHandle, sub: str, pair: KeyPair) -> str:
    return sign(pair, idp.claims(sub, handle.url))


@asynccontextmanager
async def client_as(url: str, token: str | None, name: str = "the-same-host") -> AsyncIterator[SessionClient]:
    """The SDK client with a bearer token; every user here sends the same clientInfo on purpose."""
    headers = {"authorization": f"Bearer {token}"} if token else None
    async with create_mcp_http_client(headers=headers) as http:
        transport = streamable_http_client(url, http_client=http)
        # It continues its session as a host does (tests/session_client.py).
        async with SessionClient(
            transport, extensions=[APPS], client_info=Implementation(name=name, version="1.0")
        ) as c:
            yield c


def _text(result: Any) -> str:
    return str(result.content[0].text)


def _post(url: str, token: str | None) -> httpx.Response:
    headers = {**ACCEPT, **({"authorization": f"Bearer {token}"} if token else {})}
    return httpx.post(url, json=LIST, headers=headers, timeout=30)


# -- the door: 401 without a good token, the metadata that says where to get one ------------------


def test_no_token_is_401_naming_the_resource_metadata(served: ServeHandle) -> None:
    got = _post(served.url, None)
    assert got.status_code == 401
    metadata = f"http://127.0.0.1:{served.port}/.well-known/oauth-protected-resource/mcp"
    challenge = got.headers["www-authenticate"]
    assert challenge.startswith("Bearer ") and f'resource_metadata="{metadata}"' in challenge
    assert got.json()["error"] == "invalid_token"


def test_the_protected_resource_metadata(served: ServeHandle, idp: IdentityProvider) -> None:
    got = httpx.get(f"http://127.0.0.1:{served.port}/.well-known/oauth-protected-resource/mcp", timeout=30)
    assert got.status_code == 200
    doc = got.json()
    assert doc["resource"] == served.url
    assert [s.rstrip("/") for s in doc["authorization_servers"]] == [idp.url]
    assert doc["bearer_methods_supported"] == ["header"]


def test_health_and_the_info_page_stay_public(served: ServeHandle) -> None:
    base = f"http://127.0.0.1:{served.port}"
    assert httpx.get(base + "/healthz", timeout=30).status_code == 200
    page = httpx.get(base + "/", headers={"accept": "text/html"}, timeout=30)
    assert page.status_code == 200 and "keepNote" in page.text


def _bad_tokens(idp: IdentityProvider, keys: tuple[KeyPair, KeyPair], audience: str) -> dict[str, str]:
    rsa_key, _ec = keys
    impostor = rsa_pair(rsa_key.kid)  # another key under the same kid: a bad signature
    good = idp.claims("mallory", audience)
    now = int(time.time())
    return {
        "bad signature": sign(impostor, good),
        "wrong issuer": sign(rsa_key, {**good, "iss": "http://127.0.0.1:1"}),
        "wrong audience": sign(rsa_key, {**good, "aud": "http://127.0.0.1:1/mcp"}),
        "expired": sign(rsa_key, {**good, "exp": now - 3600, "iat": now - 7200}),
        "not yet valid": sign(rsa_key, {**good, "nbf": now + 3600}),
        "no expiry": sign(rsa_key, {k: v for k, v in good.items() if k != "exp"}),
        "alg none": unsigned(good),
        "HS256 with the public key": hs256_with_public_key(rsa_key, good),
        "no subject": sign(rsa_key, {k: v for k, v in good.items() if k != "sub"}),
        "unknown kid": sign(rsa_key, good, kid="nobody"),
        "not a JWT": "not-a-jwt",
    }


@pytest.mark.parametrize(
    "case",
    [
        "bad signature",
        "wrong issuer",
        "wrong audience",
        "expired",
        "not yet valid",
        "no expiry",
        "alg none",
        "HS256 with the public key",
        "no subject",
        "unknown kid",
        "not a JWT",
    ],
)
def test_a_bad_token_is_401(
    served: ServeHandle, idp: IdentityProvider, keys: tuple[KeyPair, KeyPair], case: str
) -> None:
    token = _bad_tokens(idp, keys, served.url)[case]
    got = _post(served.url, token)
    assert got.status_code == 401, got.text
    assert "resource_metadata=" in got.headers["www-authenticate"]


def test_rsa_and_ec_tokens_get_in_and_the_handler_sees_who_calls(
    served: ServeHandle, idp: IdentityProvider, keys: tuple[KeyPair, KeyPair]
) -> None:
    rsa_key, ec_key = keys
    seen: list[tuple[str | None, str | None]] = []

    def observe(_skill: str, _source: str, _lines: list[ConsoleEntry]) -> None:
        # Runs inside the MCP tool handler: both context variables must have reached it.
        caller, token = current_caller(), get_access_token()
        seen.append((caller.did if caller else None, token.subject if token else None))

    served.prepared.server.console_observers.append(observe)
    try:

        async def session() -> None:
            for sub, pair in (("rsa-user", rsa_key), ("ec-user", ec_key)):
                async with client_as(served.url, token_for(idp, served, sub, pair)) as client:
                    assert _text(await client.call_tool("keepNote", {"text": sub})) == "kept"

        asyncio.run(session())
    finally:
        served.prepared.server.console_observers.remove(observe)
    host = f"127.0.0.1%3A{idp.url.rsplit(':', 1)[1]}"
    assert seen == [(f"did:web:{host}:rsa-user", "rsa-user"), (f"did:web:{host}:ec-user", "ec-user")]


# -- two users on one server ------------------------------------------------------------------------


def test_two_users_do_not_share_storage(
    served: ServeHandle, idp: IdentityProvider, keys: tuple[KeyPair, KeyPair]
) -> None:
    alice, bob = (token_for(idp, served, sub, keys[0]) for sub in ("alice-st", "bob-st"))

    async def session() -> tuple[str, str, str]:
        async with client_as(served.url, alice) as a, client_as(served.url, bob) as b:
            await a.call_tool("keepNote", {"text": "alice's secret"})
            bob_sees = _text(await b.call_tool("readNote", {}))
            await b.call_tool("keepNote", {"text": "bob's"})
            return bob_sees, _text(await a.call_tool("readNote", {})), _text(await b.call_tool("readNote", {}))

    bob_sees, alice_reads, bob_reads = asyncio.run(session())
    assert bob_sees == "note: (none)"
    assert alice_reads == "note: alice's secret"
    assert bob_reads == "note: bob's"


def test_two_users_do_not_reach_each_others_cards_events_or_artefacts(
    served: ServeHandle, idp: IdentityProvider, keys: tuple[KeyPair, KeyPair]
) -> None:
    alice, bob = (token_for(idp, served, sub, keys[0]) for sub in ("alice-c", "bob-c"))

    async def session() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with client_as(served.url, alice) as a:
            shown = await a.call_tool("showCounter", {"label": "alice's"})
            meta = shown.meta or {}
            card_id, events = meta["skillc/card"]["cardId"], meta["skillc/events"]
            out["card id"] = card_id
            artefact = ARTEFACT.search(json.dumps(shown.model_dump(mode="json")))
            assert artefact is not None
            out["alice reads"] = len(json.loads((await a.read_resource(events)).contents[0].text)["events"])  # type: ignore[union-attr]
            out["alice artefact"] = len((await a.read_resource(artefact.group(0))).contents)
            own = (await a.call_tool("ui_control__snapshot", {"card_id": card_id})).structured_content or {}
            snapshot_id = own["snapshot_id"]
        async with client_as(served.url, bob) as b:  # the same clientInfo as alice's client
            mine = ((await b.call_tool("showCounter", {"label": "bob's"})).meta or {})["skillc/events"]
            out["same events uri"] = mine == events
            for name, uri in (("events", events), ("artefact", artefact.group(0))):
                try:
                    await b.read_resource(uri)
                    out[name] = "read"
                except MCPError as err:
                    out[name] = str(err)
            snap = await b.call_tool("ui_control__snapshot", {"card_id": card_id})
            act = await b.call_tool(
                "ui_control__act", {"card_id": card_id, "node_id": ADD, "snapshot_id": snapshot_id, "action": "tap"}
            )
            out["snapshot"] = (snap.structured_content or {}).get("error_code")
            out["act"] = (act.structured_content or {}).get("error_code")
            # Even with alice's session copied in: it is bound to alice, so bob runs in his own.
            copied = {"skillc/session": meta["skillc/session"]}
            tap = await b.call_tool("skillc_card_event", {"cardId": card_id, "nodeId": ADD}, meta=copied)
            view = await b.call_tool("skillc_card_view", {"cardId": card_id, "colorScheme": "dark"}, meta=copied)
            # Nor as the argument a bridge without _meta passes it in.
            argued = {"cardId": card_id, "nodeId": ADD, "session": meta["skillc/session"]}
            passed = await b.call_tool("skillc_card_event", argued)
            out["card tools"] = [(r.is_error, _text(r)) for r in (tap, view, passed)]
        return out

    out = asyncio.run(session())
    assert out["alice reads"] > 0 and out["alice artefact"] == 1
    assert out["same events uri"] is False
    assert out["events"].startswith("Unknown resource: events://session/")
    assert out["artefact"].startswith("Unknown resource: artefact://")
    assert out["snapshot"] == "denied" and out["act"] == "denied"
    assert out["card tools"] == [
        (True, f"skillc_card_event: denied: card {out['card id']} belongs to another user"),
        (True, f"skillc_card_view: denied: card {out['card id']} belongs to another user"),
        (True, f"skillc_card_event: denied: card {out['card id']} belongs to another user"),
    ]


def test_the_audit_log_names_each_user(
    served: ServeHandle, idp: IdentityProvider, keys: tuple[KeyPair, KeyPair]
) -> None:
    alice, bob = (token_for(idp, served, sub, keys[1]) for sub in ("alice-au", "bob-au"))

    async def session() -> None:
        for token in (alice, bob):
            async with client_as(served.url, token) as client:
                assert _text(await client.call_tool("clearNote", {})) == "forgotten"

    asyncio.run(session())
    users = _audited_users(served, "clearNote")
    port = idp.url.rsplit(":", 1)[1]
    assert users == {f"did:web:127.0.0.1%3A{port}:alice-au", f"did:web:127.0.0.1%3A{port}:bob-au"}


def _audited_users(handle: ServeHandle, api: str) -> set[str]:
    """The user DIDs of the audit log's lines for ``api``, from the server's own state store
    (SQLite or PostgreSQL alike)."""
    config = handle.prepared.config
    assert config is not None
    return {r.user_did for r in AuditLog.of(config).records() if r.api_name == api}


# -- the subject as a DID ----------------------------------------------------------------------------


def test_the_subject_becomes_a_did_web_of_the_issuer() -> None:
    config = AuthConfig(issuer="https://auth.example.com:8443/realms/shop", resource_url="https://x.y/mcp")
    assert did_of({"sub": "u:42/x"}, config) == "did:web:auth.example.com%3A8443:realms:shop:u%3A42%2Fx"
    assert did_of({}, config) is None
    by_claim = config.model_copy(update={"user_claim": "user_did"})
    assert did_of({"sub": "x", "user_did": "did:example:carol"}, by_claim) == "did:example:carol"
    assert did_of({"sub": "x", "user_did": "carol"}, by_claim) is None  # not a DID: refused, not mapped


def test_a_user_claim_names_the_did(idp: IdentityProvider, keys: tuple[KeyPair, KeyPair], tmp_path: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    auth = AuthConfig(issuer=idp.url, resource_url=url, jwks_url=idp.jwks_url, user_claim="user_did")
    with ServeHandle.start(_options(tmp_path, port, auth)) as handle:
        with_claim = sign(keys[0], idp.claims("carol", url, user_did="did:example:carol"))
        without = sign(keys[0], idp.claims("carol", url))
        assert _post(handle.url, without).status_code == 401

        async def session() -> str:
            async with client_as(handle.url, with_claim) as client:
                await client.call_tool("clearNote", {})
            return "ok"

        asyncio.run(session())
    assert _audited_users(handle, "clearNote") == {"did:example:carol"}


# -- a JWKS file, scopes, introspection ---------------------------------------------------------------


def test_a_jwks_file_and_required_scopes(idp: IdentityProvider, keys: tuple[KeyPair, KeyPair], tmp_path: Path) -> None:
    rsa_key, ec_key = keys
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    jwks_file = write_jwks(tmp_path / "jwks.json", ec_key)  # the EC key only
    auth = AuthConfig(issuer=idp.url, resource_url=url, jwks_file=jwks_file, required_scopes=("notes",))
    with ServeHandle.start(_options(tmp_path, port, auth)) as handle:
        scoped = sign(ec_key, idp.claims("dave", url, scope="notes other"))
        unscoped = sign(ec_key, idp.claims("dave", url, scope="other"))
        by_rsa = sign(rsa_key, idp.claims("dave", url, scope="notes"))
        assert _post(handle.url, scoped).status_code == 200
        forbidden = _post(handle.url, unscoped)
        assert forbidden.status_code == 403 and forbidden.json()["error"] == "insufficient_scope"
        assert _post(handle.url, by_rsa).status_code == 401  # its key is not in the file
        meta = httpx.get(f"http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp", timeout=30).json()
        assert meta["scopes_supported"] == ["notes"]


def test_introspection(idp: IdentityProvider, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLC_AUTH_CLIENT_SECRET", INTROSPECTION_CLIENT[1])
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    auth = AuthConfig(
        issuer=idp.url, resource_url=url, introspection_url=idp.introspect_url, client_id=INTROSPECTION_CLIENT[0]
    )
    now = int(time.time())
    good = {"active": True, "iss": idp.url, "sub": "erin", "aud": url, "exp": now + 600, "client_id": "host"}
    idp.introspection.update(
        {
            "opaque-active": good,
            "opaque-inactive": {**good, "active": False},
            "opaque-other-audience": {**good, "aud": "https://elsewhere.example/mcp"},
            "opaque-other-issuer": {**good, "iss": "https://elsewhere.example"},
            "opaque-no-audience": {k: v for k, v in good.items() if k != "aud"},
        }
    )
    with ServeHandle.start(_options(tmp_path, port, auth)) as handle:
        assert _post(handle.url, "opaque-active").status_code == 200
        for refused in ("opaque-inactive", "opaque-other-audience", "opaque-other-issuer", "opaque-no-audience"):
            assert _post(handle.url, refused).status_code == 401, refused
        assert _post(handle.url, "never-issued").status_code == 401

        async def session() -> None:
            async with client_as(handle.url, "opaque-active") as client:
                await client.call_tool("clearNote", {})

        asyncio.run(session())
    assert "opaque-active" in idp.introspected
    assert _audited_users(handle, "clearNote") == {f"did:web:127.0.0.1%3A{idp.url.rsplit(':', 1)[1]}:erin"}


# -- without auth: one user, loopback only -------------------------------------------------------------


def test_without_auth_a_non_loopback_bind_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UnsafeBind, match="without auth"):
        ServeHandle.start(_options(tmp_path, 0, None, host="0.0.0.0"))


def _serve(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "skillc", "serve", str(NOTES), "--port", "0", "--state-dir", str(tmp_path)]
    return subprocess.run(
        [*command, *args], capture_output=True, text=True, timeout=120, cwd=ROOT, env=env, stdin=subprocess.DEVNULL
    )


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.10"])
def test_cli_refuses_a_non_loopback_host_without_auth(tmp_path: Path, host: str) -> None:
    done = _serve(tmp_path, "--host", host)
    assert done.returncode == 2, done.stderr
    assert f"refusing to listen on {host} without auth" in done.stderr
    assert "--insecure-no-auth" in done.stderr and "loading" not in done.stderr


def test_cli_single_user_banner_and_the_insecure_flag(tmp_path: Path) -> None:
    with serve_cli(tmp_path, skill=NOTES) as local:
        assert local.lines[-1] == f"MCP endpoint: {local.url} (single user did:example:user, no auth)"
    command = [sys.executable, "-m", "skillc", "serve", str(NOTES), "--port", "0", "--state-dir", str(tmp_path)]
    proc = subprocess.Popen(
        [*command, "--host", "0.0.0.0", "--insecure-no-auth"], stderr=subprocess.PIPE, text=True, cwd=ROOT
    )
    try:
        assert proc.stderr is not None
        line = next(line for line in proc.stderr if line.startswith("MCP endpoint: "))  # ends at EOF if it died
        m = re.match(r"^MCP endpoint: http://0\.0\.0\.0:(\d+)/mcp \(single user did:example:user, no auth\)$", line)
        assert m is not None, line
        got = httpx.post(f"http://127.0.0.1:{m.group(1)}/mcp", json=LIST, headers=ACCEPT, timeout=30)
        assert got.status_code == 200
    finally:
        proc.kill()
        proc.wait(timeout=30)


def test_cli_with_auth_and_workers(idp: IdentityProvider, keys: tuple[KeyPair, KeyPair], tmp_path: Path) -> None:
    jwks_file = write_jwks(tmp_path / "jwks.json", *keys)
    args = ("--workers", "2", "--auth-issuer", idp.url, "--auth-jwks", str(jwks_file))
    with serve_cli(tmp_path, *args, skill=NOTES) as served_:
        assert served_.lines[-1] == f"MCP endpoint: {served_.url} (2 workers, OAuth bearer tokens from {idp.url})"
        assert _post(served_.url, None).status_code == 401
        token = sign(keys[0], idp.claims("frank", served_.url))
        assert all(_post(served_.url, token).status_code == 200 for _ in range(6))


def _bad_jwks(tmp_path: Path) -> Path:
    path = tmp_path / "bad.json"
    path.write_text('{"keys": [\n  {"kty": "RSA",}\n]}\n', encoding="utf-8")
    return path


def _oct_jwks(tmp_path: Path) -> Path:
    path = tmp_path / "oct.json"
    path.write_text('{"keys": [{"kty": "oct", "k": "c2VjcmV0"}]}', encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--auth-issuer", "http://127.0.0.1:9"],
            "needs exactly one of --auth-jwks URL|FILE and --auth-introspect URL",
        ),
        (
            [
                "--auth-issuer",
                "http://127.0.0.1:9",
                "--auth-jwks",
                "http://127.0.0.1:9/j",
                "--auth-introspect",
                "http://127.0.0.1:9/i",
            ],
            "needs exactly one of",
        ),
        (["--auth-jwks", "http://127.0.0.1:9/j"], "--auth-jwks need --auth-issuer"),
        (["--auth-issuer", "http://auth.example.com", "--auth-jwks", "https://a.b/j"], "use https"),
        (
            [
                "--auth-issuer",
                "http://127.0.0.1:9",
                "--auth-introspect",
                "http://127.0.0.1:9/i",
                "--auth-client-id",
                "c",
            ],
            "needs the client secret in the environment variable $SKILLC_AUTH_CLIENT_SECRET",
        ),
        (
            ["--auth-issuer", "http://127.0.0.1:9", "--auth-introspect", "http://127.0.0.1:9/i"],
            "needs --auth-client-id",
        ),
        (
            ["--auth-issuer", "http://127.0.0.1:9", "--auth-jwks", "http://127.0.0.1:9/j", "--insecure-no-auth"],
            "contradict",
        ),
        (["--auth-issuer", "http://127.0.0.1:9", "--auth-jwks", "http://127.0.0.1:9/j", "--user", "did:x:y"], "--user"),
        (
            ["--host", "0.0.0.0", "--auth-issuer", "http://127.0.0.1:9", "--auth-jwks", "http://127.0.0.1:9/j"],
            "needs --resource-url",
        ),
        (["--auth-issuer", "http://127.0.0.1:9", "--auth-jwks", "BAD"], "bad.json:2:16: error[JSON002]"),
        (["--auth-issuer", "http://127.0.0.1:9", "--auth-jwks", "OCT"], "symmetric (oct) key is not allowed"),
        (["--auth-issuer", "http://127.0.0.1:9", "--auth-jwks", "MISSING"], "cannot read the JWKS file"),
    ],
)
def test_cli_auth_usage_errors(tmp_path: Path, args: list[str], message: str) -> None:
    files = {"BAD": str(_bad_jwks(tmp_path)), "OCT": str(_oct_jwks(tmp_path)), "MISSING": str(tmp_path / "none.json")}
    env = {k: v for k, v in __import__("os").environ.items() if k != "SKILLC_AUTH_CLIENT_SECRET"}
    done = _serve(tmp_path, *[files.get(a, a) for a in args], env=env)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr, done.stderr
    assert "loading" not in done.stderr
