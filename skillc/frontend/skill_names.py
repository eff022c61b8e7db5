"""A skill's name as agent hosts know it (MCP Skills, Agent Skills): the last segment of its
``skill://`` path and its front matter's ``name``, which must match
``^[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$``. WeChat names a skill by its folder, which may hold
capitals, dots or CJK; such a folder gets a stable name that fits."""

from __future__ import annotations

import hashlib
import re

SKILL_NAME = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?")
_NOT_NAME = re.compile(r"[^a-z0-9]+")


def skill_path(skill: str) -> str:
    """The folder name when it is a valid skill name, else its lower-case ASCII letters and digits
    (runs of anything else as one ``-``), ``-`` and 8 hex digits of the name's SHA-256, so two
    folders never share one and a folder's is the same in every release."""
    if SKILL_NAME.fullmatch(skill):
        return skill
    base = _NOT_NAME.sub("-", skill.lower()).strip("-")[:54].strip("-") or "skill"
    return f"{base}-{hashlib.sha256(skill.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}"
