"""A small real authorization server for the auth tests: test key pairs (RSA and EC, made fresh),
their JWKS served over HTTP (and written as a file), JWTs signed with them (PyJWT), and an RFC 7662
introspection endpoint that answers from the tokens it was told about."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

INTROSPECTION_CLIENT = ("skillc-resource", "s3cret-for-tests")


@dataclass
class KeyPair:
    kid: str
    alg: str
    private: Any
    public: Any

    def jwk(self) -> dict[str, Any]:
        algo = RSAAlgorithm if self.alg.startswith("RS") else ECAlgorithm
        data: dict[str, Any] = algo.to_jwk(self.public, as_dict=True)
        return {**data, "kid": self.kid, "alg": self.alg, "use": "sig"}

    def public_pem(self) -> bytes:
        return bytes(
            self.public.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        )


def rsa_pair(kid: str) -> KeyPair:
    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return KeyPair(kid, "RS256", private, private.public_key())


def ec_pair(kid: str) -> KeyPair:
    private = ec.generate_private_key(ec.SECP256R1())
    return KeyPair(kid, "ES256", private, private.public_key())


def jwks(*pairs: KeyPair) -> dict[str, Any]:
    return {"keys": [p.jwk() for p in pairs]}


def write_jwks(path: Path, *pairs: KeyPair) -> Path:
    path.write_text(json.dumps(jwks(*pairs)), encoding="utf-8")
    return path


def sign(pair: KeyPair, claims: dict[str, Any], *, kid: str | None = None) -> str:
    return jwt.encode(claims, pair.private, algorithm=pair.alg, headers={"kid": kid or pair.kid})


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def hs256_with_public_key(pair: KeyPair, claims: dict[str, Any]) -> str:
    """The algorithm-confusion forgery: HS256 "signed" with the public key's PEM as the secret
    (PyJWT refuses to make one, so it is made by hand)."""
    head = _b64(json.dumps({"alg": "HS256", "typ": "JWT", "kid": pair.kid}).encode())
    body = _b64(json.dumps(claims).encode())
    mac = hmac.new(pair.public_pem(), f"{head}.{body}".encode(), hashlib.sha256).digest()
    return f"{head}.{body}.{_b64(mac)}"


def unsigned(claims: dict[str, Any]) -> str:
    return jwt.encode(claims, None, algorithm="none")  # type: ignore[arg-type]


@dataclass
class IdentityProvider:
    """The issuer at ``url``: ``/jwks.json`` and ``/introspect`` (HTTP Basic as INTROSPECTION_CLIENT)."""

    url: str
    pairs: list[KeyPair]
    introspection: dict[str, dict[str, Any]] = field(default_factory=dict)  # token -> answer
    introspected: list[str] = field(default_factory=list)

    @property
    def jwks_url(self) -> str:
        return f"{self.url}/jwks.json"

    @property
    def introspect_url(self) -> str:
        return f"{self.url}/introspect"

    def claims(self, sub: str, audience: str, **extra: Any) -> dict[str, Any]:
        now = int(time.time())
        return {"iss": self.url, "sub": sub, "aud": audience, "iat": now, "exp": now + 600, **extra}


def _handler(idp: IdentityProvider) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_args: Any) -> None:  # quiet
            return

        def _json(self, status: int, body: Any) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path == "/jwks.json":
                self._json(200, jwks(*idp.pairs))
            else:
                self._json(404, {"error": "not_found"})

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            form = parse_qs(self.rfile.read(length).decode())
            expected = "Basic " + base64.b64encode(":".join(INTROSPECTION_CLIENT).encode()).decode()
            if self.path != "/introspect" or self.headers.get("authorization") != expected:
                self._json(401, {"error": "invalid_client"})
                return
            token = (form.get("token") or [""])[0]
            idp.introspected.append(token)
            self._json(200, idp.introspection.get(token, {"active": False}))

    return Handler


@contextmanager
def identity_provider(*pairs: KeyPair) -> Iterator[IdentityProvider]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(IdentityProvider("", [])))
    idp = IdentityProvider(f"http://127.0.0.1:{server.server_address[1]}", list(pairs))
    server.RequestHandlerClass = _handler(idp)
    thread = threading.Thread(target=server.serve_forever, name="test-idp", daemon=True)
    thread.start()
    try:
        yield idp
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
