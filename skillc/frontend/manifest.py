"""mcp.json: typed models and the checks that point into the file.

The models keep unknown keys (``_meta`` contents, ``x_anp``, vendor keys) so that a
manifest survives a load/dump round trip unchanged. Type errors come from pydantic in
strict mode and are mapped back to spans in the source through the positioned JSON tree.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel
from pydantic_core import ErrorDetails

from skillc.diagnostics import DiagnosticSink, Span
from skillc.frontend.jsonsrc import (
    JArray,
    JNode,
    JObject,
    JsonValue,
    PathPart,
    depth,
    lookup,
    nearest_span,
    pointer,
    type_name,
)
from skillc.frontend.patterns import unsupported_patterns
from skillc.frontend.plain_schema import plainly_valid
from skillc.frontend.tool_names import is_model_safe, model_safe_name
from skillc.frontend.upload_formats import check_upload_formats
from skillc.gcpause import collector_paused

MCP_JSON_LIMIT = 24000
MCP_JSON_WARN = int(MCP_JSON_LIMIT * 0.9)
# The smallest entries there can be: a manifest within MCP_JSON_LIMIT holds no more of them, so
# entries beyond these counts are reported once (MCP024) and not checked one by one.
_SMALLEST_API = '{"name":"a","description":"a","inputSchema":{}},'
_SMALLEST_COMPONENT = '{"path":"components/a/index"},'
MAX_APIS = MCP_JSON_LIMIT // len(_SMALLEST_API)  # 500
MAX_COMPONENTS = MCP_JSON_LIMIT // len(_SMALLEST_COMPONENT)  # 800
# jsonschema checks a schema recursively; deeper schemas are reported (MCP023), not checked.
MAX_SCHEMA_DEPTH = 64
COMPONENT_FILES = ("index.js", "index.json", "index.wxml", "index.wxss")
COMPONENT_PATH_RE = re.compile(r"^components/[\w-]+/index$")


class _Model(BaseModel):
    model_config = ConfigDict(
        extra="allow", strict=True, alias_generator=to_camel, populate_by_name=True, frozen=False, defer_build=True
    )

    def dump(self) -> dict[str, Any]:
        """The JSON form, with the original key names and every unknown key kept."""
        return self.model_dump(by_alias=True, exclude_unset=True, mode="json")


class UiMeta(_Model):
    component_path: str | None = None
    page_path: str | None = None


class ApiMeta(_Model):
    ui: UiMeta | None = None


class ApiSpec(_Model):
    name: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None = None
    meta: ApiMeta | None = Field(default=None, alias="_meta")

    @property
    def component_path(self) -> str | None:
        return self.meta.ui.component_path if self.meta and self.meta.ui else None

    @property
    def vendor_meta(self) -> dict[str, Any]:
        """The API's raw ``_meta`` object (never sent to the model)."""
        return self.meta.dump() if self.meta else {}


class Permission(_Model):
    desc: str


class ComponentSpec(_Model):
    path: str
    related_page: str | None = None
    expirable: bool = False
    expired_text: str | None = None
    permissions: dict[str, Permission] | None = None

    @property
    def name(self) -> str:
        parts = self.path.split("/")
        return parts[1] if len(parts) == 3 else self.path

    @property
    def dynamic(self) -> bool:
        """``scope.dynamic`` grants wx.request and timers to the card."""
        return bool(self.permissions and "scope.dynamic" in self.permissions)


class Manifest(_Model):
    apis: list[ApiSpec] = Field(default_factory=list)
    components: list[ComponentSpec] = Field(default_factory=list)

    def api(self, name: str) -> ApiSpec | None:
        return next((a for a in self.apis if a.name == name), None)

    def component(self, path: str) -> ComponentSpec | None:
        return next((c for c in self.components if c.path == path), None)


# -- pydantic error -> diagnostic ------------------------------------------------------

_EXPECTED = {
    "string_type": "a string",
    "bool_type": "a boolean",
    "dict_type": "an object",
    "model_type": "an object",
    "model_attributes_type": "an object",
    "list_type": "an array",
    "int_type": "an integer",
    "float_type": "a number",
}

