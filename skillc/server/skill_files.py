"""A served skill's files as MCP Skills (SEP-2640) describes them: each file under
``skill://<skill>/<path>`` with its SHA-256 digest and size, and the SKILL.md front matter as JSON.

The files are read once, when the server starts, and served from that snapshot: a host checks
every read against the digest it was listed with, so what is read must be exactly what was
listed, even while someone edits the folder.

SKILL.md needs a front matter with ``name`` and ``description`` for an agent host (it parses the
file it reads and compares the front matter with the listing, field by field), while WeChat reads
SKILL.md as plain Markdown and needs none. So a SKILL.md without them is served with them: a
missing ``name`` is the skill's name, a missing ``description`` the skill's summary (skill_docs),
written as JSON strings (valid YAML) at the top of the block, or in a new block when there is
none. The prompt and the server instructions keep the file as written.
"""

from __future__ import annotations

import hashlib
import json
import logging
import mimetypes
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

from skillc.frontend.front_matter import parse_front_matter
from skillc.frontend.package import SkillPackage
from skillc.frontend.skill_names import skill_path
from skillc.server.skill_docs import SKILL_MD_MIME, SkillDoc

log = logging.getLogger("skillc.server")

# The extension's interoperability limits: hosts must accept skills up to these.
MAX_FILES = 512
MAX_BYTES = 16 * 1024 * 1024
_TEXT_MIME = {".md": SKILL_MD_MIME, ".js": "text/javascript", ".json": "application/json", ".wxml": "text/plain"}
_TEXT_MIME |= {".wxss": "text/css", ".wxs": "text/javascript", ".txt": "text/plain"}
_NEWLINE = re.compile(r"\r?\n")


@dataclass(frozen=True)
class SkillFile:
    uri: str
    path: str  # relative to the skill folder, with /
    data: bytes
    mime_type: str

    @property
    def digest(self) -> str:
        return "sha256:" + hashlib.sha256(self.data).hexdigest()

    def entry(self) -> dict[str, Any]:
        return {"uri": self.uri, "digest": self.digest, "size": len(self.data)}


@dataclass(frozen=True)
class SkillEntry:
    """One skill: its SKILL.md URI, front matter (JSON) and files. ``refusal`` says why it is not
    listed (its front matter cannot be read, or names another skill); its files stay readable."""

    skill: str  # the served skill's name (its folder)
    uri: str
    frontmatter: dict[str, Any]
    files: list[SkillFile] = field(default_factory=list)
    refusal: str | None = None

    def wire(self) -> dict[str, Any]:
        return {"uri": self.uri, "frontmatter": self.frontmatter, "resources": [f.entry() for f in self.files]}


def skill_entry(package: SkillPackage, doc: SkillDoc) -> SkillEntry:
    path = skill_path(package.name)
    uri = doc.uri
    files, refusal = _snapshot(package.root, path)
    skill_md = next((f for f in files if f.path == "SKILL.md"), None)
    text = skill_md.data.decode("utf-8", "replace") if skill_md is not None else ""
    served, frontmatter, problem = served_skill_md(text, path, doc.description)
    files = [f for f in files if f.path != "SKILL.md"]
    files.insert(0, SkillFile(uri, "SKILL.md", served.encode("utf-8"), SKILL_MD_MIME))
    refusal = refusal or problem
    if refusal is not None:
        log.warning("skill %s is not listed by skills/list: %s", package.name, refusal)
    return SkillEntry(package.name, uri, frontmatter, files, refusal)


