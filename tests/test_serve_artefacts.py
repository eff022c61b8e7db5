"""Artefacts on `skillc serve`: a card whose Render IR is over the inline limit travels as an
``artefact://sha256/<hex>`` ref that the client (or the card view, through its host) reads with
``resources/read``; the bytes match their digest; another session cannot read them."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, Implementation, TextContent

from skillc.runtime.config import RuntimeConfig
from skillc.server import results
from skillc.server.artefacts import ArtefactStore
from skillc.server.consent import ConsentPolicy
from skillc.server.results import document_by_reference
from skillc.server.runner import ServeHandle, ServeOptions
from tests.apps_bridge import HOST_ORIGIN, AppsHost, apps_bridge_bundle, apps_browser
from tests.conftest import COFFEE
from tests.test_server import apps_client

__all__ = ["apps_bridge_bundle", "apps_browser"]  # fixtures from tests/apps_bridge.py


def run(coro: Any) -> Any:
    """``asyncio.run`` on a thread of its own: the module's sync Playwright keeps a loop on this one."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeHandle]:
    options = ServeOptions(
        paths=(COFFEE,),
        port=0,
        runtime=RuntimeConfig(state_dir=tmp_path_factory.mktemp("artefact-state")),
        consent=ConsentPolicy(approve_all=True),
        allowed_origins=(HOST_ORIGIN,),
        inline_document_bytes=1000,  # every coffee card is larger: each goes by reference
    )
    with ServeHandle.start(options) as handle:
        yield handle


def test_a_large_card_comes_as_an_artefact_ref(server: ServeHandle) -> None:
    async def session() -> tuple[Any, Any, Any]:
        async with apps_client(server.url, client_info=Implementation(name="owner", version="1")) as client:
            templates = await client.list_resource_templates()
            shown = await client.call_tool("searchDrinks", {"keyword": "latte"})
            ref = shown.meta["skillc/card"]["documentRef"]
            read = await client.read_resource(ref["uri"])
        async with apps_client(server.url, client_info=Implementation(name="other", version="1")) as other:
            # Knowing the digest opens nothing: only the uri the result handed out (it carries the
            # owner's session capability) reads the owner's ref.
            with pytest.raises(MCPError, match="Unknown resource: artefact://sha256/"):
                await other.read_resource(ref["uri"].split("?")[0])
            with pytest.raises(MCPError, match=r"Unknown resource: artefact://sha256/0{64}"):
                await other.read_resource("artefact://sha256/" + "0" * 64)
        return templates, shown, read

    templates, shown, read = run(session())
    assert "artefact://sha256/{digest}{?session}" in [t.uri_template for t in templates.resource_templates]
    card = shown.meta["skillc/card"]
    assert "document" not in card
    ref = card["documentRef"]
    (contents,) = read.contents
    body = base64.b64decode(contents.blob)
    digest = hashlib.sha256(body).hexdigest()
    session = shown.meta["skillc/session"]
    assert ref["uri"] == f"artefact://sha256/{digest}?session={session}" and ref["digest"] == f"sha256:{digest}"
    assert (ref["mime"], contents.mime_type) == ("application/vnd.skillc.render-ir+json",) * 2
    assert ref["size_bytes"] == len(body) > 1000
    assert ref["display_name"] == f"{card['cardId']}.render-ir.json"
    document = json.loads(body)
    assert document["root"]["id"] == "root" and "0.1.0[d02]" in body.decode()
    assert "/" not in ref["uri"].removeprefix("artefact://sha256/")  # never a filesystem path


@pytest.mark.chromium
def test_the_card_view_reads_a_card_by_reference(
    server: ServeHandle, apps_browser: Any, apps_bridge_bundle: Path
) -> None:
    with AppsHost.open(apps_browser, server.url, apps_bridge_bundle) as host:
        result = host.call_tool("searchDrinks", {"keyword": "latte"})
        assert "documentRef" in result["_meta"]["skillc/card"]
        host.frame(0).locator('[data-uid="0.1.0[d02]"]').wait_for()
        reads = [m for m in host.log if m.get("method") == "resources/read" and m.get("direction") == "view->host"]
        assert [m["params"]["uri"] for m in reads] == [result["_meta"]["skillc/card"]["documentRef"]["uri"]]
        assert host.errors == [] and host.csp_violations == []


def test_an_oversized_result_keeps_its_data_by_reference(tmp_path: Path) -> None:
    # A card's data over the limit: the card falls back to a CardSpec card, which shows what
    # fits; the whole structuredContent stays readable by reference.
    runtime = RuntimeConfig(state_dir=tmp_path, card_max_data_bytes=1024)
    with ServeHandle.start(ServeOptions(paths=(COFFEE,), port=0, runtime=runtime)) as handle:

        async def session() -> tuple[Any, bytes]:
            async with apps_client(handle.url) as client:
                shown = await client.call_tool("searchDrinks", {"keyword": ""})
                ref = shown.meta["skillc/fallback"]["dataRef"]
                read = await client.read_resource(ref["uri"])
                return shown, base64.b64decode(read.contents[0].blob)

        shown, body = run(session())
    fallback = shown.meta["skillc/fallback"]
    assert "skillc/card" not in shown.meta
    assert fallback["componentPath"] == "components/drink-list/index"
    ref = fallback["dataRef"]
    session = shown.meta["skillc/session"]
    assert ref["uri"] == f"artefact://sha256/{hashlib.sha256(body).hexdigest()}?session={session}"
    assert (ref["mime"], ref["display_name"]) == ("application/json", "structuredContent.json")
    assert json.loads(body) == shown.structured_content and len(body) > 1024


def _card_result(document: dict[str, Any]) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(text="")], _meta={"skillc/card": {"cardId": "card-1", "document": document}}
    )


@pytest.mark.parametrize("spelt", [1e16, 1e-7, float("nan"), "中文\n", 10**20])
def test_the_inline_limit_is_exact_in_bytes_as_written(spelt: Any) -> None:
    """The quick size check never moves the edge: a document of exactly the limit stays inline, one
    byte over goes by reference, whichever serialiser spells its numbers shorter."""
    document = {"version": 1, "root": {"id": "r", "type": "view", "props": {"v": [spelt] * 200}}}
    size = len(json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
    store = ArtefactStore()
    at_limit = document_by_reference(_card_result(document), store, size, session_id="s", tool_call_id=None)
    over = document_by_reference(_card_result(document), store, size - 1, session_id="s", tool_call_id=None)
    assert at_limit.meta is not None and "document" in at_limit.meta["skillc/card"]
    assert over.meta is not None and "documentRef" in over.meta["skillc/card"]
    assert over.meta["skillc/card"]["documentRef"]["size_bytes"] == size


def test_a_size_the_card_knows_decides_without_writing_the_document(monkeypatch: pytest.MonkeyPatch) -> None:
    document = {"version": 1, "root": {"id": "r", "type": "view", "props": {"v": ["x"] * 200}}}
    size = len(json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
    store = ArtefactStore()

    def written(value: Any) -> bytes:
        raise AssertionError("the document was written to be measured")

    with monkeypatch.context() as m:
        m.setattr(results, "json_bytes", written)
        m.setattr(results.pydantic_core, "to_json", written)
        kept = document_by_reference(
            _card_result(document), store, size, session_id="s", tool_call_id=None, document_bytes=size
        )
    over = document_by_reference(
        _card_result(document), store, size - 1, session_id="s", tool_call_id=None, document_bytes=size
    )
    assert kept.meta is not None and "document" in kept.meta["skillc/card"]
    assert over.meta is not None and over.meta["skillc/card"]["documentRef"]["size_bytes"] == size