# Missing or mistyped fields that have a code of their own.
_MISSING_CODES: dict[tuple[PathPart, ...], str] = {
    ("name",): "MCP004",
    ("description",): "MCP006",
    ("inputSchema",): "MCP007",
}
_API_TYPE_CODES: dict[tuple[PathPart, ...], str] = {("inputSchema",): "MCP007"}
_COMPONENT_MISSING: dict[tuple[PathPart, ...], str] = {("path",): "MCP020"}
_COMPONENT_TYPE_CODES: dict[tuple[PathPart, ...], str] = {("expirable",): "MCP015"}

FILE = "mcp.json"


def _report_validation(
    errors: Sequence[ErrorDetails],
    base: tuple[PathPart, ...],
    root: JNode,
    sink: DiagnosticSink,
    missing_codes: dict[tuple[PathPart, ...], str],
    type_codes: dict[tuple[PathPart, ...], str],
) -> None:
    # Locations are source keys, not field names, because models are validated by alias.
    for e in errors:
        loc = tuple(p for p in e["loc"] if not (isinstance(p, str) and p.startswith("function-")))
        path = (*base, *loc)
        where = "/" + "/".join(str(p) for p in path) if path else "/"
        if e["type"] == "missing":
            parent = nearest_span(root, path[:-1])
            code = missing_codes.get(loc, "MCP003")
            sink.emit(
                code,
                f'`{pointer(path[:-1]) or "/"}` is missing the required key "{loc[-1]}"',
                file=FILE,
                span=Span.point(parent.line, parent.column),
            )
            continue
        node = lookup(root, path)
        expected = _EXPECTED.get(e["type"], e["msg"].lower())
        code = type_codes.get(loc, "MCP003")
        sink.emit(
            code,
            f"`{where}` must be {expected}, got {type_name(node)}",
            file=FILE,
            span=nearest_span(root, path),
        )


# -- checks ----------------------------------------------------------------------------


def check_manifest(root: JNode, skill_root: Path, sink: DiagnosticSink) -> Manifest | None:
    """Validate a parsed mcp.json; return the typed manifest of every entry that is sound."""
    if not isinstance(root, JObject):
        sink.emit("MCP001", f"mcp.json must be an object, got {type_name(root)}", file=FILE, span=_head(root))
        return None

    _check_size(root, sink)

    components, declared_paths = _check_components(root, skill_root, sink)
    apis_node = root.get("apis")
    apis: list[ApiSpec] = []
    if apis_node is None:
        sink.emit("MCP002", 'mcp.json has no "apis" array', file=FILE, span=_head(root))
    elif not isinstance(apis_node, JArray):
        sink.emit("MCP002", f'"apis" must be an array, got {type_name(apis_node)}', file=FILE, span=apis_node.span)
    else:
        seen: dict[str, Span] = {}
        loose = _LooseComponents(skill_root, declared_paths)
        for i, item in enumerate(checked_items(apis_node, "apis", MAX_APIS, sink)):
            api = _check_api(root, i, item, loose, seen, sink)
            if api is not None:
                apis.append(api)

    extra = {m.key: m.value.to_python() for m in root.members if m.key not in ("apis", "components")}
    manifest = Manifest.model_validate({"apis": [], "components": [], **extra})
    manifest.apis = apis
    manifest.components = list(components.values())
    if root.get("components") is None:
        # Keep the round trip faithful: no components key in, none out.
        manifest.model_fields_set.discard("components")
    return manifest


def checked_items(node: JArray, key: str, limit: int, sink: DiagnosticSink | None = None) -> list[JNode]:
    """The entries of ``apis`` or ``components`` that are checked: the first ``limit``. With a sink,
    the rest are reported once."""
    if len(node.items) > limit and sink is not None:
        sink.emit(
            "MCP024",
            f'"{key}" has {len(node.items)} entries; a manifest within {MCP_JSON_LIMIT} characters holds '
            f"at most {limit}, so only the first {limit} are checked",
            file=FILE,
            span=_head(node.items[limit]),
            hint="split the skill",
        )
    return node.items[:limit]


