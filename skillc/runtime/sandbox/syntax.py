"""Compile a skill's JavaScript without running it, and say where it does not parse.

``skillc check`` calls :func:`syntax_errors` on every skill file; the loader uses :func:`locate` to
give a file that fails to compile at run time the same place. A file is compiled exactly as the
runtime compiles it, wrapped as a CommonJS module function (so a top-level ``return`` is fine, as
in WeChat), and the place QuickJS reports is mapped back into the file: the wrapper's text shares
line 1, and its closing ``})`` is one line past the end of the file.

Compiling is QuickJS's compile-only mode (``JS_EVAL_FLAG_COMPILE_ONLY`` through the native
binding), which runs nothing. When the native binding fails its self-check, the file is compiled
as a function expression in a bare context instead (no host functions, CPU, memory and stack
capped): defining the function runs none of its body.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import quickjs

from skillc.diagnostics import Diagnostic, Span
from skillc.runtime.config import RuntimeConfig
from skillc.runtime.sandbox.native import NativeContext, self_check

_DEFAULTS = RuntimeConfig()
FN_HEAD = "function (exports, require, module, __filename, __dirname) {"
_HEAD = "(" + FN_HEAD
_TAIL = "\n})"
_AT = re.compile(r"^\s*at (?:[^()\n]*\()?([^()\s]+):(\d+):(\d+)\)?\s*$", re.MULTILINE)


@dataclass(frozen=True)
class JsLocation:
    """Where in a file (1-based line and column) an engine error points, and its message."""

    name: str
    message: str
    line: int
    column: int

    @property
    def headline(self) -> str:
        return f"{self.name}: {self.message}" if self.message else self.name


def locate(text: str, error: str, head: int) -> JsLocation:
    """Map an engine error about ``text`` compiled behind a wrapper of ``head`` characters (on line
    1) back into ``text``. An error in the wrapper's closing line is the end of the file."""
    first, _, _ = error.partition("\n")
    name, sep, message = first.partition(": ")
    if not sep:
        name, message = "SyntaxError", first
    m = _AT.search(error)
    line, column = (int(m.group(2)), int(m.group(3))) if m else (1, 1)
    if line == 1:
        column = max(column - head, 1)
    lines = text.rstrip().split("\n")
    if line > len(lines):
        # The parser only noticed at the wrapper's closing "})", so its message names the
        # wrapper's tokens: the file ended with something still open. The place is its last
        # character.
        line = len(lines)
        column = len(lines[-1]) + 1
        message = "unexpected end of the file: a bracket, brace, parenthesis or string is still open"
    return JsLocation(name=name.strip() or "SyntaxError", message=message.strip(), line=max(line, 1), column=column)


def compile_error(path: str, text: str, *, wrapped: bool = True) -> JsLocation | None:
    """The place and message of the first error compiling ``text`` as a module body (or, not
    ``wrapped``, as a plain script), or None."""
    # The binding takes neither NUL nor lone surrogates; in a string either is a character, and
    # outside one a syntax error at the same place, so a stand-in keeps the verdict.
    clean = text.replace("\0", " ").encode("utf-8", "replace").decode("utf-8")
    head, tail = (_HEAD, _TAIL) if wrapped else ("", "")
    source = head + clean + tail
    ctx = quickjs.Context()
    # The runtime's default limits: a file compiles here exactly when it compiles in a VM.
    ctx.set_memory_limit(_DEFAULTS.memory_limit)
    ctx.set_max_stack_size(_DEFAULTS.stack_size)
    if self_check().ok:
        # The engine's own compile step (JS_EVAL_FLAG_COMPILE_ONLY, the one eval_named caches
        # bytecode from), so check and the VMs compile a file the same way.
        compiled = NativeContext(ctx).compile(source, path)
        return locate(clean, compiled, len(head)) if isinstance(compiled, str) else None
    ctx.set_time_limit(2.0)
    try:
        ctx.eval(source)
    except quickjs.JSException as exc:
        return locate(clean, str(exc), len(head))
    return None


def syntax_errors(path: str, text: str) -> list[Diagnostic]:
    """JS007 for each place ``text`` (the skill file ``path``) does not compile; QuickJS stops at
    the first, so there is at most one."""
    found = compile_error(path, text)
    if found is not None:
        message = f"{path} does not compile: {found.headline}"
    else:
        from skillc.runtime.sandbox.modules import is_module_body  # modules.py imports this module

        if is_module_body(text):
            return []
        # It compiles only because it closes the function it is wrapped in; as a plain script the
        # engine points at the brace that does.
        found = compile_error(path, text, wrapped=False) or JsLocation("SyntaxError", "", 1, 1)
        message = f"{path} does not compile as a module: {NOT_A_BODY}"
    return [
        Diagnostic.make(
            "JS007",
            message,
            file=path,
            span=Span.point(found.line, found.column),
            hint="every API and card that requires this file fails to load until it compiles",
        )
    ]


NOT_A_BODY = "it closes the function it is compiled into (an unmatched '}' at its top level)"
