"""JSON with source positions.

``json.loads`` gives values but no locations, accepts duplicate keys silently and stops at
the first problem. Diagnostics must point at the offending key or value inside mcp.json,
so this small parser keeps a span on every node, reports trailing commas and duplicate keys
without giving up, and gives the exact position of a syntax error.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Union

from skillc.diagnostics import Diagnostic, DiagnosticSink, Severity, Span
from skillc.frontend.source import LineIndex
from skillc.gcpause import collector_paused

JsonValue = Union[None, bool, int, float, str, list["JsonValue"], dict[str, "JsonValue"]]
PathPart = Union[str, int]

MAX_DEPTH = 200
# JSON.parse reads every number as a double; a literal beyond its range (1e999, or an integer of
# more than 309 digits) would be Infinity, which JSON.stringify writes as null.
MAX_INT_DIGITS = 309
_SURROGATE = re.compile(r"[\ud800-\udfff]")

_STRING = re.compile(r'"(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"')
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_WS = re.compile(r"[ \t\r\n]*")
_BOM = "\ufeff"


@dataclass
class JNode:
    span: Span

    def to_python(self) -> JsonValue:  # pragma: no cover - overridden
        raise NotImplementedError


@dataclass
class JScalar(JNode):
    value: bool | int | float | str | None = None

    def to_python(self) -> JsonValue:
        return self.value


@dataclass
class JMember:
    key: str
    key_span: Span
    value: JNode


@dataclass
class JObject(JNode):
    members: list[JMember] = field(default_factory=list)

    def to_python(self) -> JsonValue:
        return {m.key: m.value.to_python() for m in self.members}

    def get(self, key: str) -> JNode | None:
        # Duplicates resolve like JSON.parse: the last occurrence wins.
        found = None
        for m in self.members:
            if m.key == key:
                found = m.value
        return found

    def member(self, key: str) -> JMember | None:
        found = None
        for m in self.members:
            if m.key == key:
                found = m
        return found


@dataclass
class JArray(JNode):
    items: list[JNode] = field(default_factory=list)

    def to_python(self) -> JsonValue:
        return [i.to_python() for i in self.items]


def type_name(node: JNode | None) -> str:
    """The JSON type of a node, as a user would name it in an error message."""
    if node is None:
        return "nothing"
    if isinstance(node, JObject):
        return "object"
    if isinstance(node, JArray):
        return "array"
    value = node.to_python()
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return "string"


def lookup(root: JNode, path: Sequence[PathPart]) -> JNode | None:
    """The node at ``path`` (keys and indices), or None when the path leaves the tree."""
    node: JNode | None = root
    for part in path:
        if isinstance(node, JObject) and isinstance(part, str):
            node = node.get(part)
        elif isinstance(node, JArray) and isinstance(part, int) and 0 <= part < len(node.items):
            node = node.items[part]
        else:
            return None
    return node


def nearest_span(root: JNode, path: Sequence[PathPart], *, key: bool = False) -> Span:
    """The span of ``path``, or of its deepest existing ancestor. ``key`` prefers the key span."""
    node: JNode = root
    best = root.span
    for part in path:
        if isinstance(node, JObject) and isinstance(part, str):
            member = node.member(part)
            if member is None:
                return best
            best = member.key_span if key else member.value.span
            node = member.value
        elif isinstance(node, JArray) and isinstance(part, int) and 0 <= part < len(node.items):
            node = node.items[part]
            best = node.span
        else:
            return best
    return best


def pointer(path: Sequence[PathPart]) -> str:
    """RFC 6901 JSON pointer for a path."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def walk(node: JNode, path: tuple[PathPart, ...] = ()) -> Iterator[tuple[tuple[PathPart, ...], JNode]]:
    yield path, node
    if isinstance(node, JObject):
        for m in node.members:
            yield from walk(m.value, (*path, m.key))
    elif isinstance(node, JArray):
        for i, item in enumerate(node.items):
            yield from walk(item, (*path, i))


def depth(node: JNode) -> int:
    """How many arrays and objects nest in ``node`` (a scalar is 0), without recursion."""
    deepest = 0
    stack: list[tuple[JNode, int]] = [(node, 0)]
    while stack:
        current, level = stack.pop()
        if isinstance(current, JObject):
            stack.extend((m.value, level + 1) for m in current.members)
        elif isinstance(current, JArray):
            stack.extend((i, level + 1) for i in current.items)
        else:
            continue
        deepest = max(deepest, level + 1)
    return deepest


class _SyntaxError(Exception):
    def __init__(self, offset: int, message: str, width: int = 1) -> None:
        super().__init__(message)
        self.offset = offset
        self.message = message
        self.width = width


