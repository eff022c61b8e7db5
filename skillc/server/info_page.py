"""The page a browser gets at ``/`` and at ``GET /mcp``: what this server is and how to connect.

An MCP endpoint opened in a browser otherwise shows an empty event stream (or an error), which
tells a person nothing. The page names the skillc version, the served skills and their tools,
the endpoint URL, and how to connect: client configuration snippets (the HTTP URL, and the
``skillc serve --stdio`` command line), and the MCP Inspector. It is one static document: no
script, no external resource, inline CSS allowed by its hash in a strict CSP. Everything from a
skill (names, descriptions, paths) is untrusted and escaped.
"""

from __future__ import annotations

import base64
import hashlib
import json
import shlex
from html import escape

from skillc import __version__
from skillc.server.catalog import Catalogue
from skillc.server.skill_docs import skill_doc

_CSS = """
:root { color-scheme: light dark; --muted: #667; --line: #ccd; --code: #f3f4f7; }
@media (prefers-color-scheme: dark) { :root { --muted: #99a; --line: #445; --code: #23252b; } }
body { font: 15px/1.5 system-ui, sans-serif; max-width: 52rem; margin: 2rem auto; padding: 0 1rem; }
h1 { font-size: 1.5rem; margin-bottom: 0.2rem; } h2 { font-size: 1.15rem; margin-top: 2rem; }
h3 { font-size: 1rem; margin-bottom: 0.3rem; }
.muted { color: var(--muted); } .endpoint { font-size: 1.1rem; }
code, pre { font: 13px/1.45 ui-monospace, monospace; background: var(--code); border-radius: 4px; }
code { padding: 0.1rem 0.3rem; } pre { padding: 0.7rem 0.9rem; overflow-x: auto; }
table { border-collapse: collapse; width: 100%; } td, th { text-align: left; vertical-align: top;
  padding: 0.35rem 0.5rem; border-bottom: 1px solid var(--line); } th { font-weight: 600; }
"""
_STYLE_HASH = base64.b64encode(hashlib.sha256(_CSS.encode("utf-8")).digest()).decode("ascii")

# No script, no frame, no form, no fetch; only the inline style above.
CSP = (
    f"default-src 'none'; style-src 'sha256-{_STYLE_HASH}'; img-src 'none'; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'none'"
)
HEADERS = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
}


def wants_page(accept: str | None) -> bool:
    """Whether an ``Accept`` header is a browser's: it names text/html and not text/event-stream.

    A browser sends ``text/html,...,*/*;q=0.8``; an MCP client opening its stream sends
    ``text/event-stream`` (and curl's ``*/*`` names neither), so those keep the MCP behaviour.
    """
    if not accept:
        return False
    types: dict[str, float] = {}
    for part in accept.lower().split(","):
        media, *params = (p.strip() for p in part.split(";"))
        q = 1.0
        for param in params:
            key, _, value = param.partition("=")
            if key.strip() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        types[media] = max(q, types.get(media, 0.0))
    return types.get("text/html", 0.0) > 0 and "text/event-stream" not in types


def stdio_command(catalogue: Catalogue) -> list[str]:
    """``skillc serve --stdio`` with the served skills' folders (absolute: a client may start anywhere)."""
    return ["skillc", "serve", "--stdio", *(str(s.package.root.resolve()) for s in catalogue.skills)]


def client_configs(endpoint: str, command: list[str]) -> list[tuple[str, str]]:
    """(where it goes, the JSON) for the clients people use."""
    stdio = {"command": command[0], "args": command[1:]}
    return [
        (
            "VS Code (.vscode/mcp.json), over HTTP",
            json.dumps({"servers": {"skillc": {"type": "http", "url": endpoint}}}, indent=2),
        ),
        (
            "Clients with an mcpServers file (Cursor, Windsurf, Claude Code .mcp.json), over HTTP",
            json.dumps({"mcpServers": {"skillc": {"type": "http", "url": endpoint}}}, indent=2),
        ),
        (
            "Claude Desktop (claude_desktop_config.json) and other stdio-only clients: the client starts skillc",
            json.dumps({"mcpServers": {"skillc": stdio}}, indent=2, ensure_ascii=False),
        ),
    ]


def render_info_page(catalogue: Catalogue, endpoint: str) -> str:
    """The HTML page for ``catalogue`` served at ``endpoint`` (the http URL of /mcp)."""
    e = escape
    command = stdio_command(catalogue)
    skills = []
    for loaded in catalogue.skills:
        name = loaded.package.name
        doc = skill_doc(loaded.package)
        rows = "".join(
            f"<tr><td><code>{e(a.tool_name)}</code></td><td>{e(str(a.risk))}</td>"
            f"<td>{e(a.spec.description or '')}</td></tr>"
            for a in catalogue.apis.values()
            if a.skill == name
        )
        cards = sorted(uri for uri, (skill, _path) in catalogue.components.items() if skill == name)
        card_list = ", ".join(f"<code>{e(u)}</code>" for u in cards)
        card_line = f'<p class="muted">Cards (MCP Apps): {card_list}</p>' if cards else ""
        skills.append(
            f"<h3>{e(name)}</h3>"
            f'<p class="muted">{e(loaded.display)}</p>'
            f"<p>{e(doc.description)}</p>"
            f"<table><tr><th>Tool</th><th>Risk</th><th>Description</th></tr>{rows}</table>"
            f"{card_line}"
            f'<p class="muted">Instructions: the prompt <code>{e(name)}</code> and the resource '
            f"<code>{e(doc.uri)}</code>.</p>"
        )
    configs = "".join(f"<h3>{e(where)}</h3><pre>{e(text)}</pre>" for where, text in client_configs(endpoint, command))
    inspector_http = f"npx @modelcontextprotocol/inspector --cli {shlex.quote(endpoint)} --transport http"
    inspector_http += " --method tools/list"
    inspector_stdio = f"npx @modelcontextprotocol/inspector {shlex.join(command)}"
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>skillc MCP server</title>
<style>{_CSS}</style>
</head>
<body>
<h1>skillc MCP server</h1>
<p class="muted">skillc {e(__version__)}: WeChat mini-program skills served as MCP tools, their cards as MCP Apps.</p>
<p>This is an <a href="https://modelcontextprotocol.io">MCP</a> server, meant for MCP clients, not for a browser.
MCP endpoint (Streamable HTTP):</p>
<p class="endpoint"><code>{e(endpoint)}</code></p>
<h2>Skills</h2>
{"".join(skills) or "<p>No skill is served.</p>"}
<h2>Connect</h2>
{configs}
<h3>Over stdio, without this HTTP server</h3>
<pre>{e(shlex.join(command))}</pre>
<h3>MCP Inspector</h3>
<p>Open the Inspector, choose Streamable HTTP and enter the endpoint above:</p>
<pre>npx @modelcontextprotocol/inspector</pre>
<p>or from a shell:</p>
<pre>{e(inspector_http)}
{e(inspector_stdio)}</pre>
</body>
</html>
"""
