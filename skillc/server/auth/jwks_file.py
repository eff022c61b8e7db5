"""Reading ``--auth-jwks FILE``: a JSON Web Key Set, each problem a diagnostic at its line and column
(SRV010), so a bad file is a usage error before the server starts."""

from __future__ import annotations

from pathlib import Path

from jwt import PyJWK, PyJWKSet
from jwt.exceptions import PyJWKError, PyJWKSetError

from skillc.diagnostics import Diagnostic
from skillc.frontend.jsonsrc import JArray, JObject, parse_json_input

CODE = "SRV010"


def load_jwks(text: str, file: str) -> tuple[PyJWKSet | None, list[Diagnostic]]:
    """The key set in ``text``, or None and why. Symmetric (``oct``) keys are refused: a public
    key set that holds a shared secret is a mistake, and would let anyone who reads it sign."""
    root, problems = parse_json_input(text, file, CODE, "the JWKS file")
    if root is None:
        return None, problems
    keys = root.get("keys") if isinstance(root, JObject) else None
    if not isinstance(root, JObject) or not isinstance(keys, JArray):
        return None, [Diagnostic.make(CODE, 'JWKS: expected an object {"keys": [...]}', file=file, span=root.span)]
    diags: list[Diagnostic] = []
    for node in keys.items:
        data = node.to_python()
        if not isinstance(data, dict):
            diags.append(Diagnostic.make(CODE, "JWKS: a key is not an object", file=file, span=node.span))
        elif data.get("kty") == "oct":
            diags.append(Diagnostic.make(CODE, "JWKS: a symmetric (oct) key is not allowed", file=file, span=node.span))
        else:
            try:
                PyJWK(data)
            except PyJWKError as err:
                diags.append(Diagnostic.make(CODE, f"JWKS: unusable key: {err}", file=file, span=node.span))
    if diags:
        return None, diags
    try:
        return PyJWKSet.from_dict(root.to_python()), []  # type: ignore[arg-type]
    except PyJWKSetError as err:
        return None, [Diagnostic.make(CODE, f"JWKS: {err}", file=file, span=root.span)]


def read_jwks(path: Path) -> tuple[PyJWKSet | None, list[Diagnostic], str]:
    """:func:`load_jwks` of a file; the third item is its text (for rendering the diagnostics)."""
    try:
        text = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as err:
        reason = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
        return None, [Diagnostic.make(CODE, f"cannot read the JWKS file: {reason}", file=str(path))], ""
    keys, diags = load_jwks(text, str(path))
    return keys, diags, text
