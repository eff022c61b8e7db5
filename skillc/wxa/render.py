"""``cli agent render --from-execute``'s artefacts: ``<api>.json`` and ``<api>.snapshot.png``.

The card of an execute result is mounted as at run time (its index.js gets the Input and
Result notifications and sets its data), drawn by the HTML backend and photographed by headless
Chromium; the document carries the official fields:

    {command: "render", status, params, invokeResult,
     snapshot: {mime, file, absolutePath, dataUrlLength},
     consoleMessages: {snapshotCard: [...]}, elementTree,
     _meta: {name, toolCallId, sessionId, snapshotPng, cliExitCode,
             verify: {passed, checks: {statusOk, commandIsRender, hasSnapshot, noInvokeError, invokeResultOk}}}}

Exit codes as the official script: 0 rendered and verified, 1 a check failed, 2 bad input
(no execute result, no structuredContent to render) or the renderer could not run.
"""

from __future__ import annotations

import asyncio
import base64
import json
import shutil
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillc.diagnostics import DiagnosticSink
from skillc.frontend.package import SkillPackage
from skillc.ir.viewport import Viewport
from skillc.wxa.element_tree import element_tree
from skillc.wxa.execute import EXIT_FAIL, EXIT_PASS, ExecuteUsageError, load

if TYPE_CHECKING:
    from skillc.runtime.cards.card_models import CallOutcome
    from skillc.runtime.contracts import AtomicApiResult

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]


class RenderUsageError(Exception):
    """The execute result cannot be rendered (the official exit 2)."""


@dataclass
class Rendering:
    document: dict[str, Any]
    exit_code: int
    json_path: Path
    png_path: Path | None


def find_chromium() -> str | None:
    import os

    return os.environ.get("SKILLC_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


def read_execute(path: Path) -> dict[str, Any]:
    try:
        doc = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError) as err:
        raise RenderUsageError(f"{path}: cannot be read as JSON ({err})") from None
    if not isinstance(doc, dict) or doc.get("command") != "execute" or not isinstance(doc.get("params"), dict):
        raise RenderUsageError(f'{path} is not an execute result (no "command": "execute" with params)')
    invoke = doc.get("invokeResult")
    if not isinstance(invoke, dict) or not isinstance(invoke.get("structuredContent"), dict):
        raise RenderUsageError(f"{path}: invokeResult has no structuredContent, so there is no card data to render")
    return doc


def skill_of(doc: dict[str, Any], skill: Path | None) -> SkillPackage:
    """The skill an execute result came from: ``skill`` when given, else ``_meta.project`` and
    ``params.subpackage`` (the skill folder itself, or the project's skill folder of that name)."""
    if skill is None:
        project = Path(str(doc.get("_meta", {}).get("project", "")))
        sub = str(doc["params"].get("subpackage") or "")
        # A project's skill folders hold an mcp.json; the first of that name is the subpackage.
        found = [p for p in project.rglob(sub) if (p / "mcp.json").is_file()] if project.name != sub else []
        skill = found[0] if found else project
    try:
        return load(skill)
    except ExecuteUsageError as err:
        raise RenderUsageError(str(err)) from None


async def mount_card(
    pkg: SkillPackage, api: str, result: AtomicApiResult, arguments: dict[str, Any], viewport: Viewport
) -> CallOutcome:
    """The CallOutcome of showing ``result`` as ``api``'s card (created, attached, Input, Result)."""
    from skillc.runtime.api.api_runtime import ApiRuntime
    from skillc.runtime.cards.card_host import CardHost
    from skillc.runtime.config import RuntimeConfig

    with tempfile.TemporaryDirectory(prefix="skillc-agent-render-") as tmp:
        runtime = ApiRuntime(pkg, RuntimeConfig(state_dir=Path(tmp)))
        try:
            host = CardHost(runtime, viewport=viewport, card_ids=lambda: "card-1")
            try:
                return await host.show(api, result, arguments)
            finally:
                await host.close()
        finally:
            runtime.close()


