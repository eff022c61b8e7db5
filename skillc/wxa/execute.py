"""``cli agent execute``'s artefact: ``cli-agent-run/execute-result.<api>.json`` and its exit code.

The official command runs the API in WeChat DevTools' simulator; here it runs in skillc's
QuickJS runtime, with the same result shape:

    {command: "execute", status: "ok"|"error",
     params: {name, arguments, toolCallId, subpackage, componentPath},
     invokeResult: {isError, content, structuredContent, hasCard},
     consoleMessages: ["[ai-mode] ..."], _meta: {project, cliStderr, cliExitCode, diagnosis?}}

Exit codes as the official script: 0 pass (status ok, no isError, structuredContent matching
outputSchema), 1 fail, 2 the call could not be made (runtime error), 3 refused by the
destructive manifest.
"""

from __future__ import annotations

import json
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillc.diagnostics import Diagnostic, DiagnosticSink, Severity
from skillc.frontend.package import SkillPackage, load_skill
from skillc.wxa.destructive import ManifestError, decide, project_root, read_manifest

EXIT_PASS, EXIT_FAIL, EXIT_ERROR, EXIT_REFUSED = 0, 1, 2, 3
# Findings that mean the call ran but failed the official pass rule, not a runtime error:
# arguments that do not match the inputSchema, a structuredContent that misses the outputSchema,
# an upload argument skillc cannot fill.
_FAIL_CODES = {"RUN010", "RUN016", "RUN081"}


class ExecuteUsageError(Exception):
    """Not a skill, or an API its mcp.json does not declare (the official CLI's exit 2 too)."""


@dataclass
class Execution:
    document: dict[str, Any]
    exit_code: int
    path: Path | None = None


def result_path(out_dir: Path, api: str) -> Path:
    return out_dir / f"execute-result.{api}.json"


def load(skill: Path) -> SkillPackage:
    sink = DiagnosticSink()
    pkg = load_skill(skill, sink)
    if pkg is None or pkg.manifest is None:
        first = next(iter(sink), None)
        detail = f": {first.message}" if first else ""
        raise ExecuteUsageError(f"{skill} is not a skill with a usable mcp.json{detail}")
    return pkg


def _console_line(level: str, text: str) -> str:
    # The official consoleMessages are the simulator's "[ai-mode]" lines, one string each.
    return f"[ai-mode] {level}: {text}" if level != "log" else f"[ai-mode] {text}"


def _diag_line(diag: Diagnostic) -> str:
    where = f"{diag.file}:{diag.span.line}: " if diag.file and diag.span else (f"{diag.file}: " if diag.file else "")
    return f"{where}{diag.code} {diag.severity.value}: {diag.message}"


def execute(pkg: SkillPackage, api: str, arguments: dict[str, Any], *, state_dir: Path | None = None) -> Execution:
    """Run ``api`` once and build the official document. A refusal writes the document too, with
    status "error" and the reason in ``_meta.diagnosis``, as the official script reports it."""
    from skillc.runtime.api.api_runtime import ApiRuntime
    from skillc.runtime.config import RuntimeConfig

    assert pkg.manifest is not None
    spec = pkg.manifest.api(api)
    if spec is None:
        names = ", ".join(a.name for a in pkg.manifest.apis) or "none"
        raise ExecuteUsageError(f"{pkg.root} declares no API named {api!r} in mcp.json (APIs: {names})")
    root = project_root(pkg)
    params = {
        "name": api,
        "arguments": arguments,
        "toolCallId": f"call_{uuid.uuid4().hex[:16]}",
        "subpackage": pkg.root.name,
        "componentPath": spec.component_path,
    }
    meta: dict[str, Any] = {"project": str(root.resolve()), "cliStderr": "", "cliExitCode": 0}
    try:
        verdict, why = decide(read_manifest(root), pkg.name, spec)
    except ManifestError as err:
        verdict, why = "refuse", f"{err}; no decision can be read, so nothing runs"
    if verdict == "refuse":
        meta.update(cliExitCode=EXIT_REFUSED, cliStderr=why, diagnosis={"type": "destructive-refused", "hint": why})
        doc = {
            "command": "execute",
            "status": "error",
            "params": params,
            "invokeResult": {"isError": True, "content": [{"type": "text", "text": why}], "hasCard": False},
            "consoleMessages": [],
            "_meta": meta,
        }
        return Execution(doc, EXIT_REFUSED)
    with tempfile.TemporaryDirectory(prefix="skillc-agent-") as tmp:
        # The official CLI has no consent step: the destructive manifest is its gate, so every
        # risk level runs approved here. Storage lives for this one call unless a state dir is given.
        config = RuntimeConfig(state_dir=state_dir or Path(tmp))
        runtime = ApiRuntime(pkg, config, approver=lambda _request: True)
        try:
            context = runtime.context(api)
            outcome = runtime.call_blocking(api, arguments, context)
        finally:
            runtime.close()
    diags = [*runtime.diagnostics, *outcome.diagnostics]
    result = outcome.result
    broken = [d for d in diags if d.severity is Severity.ERROR and d.code not in _FAIL_CODES]
    failed = [d for d in diags if d.code in _FAIL_CODES]
    wire = result.wire()
    invoke: dict[str, Any] = {"isError": result.is_error, "content": wire.get("content", [])}
    if result.structured_content is not None:
        invoke["structuredContent"] = result.structured_content
    invoke["hasCard"] = bool(spec.component_path) and not result.is_error and not broken
    if broken:
        code = EXIT_ERROR
        meta["diagnosis"] = {"type": "runtime-error", "hint": "; ".join(_diag_line(d) for d in broken)}
    elif result.is_error or failed:
        code = EXIT_FAIL
    else:
        code = EXIT_PASS
    meta["cliExitCode"] = code
    meta["cliStderr"] = "\n".join(_diag_line(d) for d in diags)
    doc = {
        "command": "execute",
        "status": "error" if broken else "ok",
        "params": params,
        "invokeResult": invoke,
        "consoleMessages": [_console_line(c.level, c.text) for c in outcome.console],
        "_meta": meta,
    }
    return Execution(doc, code)


def write(execution: Execution, out_dir: Path) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    path = result_path(out_dir, execution.document["params"]["name"])
    path.write_text(json.dumps(execution.document, ensure_ascii=False, indent=2) + "\n", "utf-8")
    execution.path = path
    return path