class _Parser:
    def __init__(self, text: str, file: str, sink: DiagnosticSink) -> None:
        self.text = text
        self.file = file
        self.sink = sink
        self.pos = 0
        self._index = LineIndex(text)
        self.loc = self._index.loc
        self.span = self._index.span

    # -- grammar ----------------------------------------------------------------------
    def skip_ws(self) -> None:
        m = _WS.match(self.text, self.pos)
        assert m is not None
        self.pos = m.end()
        if self.text.startswith(("//", "/*"), self.pos):
            raise _SyntaxError(self.pos, "comments are not allowed in JSON", 2)

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def parse_document(self) -> JNode:
        self.skip_ws()
        node = self.parse_value(0)
        self.skip_ws()
        if self.pos < len(self.text):
            raise _SyntaxError(self.pos, "unexpected text after the end of the JSON value")
        return node

    def parse_value(self, depth: int) -> JNode:
        if depth > MAX_DEPTH:
            raise _SyntaxError(self.pos, f"JSON nesting deeper than {MAX_DEPTH} levels")
        ch = self.peek()
        if ch == "{":
            return self.parse_object(depth)
        if ch == "[":
            return self.parse_array(depth)
        if ch == '"':
            start = self.pos
            value = self.parse_string()
            return JScalar(self.span(start, self.pos), value)
        start = self.pos
        m = _NUMBER.match(self.text, self.pos)
        if m and m.end() > start:
            self.pos = m.end()
            raw = m.group()
            return JScalar(self.span(start, self.pos), self._number(raw, start))
        for literal, constant in (("true", True), ("false", False), ("null", None)):
            if self.text.startswith(literal, self.pos):
                self.pos += len(literal)
                return JScalar(self.span(start, self.pos), constant)
        if not ch:
            raise _SyntaxError(self.pos, "unexpected end of file, expected a value")
        if ch == "'":
            raise _SyntaxError(self.pos, "strings must use double quotes")
        word = re.match(r"[A-Za-z_$][\w$]*", self.text[self.pos :])
        if word:
            raise _SyntaxError(self.pos, f"unexpected '{word.group()}', expected a value", len(word.group()))
        raise _SyntaxError(self.pos, f"unexpected {ch!r}, expected a value")

    def _number(self, raw: str, start: int) -> int | float | None:
        digits = len(raw) - raw.startswith("-")
        if not any(c in raw for c in ".eE") and digits <= MAX_INT_DIGITS:
            return int(raw)  # bounded: int() refuses more than 4300 digits
        value = float(raw)  # never raises: out of range is inf, which is reported
        if math.isinf(value):
            self.sink.emit(
                "JSON006",
                f"number {_clip(raw)} is out of range: JSON.parse reads it as Infinity",
                file=self.file,
                span=self.span(start, self.pos),
                hint="write a number of at most 1.7976931348623157e308; it is read as null",
            )
            return None
        return value

    def parse_string(self) -> str:
        start = self.pos
        m = _STRING.match(self.text, self.pos)
        if m is None:
            self._string_error(start)
        assert m is not None
        self.pos = m.end()
        raw = m.group()
        value = raw[1:-1] if "\\" not in raw else json.loads(raw)  # escapes are rare: decode only those
        assert isinstance(value, str)
        if _SURROGATE.search(value):
            value = self._lone_surrogates(value, start)
        return value

    def _lone_surrogates(self, value: str, start: int) -> str:
        """json.loads joins escaped surrogate pairs, so a surrogate left in ``value`` is a lone half
        (``\\ud800``) that no UTF-8 writer can encode: report it and read it as U+FFFD."""
        lone = _SURROGATE.search(value)
        assert lone is not None
        self.sink.emit(
            "JSON007",
            f"string contains a lone surrogate \\u{ord(lone.group()):04x}, which is not a character",
            file=self.file,
            span=self.span(start, self.pos),
            hint="escape a whole surrogate pair, or the character itself; it is read as U+FFFD",
        )
        return _SURROGATE.sub("\ufffd", value)

    def _string_error(self, start: int) -> None:
        i = start + 1
        while i < len(self.text):
            c = self.text[i]
            if c == '"':
                break
            if c == "\\":
                esc = self.text[i + 1 : i + 2]
                if esc == "u":
                    if not re.fullmatch(r"[0-9a-fA-F]{4}", self.text[i + 2 : i + 6]):
                        raise _SyntaxError(i, "invalid \\u escape in string", 2)
                    i += 6
                    continue
                if esc not in ('"', "\\", "/", "b", "f", "n", "r", "t"):
                    raise _SyntaxError(i, f"invalid escape '\\{esc}' in string", 2)
                i += 2
                continue
            if c in "\r\n":
                raise _SyntaxError(start, "unterminated string (a newline inside a string must be written \\n)")
            if ord(c) < 0x20:
                raise _SyntaxError(i, f"control character U+{ord(c):04X} inside a string must be escaped")
            i += 1
        raise _SyntaxError(start, "unterminated string")

    def parse_object(self, depth: int) -> JObject:
        start = self.pos
        self.pos += 1
        members: list[JMember] = []
        seen: dict[str, Span] = {}
        self.skip_ws()
        if self.peek() == "}":
            self.pos += 1
            return JObject(self.span(start, self.pos), members)
        while True:
            self.skip_ws()
            if self.peek() != '"':
                if self.peek() == "}" and members:
                    # Reached only after a comma: report it but keep going.
                    self._trailing_comma("}")
                    self.pos += 1
                    return JObject(self.span(start, self.pos), members)
                if not self.peek():
                    raise _SyntaxError(self.pos, "unexpected end of file inside an object (missing '}')")
                raise _SyntaxError(self.pos, "expected a double-quoted property name")
            key_start = self.pos
            key = self.parse_string()
            key_span = self.span(key_start, self.pos)
            self.skip_ws()
            if self.peek() != ":":
                raise _SyntaxError(self.pos, f"expected ':' after property name \"{key}\"")
            self.pos += 1
            self.skip_ws()
            value = self.parse_value(depth + 1)
            if key in seen:
                first = seen[key]
                self.sink.emit(
                    "JSON003",
                    f'duplicate key "{key}" (first at line {first.line}, column {first.column})',
                    file=self.file,
                    span=key_span,
                    hint="remove one of them; JSON.parse keeps only the last",
                )
            seen[key] = key_span
            members.append(JMember(key, key_span, value))
            self.skip_ws()
            ch = self.peek()
            if ch == ",":
                self._last_comma = self.pos
                self.pos += 1
                continue
            if ch == "}":
                self.pos += 1
                return JObject(self.span(start, self.pos), members)
            if not ch:
                raise _SyntaxError(self.pos, "unexpected end of file inside an object (missing '}')")
            raise _SyntaxError(self.pos, "expected ',' or '}' after an object member")

    def parse_array(self, depth: int) -> JArray:
        start = self.pos
        self.pos += 1
        items: list[JNode] = []
        self.skip_ws()
        if self.peek() == "]":
            self.pos += 1
            return JArray(self.span(start, self.pos), items)
        while True:
            self.skip_ws()
            if self.peek() == "]" and items:
                self._trailing_comma("]")
                self.pos += 1
                return JArray(self.span(start, self.pos), items)
            items.append(self.parse_value(depth + 1))
            self.skip_ws()
            ch = self.peek()
            if ch == ",":
                self._last_comma = self.pos
                self.pos += 1
                continue
            if ch == "]":
                self.pos += 1
                return JArray(self.span(start, self.pos), items)
            if not ch:
                raise _SyntaxError(self.pos, "unexpected end of file inside an array (missing ']')")
            raise _SyntaxError(self.pos, "expected ',' or ']' after an array element")

    _last_comma = 0

    def _trailing_comma(self, closer: str) -> None:
        self.sink.emit(
            "JSON002",
            f"trailing comma before '{closer}'",
            file=self.file,
            span=self.span(self._last_comma, self._last_comma + 1),
            hint="delete the comma",
        )


