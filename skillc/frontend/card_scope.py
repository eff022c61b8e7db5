"""Official rule V021: what a card's JavaScript may call.

A card gets ``wx.request``, ``wx.login``, ``wx.checkSession`` and the timers only when its
``components[]`` entry declares ``permissions["scope.dynamic"]``, and ``wx.cloud`` never (the
AI-mode notes, sections 4 and 6). The validator scans the component's own JavaScript for the
calls, so this does too: the ``.js`` files of ``components/<name>/``. A helper outside the folder
that a card requires is not judged here (API code may share it and call them lawfully); should a
static card reach such a call, the runtime fails it with an error that names the call and the
permission.

Like scripts.py this is a scan: comments and the insides of string literals are blanked first,
so a call quoted or commented out is not one.
"""

from __future__ import annotations

import re

from skillc.diagnostics import Diagnostic
from skillc.frontend.package import SkillPackage
from skillc.frontend.source import LineIndex

_DYNAMIC_CALL = re.compile(r"(?<![\w$.])(?:(setTimeout|setInterval)|wx\s*\.\s*(request|login|checkSession))\s*\(")
_CLOUD = re.compile(r"(?<![\w$.])wx\s*\.\s*cloud\b")


def mask_literals(text: str) -> str:
    """Comments and the insides of string and template literals blanked (newlines kept), so
    offsets stay true and nothing quoted or commented out is read as code."""
    out = list(text)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
        elif c in "'\"`":
            j = i + 1
            while j < n and text[j] != c and (c == "`" or text[j] != "\n"):
                j += 2 if text[j] == "\\" else 1
            i += 1  # the quotes stay
        else:
            i += 1
            continue
        j = min(j, n)
        for k in range(i, j):
            if out[k] != "\n":
                out[k] = " "
        i = j + 1 if c in "'\"`" else j
    return "".join(out)


def check_card_scope(pkg: SkillPackage) -> list[Diagnostic]:
    """JS011 at each call a card's own JavaScript may not make (V021)."""
    if pkg.manifest is None:
        return []  # which cards declare scope.dynamic is unknown; mcp.json's errors say why
    found: list[Diagnostic] = []
    for folder in pkg.components.values():
        entry = pkg.manifest.component(folder.path)
        dynamic = entry is not None and entry.dynamic
        prefix = folder.dir + "/"
        for path in sorted(p for p in pkg.sources if p.startswith(prefix) and p.endswith(".js")):
            found += _scan(path, pkg.sources[path], folder.path, dynamic=dynamic, has_entry=entry is not None)
    return found


def _scan(path: str, text: str, component: str, *, dynamic: bool, has_entry: bool) -> list[Diagnostic]:
    masked = mask_literals(text)
    index = LineIndex(text)
    found: list[Diagnostic] = []
    if not dynamic:
        where = "its components[] entry" if has_entry else f'a components[] entry {{"path": "{component}"}}'
        for m in _DYNAMIC_CALL.finditer(masked):
            name = m.group(1) or f"wx.{m.group(2)}"
            end = m.end(1) if m.group(1) else m.end(2)
            found.append(
                Diagnostic.make(
                    "JS011",
                    f"{name}() is not available in a static card (official rule V021): {component} does not "
                    'declare permissions["scope.dynamic"]',
                    file=path,
                    span=index.span(m.start(), end),
                    hint=f'declare it in {where} of mcp.json: "permissions": {{"scope.dynamic": {{"desc": "..."}}}}',
                )
            )
    for m in _CLOUD.finditer(masked):
        found.append(
            Diagnostic.make(
                "JS011",
                "wx.cloud is not available in cards, with or without scope.dynamic (official rule V021)",
                file=path,
                span=index.span(m.start(), m.end()),
                hint="call the cloud from an API and hand the card what it needs in the result",
            )
        )
    return found