def served_skill_md(text: str, name: str, description: str) -> tuple[str, dict[str, Any], str | None]:
    """SKILL.md as served (with ``name`` and ``description``), its front matter as JSON, and why
    it cannot be listed (None when it can)."""
    front = parse_front_matter(text)
    if front.present and not front.fields and _has_content(text, front.body):
        return text, {}, "its SKILL.md front matter is not a YAML mapping (see SKL013 from skillc check)"
    added: list[str] = []
    if "name" not in front.fields:
        added.append(f"name: {json.dumps(name)}")
    if "description" not in front.fields:
        added.append(f"description: {json.dumps(description, ensure_ascii=False)}")
    if added:
        newline = "\r\n" if "\r\n" in text.split("\n", 1)[0] + "\n" else "\n"
        lines = newline.join(added) + newline
        if front.present:  # after the opening line: the block's mapping starts at the first column
            first_end = text.index("\n") + 1
            text = text[:first_end] + lines + text[first_end:]
        else:
            text = f"---{newline}{lines}---{newline}" + text
        front = parse_front_matter(text)
    fields = front.fields
    if fields.get("name") != name:
        return text, {}, f"its SKILL.md front matter names {fields.get('name')!r}, not the skill's name {name!r}"
    if not isinstance(fields.get("description"), str):
        return text, {}, "its SKILL.md front matter description is not text"
    try:  # a field JSON cannot carry (a date, an infinity) leaves nothing a host could compare
        frontmatter: dict[str, Any] = json.loads(json.dumps(fields, allow_nan=False, ensure_ascii=False))
    except (TypeError, ValueError) as err:
        return text, {}, f"its SKILL.md front matter has a value JSON cannot carry ({err})"
    return text, frontmatter, None


def _has_content(text: str, body: str) -> bool:
    # An empty '---\n---' block reads as no fields, and is a block we can still add to.
    block = text[: len(text) - len(body)]
    return any(line.strip() not in ("", "---", "...") for line in _NEWLINE.split(block))


def _snapshot(root: Path, path: str) -> tuple[list[SkillFile], str | None]:
    """Every regular file under ``root`` (not hidden ones, not through links), in path order. A
    skill over the limits is not listed, so then only its SKILL.md is read (still readable)."""
    found = sorted(_walk(root))
    refusal: str | None = None
    try:
        total = sum(p.stat().st_size for p in found)
    except OSError as err:
        total, refusal = 0, f"a file cannot be read ({err})"
    if len(found) > MAX_FILES or total > MAX_BYTES:
        over = f"over the {MAX_FILES} files and {MAX_BYTES} bytes hosts accept"
        refusal = f"it has {len(found)} files of {total} bytes, {over}"
        found = [p for p in found if p.relative_to(root).as_posix() == "SKILL.md"]
    files: list[SkillFile] = []
    for file in found:
        rel = file.relative_to(root).as_posix()
        try:
            data = file.read_bytes()
        except OSError as err:  # the manifest would be incomplete: listed nowhere, said once
            refusal = refusal or f"{rel} cannot be read ({err.strerror})"
            continue
        files.append(SkillFile(file_uri(path, rel), rel, data, _mime(rel, data)))
    return files, refusal


def _walk(folder: Path) -> list[Path]:
    found: list[Path] = []
    for entry in folder.iterdir():
        if entry.name.startswith(".") or entry.is_symlink():
            continue
        if entry.is_dir():
            found += _walk(entry)
        elif entry.is_file():
            found.append(entry)
    return found


def file_uri(path: str, rel: str) -> str:
    return f"skill://{path}/" + "/".join(quote(part, safe="") for part in rel.split("/"))


def same_uri(a: str, b: str) -> bool:
    return a == b or unquote(a) == unquote(b)


def _mime(rel: str, data: bytes) -> str:
    suffix = Path(rel).suffix.lower()
    known = _TEXT_MIME.get(suffix) or mimetypes.guess_type(rel)[0]
    if known is not None:
        return known
    return "text/plain" if _is_text(data) else "application/octet-stream"


def _is_text(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return b"\x00" not in data


def is_text(file: SkillFile) -> bool:
    """Whether ``resources/read`` gives the file as text (else as a base64 blob)."""
    return _is_text(file.data) and (file.mime_type.startswith("text/") or file.mime_type.endswith("json"))


__all__ = ["MAX_BYTES", "MAX_FILES", "SkillEntry", "SkillFile", "file_uri", "is_text", "same_uri", "skill_entry"]
