"""SKILL.md's front matter is read as YAML: folded and quoted values round-trip, and a block YAML
cannot read is SKL013 at its line and column (never a description of '>')."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from skillc.diagnostics import DiagnosticSink
from skillc.frontend.front_matter import parse_front_matter
from skillc.frontend.package import load_skill
from skillc.server.skill_docs import skill_doc

from .conftest import COFFEE
from .test_cli_commands import invoke

FOLDED = """---
name: coffee-skill
description: >
  Order coffee at the corner shop:
  search, confirm, pay.
title: "Coffee: to go"
tags: ['a', "b"]
---

# Coffee

Body paragraph.
"""


def test_folded_quoted_and_flow_values_round_trip() -> None:
    sink = DiagnosticSink()
    front = parse_front_matter(FOLDED, sink)
    assert list(sink) == []
    assert front.fields == {
        "name": "coffee-skill",
        "description": "Order coffee at the corner shop: search, confirm, pay.\n",
        "title": "Coffee: to go",
        "tags": ["a", "b"],
    }
    assert front.body == "\n# Coffee\n\nBody paragraph.\n" and front.body_line == 9
    assert front.text("tags") is None  # a list is not a text field


def test_literal_blocks_and_escapes_keep_their_lines() -> None:
    text = '---\ndescription: |\n  line one\n  line two\nname: "caf\\u00e9"\n...\nbody\n'
    front = parse_front_matter(text)
    assert front.fields == {"description": "line one\nline two\n", "name": "café"}
    assert front.body == "body\n"


def test_no_front_matter_is_all_body() -> None:
    front = parse_front_matter("# Title\n---\nnot: front matter\n")
    assert (front.present, front.fields, front.body) == (False, {}, "# Title\n---\nnot: front matter\n")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "---\nname: x\ndescription: a: b\n---\nbody\n",
            ("SKL013", "SKILL.md front matter is not valid YAML: mapping values are not allowed here", 3, 15),
        ),
        (
            "---\nname: x\n  bad indent: [\n",
            ("SKL013", "SKILL.md starts a front matter with '---' but never closes it", 1, 1),
        ),
        (
            "---\n- name\n- description\n---\n",
            ("SKL013", "SKILL.md front matter is a YAML list, not a mapping of fields", 2, 1),
        ),
    ],
)
def test_a_front_matter_yaml_cannot_read_is_located(text: str, expected: tuple[str, str, int, int]) -> None:
    sink = DiagnosticSink()
    front = parse_front_matter(text, sink)
    (diag,) = list(sink)
    assert diag.span is not None
    assert (diag.code, diag.message, diag.span.line, diag.span.column) == expected
    assert front.fields == {}


def _skill_with(tmp_path: Path, skill_md: str) -> Path:
    skill = tmp_path / "coffee-skill"
    shutil.copytree(COFFEE, skill)
    (skill / "SKILL.md").write_text(skill_md, encoding="utf-8")
    return skill


def test_the_served_description_is_the_folded_text_not_its_indicator(tmp_path: Path) -> None:
    pkg = load_skill(_skill_with(tmp_path, FOLDED), DiagnosticSink())
    assert pkg is not None
    doc = skill_doc(pkg)
    assert doc.description == "Order coffee at the corner shop: search, confirm, pay."
    assert doc.title == "Coffee"


def test_check_reports_the_broken_front_matter_at_its_line(tmp_path: Path) -> None:
    skill = _skill_with(tmp_path, "---\nname: coffee-skill\ndescription: Order: now\n---\n\n# Coffee\n")
    code, out, err = invoke("check", str(skill))
    assert code == 0  # a warning: WeChat itself reads SKILL.md as plain Markdown
    assert (
        f"{skill}/SKILL.md:3:19: warning[SKL013]: SKILL.md front matter is not valid YAML: "
        "mapping values are not allowed here"
    ) in out + err


def test_yaml_1_2_core_schema_as_agent_hosts_read_it() -> None:
    text = "---\nname: x\nlicense: yes\nsince: 2026-01-01\nlevel: 010\nmask: 0x1f\nratio: .5\non: off\n---\n"
    assert parse_front_matter(text).fields == {
        "name": "x",
        "license": "yes",  # YAML 1.1 would read true
        "since": "2026-01-01",  # and a date, which JSON cannot carry
        "level": 10,  # and eight
        "mask": 31,
        "ratio": 0.5,
        "on": "off",
    }


def test_check_warns_of_a_front_matter_hosts_would_not_list(tmp_path: Path) -> None:
    skill = _skill_with(tmp_path, "---\nname: Coffee\ndescription: 3\n---\n\n# Coffee\n")
    code, out, err = invoke("check", str(skill))
    assert code == 0
    assert (
        f"{skill}/SKILL.md:2:1: warning[SKL014]: SKILL.md's front matter names the skill 'Coffee', but it is "
        "served as 'coffee-skill': skillc serve does not list it in skills/list (MCP Skills)"
    ) in out + err
    assert f"{skill}/SKILL.md:3:1: warning[SKL014]: SKILL.md's front matter description is not text" in out + err
    code, out, err = invoke("check", str(_skill_with(tmp_path / "ok", FOLDED)))
    assert "SKL014" not in out + err