def _head(node: JNode) -> Span:
    return Span.point(node.span.line, node.span.column)


def _check_size(root: JObject, sink: DiagnosticSink) -> None:
    with collector_paused:  # a copy of the whole file, built and dropped at once
        data = root.to_python()
        assert isinstance(data, dict)
        stripped = _without_output_schema(data)
        size = len(json.dumps(stripped, ensure_ascii=False, separators=(",", ":")))
        del data, stripped
    if size > MCP_JSON_LIMIT:
        sink.emit(
            "MCP018",
            f"mcp.json is {size} characters as compact JSON without outputSchema (limit {MCP_JSON_LIMIT})",
            file=FILE,
            hint="shorten descriptions or split the skill",
        )
    elif size >= MCP_JSON_WARN:
        sink.emit(
            "MCP019",
            f"mcp.json is {size} characters as compact JSON without outputSchema "
            f"({size * 100 // MCP_JSON_LIMIT} % of {MCP_JSON_LIMIT})",
            file=FILE,
        )


def _without_output_schema(data: JsonValue) -> JsonValue:
    if isinstance(data, dict):
        apis = data.get("apis")
        if isinstance(apis, list):
            data = dict(data)
            data["apis"] = [
                {k: v for k, v in a.items() if k != "outputSchema"} if isinstance(a, dict) else a for a in apis
            ]
    return data


def _check_api(
    root: JObject,
    i: int,
    item: JNode,
    component_paths: _LooseComponents,
    seen: dict[str, Span],
    sink: DiagnosticSink,
) -> ApiSpec | None:
    base: tuple[PathPart, ...] = ("apis", i)
    if not isinstance(item, JObject):
        sink.emit("MCP003", f"`/apis/{i}` must be an object, got {type_name(item)}", file=FILE, span=item.span)
        return None

    name_node = item.get("name")
    name = name_node.to_python() if name_node is not None else None
    if isinstance(name, str) and name_node is not None:
        if not name.strip():
            sink.emit("MCP004", f"`/apis/{i}/name` is empty", file=FILE, span=name_node.span)
        elif name in seen:
            first = seen[name]
            sink.emit(
                "MCP005",
                f'duplicate API name "{name}" (first declared at line {first.line}, column {first.column})',
                file=FILE,
                span=name_node.span,
            )
        else:
            seen[name] = name_node.span
        if name.strip() and not is_model_safe(name):
            sink.emit(
                "MCP031",
                f'API name "{name}" is not a tool name model APIs accept (^[a-zA-Z0-9_-]{{1,64}}$); '
                f"skillc serve serves it as {model_safe_name(name)}",
                file=FILE,
                span=name_node.span,
                hint="name APIs with ASCII letters, digits, _ and - (at most 64)",
            )
    desc_node = item.get("description")
    if desc_node is not None and isinstance(desc_node.to_python(), str) and not str(desc_node.to_python()).strip():
        sink.emit("MCP006", f"`/apis/{i}/description` is empty", file=FILE, span=desc_node.span)

    for key, code in (("inputSchema", "MCP008"), ("outputSchema", "MCP009")):
        node = item.get(key)
        if isinstance(node, JObject):
            if depth(node) > MAX_SCHEMA_DEPTH:
                sink.emit(
                    "MCP023",
                    f"{key} nests more than {MAX_SCHEMA_DEPTH} levels of arrays and objects; it is not checked",
                    file=FILE,
                    span=_head(node),
                )
            else:
                _check_schema(root, (*base, key), node.to_python(), code, sink)
                if key == "inputSchema":
                    check_upload_formats(root, (*base, key), node.to_python(), sink)

    _check_ui(item, component_paths, sink)

    try:
        return ApiSpec.model_validate(item.to_python(), by_alias=True)
    except ValidationError as err:
        _report_validation(err.errors(), base, root, sink, _MISSING_CODES, _API_TYPE_CODES)
        return None


