"""String ``"format": "image"`` / ``"file"`` in an inputSchema: a local upload path skillc cannot give.

WeChat fills such an argument with the local path of a file the user uploads
(notes/ai-mode-spec.md section 2). tests/fixtures/upload-formats/album-skill has one of each
(a property and the items of an array): ``check`` warns at the ``format`` value (MCP030); a call
that passes one answers ``unsupported_format`` (RUN081) and the API never runs; a call that
leaves an optional upload out runs as usual.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from skillc.cli import main
from skillc.frontend.upload_formats import upload_fields, uploads_given

from .conftest import FIXTURES

SKILL = FIXTURES / "upload-formats" / "album-skill"
HINT = "leave the argument out when testing with skillc, or take a URL the API fetches instead"


def mcp030(where: str, api: str, fmt: str) -> str:
    return (
        f'the argument `{where}` of {api} has "format": "{fmt}", a local upload path WeChat fills in after the '
        "user uploads a file; skillc has no uploaded file, so a call that passes it answers unsupported_format"
    )


def test_check_warns_at_each_upload_format(tmp_path: Path) -> None:
    done = CliRunner().invoke(main, ["check", str(SKILL), "--format", "json"])
    assert done.exit_code == 0, done.output
    [unit] = json.loads(done.output)["units"]
    rows = [
        (d["code"], d["severity"], d["message"], d["file"], d["span"]["line"], d["span"]["column"], d.get("hint"))
        for d in unit["diagnostics"]
    ]
    assert rows == [
        ("MCP030", "warning", mcp030("/photo", "addPhoto", "image"), "mcp.json", 10, 50, HINT),
        ("MCP030", "warning", mcp030("/files/-", "attachFiles", "file"), "mcp.json", 24, 52, HINT),
    ]


def call(tmp_path: Path, api: str, args: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    argv = ["call", str(SKILL), api, "--args", json.dumps(args), "--state-dir", str(tmp_path), "--json"]
    done = CliRunner().invoke(main, argv)
    outcome: dict[str, Any] = json.loads(done.output)
    return done.exit_code, outcome


def refused(api: str, listed: str, them: str = "it") -> str:
    return (
        f"unsupported_format: {api} was called with {listed}: WeChat fills {them} with the local path of a file "
        "the user uploads, and skillc has no uploaded file, so the call is refused"
    )


@pytest.mark.parametrize(
    ("api", "args", "message"),
    [
        (
            "addPhoto",
            {"caption": "cat", "photo": "wxfile://tmp_1.jpg"},
            refused("addPhoto", '`/photo` ("format": "image")'),
        ),
        (
            "attachFiles",
            {"files": ["a.pdf", "b.pdf"]},
            refused("attachFiles", '`/files/0` ("format": "file"), `/files/1` ("format": "file")', "them"),
        ),
    ],
)
def test_a_call_that_passes_an_upload_answers_unsupported_format(
    tmp_path: Path, api: str, args: dict[str, Any], message: str
) -> None:
    code, outcome = call(tmp_path, api, args)
    assert code == 1
    assert outcome["result"] == {"isError": True, "content": [{"type": "text", "text": message + "."}]}
    assert [(d["code"], d["severity"], d["message"]) for d in outcome["diagnostics"]] == [("RUN081", "error", message)]
    assert outcome["console"] == []


@pytest.mark.parametrize(
    ("api", "args", "text"),
    [("addPhoto", {"caption": "cat"}, "added cat"), ("attachFiles", {"files": []}, "attached 0")],
)
def test_a_call_without_an_upload_runs(tmp_path: Path, api: str, args: dict[str, Any], text: str) -> None:
    code, outcome = call(tmp_path, api, args)
    assert code == 0
    assert outcome["result"] == {"isError": False, "content": [{"type": "text", "text": text}]}
    assert outcome["diagnostics"] == []


def test_arguments_that_break_the_schema_are_reported_as_such_first(tmp_path: Path) -> None:
    code, outcome = call(tmp_path, "addPhoto", {"caption": "cat", "photo": 7})
    assert code == 1
    assert [(d["code"], d["message"]) for d in outcome["diagnostics"]] == [
        ("RUN010", "invalid arguments for addPhoto: /photo: 7 is not of type 'string'")
    ]


def test_upload_fields_follow_properties_items_and_combinators() -> None:
    schema = {
        "type": "object",
        "properties": {
            "avatar": {"type": ["string", "null"], "format": "image"},
            "pair": {"type": "array", "items": [{"type": "string"}, {"type": "string", "format": "file"}]},
            "either": {"anyOf": [{"type": "string", "format": "image"}, {"type": "integer"}]},
            "when": {"type": "string", "format": "date-time"},
            "count": {"type": "integer", "format": "image"},  # not a string: no upload path
            "nested": {"type": "object", "properties": {"doc": {"format": "file"}}},
        },
    }
    found = [(f.where, f.format, "/".join(map(str, f.schema_path))) for f in upload_fields(schema)]
    assert found == [
        ("/avatar", "image", "properties/avatar"),
        ("/either", "image", "properties/either/anyOf/0"),
        ("/nested/doc", "file", "properties/nested/properties/doc"),
        ("/pair/1", "file", "properties/pair/items/1"),
    ]
    given = uploads_given(upload_fields(schema), {"pair": ["x", "y"], "nested": {"doc": "d"}, "when": "now"})
    assert given == [("/nested/doc", "file"), ("/pair/1", "file")]
    # Bad input: not a schema, and arguments of the wrong shape, find nothing.
    assert upload_fields(["format", "image"]) == []
    assert uploads_given(upload_fields(schema), {"pair": "x", "nested": ["doc"]}) == []
