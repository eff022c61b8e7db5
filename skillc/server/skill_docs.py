"""SKILL.md for the agent: each served skill's instructions as an MCP prompt, a resource and the
server instructions.

SKILL.md is the skill's business instructions for the model (when to use it, in which order to
call its APIs, what never to do). WeChat's agent reads it before it calls a tool; an MCP client
gets it three ways, because hosts differ in what they show the model:

- ``instructions`` of the initialize / discover result (read by most hosts at connect): the
  whole SKILL.md when one skill is served, the names and first paragraphs when several are (a
  host puts instructions in every prompt, so they stay short; the rest is one read away);
- the prompt ``<skill>`` (``prompts/get`` gives SKILL.md as one user message);
- the resource ``skill://<skill>/SKILL.md`` (``text/markdown``), also listed with all the skill's
  files by ``skills/list`` (MCP Skills: skill_files.py, skills_ext.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from skillc.frontend.front_matter import parse_front_matter
from skillc.frontend.package import SkillPackage
from skillc.frontend.skill_names import skill_path

SKILL_MD_MIME = "text/markdown"
# More than this many characters of instructions per skill go by reference (SKILL.md is at most
# 16000 bytes by WeChat's rule, so one skill's whole text fits).
INSTRUCTIONS_LIMIT = 16000

_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$")


def skill_md_uri(skill: str) -> str:
    return f"skill://{skill_path(skill)}/SKILL.md"


@dataclass(frozen=True)
class SkillDoc:
    skill: str
    text: str  # SKILL.md exactly as on disk ("" when the skill has none)
    title: str
    description: str  # the first paragraph after the title, or the front matter's description

    @property
    def uri(self) -> str:
        return skill_md_uri(self.skill)


def skill_doc(package: SkillPackage) -> SkillDoc:
    text = package.skill_md or ""
    front = parse_front_matter(text)  # its findings were reported when the package was checked
    title, paragraph = _title_and_first_paragraph(front.body)
    description = (front.text("description") or "").strip()
    return SkillDoc(
        skill=package.name,
        text=text,
        title=title or front.text("name") or package.name,
        description=description or paragraph or f"How to use the {package.name} skill's tools.",
    )


def _title_and_first_paragraph(body: str) -> tuple[str | None, str | None]:
    title: str | None = None
    lines: list[str] = []
    for raw in body.splitlines():
        line = raw.strip()
        heading = _HEADING.match(line)
        if heading:
            if lines:
                break
            if title is None:
                title = heading.group(1)
                continue
            break  # a second heading before any paragraph: there is no summary paragraph
        if not line:
            if lines:
                break
            continue
        lines.append(line)
    return title, (" ".join(lines) or None)


def instructions(docs: list[SkillDoc]) -> str:
    """The server instructions: what is served and how consent works, then the skills' own words."""
    head = (
        "Each tool is an atomic API of a WeChat mini-program skill; tools at risk L3/L4 run only with "
        "the user's consent. Follow each skill's SKILL.md"
    )
    if not docs:
        return head + " (no skill is served)."
    if len(docs) == 1 and docs[0].text and len(docs[0].text) <= INSTRUCTIONS_LIMIT:
        doc = docs[0]
        return f"{head}; the SKILL.md of {doc.skill} follows (also the prompt {doc.skill} and {doc.uri}).\n\n{doc.text}"
    lines = [f"{head}: read it with prompts/get <skill> or resources/read skill://<skill>/SKILL.md.", ""]
    lines += [f"- {d.skill}: {d.title}. {d.description}" for d in docs]
    return "\n".join(lines)


def server_identity(skills: list[str], version: str) -> tuple[str, str]:
    """``serverInfo`` name and title: what is served. The name is the served skills' names joined
    by ``+`` (``skillc`` when none is), the title says which skillc serves them; the version is
    skillc's, since the skills carry none."""
    shown = skills[:3] + ([f"{len(skills) - 3} more"] if len(skills) > 3 else [])
    name = "+".join(shown) or "skillc"
    return name, f"{', '.join(shown) or 'no skill'} (skillc {version})"
