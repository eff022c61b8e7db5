"""The V019 destructive manifest: ``cli-agent-run/destructive-manifest.json``.

WeChat's validator lists every API whose name or description uses a word of a destructive
action (delete, cancel, 注销, ...) with ``destructive: null``; someone then decides each entry
(``true``: the API destroys something, ``false``: it does not). ``cli agent execute`` refuses an
API whose entry is ``true`` or ``null`` and, with no manifest at all, any API a keyword hits.
skillc writes the same file (``check --format wxa``), keeps the decisions already in it, reads
them back in ``check`` and honours them in ``agent execute``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from skillc.diagnostics import DiagnosticSink, Span
from skillc.frontend.jsonsrc import JArray, JNode, JObject, lookup
from skillc.frontend.manifest import ApiSpec
from skillc.frontend.package import SkillPackage

MANIFEST_DIR = "cli-agent-run"
MANIFEST_NAME = "destructive-manifest.json"

# The official V019 keywords (VALIDATE_RULES.md, V001-V021 revision).
ENGLISH_KEYWORDS = (
    "logoff", "logout", "close", "cancel", "delete", "remove", "clear", "unbind",
    "unsubscribe", "dissolve", "kick", "quit", "exit",
)  # fmt: skip
CHINESE_KEYWORDS = ("注销", "销户", "删除", "移除", "移出", "取消", "清空", "解绑", "退订", "解散", "踢出", "退出")


class ManifestEntry(BaseModel):
    """One keyword hit and its decision (None: not decided yet)."""

    model_config = ConfigDict(extra="allow")

    skill: str
    apiName: str
    hitKeyword: str
    hitField: Literal["name", "description"]
    destructive: bool | None = None
    destructiveReason: str | None = None


class DestructiveManifest(BaseModel):
    model_config = ConfigDict(extra="allow")

    generatedAt: str = ""
    project: str = ""
    apis: list[ManifestEntry] = Field(default_factory=list)

    def entry(self, skill: str, api: str) -> ManifestEntry | None:
        """The entry of ``api`` in ``skill``; an entry without a skill name matches any skill."""
        return next((e for e in self.apis if e.apiName == api and e.skill in (skill, "")), None)


class ManifestError(Exception):
    """The manifest file exists but is not a destructive manifest (its decisions cannot be read)."""


def _words(text: str) -> set[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text)
    return {w.lower() for w in re.split(r"[^A-Za-z0-9]+", spaced) if w}


def keyword_hit(spec: ApiSpec) -> tuple[str, Literal["name", "description"]] | None:
    """The first V019 keyword in the API's name, else its description, with the field it is in.

    English keywords match whole words (camelCase split: ``clearNotes`` hits, ``nuclear`` and
    ``closest`` do not); Chinese ones, written without word breaks, match as substrings."""
    for field_name, text in (("name", spec.name), ("description", spec.description)):
        words = _words(text)
        for word in ENGLISH_KEYWORDS:
            if word in words:
                return word, field_name  # type: ignore[return-value]
        for word in CHINESE_KEYWORDS:
            if word in text:
                return word, field_name  # type: ignore[return-value]
    return None


def project_root(pkg: SkillPackage) -> Path:
    """Where ``cli-agent-run/`` lives: the mini-program project, else the skill folder itself."""
    return pkg.project.root if pkg.project is not None else pkg.root


def manifest_path(root: Path) -> Path:
    return root / MANIFEST_DIR / MANIFEST_NAME


def read_manifest(root: Path) -> DestructiveManifest | None:
    """The manifest under ``root``; None when there is none. Raises ManifestError when it is unreadable."""
    path = manifest_path(root)
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as err:
        raise ManifestError(f"{path} cannot be read: {err}") from None
    try:
        return DestructiveManifest.model_validate(json.loads(text))
    except (ValueError, ValidationError) as err:
        first = str(err).splitlines()[0]
        raise ManifestError(f"{path} is not a destructive manifest: {first}") from None


def hits(skill: str, apis: Iterable[ApiSpec]) -> list[ManifestEntry]:
    """An undecided entry per API a keyword hits."""
    out = []
    for spec in apis:
        found = keyword_hit(spec)
        if found is not None:
            out.append(ManifestEntry(skill=skill, apiName=spec.name, hitKeyword=found[0], hitField=found[1]))
    return out


def merged(
    root: Path, project: str, found: list[ManifestEntry], old: DestructiveManifest | None
) -> DestructiveManifest:
    """The manifest to write: this run's hits, each keeping the decision (and reason) the old
    manifest holds for the same skill and API, so a rerun never erases what someone decided."""
    entries = []
    for hit in found:
        before = old.entry(hit.skill, hit.apiName) if old is not None else None
        if before is not None:
            hit = hit.model_copy(
                update={"destructive": before.destructive, "destructiveReason": before.destructiveReason}
            )
        entries.append(hit)
    stamp = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    return DestructiveManifest(generatedAt=stamp, project=project, apis=entries)


def write_manifest(root: Path, manifest: DestructiveManifest) -> Path:
    path = manifest_path(root)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(manifest.model_dump(mode="json"), ensure_ascii=False, indent=2) + "\n", "utf-8")
    return path


Verdict = Literal["run", "refuse"]


def decide(manifest: DestructiveManifest | None, skill: str, spec: ApiSpec) -> tuple[Verdict, str]:
    """What execute does with ``spec``, and why: an entry ``true``/``null`` refuses, ``false`` or
    no entry runs; with no manifest at all a keyword hit refuses (the official fallback)."""
    if manifest is None:
        found = keyword_hit(spec)
        if found is None:
            return "run", "no destructive manifest and no keyword hit"
        return "refuse", (
            f'{spec.name}: its {found[1]} uses "{found[0]}" and there is no {MANIFEST_DIR}/{MANIFEST_NAME} '
            "to say it is not destructive"
        )
    entry = manifest.entry(skill, spec.name)
    if entry is None or entry.destructive is False:
        return "run", "not listed" if entry is None else "decided not destructive"
    if entry.destructive is None:
        return "refuse", f"{spec.name}: its destructive-manifest entry is undecided (destructive: null)"
    return "refuse", f"{spec.name}: the destructive manifest marks it destructive (destructive: true)"


def check_decisions(pkg: SkillPackage, sink: DiagnosticSink) -> None:
    """WXA001 at each API a V019 keyword hits that the manifest has not decided (no entry, or
    ``destructive: null``); a decision either way silences it. WXA002 when the manifest is unreadable."""
    if pkg.manifest is None:
        return
    try:
        manifest = read_manifest(project_root(pkg))
    except ManifestError as err:
        sink.emit("WXA002", str(err), file=None)
        manifest = None
    names = _name_spans(pkg.manifest_json)
    for spec in pkg.manifest.apis:
        found = keyword_hit(spec)
        if found is None:
            continue
        entry = manifest.entry(pkg.name, spec.name) if manifest is not None else None
        if entry is not None and entry.destructive is not None:
            continue
        sink.emit(
            "WXA001",
            f'{spec.name}: its {found[1]} uses "{found[0]}" (V019) and {MANIFEST_DIR}/{MANIFEST_NAME} '
            "does not say whether it is destructive; `skillc agent execute` refuses it until then",
            file="mcp.json",
            span=names.get(spec.name),
            hint=f'set "destructive": false (or true) in the entry of {spec.name}; '
            "`skillc check --format wxa` writes the entries",
        )


def _name_spans(manifest: JNode | None) -> dict[str, Span]:
    found: dict[str, Span] = {}
    apis = manifest.get("apis") if isinstance(manifest, JObject) else None
    if not isinstance(apis, JArray):
        return found
    for i in range(len(apis.items)):
        node = lookup(apis, (i, "name"))
        value = node.to_python() if node is not None else None
        if node is not None and isinstance(value, str):
            found.setdefault(value, node.span)
    return found
