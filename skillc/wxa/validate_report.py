"""``validate-report.json`` of WeChat's validator (``validate.mjs``), from skillc's check.

The official report:

    {timestamp, projectPath, skillDirs, ignoreSync,
     summary: {total, passed, failed, errors, warnings, buildStatus},
     rules: {Vxxx: {stage, level, name}},
     results: [{id, level, file | files, detail?, fix?}],
     passedSummary: [{id, name, count}],
     build: {ran, success, stage, durationMs, message, logTail, exitCode}}

A finding whose code maps to an official rule (diagnostics.py ``official``) is reported under
that rule's id; skillc's own errors and warnings are reported under their skillc code, with
stage "skillc", so a script that gates on ``summary.errors`` still fails where skillc would.
Infos stay out, except the undecided destructive API (WXA001), which the official V019 fails.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from skillc.diagnostics import Diagnostic, Severity, explain

# The official rules, their stage and level (the level a failure of the rule has) and name.
RULES: dict[str, tuple[str, str]] = {
    "V001": ("error", "subpackage-independence"),
    "V002": ("error", "api-async"),
    "V003": ("error", "card-wxml-components"),
    "V005": ("error", "card-wxss-properties"),
    "V006": ("error", "card-wxss-selectors"),
    "V007": ("error", "api-registration"),
    "V008": ("error", "api-require-path"),
    "V009": ("error", "structured-content-schema"),
    "V010": ("error", "card-structured-content-fields"),
    "V011": ("warning", "card-data-bindings"),
    "V012": ("error", "component-path"),
    "V013": ("error", "mcp-json-size"),
    "V014": ("error", "skill-md-name"),
    "V015": ("error", "component-related-page"),
    "V016": ("error", "skill-description"),
    "V017": ("error", "page-path"),
    "V018": ("warning", "handoff-query"),
    "V019": ("error", "destructive-api"),
    "V020": ("error", "size-limits"),
    "V021": ("error", "static-card-apis"),
}
STAGE = "static"
OWN_STAGE = "skillc"


@dataclass(frozen=True)
class Unit:
    """One checked unit: its folder (None for a project's app.json) and its findings."""

    root: Path | None
    diagnostics: list[Diagnostic]


# skillc codes that report an official rule at another level than the rule's (diagnostics.py
# keeps ``official`` for codes that fail as the rule does): an undecided destructive API informs
# in skillc's check, since execute refuses it and serve asks consent, but fails V019 here.
_REPORTED_AS = {"WXA001": "V019"}


def rule_id(diag: Diagnostic) -> str | None:
    """The official rule a finding belongs to (the first of "V001/V008"), None for skillc's own."""
    official = _REPORTED_AS.get(diag.code) or explain(diag.code).official
    return official.split("/")[0] if official else None


def _level(diag: Diagnostic) -> str | None:
    if diag.code == "WXA001":
        return "error"  # V019: an undecided entry fails the build (skillc itself only informs)
    if diag.severity is Severity.ERROR:
        return "error"
    if diag.severity is Severity.WARNING:
        return "warning"
    return None


def _file(unit: Unit, project: Path, diag: Diagnostic) -> str | None:
    if diag.file is None:
        return None
    base = unit.root if unit.root is not None else project
    return os.path.relpath(base / diag.file, project).replace(os.sep, "/")


def build_report(project: Path, skill_dirs: list[Path], units: list[Unit]) -> dict[str, Any]:
    rules: dict[str, dict[str, str]] = {
        rid: {"stage": STAGE, "level": lvl, "name": name} for rid, (lvl, name) in RULES.items()
    }
    results: list[dict[str, Any]] = []
    for unit in units:
        for diag in unit.diagnostics:
            level = _level(diag)
            if level is None:
                continue
            rid = rule_id(diag)
            if rid is None:
                rid = diag.code
                rules.setdefault(
                    rid,
                    {
                        "stage": OWN_STAGE,
                        "level": explain(diag.code).severity.value,
                        "name": explain(diag.code).summary,
                    },
                )
            entry: dict[str, Any] = {"id": rid, "level": level}
            path = _file(unit, project, diag)
            if path is not None:
                entry["file"] = path
            where = f" (line {diag.span.line}, column {diag.span.column})" if diag.span is not None else ""
            entry["detail"] = f"{diag.code}: {diag.message}{where}"
            if diag.hint:
                entry["fix"] = diag.hint
            results.append(entry)
    # A rule passes unless one of its results is an error (warnings pass, as in validate.mjs).
    failed = {r["id"] for r in results if r["level"] == "error"}
    passed = [rid for rid in rules if rid not in failed]
    errors = sum(1 for r in results if r["level"] == "error")
    warnings = sum(1 for r in results if r["level"] == "warning")
    stamp = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return {
        "timestamp": stamp,
        "projectPath": str(project.resolve()),
        "skillDirs": [os.path.relpath(d, project).replace(os.sep, "/") for d in skill_dirs],
        "ignoreSync": False,
        "summary": {
            "total": len(rules),
            "passed": len(passed),
            "failed": len(failed),
            "errors": errors,
            "warnings": warnings,
            # The official validator runs WeChat DevTools' build (cli preview) after a clean
            # check; there is no DevTools here, so the build never runs.
            "buildStatus": "skipped",
        },
        "rules": rules,
        "results": results,
        # count: the skills the rule was checked on.
        "passedSummary": [{"id": rid, "name": rules[rid]["name"], "count": len(skill_dirs)} for rid in passed],
        "build": {
            "ran": False,
            "success": None,
            "stage": None,
            "durationMs": 0,
            "message": "skipped: the build needs WeChat DevTools (cli preview), which skillc does not run",
            "logTail": "",
            "exitCode": None,
        },
    }


def console_lines(report: dict[str, Any]) -> list[str]:
    """What validate.mjs prints: one block per result, then the RESULT line."""
    lines = []
    for r in report["results"]:
        name = report["rules"][r["id"]]["name"]
        lines.append(f"[{r['level'].upper()}] {r['id']} {name} - {r['detail']}")
        if "file" in r:
            lines.append(f"  @ {r['file']}")
        if "fix" in r:
            lines.append(f"  fix: {r['fix']}")
    s = report["summary"]
    if s["errors"]:
        lines.append(f"RESULT: FAIL ({s['errors']} errors, {s['warnings']} warnings)")
    elif s["warnings"]:
        lines.append(f"RESULT: PASS with {s['warnings']} warnings")
    else:
        lines.append("RESULT: PASS")
    return lines


def write_wxa(path: Path, reports: list[Any]) -> int:
    """``check --format wxa``: refresh the destructive manifest (keeping its decisions), write
    validate-report.json under PATH/cli-agent-run/, print the validator's lines; the exit status
    (0 pass, 1 errors) as validate.mjs's."""
    import json

    import click

    from skillc.wxa.destructive import MANIFEST_DIR, ManifestError, hits, merged, read_manifest, write_manifest

    skills = [r for r in reports if r.is_skill and r.package is not None]
    found = [e for r in skills for e in hits(r.package.name, r.package.manifest.apis if r.package.manifest else [])]
    try:
        old = read_manifest(path)
    except ManifestError as err:
        click.echo(f"skillc: warning: {err}; it is rewritten without its decisions", err=True)
        old = None
    if found or old is not None:
        write_manifest(path, merged(path, str(path.resolve()), found, old))
    units = [Unit(r.package.root if r.package is not None else None, r.diagnostics) for r in reports]
    report = build_report(path, [r.package.root for r in skills], units)
    out = path / MANIFEST_DIR / "validate-report.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, ensure_ascii=False, indent=2) + "\n", "utf-8")
    for line in console_lines(report):
        click.echo(line)
    click.echo(f"wrote {out}", err=True)
    return 1 if report["summary"]["errors"] else 0