def _clip(raw: str) -> str:
    return raw if len(raw) <= 24 else f"{raw[:12]}...{raw[-6:]} ({len(raw)} characters)"


def parse_json(text: str, file: str, sink: DiagnosticSink) -> JNode | None:
    """Parse ``text``; report problems to ``sink``. None when the text is not JSON at all."""
    if text.startswith(_BOM):
        sink.emit(
            "JSON004",
            "file starts with a UTF-8 byte-order mark (BOM)",
            file=file,
            span=Span.point(1, 1),
            hint="save the file as UTF-8 without BOM",
        )
        text = text[1:]
    parser = _Parser(text, file, sink)
    try:
        with collector_paused:
            return parser.parse_document()
    except _SyntaxError as err:
        code = "JSON005" if "nesting deeper" in err.message else "JSON001"
        line, col = parser.loc(err.offset)
        sink.emit(code, err.message, file=file, span=Span.point(line, col, err.width))
        return None


def parse_json_input(text: str, file: str, code: str, what: str) -> tuple[JNode | None, list[Diagnostic]]:
    """An input file a command is given (a flow, a profile, a storage seed): its tree, or None with
    its JSON syntax errors (one ``code`` diagnostic "<what> is not JSON" when there are none)."""
    sink = DiagnosticSink()
    root = parse_json(text, file, sink)
    errors = [d for d in sink if d.severity == Severity.ERROR]
    if root is None or errors:
        return None, errors or [Diagnostic.make(code, f"{what} is not JSON", file=file)]
    return root, []
