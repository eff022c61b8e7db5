"""MCP Skills (SEP-2640) from `skillc serve`, checked by the MCP Inspector's CLI, the reference
client that implements the extension (`@modelcontextprotocol/inspector` 2.12, pinned in
tests/peers/package.json): `--method skills/list` and `skills/get` over stdio and HTTP, at the
2025-era handshake and at 2026-07-28, and `--verify`, its conformance check: every listed file is
read and checked against its digest and size, and SKILL.md's front matter is parsed by the
Inspector's own YAML reader and compared with the listing field by field.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, PaginatedRequestParams

from skillc.diagnostics import DiagnosticSink
from skillc.frontend.package import load_skill
from skillc.runtime.config import RuntimeConfig
from skillc.server import skill_files
from skillc.server.runner import ServeHandle, ServeOptions
from skillc.server.skill_docs import skill_doc
from skillc.server.skill_files import SkillEntry, served_skill_md, skill_entry
from skillc.server.skills_ext import DirectoryReadParams, GetSkillParams, SkillsExtension
from tests.conftest import COFFEE, require
from tests.test_serve_agent_context import make_note_skill
from tests.test_server import coffee_server

__all__ = ["coffee_server"]

COFFEE_URI = "skill://coffee-skill/SKILL.md"
# Folded (>) and quoted values, escapes, a list, numbers: what YAML writers put in front matters.
NOTE_FRONT_MATTER = """\
---
name: note-skill
description: >
  Keeps short notes: one line each,
  "quoted" words and 中文 kept.
title: 'It''s a note'
tagline: "tab\\there \\u00e9 \\"x\\""
version: 1.0
license: yes
keywords:
  - notes
  - "a: b"
