"""The floor for bench/scorecard.py's serve rows: the official ``mcp`` SDK alone, one trivial tool.

Same transport as ``skillc serve``: Streamable HTTP at ``/mcp``, stateless, JSON responses, served
by uvicorn. The one tool, ``searchDrinks``, returns a fixed answer shaped like the coffee skill's
(a text block and a structuredContent of three drinks with ``total``), so both servers encode a
similar payload; no skill, no QuickJS, no card.

    .venv/bin/python bench/bare_mcp_server.py --port 8765
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import uvicorn
from mcp.server.mcpserver import MCPServer

DRINKS = [
    {"id": f"d{i}", "name": f"Latte {i}", "price": 20 + i, "image": f"https://img.example/d{i}.jpg"} for i in range(3)
]


def build_server() -> MCPServer:
    server = MCPServer("bare")

    @server.tool(name="searchDrinks", description="Searches the menu.")
    def search_drinks(keyword: str = "") -> dict[str, Any]:
        return {"keyword": keyword, "drinks": DRINKS, "total": len(DRINKS)}

    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    opts = parser.parse_args()
    app = build_server().streamable_http_app(json_response=True, stateless_http=True)
    _Announcing(uvicorn.Config(app, host="127.0.0.1", port=opts.port, log_level="warning")).run()


class _Announcing(uvicorn.Server):
    """Says "MCP endpoint: URL" on stderr once it listens, as `skillc serve` does (the benches wait
    for that line)."""

    async def startup(self, sockets: Any = None) -> None:
        await super().startup(sockets)
        print(f"MCP endpoint: http://{self.config.host}:{self.config.port}/mcp", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
