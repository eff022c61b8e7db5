"""The wx.login signing key from the environment or a file of its own, and its rotation
(docs/deploy.md, "Secrets" and "Rotating the identity key"): the first key signs, every listed key
verifies, and a key given so never enters the state store."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from pathlib import Path

import pytest

from skillc.runtime.config import RuntimeConfig
from skillc.runtime.state import open_state, state_url_of
from skillc.runtime.state.keys import IDENTITY_KEY_ENV, IDENTITY_KEY_FILE_ENV
from tests.test_identity import b64, call, session_status, sign_in

OLD, NEW = secrets.token_bytes(32), secrets.token_bytes(32)
MISMATCH = "the capability token has a signature that does not match"


def signed_with(token: str, key: bytes) -> bool:
    header, payload, signature = token.split(".")
    return b64(hmac.new(key, f"{header}.{payload}".encode(), hashlib.sha256).digest()) == signature


def store_holds_no_identity_key(state: Path) -> bool:
    url = state_url_of(RuntimeConfig(state_dir=state))
    if url.kind == "sqlite":
        return not (state / "identity.key").exists() and not open_state(url).execute(
            "SELECT 1 FROM server_keys WHERE name = 'identity'"
        )
    return not open_state(url).execute("SELECT 1 FROM server_keys WHERE name = 'identity'")


def test_a_key_from_the_environment_signs_and_a_rotation_keeps_older_tokens_valid(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(IDENTITY_KEY_ENV, OLD.hex())
    before = sign_in(tmp_path)
    assert signed_with(before, OLD)
    # Rotation: the new key first, the old one still listed: both tokens verify, new ones get the new key.
    monkeypatch.setenv(IDENTITY_KEY_ENV, f"{NEW.hex()},{OLD.hex()}")
    assert session_status(tmp_path, "--token", before) == ("checkSession:ok", [])
    after = sign_in(tmp_path)
    assert signed_with(after, NEW)
    # The old key retired: what it signed is refused, what the new one signed is not.
    monkeypatch.setenv(IDENTITY_KEY_ENV, NEW.hex())
    status, diagnostics = session_status(tmp_path, "--token", before)
    assert MISMATCH in status and [c for c, _ in diagnostics] == ["RUN061"]
    assert session_status(tmp_path, "--token", after) == ("checkSession:ok", [])
    assert store_holds_no_identity_key(tmp_path)


def test_a_key_file_named_in_the_environment_lists_the_current_key_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key_file = tmp_path / "secrets" / "identity-keys"
    key_file.parent.mkdir()
    key_file.write_text(f"{OLD.hex()}\n")
    key_file.chmod(0o600)
    monkeypatch.setenv(IDENTITY_KEY_FILE_ENV, str(key_file))
    state = tmp_path / "state"
    before = sign_in(state)
    assert signed_with(before, OLD)
    key_file.write_text(f"# rotated\n{NEW.hex()}\n{OLD.hex()}  # until the old tokens expire\n")
    assert session_status(state, "--token", before) == ("checkSession:ok", [])
    assert signed_with(sign_in(state), NEW)
    assert store_holds_no_identity_key(state)


def test_a_broken_key_in_the_environment_is_a_named_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(IDENTITY_KEY_ENV, f"{NEW.hex()},abcd")
    _code, outcome = call(tmp_path, "signIn")
    messages = [d["message"] for d in outcome["diagnostics"] if d["code"] == "RUN062"]
    assert any(f"${IDENTITY_KEY_ENV} key 2 is not 32 hex-encoded bytes" in m for m in messages), outcome