---
"""
NOTE_FRONT_MATTER_JSON = {
    "name": "note-skill",
    "description": 'Keeps short notes: one line each, "quoted" words and 中文 kept.\n',
    "title": "It's a note",
    "tagline": 'tab\there é "x"',
    "version": 1.0,
    "license": "yes",  # YAML 1.2: text, as hosts read it (YAML 1.1 would make it true)
    "keywords": ["notes", "a: b"],
}
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


@pytest.fixture(scope="module")
def inspector(peers_dir: Path) -> Path:
    bin_path = peers_dir / ".bin" / "mcp-inspector"
    require(bin_path.exists(), "the MCP Inspector is not installed (make peers)")
    return bin_path


@pytest.fixture(scope="module")
def note_with_front_matter(tmp_path_factory: pytest.TempPathFactory) -> Path:
    skill = make_note_skill(tmp_path_factory.mktemp("fm"))
    text = (skill / "SKILL.md").read_text(encoding="utf-8")
    (skill / "SKILL.md").write_text(NOTE_FRONT_MATTER + text, encoding="utf-8")
    (skill / "assets").mkdir()
    (skill / "assets" / "dot.png").write_bytes(PNG)  # not text: read as a base64 blob
    return skill


@pytest.fixture(scope="module")
def note_server(note_with_front_matter: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeHandle]:
    state = tmp_path_factory.mktemp("fm-state")
    options = ServeOptions(paths=(note_with_front_matter,), port=0, runtime=RuntimeConfig(state_dir=state))
    with ServeHandle.start(options) as handle:
        yield handle


def _inspect(inspector: Path, target: list[str], *args: str, expect_rc: int = 0) -> str:
    command = [str(inspector), "--cli", *target, *args]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=inspector.parent)
    assert done.returncode == expect_rc, f"{command}\nstdout: {done.stdout[-3000:]}\nstderr: {done.stderr[-3000:]}"
    return done.stdout


Ask = Any


@pytest.fixture(params=["stdio-legacy", "http-legacy", "http-2026"])
def ask(request: pytest.FixtureRequest, inspector: Path, coffee_server: ServeHandle, tmp_path: Path) -> Ask:
    """``ask(*args)``: the Inspector's stdout for the coffee skill, over the transport and
    protocol era of the test (legacy: the initialize handshake; 2026: server/discover)."""
    transport, era = request.param.split("-")
    if transport == "stdio":
        target = [sys.executable, "-m", "skillc", "serve", "--stdio", str(COFFEE.resolve())]
        target += ["--state-dir", str(tmp_path)]
    else:
        target = [coffee_server.url, "--transport", "http"]
    target += ["--protocol-era", "legacy" if era == "legacy" else "modern"]

    def run(*args: str) -> str:
        return _inspect(inspector, target, *args)

    return run


def _disk_files(root: Path) -> dict[str, bytes]:
    return {
        f"skill://{root.name}/{p.relative_to(root).as_posix()}": p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts)
    }


def _digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def test_skills_list_and_get_give_the_coffee_skill_with_its_manifest(ask: Ask) -> None:
    listed = json.loads(ask("--method", "skills/list"))
    [entry] = listed["skills"]
    assert entry["uri"] == COFFEE_URI
    assert entry["frontmatter"] == {
        "name": "coffee-skill",
        "description": 'Order coffee from the "Morning Beans" café for pickup.',
    }
    manifest = {r["uri"]: (r["digest"], r["size"]) for r in entry["resources"]}
    disk = _disk_files(COFFEE)
    assert set(manifest) == set(disk)  # every file, each once, SKILL.md too
    for uri, data in disk.items():
        if uri != COFFEE_URI:  # SKILL.md is served with a front matter: --verify reads it
            assert manifest[uri] == (_digest(data), len(data)), uri
    got = json.loads(ask("--method", "skills/get", "--uri", COFFEE_URI))
    assert got["skill"] == entry


def test_the_inspector_verifies_every_file_and_the_front_matter(ask: Ask) -> None:
    [report] = [json.loads(line) for line in ask("--method", "skills/list", "--verify").splitlines() if line.strip()]
    assert report["ok"] is True, report
    assert (report["conformance"], report["frontmatter"]) == ([], [])
    assert {f["uri"] for f in report["files"]} == set(_disk_files(COFFEE))
    assert {f["status"] for f in report["files"]} == {"verified"}


def test_folded_and_quoted_front_matter_round_trips(
    inspector: Path, note_server: ServeHandle, note_with_front_matter: Path
) -> None:
    target = [note_server.url, "--transport", "http"]
    uri = "skill://note-skill/SKILL.md"
    got = json.loads(_inspect(inspector, target, "--method", "skills/get", "--uri", uri))
    assert got["skill"]["frontmatter"] == NOTE_FRONT_MATTER_JSON
    manifest = {r["uri"]: r for r in got["skill"]["resources"]}
    written = (note_with_front_matter / "SKILL.md").read_bytes()  # it has a front matter: served as written
    assert (manifest[uri]["digest"], manifest[uri]["size"]) == (_digest(written), len(written))
    assert manifest["skill://note-skill/assets/dot.png"]["digest"] == _digest(PNG)

    out = _inspect(inspector, target, "--method", "skills/get", "--uri", uri, "--verify")
    [report] = [json.loads(line) for line in out.splitlines() if line.strip()]
    assert report["ok"] is True and report["frontmatter"] == [], report
    assert {f["status"] for f in report["files"]} == {"verified"}


def test_a_skill_md_without_front_matter_is_served_with_one() -> None:
    served, fields, refusal = served_skill_md("# Notes\n\nKeeps notes.\n", "note-skill", 'Keeps "notes".')
    assert refusal is None
    assert served == '---\nname: "note-skill"\ndescription: "Keeps \\"notes\\"."\n---\n# Notes\n\nKeeps notes.\n'
    assert fields == {"name": "note-skill", "description": 'Keeps "notes".'}

    partial = "---\nlicense: MIT\n---\n# Notes\n"
    served, fields, refusal = served_skill_md(partial, "note-skill", "Keeps notes.")
    assert refusal is None
    assert served == '---\nname: "note-skill"\ndescription: "Keeps notes."\nlicense: MIT\n---\n# Notes\n'
    assert fields == {"name": "note-skill", "description": "Keeps notes.", "license": "MIT"}


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("---\nname: other\ndescription: x\n---\n", "names 'other', not the skill's name 'note-skill'"),
        ("---\nname: note-skill\ndescription: [1]\n---\n", "description is not text"),
        ("---\n- a list\n---\n", "not a YAML mapping"),
        ("---\nname: note-skill\ndescription: x\nwhen: .inf\n---\n", "a value JSON cannot carry"),
    ],
)
def test_a_front_matter_hosts_could_not_match_is_not_listed(text: str, why: str) -> None:
    _served, fields, refusal = served_skill_md(text, "note-skill", "Keeps notes.")
    assert refusal is not None and why in refusal
    skills = SkillsExtension([SkillEntry("note-skill", "skill://note-skill/SKILL.md", fields, refusal=refusal)])
    assert skills.listed == []
    with pytest.raises(MCPError) as raised:
        asyncio.run(skills.get_skill(cast(Any, None), GetSkillParams(uri="skill://note-skill/SKILL.md")))
    assert raised.value.error.code == INVALID_PARAMS and why in raised.value.error.message


def test_skills_list_pages_follow_the_cursor() -> None:
    entries = [SkillEntry(f"s{i}", f"skill://s{i}/SKILL.md", {"name": f"s{i}", "description": "d"}) for i in range(5)]
    skills = SkillsExtension(entries, page_size=2)
    seen: list[str] = []
    cursor: str | None = None
    pages = 0
    while True:
        page = asyncio.run(skills.list_skills(cast(Any, None), PaginatedRequestParams(cursor=cursor)))
        assert (page["ttlMs"], page["cacheScope"]) == (300000, "public")
        seen += [s["uri"] for s in page["skills"]]
        pages += 1
        cursor = page.get("nextCursor")
        if cursor is None:
            break
    assert (pages, seen) == (3, [e.uri for e in entries])
    for bad in ("nope", base64.urlsafe_b64encode(b"skills:99").decode()):
        with pytest.raises(MCPError) as raised:
            asyncio.run(skills.list_skills(cast(Any, None), PaginatedRequestParams(cursor=bad)))
        assert raised.value.error.code == INVALID_PARAMS


def test_an_unknown_skill_is_invalid_params() -> None:
    skills = SkillsExtension([])
    with pytest.raises(MCPError) as raised:
        asyncio.run(skills.get_skill(cast(Any, None), GetSkillParams(uri="skill://nope/SKILL.md")))
    assert raised.value.error.code == INVALID_PARAMS


def test_a_folder_name_hosts_refuse_gets_a_skill_name_they_accept(inspector: Path, tmp_path: Path) -> None:
    menu = Path(__file__).parent / "fixtures" / "tool-names" / "menu-skill"
    twin = tmp_path / "咖啡.skill"
    shutil.copytree(menu, twin)
    options = ServeOptions(paths=(menu, twin), port=0, runtime=RuntimeConfig(state_dir=tmp_path / "state"))
    with ServeHandle.start(options) as handle:
        target = [handle.url, "--transport", "http"]
        listed = json.loads(_inspect(inspector, target, "--method", "skills/list"))["skills"]
        reports = _inspect(inspector, target, "--method", "skills/list", "--verify").splitlines()
    names = [s["frontmatter"]["name"] for s in listed]
    assert names[0] == "menu-skill" and re.fullmatch(r"skill-[0-9a-f]{8}", names[1]), names
    assert [s["uri"] for s in listed] == [f"skill://{n}/SKILL.md" for n in names]
    assert [json.loads(r)["ok"] for r in reports if r.strip()] == [True, True]


def test_a_skill_over_the_hosts_limits_is_not_listed_and_only_its_skill_md_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    skill = make_note_skill(tmp_path)
    pkg = load_skill(skill, DiagnosticSink())
    assert pkg is not None
    assert skill_entry(pkg, skill_doc(pkg)).refusal is None
    monkeypatch.setattr(skill_files, "MAX_FILES", 3)
    entry = skill_entry(pkg, skill_doc(pkg))
    assert entry.refusal is not None and "over the 3 files" in entry.refusal
    assert [f.path for f in entry.files] == ["SKILL.md"]  # still readable, as before the extension


def test_the_inspector_reads_a_skill_s_folders(ask: Ask, inspector: Path) -> None:
    root = json.loads(ask("--method", "resources/directory/read", "--uri", "skill://coffee-skill"))
    assert (root["ttlMs"], root["cacheScope"]) == (300000, "public")
    listed = [(r["name"], r["mimeType"]) for r in root["resources"]]
    assert listed == [
        ("SKILL.md", "text/markdown"),
        ("apis", "inode/directory"),
        ("components", "inode/directory"),
        ("flows", "inode/directory"),
        ("index.js", "text/javascript"),
        ("mcp.json", "application/json"),
    ]
    card = json.loads(
        ask("--method", "resources/directory/read", "--uri", "skill://coffee-skill/components/drink-list")
    )
    disk = sorted(p.name for p in (COFFEE / "components" / "drink-list").iterdir())
    assert [r["name"] for r in card["resources"]] == disk
    assert {r["uri"] for r in card["resources"]} == {f"skill://coffee-skill/components/drink-list/{n}" for n in disk}


def test_every_folder_lists_its_children_and_nothing_else_is_a_folder() -> None:
    # Walk the skill from its root as a host does (one level per call): the files reached are the
    # manifest; a file, a missing folder and a trailing-slash-less prefix of another skill are refused.
    skills = _coffee_extension()
    files: set[str] = set()
    todo = ["skill://coffee-skill"]
    while todo:
        page = asyncio.run(skills.read_directory(cast(Any, None), DirectoryReadParams(uri=todo.pop())))
        for child in page["resources"]:
            if child["mimeType"] == "inode/directory":
                todo.append(child["uri"])
            else:
                files.add(child["uri"])
    assert files == set(_disk_files(COFFEE))
    for uri in ("skill://coffee-skill/SKILL.md", "skill://coffee-skill/nope", "skill://coffee", "skill://other"):
        with pytest.raises(MCPError) as raised:
            asyncio.run(skills.read_directory(cast(Any, None), DirectoryReadParams(uri=uri)))
        assert raised.value.error.code == INVALID_PARAMS and "is not a directory resource" in raised.value.error.message


def _coffee_extension() -> SkillsExtension:
    pkg = load_skill(COFFEE, DiagnosticSink())
    assert pkg is not None
    return SkillsExtension([skill_entry(pkg, skill_doc(pkg))])