def _photograph(html: str, width: int, png: Path, chromium: str) -> bool:
    """Write the card's PNG (the body: the viewport's width, the card's height); whether the
    card's content overflowed its maximum height."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": width, "height": 100}, device_scale_factor=1)
            # The card's pictures are remote; a snapshot must not depend on the network.
            page.route(
                "**/*", lambda route: route.abort() if not route.request.url.startswith("data:") else route.continue_()
            )
            page.set_content(html, wait_until="load")
            overflowed = bool(page.evaluate("document.body.scrollHeight > document.body.clientHeight + 1"))
            page.locator("body").screenshot(path=str(png))
            return overflowed
        finally:
            browser.close()


def render_from_execute(
    execute_file: Path, out_dir: Path | None = None, *, skill: Path | None = None, chromium: str | None = None
) -> Rendering:
    from skillc.backends.html_backend import render_html
    from skillc.ir.component import compile_component
    from skillc.ir.evaluate import CardRenderer
    from skillc.runtime.api.schema import SchemaCheck
    from skillc.runtime.contracts import AtomicApiResult
    from skillc.wxa.destructive import MANIFEST_DIR, project_root

    doc = read_execute(execute_file)
    params, invoke = doc["params"], doc["invokeResult"]
    api = str(params.get("name", ""))
    pkg = skill_of(doc, skill)
    spec = pkg.manifest.api(api) if pkg.manifest is not None else None
    if spec is None:
        raise RenderUsageError(f"{pkg.root} declares no API named {api!r}")
    path = spec.component_path
    component = path.split("/")[1] if path and path.count("/") == 2 else None
    if component is None or component not in pkg.components:
        raise RenderUsageError(f"{api} shows no card (_meta.ui.componentPath names no component folder)")
    out_dir = out_dir or project_root(pkg) / MANIFEST_DIR
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path, png_path = out_dir / f"{api}.json", out_dir / f"{api}.snapshot.png"
    chromium = chromium or find_chromium()
    if chromium is None:
        raise RenderUsageError("no Chromium to take the snapshot with (install chromium or set SKILLC_CHROMIUM)")
    result = AtomicApiResult.model_validate(
        {"content": invoke.get("content") or [], "structuredContent": invoke["structuredContent"]}
    )
    arguments = params.get("arguments") if isinstance(params.get("arguments"), dict) else {}
    viewport = Viewport()
    outcome = asyncio.run(mount_card(pkg, api, result, arguments, viewport))
    name = component
    lifecycle = [f"[ai-mode] {name} created", f"[ai-mode] {name} attached"]
    lifecycle += [f"[ai-mode] {name} {c.level}: {c.text}" for c in outcome.console]
    lifecycle += [f"[ai-mode] {name} {d.code}: {d.message}" for d in [*outcome.diagnostics, *outcome.findings]]
    tree = None
    snapshot: dict[str, Any] | None = None
    if outcome.card is not None:
        sink = DiagnosticSink()
        compiled = compile_component(pkg, component, sink)
        assert compiled is not None  # the card mounted, so its template compiled
        renderer = CardRenderer(compiled, viewport)
        drawn = renderer.render(outcome.card.data)
        tree = element_tree(drawn, compiled.template, renderer.element_classes())
        html = render_html(outcome.card.document, title=f"{pkg.name} / {name}")
        lifecycle.append(f"[ai-mode] {name} overflow monitor=on")
        overflowed = _photograph(html, viewport.width, png_path, chromium)
        if overflowed:
            lifecycle.append(f"[ai-mode] {name} overflowed=true")
        data = png_path.read_bytes()
        data_url_length = len("data:image/png;base64,") + len(base64.b64encode(data))
        snapshot = {
            "mime": "image/png",
            "file": png_path.name,
            "absolutePath": str(png_path.resolve()),
            "dataUrlLength": data_url_length,
        }
    elif png_path.exists():
        png_path.unlink()  # a snapshot left from an earlier run is not this card's
    schema_ok = True
    if spec.output_schema is not None:
        schema_ok = not SchemaCheck(spec.output_schema, fill_defaults=False).problems(invoke["structuredContent"])
    status = "ok" if outcome.card is not None else "error"
    checks = {
        "statusOk": status == "ok",
        "commandIsRender": True,
        "hasSnapshot": snapshot is not None and png_path.is_file(),
        "noInvokeError": not invoke.get("isError", False),
        "invokeResultOk": bool(invoke.get("content")) and schema_ok,
    }
    passed = all(checks[k] for k in ("statusOk", "commandIsRender", "hasSnapshot", "noInvokeError"))
    code = EXIT_PASS if passed else EXIT_FAIL
    out: dict[str, Any] = {
        "command": "render",
        "status": status,
        "params": {**params, "componentPath": path},
        "invokeResult": invoke,
    }
    if snapshot is not None:
        out["snapshot"] = snapshot
    out["consoleMessages"] = {"snapshotCard": lifecycle}
    if tree is not None:
        out["elementTree"] = tree
    out["_meta"] = {
        "name": api,
        "toolCallId": params.get("toolCallId") or f"call_{uuid.uuid4().hex[:16]}",
        "sessionId": f"session_{uuid.uuid4().hex[:16]}",
        "snapshotPng": str(png_path.resolve()) if snapshot is not None else None,
        "cliExitCode": code,
        "verify": {"passed": passed, "checks": checks},
    }
    json_path.write_text(json.dumps(out, ensure_ascii=False, indent=2) + "\n", "utf-8")
    return Rendering(out, code, json_path, png_path if snapshot is not None else None)


__all__ = ["RenderUsageError", "Rendering", "mount_card", "render_from_execute"]
