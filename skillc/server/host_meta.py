"""The metadata each family of hosts reads, written from one source so the families never disagree.

MCP Apps hosts (Claude, VS Code, ChatGPT's MCP Apps mode) read ``_meta.ui`` on a tool
(``resourceUri``, ``visibility``) and on the view resource (``csp``, ``prefersBorder``). OpenAI's
Apps SDK runtime reads its own ``openai/*`` keys and ignores ``_meta.ui``; an MCP Apps host
ignores ``openai/*``. The OpenAI keys are derived here from the MCP Apps ones, never set apart,
so a tool or resource says the same thing to both (docs/serve.md, "Hosts").
"""

from __future__ import annotations

from typing import Any

OUTPUT_TEMPLATE = "openai/outputTemplate"
WIDGET_ACCESSIBLE = "openai/widgetAccessible"
VISIBILITY = "openai/visibility"
RESULT_CAN_PRODUCE_WIDGET = "openai/resultCanProduceWidget"
WIDGET_CSP = "openai/widgetCSP"
WIDGET_PREFERS_BORDER = "openai/widgetPrefersBorder"
WIDGET_DESCRIPTION = "openai/widgetDescription"


def with_host_keys(meta: dict[str, Any]) -> dict[str, Any]:
    """A tool's ``_meta`` with the OpenAI keys that mirror its ``_meta.ui``: the view resource as
    ``openai/outputTemplate``, whether a view may call it (``"app"`` in ``ui.visibility``) as
    ``openai/widgetAccessible``, and a tool the model must not see (no ``"model"``) as
    ``openai/visibility: "private"``. A tool without ``_meta.ui`` is returned as it is."""
    ui = meta.get("ui")
    if not isinstance(ui, dict):
        return meta
    out = dict(meta)
    visibility = ui.get("visibility") or ["model", "app"]  # the MCP Apps default
    uri = ui.get("resourceUri")
    if isinstance(uri, str):
        out[OUTPUT_TEMPLATE] = uri
        out[RESULT_CAN_PRODUCE_WIDGET] = True
    out[WIDGET_ACCESSIBLE] = "app" in visibility
    out[VISIBILITY] = "public" if "model" in visibility else "private"
    return out


def view_resource_meta(resource_domains: list[str], description: str) -> dict[str, Any]:
    """The view resource's ``_meta``: MCP Apps ``ui`` (border, CSP) and the same in OpenAI's keys.
    The view makes no request of its own (``connect_domains`` empty); card images come from the
    https origins the skill names."""
    ui: dict[str, Any] = {"prefersBorder": True}
    if resource_domains:
        ui["csp"] = {"resourceDomains": list(resource_domains)}
    return {
        "ui": ui,
        WIDGET_PREFERS_BORDER: True,
        WIDGET_CSP: {"connect_domains": [], "resource_domains": list(resource_domains)},
        WIDGET_DESCRIPTION: description,
    }
