"""The sandboxed CommonJS modules both VMs share: the skill's files, the loader, and JS errors.

Python wraps every .js of the skill once as a module function and registers it with
``loader.js``; ``require()`` only ever reads that registry, never a file system. A :class:`JsError`
is an exception the skill's code threw, with where in the skill it was thrown.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from skillc.frontend.package import SkillPackage
from skillc.runtime.sandbox.engine import FaultKind, JsFault, JsFile, JsSession, classify

LOADER_JS = JsFile("skillc.runtime.sandbox", "loader.js")

# Line 1 of every module carries this prefix, so line numbers in stack traces match the file.
_WRAP_HEAD = "globalThis.__skillc_m = (function (exports, require, module, __filename, __dirname) {"
_WRAP_TAIL = "\n})"
_FRAME = re.compile(r"\(?([^()\s]+):(\d+):(\d+)\)?\s*$")


@dataclass(frozen=True)
class SkillCode:
    """The files require() can reach, each .js wrapped once as a module body."""

    scripts: tuple[tuple[str, str], ...]
    json_files: tuple[tuple[str, str], ...]

    @classmethod
    def of(cls, pkg: SkillPackage, *, components: bool = False) -> SkillCode:
        """Every .js and .json outside components/ (the API VM), or every one (a card's VM, whose
        index.js may require helpers)."""
        scripts, data = [], []
        for path, text in sorted(pkg.sources.items()):
            if path.startswith("components/") and not components:
                continue
            if path.endswith(".js"):
                scripts.append((path, _WRAP_HEAD + text + _WRAP_TAIL))
            elif path.endswith(".json"):
                data.append((path, text))
        return cls(tuple(scripts), tuple(data))


def boot(session: JsSession, *files: JsFile) -> None:
    """Run the loader, then the runtime's own ``files`` (the wx.* surface, a VM); their failure is a
    fault, not the skill's."""
    for file in (LOADER_JS, *files):
        error = session.run_script(file.source, file.filename)
        if error is not None:
            raise JsFault(classify(error), error)


def define_modules(session: JsSession, code: SkillCode, define: Any, define_json: Any) -> str | None:
    """Register every module of ``code`` with the loader; the error text of the first that fails."""
    for path, wrapped in code.scripts:
        error = session.run_script(wrapped, path)
        if error is not None:
            return error
        if not session.call(define, path):
            return f"SyntaxError: {path} is not a module body\n    at {path}:1:1"
    for path, text in code.json_files:
        session.call(define_json, path, text)
    return None


class JsError(BaseModel):
    """A JS exception, with where it was thrown in the skill."""

    name: str = "Error"
    message: str = ""
    stack: str = ""
    file: str | None = None
    line: int | None = None
    column: int | None = None

    @property
    def headline(self) -> str:
        return f"{self.name}: {self.message}" if self.message else self.name

    @property
    def fault(self) -> FaultKind:
        """What the error means for its context: a plain "error", or the fault that ends it."""
        # QuickJS throws null when the heap is so exhausted it cannot allocate the error object; a
        # skill that throws null itself is reported as out of memory too (docs/runtime.md says so).
        if self.message == "a non-Error value was thrown: null":
            return "memory"
        return classify(self.headline)

    @classmethod
    def from_js(cls, raw: dict[str, Any]) -> JsError:
        at = raw.get("at") or {}
        return cls(
            name=str(raw.get("name") or "Error"),
            message=str(raw.get("message") or ""),
            stack=str(raw.get("stack") or ""),
            file=at.get("file"),
            line=at.get("line"),
            column=at.get("column"),
        )

    @classmethod
    def from_text(cls, text: str) -> JsError:
        """From an engine error text: ``Name: message`` then the stack frames."""
        head, _, stack = text.partition("\n")
        name, sep, message = head.partition(": ")
        err = cls(name=name if sep else "Error", message=message if sep else head, stack=stack)
        for line in stack.splitlines():
            m = _FRAME.search(line)
            if m and not m.group(1).startswith("skillc:"):
                err.file, err.line, err.column = m.group(1), int(m.group(2)), int(m.group(3))
                break
        return err
