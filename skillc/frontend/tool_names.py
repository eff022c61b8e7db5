"""Tool names every model API accepts.

Model APIs take a function name only if it matches ``^[a-zA-Z0-9_-]{1,64}$`` (OpenAI, Anthropic
and Gemini alike); a host that passes an MCP tool list through fails the whole request on one bad
name. WeChat's runtime calls APIs by their mcp.json names, which may hold dots, spaces, CJK or be
longer. So a served tool keeps its API name when the name fits, and otherwise gets a stable name
that does: the name's ASCII letters, digits, ``_`` and ``-`` (runs of anything else become one
``_``), cut to fit, then ``_`` and 8 hex digits of the SHA-256 of the whole original name, so two
names that read alike stay apart and a name is the same in every process and release.
"""

from __future__ import annotations

import hashlib
import re

TOOL_NAME_LIMIT = 64
TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
_OTHER = re.compile(r"[^A-Za-z0-9_-]+")
_DIGEST_HEX = 8


def is_model_safe(name: str) -> bool:
    return TOOL_NAME.fullmatch(name) is not None


def model_safe_name(name: str) -> str:
    """``name`` when every model API accepts it, else its stable safe form (see the module doc)."""
    if is_model_safe(name):
        return name
    base = _OTHER.sub("_", name).strip("_") or "api"
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:_DIGEST_HEX]
    return f"{base[: TOOL_NAME_LIMIT - _DIGEST_HEX - 1]}_{digest}"
