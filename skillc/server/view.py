"""The MCP Apps view: one static ``text/html;profile=mcp-app`` document per card component.

The document is the same template and script for every component (static/card-view.html and
static/card-view.js, with the HTML backend's BASE_CSS and DOM_RULES so the two render alike); only
the small JSON config's skill and component differ. The card's data never goes into the HTML:
it arrives in the tool result's ``_meta`` as Render IR.
"""

from __future__ import annotations

import json
import re
from functools import cache
from html import escape
from importlib.resources import files

from skillc.backends.html_backend import BASE_CSS, COLLAPSIBLE_CSS, DOM_RULES
from skillc.backends.html_previews import PREVIEW_CSS
from skillc.frontend.package import SkillPackage

_ORIGIN = re.compile(r"https://[A-Za-z0-9.-]+(?::\d+)?")


@cache
def _static(name: str) -> str:
    return (files("skillc.server") / "static" / name).read_text(encoding="utf-8")


def _script_json(value: object) -> str:
    # Inside <script>, "</" and "<!--" must not appear; \u003c keeps the JSON equal.
    return json.dumps(value, ensure_ascii=False, sort_keys=True).replace("<", "\\u003c")


def view_html(skill: str, component_path: str, uri: str) -> str:
    config = {"skill": skill, "componentPath": component_path, "uri": uri, "dom": DOM_RULES}
    return (
        _static("card-view.html")
        # One view page serves every card the component renders, and a patch may add a
        # collapsible-view later: its rules are always there (they match nothing else).
        .replace("/*__SKILLC_BASE_CSS__*/", BASE_CSS + COLLAPSIBLE_CSS + PREVIEW_CSS)
        .replace("__SKILLC_CONFIG__", _script_json(config))
        .replace("/*__SKILLC_VIEW_JS__*/", _static("card-view.js").replace("</", "<\\/"))
        .replace("__SKILLC_TITLE__", escape(f"{skill} · {component_path}"))
    )


def image_origins(package: SkillPackage) -> list[str]:
    """https origins the skill's code and templates name: where card images may come from (CSP)."""
    found: set[str] = set()
    for path, text in package.sources.items():
        if path.endswith((".js", ".json", ".wxml")):
            found.update(_ORIGIN.findall(text))
    return sorted(found)