def _check_schema(root: JNode, path: tuple[PathPart, ...], schema: JsonValue, code: str, sink: DiagnosticSink) -> None:
    # Most schemas are plainly valid: jsonschema is needed only to say what is wrong with the rest.
    if not plainly_valid(schema) and _schema_error(root, path, schema, code, sink):
        return
    for bad in unsupported_patterns(schema):
        # WeChat's gate passes these (its engine backtracks); skillc refuses the calls (RUN040).
        what = f"pattern {bad.pattern!r}" if bad.pattern else "keyword"
        in_key = bad.path[-2:-1] == ("patternProperties",)
        sink.emit(
            "MCP025",
            f"{path[-1]} {what} at `{bad.where}` cannot run on RE2 ({bad.reason}); calls of this API are refused",
            file=FILE,
            span=nearest_span(root, (*path, *bad.path), key=in_key),
            hint="write it without backreferences or lookaround (RE2 syntax), or check the value in the API's code",
        )


def _schema_error(root: JNode, path: tuple[PathPart, ...], schema: JsonValue, code: str, sink: DiagnosticSink) -> bool:
    """Report, as ``code``, where ``schema`` breaks its meta-schema; False when it does not."""
    # Imported here: jsonschema (with attrs, referencing, rpds) is the dearest import of `skillc
    # check` after pydantic, and most manifests never need it (frontend/plain_schema.py).
    import jsonschema.exceptions
    import jsonschema.validators

    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft7Validator)
    meta = cls(cls.META_SCHEMA)
    errors = sorted(meta.iter_errors(schema), key=lambda e: (len(e.absolute_path), list(map(str, e.absolute_path))))
    if not errors:
        return False
    best = jsonschema.exceptions.best_match(errors)
    assert best is not None
    inner = tuple(best.absolute_path)
    full = (*path, *inner)
    # A bad value is shown at the value; an unknown type name at the "type" key's value.
    sink.emit(
        code,
        f"{path[-1]} is not a valid JSON Schema at `{pointer(inner) or '/'}`: {best.message}",
        file=FILE,
        span=nearest_span(root, full),
    )
    return True


@dataclass
class _LooseComponents:
    """The declared components[] paths, and the folders of componentPaths that have no entry
    (checked once each, at the first componentPath naming them)."""

    skill_root: Path
    declared: set[str]
    checked: set[str] = field(default_factory=set)

    def __contains__(self, path: object) -> bool:
        return path in self.declared


def _check_ui(item: JObject, component_paths: _LooseComponents, sink: DiagnosticSink) -> None:
    # The folder itself is checked once, at its components[] entry.
    meta = item.get("_meta")
    ui = meta.get("ui") if isinstance(meta, JObject) else None
    if not isinstance(ui, JObject):
        return
    cp = ui.get("componentPath")
    if cp is not None and isinstance(cp.to_python(), str):
        value = str(cp.to_python())
        if not COMPONENT_PATH_RE.match(value):
            sink.emit(
                "MCP021",
                f'componentPath "{value}" must have the form components/<name>/index',
                file=FILE,
                span=cp.span,
            )
        elif value not in component_paths:
            # A warning: v0.2.1's V012 checks the path and the folder, not an entry, and WeChat
            # shows the card without one (static: no scope.dynamic); O6b's V015 (unconfirmed, as
            # its relatedPage check) asks for the entry. The folder is V012's, so it is checked here.
            shown = (component_paths.skill_root / Path(value).parent).is_dir()
            sink.emit(
                "MCP010",
                f'componentPath "{value}" has no components[] entry with exactly that path'
                + ("; the card is still shown, as a static card without relatedPage" if shown else ""),
                file=FILE,
                span=cp.span,
                hint=f'add {{"path": "{value}", "relatedPage": "/pages/..."}} to "components"',
            )
            if value not in component_paths.checked:
                component_paths.checked.add(value)
                _check_component_folder(value, cp.span, component_paths.skill_root, sink)
    pp = ui.get("pagePath")
    if pp is not None and isinstance(pp.to_python(), str):
        value = str(pp.to_python())
        if not value.startswith("/") or "?" in value:
            sink.emit(
                "MCP012",
                f"pagePath \"{value}\" must start with '/' and carry no query string",
                file=FILE,
                span=pp.span,
            )


