"""mcp.json models: typed access, unknown keys kept on a round trip."""

from __future__ import annotations

import json

from skillc.diagnostics import DiagnosticSink
from skillc.frontend.package import load_skill

from .conftest import COFFEE


def test_coffee_manifest_is_typed() -> None:
    sink = DiagnosticSink()
    pkg = load_skill(COFFEE, sink)
    assert pkg is not None and pkg.manifest is not None
    assert list(sink) == []
    assert [a.name for a in pkg.manifest.apis] == ["searchDrinks", "confirmOrder", "payOrder"]
    search = pkg.manifest.api("searchDrinks")
    assert search is not None
    assert search.component_path == "components/drink-list/index"
    assert search.vendor_meta["x_skillc"] == {"risk": "L0"}
    result = pkg.manifest.component("components/payment-result/index")
    assert result is not None and result.expirable and result.name == "payment-result"
    assert sorted(pkg.components) == ["drink-list", "order-confirm", "payment-result"]
    assert pkg.registered_apis == {"searchDrinks", "confirmOrder", "payOrder"}


def test_round_trip_keeps_unknown_fields(tmp_path: object) -> None:
    from pathlib import Path

    root = Path(str(tmp_path))
    manifest = {
        "x_anp": {"did": "did:wba:example.com:coffee", "version": 2},
        "apis": [
            {
                "name": "ping",
                "description": "Ping",
                "inputSchema": {"type": "object", "properties": {}, "x-order": 1},
                "_meta": {"ui": {"pagePath": "/pages/a/a", "vendorHint": True}, "x_skillc": {"risk": "L1"}},
                "vendor:flag": [1, 2, 3],
            }
        ],
    }
    (root / "SKILL.md").write_text("# Ping\n", encoding="utf-8")
    (root / "mcp.json").write_text(json.dumps(manifest), encoding="utf-8")
    (root / "index.js").write_text(
        "wx.modelContext.createSkill('s').registerAPI('ping', async () => ({content: []}))\n", encoding="utf-8"
    )
    sink = DiagnosticSink()
    pkg = load_skill(root, sink)
    assert pkg is not None and pkg.manifest is not None
    assert [d.code for d in sink] == []
    assert pkg.manifest.dump() == manifest
