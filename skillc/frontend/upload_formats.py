"""Arguments that WeChat fills with a local upload path: string ``"format": "image"`` / ``"file"``.

In AI mode such a parameter is not written by the model: WeChat asks the user for a picture or a
file and passes the API the local path of the upload (notes/ai-mode-spec.md section 2). skillc
has no uploaded file behind a path, so ``check`` warns where an inputSchema asks for one
(``MCP030``) and a call that passes such an argument answers ``unsupported_format`` (``RUN081``)
instead of handing the API a path to a file that does not exist. A call that leaves an optional
upload out runs as usual.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, cast

from skillc.diagnostics import DiagnosticSink
from skillc.frontend.jsonsrc import JNode, PathPart, lookup, nearest_span, pointer

UPLOAD_FORMATS = ("image", "file")
UNSUPPORTED_FORMAT = "unsupported_format"
# Where the schema says "each item of the array": one step of an instance path that matches any index.
EACH = object()
# The subschemas that describe the same value as their parent.
_SAME_VALUE = ("allOf", "anyOf", "oneOf")


@dataclass(frozen=True)
class UploadField:
    """A schema that asks for an upload: ``schema_path`` to it inside the schema, ``format`` its
    format, and ``instance`` the path of the argument it describes (:data:`EACH` for array items)."""

    schema_path: tuple[PathPart, ...]
    instance: tuple[PathPart | object, ...]
    format: str

    @property
    def where(self) -> str:
        """The argument as a JSON pointer, ``-`` for "any item" (``/photos/-``)."""
        return "".join("/-" if p is EACH else pointer((cast(PathPart, p),)) for p in self.instance)


def upload_fields(schema: Any) -> list[UploadField]:
    """Every subschema of ``schema`` with a string ``format`` of image or file, reached through
    ``properties``, ``items`` and ``allOf``/``anyOf``/``oneOf``. Iterative: a deep schema cannot
    overflow the stack."""
    found: list[UploadField] = []
    stack: list[tuple[Any, tuple[PathPart, ...], tuple[PathPart | object, ...]]] = [(schema, (), ())]
    while stack:
        node, path, instance = stack.pop()
        if not isinstance(node, dict):
            continue
        fmt = node.get("format")
        if isinstance(fmt, str) and fmt in UPLOAD_FORMATS and _may_be_string(node.get("type", "string")):
            found.append(UploadField(path, instance, fmt))
        props = node.get("properties")
        if isinstance(props, dict):
            for name, sub in props.items():
                stack.append((sub, (*path, "properties", name), (*instance, name)))
        items = node.get("items")
        if isinstance(items, dict):
            stack.append((items, (*path, "items"), (*instance, EACH)))
        elif isinstance(items, list):
            stack.extend((sub, (*path, "items", i), (*instance, i)) for i, sub in enumerate(items))
        for key in _SAME_VALUE:
            subs = node.get(key)
            if isinstance(subs, list):
                stack.extend((sub, (*path, key, i), instance) for i, sub in enumerate(subs))
    return sorted(found, key=lambda f: pointer(f.schema_path))


def _may_be_string(kind: Any) -> bool:
    return kind == "string" or (isinstance(kind, list) and "string" in kind)


def _values(value: Any, instance: tuple[PathPart | object, ...], at: tuple[PathPart, ...]) -> Iterator[str]:
    if not instance:
        yield pointer(at)
        return
    step, rest = instance[0], instance[1:]
    if step is EACH:
        if isinstance(value, list):
            for i, item in enumerate(value):
                yield from _values(item, rest, (*at, i))
    elif _has(value, step):
        yield from _values(value[step], rest, (*at, cast(PathPart, step)))


def _has(value: Any, step: PathPart | object) -> bool:
    if isinstance(step, str):
        return isinstance(value, dict) and step in value
    return isinstance(step, int) and isinstance(value, list) and 0 <= step < len(value)


def uploads_given(fields: list[UploadField], arguments: Any) -> list[tuple[str, str]]:
    """(argument pointer, format) of every argument a call passes where an upload path belongs."""
    given: list[tuple[str, str]] = []
    for field in fields:
        given += [(where, field.format) for where in _values(arguments, field.instance, ())]
    return sorted(set(given))


def refusal(api: str, given: list[tuple[str, str]]) -> str:
    """What a call answers (``RUN081``): ``unsupported_format`` first, then why."""
    listed = ", ".join(f'`{where}` ("format": "{fmt}")' for where, fmt in given[:3])
    more = f" and {len(given) - 3} more" if len(given) > 3 else ""
    them = "it" if len(given) == 1 else "them"
    return (
        f"{UNSUPPORTED_FORMAT}: {api} was called with {listed}{more}: WeChat fills {them} with the local path "
        "of a file the user uploads, and skillc has no uploaded file, so the call is refused"
    )


def check_upload_formats(root: JNode, path: tuple[PathPart, ...], schema: Any, sink: DiagnosticSink) -> None:
    """``MCP030`` at the ``format`` value of each upload parameter of the inputSchema at ``path``
    (``apis/N/inputSchema``)."""
    name = lookup(root, (*path[:-1], "name"))
    api = name.to_python() if name is not None else None
    label = api if isinstance(api, str) else pointer(path[:-1])
    for field in upload_fields(schema):
        sink.emit(
            "MCP030",
            f'the argument `{field.where}` of {label} has "format": "{field.format}", a local upload path WeChat '
            f"fills in after the user uploads a file; skillc has no uploaded file, so a call that passes it "
            f"answers {UNSUPPORTED_FORMAT}",
            file="mcp.json",
            span=nearest_span(root, (*path, *field.schema_path, "format")),
            hint="leave the argument out when testing with skillc, or take a URL the API fetches instead",
        )