def _check_component_folder(path: str, span: Span, skill_root: Path, sink: DiagnosticSink) -> None:
    folder = skill_root / Path(path).parent
    if not folder.is_dir():
        sink.emit("MCP022", f'component folder "{Path(path).parent.as_posix()}" does not exist', file=FILE, span=span)
        return
    missing = [f for f in COMPONENT_FILES if not (folder / f).is_file()]
    if missing:
        sink.emit(
            "MCP011",
            f'component folder "{Path(path).parent.as_posix()}" lacks {", ".join(missing)}',
            file=FILE,
            span=span,
        )


def _check_components(
    root: JObject, skill_root: Path, sink: DiagnosticSink
) -> tuple[dict[str, ComponentSpec], set[str]]:
    """The sound entries by path, and every declared path (sound or not, for references)."""
    node = root.get("components")
    result: dict[str, ComponentSpec] = {}
    seen: dict[str, Span] = {}
    if node is None:
        return result, set()
    if not isinstance(node, JArray):
        sink.emit("MCP003", f"`/components` must be an array, got {type_name(node)}", file=FILE, span=node.span)
        return result, set()
    for i, item in enumerate(checked_items(node, "components", MAX_COMPONENTS, sink)):
        base: tuple[PathPart, ...] = ("components", i)
        if not isinstance(item, JObject):
            sink.emit(
                "MCP003", f"`/components/{i}` must be an object, got {type_name(item)}", file=FILE, span=item.span
            )
            continue
        path_node = item.get("path")
        ok = True
        if path_node is not None and isinstance(path_node.to_python(), str):
            path = str(path_node.to_python())
            if path in seen:
                first = seen[path]
                sink.emit(
                    "MCP013",
                    f'duplicate component path "{path}" (first at line {first.line}, column {first.column})',
                    file=FILE,
                    span=path_node.span,
                )
                ok = False
            else:
                seen[path] = path_node.span
                if not COMPONENT_PATH_RE.match(path):
                    sink.emit(
                        "MCP021",
                        f'component path "{path}" must have the form components/<name>/index',
                        file=FILE,
                        span=path_node.span,
                    )
                else:
                    _check_component_folder(path, path_node.span, skill_root, sink)
        rp = item.get("relatedPage")
        if rp is not None and isinstance(rp.to_python(), str) and not str(rp.to_python()).startswith("/"):
            sink.emit(
                "MCP014",
                f"relatedPage \"{rp.to_python()}\" must start with '/'",
                file=FILE,
                span=rp.span,
            )
        perms = item.get("permissions")
        if isinstance(perms, JObject):
            dyn = perms.get("scope.dynamic")
            desc = dyn.get("desc") if isinstance(dyn, JObject) else None
            if isinstance(dyn, JObject) and (desc is None or not isinstance(desc.to_python(), str)):
                sink.emit(
                    "MCP016",
                    'permissions["scope.dynamic"].desc must be a string'
                    + (f", got {type_name(desc)}" if desc is not None else ", and it is missing"),
                    file=FILE,
                    span=(desc or dyn).span,
                )
                ok = False
        try:
            spec = ComponentSpec.model_validate(item.to_python(), by_alias=True)
        except ValidationError as err:
            errs = [
                e
                for e in err.errors()
                if not (ok is False and e["loc"][:1] == ("permissions",))
                and not (e["loc"][:1] == ("permissions",) and e["loc"][-1] == "desc")
            ]
            if errs:
                _report_validation(
                    errs,
                    base,
                    root,
                    sink,
                    _COMPONENT_MISSING,
                    _COMPONENT_TYPE_CODES,
                )
            continue
        if ok:
            result[spec.path] = spec
    return result, set(seen)
