"""Where a skill's ``require()`` may reach, and what a spec resolves to.

A skill loaded alone may require files inside its own folder. A skill inside a mini-program
project lives in a subpackage (``subPackages[].root``, often ``skills/``), and WeChat's rule is
that ``require`` stays inside that subpackage root: ``../_shared/x`` from ``skills/a/`` is fine,
``../../utils/x`` is not. The subpackage root is then the boundary (the :class:`CodeRoot`).

Files keep their paths relative to the skill folder everywhere (``index.js``,
``apis/pay.js``); a shared file outside it is named by the relative path that reaches it
(``../_shared/money.js``). ``skillc/runtime/sandbox/loader.js`` resolves with the same rules,
from the same prefix, so what check accepts is what runs.
"""

from __future__ import annotations

import posixpath
from collections.abc import Container
from dataclasses import dataclass
from typing import Literal

EXTENSIONS = ("", ".js", ".json", "/index.js", "/index.json")

Refusal = Literal["bare", "escapes", "missing"]
# Never a file's key: every file require() can load has a .js or .json name.
REFUSALS: frozenset[str] = frozenset(("bare", "escapes", "missing"))


@dataclass(frozen=True)
class CodeRoot:
    """The folder ``require()`` may not leave, seen from the skill folder.

    ``prefix`` is the skill folder's path inside the code root: ``("a",)`` for ``skills/a``
    under the subpackage root ``skills``, ``()`` for a skill loaded alone (the skill folder is
    then its own root). ``label`` names the boundary in messages.
    """

    prefix: tuple[str, ...] = ()
    label: str = "the skill folder"

    @property
    def is_project(self) -> bool:
        return bool(self.prefix)

    def key(self, parts: list[str]) -> str:
        """The skill-relative name of the file at ``parts`` (relative to the code root)."""
        common = 0
        for mine, theirs in zip(self.prefix, parts, strict=False):
            if mine != theirs:
                break
            common += 1
        return "/".join([".."] * (len(self.prefix) - common) + parts[common:])

    def parts(self, skill_relative: str) -> list[str] | None:
        """The code-root-relative segments of a skill-relative path; None when it leaves the root."""
        out = list(self.prefix)
        for seg in skill_relative.split("/"):
            if seg in ("", "."):
                continue
            if seg == "..":
                if not out:
                    return None
                out.pop()
            else:
                out.append(seg)
        return out

    def target(self, spec: str, from_file: str) -> list[str] | Refusal:
        """The code-root-relative segments ``spec`` names from ``from_file``, before extensions."""
        if spec.startswith("/"):
            base = list(self.prefix)  # "/x" is the skill folder's x, as the loader has always read it
        elif spec in (".", "..") or spec.startswith(("./", "../")):
            found = self.parts(posixpath.dirname(from_file))
            if found is None:
                return "escapes"
            base = found
        else:
            return "bare"
        for seg in spec.split("/"):
            if seg in ("", "."):
                continue
            if seg == "..":
                if not base:
                    return "escapes"
                base.pop()
            else:
                base.append(seg)
        return base

    def resolve(self, spec: str, from_file: str, files: Container[str]) -> str | Refusal:
        """The skill-relative key of the file ``require(spec)`` in ``from_file`` loads, or why not."""
        parts = self.target(spec, from_file)
        if isinstance(parts, str):
            return parts
        base = "/".join(parts)
        for ext in EXTENSIONS:
            if not base and ext in ("", ".js", ".json"):
                continue
            candidate = self.key((base + ext).lstrip("/").split("/"))
            if candidate in files:
                return candidate
        return "missing"

    def outside(self, key: str) -> bool:
        """Whether a skill-relative key names a file outside the skill folder (a shared file)."""
        return key == ".." or key.startswith("../")
