"""The sandboxed CommonJS modules both VMs share: the skill's files, the loader, and JS errors.

Python wraps every .js of the skill once as a module function and registers it with
``loader.js``; ``require()`` only ever reads that registry, never a file system. A :class:`JsError`
is an exception the skill's code threw, with where in the skill it was thrown.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import quickjs
from pydantic import BaseModel

from skillc.frontend.modpaths import CodeRoot
from skillc.frontend.package import SkillPackage
from skillc.runtime.sandbox.engine import FaultKind, JsFault, JsFile, JsSession, classify
from skillc.runtime.sandbox.syntax import locate

LOADER_JS = JsFile("skillc.runtime.sandbox", "loader.js")

# Line 1 of every module carries this prefix, so line numbers in stack traces match the file.
_FN_HEAD = "function (exports, require, module, __filename, __dirname) {"
_WRAP_HEAD = "globalThis.__skillc_m = (" + _FN_HEAD
_WRAP_TAIL = "\n})"
_FRAME = re.compile(r"\(?([^()\s]+):(\d+):(\d+)\)?\s*$")


@dataclass(frozen=True)
class SkillCode:
    """The files require() can reach, each .js wrapped once as a module body."""

    scripts: tuple[tuple[str, str], ...]
    json_files: tuple[tuple[str, str], ...]
    # Files that would close the function they are wrapped in, with the error each gives instead.
    refused: tuple[tuple[str, str], ...] = ()
    root: CodeRoot = field(default_factory=CodeRoot)  # how far require() may reach (the loader applies it)
    app_id: str | None = None  # the project's, for wx.getAccountInfoSync; None outside a project

    @classmethod
    def of(cls, pkg: SkillPackage, *, components: bool = False) -> SkillCode:
        """The skill code of one VM: what index.js reaches (the API VM), or what the components'
        index.js files reach (a card's VM). Other files of the folder (cloudfunctions/, tests)
        are not skill code and are never defined."""
        scripts, data, refused = [], [], []
        wanted = pkg.card_files if components else pkg.api_files
        for path in sorted(wanted):
            text = pkg.sources[path]
            if path.endswith(".js"):
                if not is_module_body(text):
                    refused.append((path, _NOT_A_BODY.format(path=path)))
                scripts.append((path, _WRAP_HEAD + text + _WRAP_TAIL))
            elif path.endswith(".json"):
                data.append((path, text))
        app_id = pkg.project.app_id() if pkg.project is not None else None
        return cls(tuple(scripts), tuple(data), tuple(refused), pkg.code_root, app_id)

    @classmethod
    def of_files(cls, files: dict[str, str], *, label: str, app_id: str | None = None) -> SkillCode:
        """The code of a VM that runs files from outside a skill (a mini-program page): each .js
        wrapped and checked as a skill's is, ``require()`` kept among ``files`` (named by ``label``)."""
        scripts, data, refused = [], [], []
        for path in sorted(files):
            text = files[path]
            if path.endswith(".js"):
                if not is_module_body(text):
                    refused.append((path, _NOT_A_BODY.format(path=path)))
                scripts.append((path, _WRAP_HEAD + text + _WRAP_TAIL))
            elif path.endswith(".json"):
                data.append((path, text))
        return cls(tuple(scripts), tuple(data), tuple(refused), CodeRoot(label=label), app_id)


_NOT_A_BODY = (
    "SyntaxError: {path} is not a module body: it closes the function it is compiled into "
    "(an unmatched '}}' at its top level)\n    at {path}:1:1"
)
# Runs in a bare context: ``mark`` is called by the first statement of the checked script, so an
# exception after it means the file's own code ran while its module function was being defined.
_CHECKER = """(function (global) {
  const toString = Function.prototype.toString, apply = Reflect.apply, parse = JSON.parse;
  const run = (0, eval);
  let ran = false;
  Object.defineProperty(global, '__skillc_mark', { value: function () { ran = true; } });
  return function (src, expected) {
    try { run(src); } catch (e) { return ran ? 'escaped' : 'syntax'; }
    const f = global.__skillc_m;
    return typeof f === 'function' && apply(toString, f, []) === parse(expected) ? 'body' : 'escaped';
  };
})(globalThis)"""


@lru_cache(maxsize=4096)
def is_module_body(text: str) -> bool:
    """Whether ``text`` wrapped as a module function stays inside that function.

    The wrapper is one string, so a file that begins with ``});`` would end the function and run
    code of its own while it is being defined. The check runs the wrapped file in a bare context
    (no host functions, so escaped code reaches nothing; CPU, memory and stack capped) and asks
    whether anything ran and whether the function it defined has exactly the source of the wrapped
    file, which no other function can have. A file that does not parse passes: the real compile
    reports its syntax error, with its place. Cached per text, so each file is checked once per
    process.
    """
    ctx = quickjs.Context()
    ctx.set_memory_limit(32 << 20)
    ctx.set_max_stack_size(1 << 20)
    ctx.set_time_limit(1.0)
    # The binding takes neither NUL nor lone surrogates; either is a string character or a syntax
    # error, and a stand-in keeps both verdicts.
    text = text.replace("\0", " ").encode("utf-8", "replace").decode("utf-8")
    try:
        check = ctx.eval(_CHECKER)
        verdict = check("__skillc_mark();" + _WRAP_HEAD + text + _WRAP_TAIL, json.dumps(_FN_HEAD + text + "\n}"))
    except (quickjs.JSException, ValueError):
        return False  # the check itself was stopped (time, memory): only code that ran can do that
    return bool(verdict != "escaped")


def boot(session: JsSession, *files: JsFile) -> None:
    """Run the loader, then the runtime's own ``files`` (the wx.* surface, a VM); their failure is a
    fault, not the skill's."""
    for file in (LOADER_JS, *files):
        error = session.run_script(file.source, file.filename)
        if error is not None:
            raise JsFault(classify(error), error)


def define_modules(session: JsSession, code: SkillCode, define: Any, define_json: Any) -> str | None:
    """Register every module of ``code`` with the loader. A file that does not compile (or is not a
    module body) is registered as broken: requiring it throws its error, and nothing else is
    affected. Returns the error text of a failure that ends the context (memory, deadline)."""
    broken = session.pick("defineBroken")
    refused = dict(code.refused)
    if code.root.is_project:
        root = {"prefix": list(code.root.prefix), "label": code.root.label}
        session.call(session.pick("setCodeRoot"), json.dumps(root))
    for path, wrapped in code.scripts:
        if path in refused:
            # never run: its own code would run while the wrapper is being defined
            session.call(broken, path, _broken_json(path, wrapped, refused[path]))
            continue
        error = session.run_script(wrapped, path)
        if error is not None and classify(error) != "error":
            return error
        if error is not None:
            session.call(broken, path, _broken_json(path, wrapped, error))
        elif not session.call(define, path):
            error = _NOT_A_BODY.format(path=path)
            session.call(broken, path, _broken_json(path, wrapped, error))
    for path, text in code.json_files:
        session.call(define_json, path, text)
    return None


def _broken_json(path: str, wrapped: str, error: str) -> str:
    """The loader's record of a file that failed to define: its error, placed in the file."""
    text = wrapped[len(_WRAP_HEAD) : len(wrapped) - len(_WRAP_TAIL)]
    found = locate(text, error, len(_WRAP_HEAD))
    record = {"name": found.name, "message": found.message, "file": path, "line": found.line, "column": found.column}
    return json.dumps(record, ensure_ascii=False)


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
