"""Whether a skill's API code can reach the network: the MCP ``openWorldHint`` of its tools.

Read from the code's tokens (js_tokens.py), never from its text: ``// never calls wx.request``,
a string or a regular expression that spells the call do not count. What counts is a read of one
of the network members of the global ``wx`` (``wx.request``, ``wx?.uploadFile``,
``wx['downloadFile']``, ``globalThis.wx.connectSocket``, ``wx.cloud``), and, since the code can
then call anything on it, ``wx`` leaving the expression it is read in (``const api = wx``,
``helper(wx)``, ``const { request } = wx``, ``wx[name]``): a tool that may reach the open world is
said to, rather than the other way round.
"""

from __future__ import annotations

from skillc.frontend.js_tokens import Token, tokens

# wx members that talk to servers (cloud: WeChat's cloud functions, database and storage).
NETWORK_MEMBERS = frozenset({"request", "uploadFile", "downloadFile", "connectSocket", "cloud"})
_GLOBALS = frozenset({"globalThis", "global", "window", "self"})
_DECLARES = frozenset({"var", "let", "const", "function", "class"})


def network_reads(source: str) -> list[str]:
    """How ``source`` can reach the network through ``wx``, in source order: ``wx.<member>`` for a
    network member it reads, ``wx`` where ``wx`` itself escapes or is indexed by a computed key."""
    found: list[str] = []
    seq = list(tokens(source))
    for i, token in enumerate(seq):
        if token.kind != "name" or token.text != "wx" or not _is_global_wx(seq, i):
            continue
        after = seq[i + 1] if i + 1 < len(seq) else None
        if _punct(after, ".", "?."):
            member = seq[i + 2] if i + 2 < len(seq) else None
            if member is not None and member.kind == "name" and member.text in NETWORK_MEMBERS:
                found.append(f"wx.{member.text}")
            continue
        if _punct(after, "["):
            key = seq[i + 2] if i + 2 < len(seq) else None
            closed = _punct(seq[i + 3] if i + 3 < len(seq) else None, "]")
            literal = key is not None and closed and (key.kind == "string" or _plain_template(key))
            if not literal:
                found.append("wx")  # a computed member: any of them
            elif key is not None and _key(key) in NETWORK_MEMBERS:
                found.append(f"wx.{_key(key)}")
            continue
        if _punct(after, "=") or (_punct(after, ":") and _punct(seq[i - 1] if i else None, "{", ",")):
            continue  # wx assigned to, or an object key named wx
        found.append("wx")  # the object itself goes elsewhere: anything may be called on it
    return found


def reaches_network(source: str) -> bool:
    return bool(network_reads(source))


def _is_global_wx(seq: list[Token], i: int) -> bool:
    before = seq[i - 1] if i else None
    if before is None:
        return True
    if _punct(before, ".", "?."):  # obj.wx is not the global, globalThis.wx is
        owner = seq[i - 2] if i >= 2 else None
        return (
            owner is not None
            and owner.kind == "name"
            and owner.text in _GLOBALS
            and not _punct(seq[i - 3] if i >= 3 else None, ".", "?.")
        )
    # a local of that name is declared, or only its type is read
    return not (before.kind == "name" and (before.text in _DECLARES or before.text == "typeof"))


def _punct(token: Token | None, *texts: str) -> bool:
    return token is not None and token.kind == "punct" and token.text in texts


def _plain_template(token: Token) -> bool:
    return token.kind == "template" and token.text.endswith("`") and "${" not in token.text


def _key(token: Token) -> str:
    return token.value if token.kind == "string" else token.text[1:-1]
