"""The json backend: deterministic bytes, schema-valid, a faithful round trip."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings

from skillc.backends.base import RenderOptions
from skillc.backends.json_backend import JsonBackend
from skillc.ir.render import RenderDocument, RenderNode, from_plain, render_ir_schema
from tests.test_backends_samples import DARK_414, LIGHT_375, all_documents, drink_list, render_documents

VALIDATOR = jsonschema.Draft202012Validator(render_ir_schema())


def _reordered(node: RenderNode) -> RenderNode:
    """The same node built with every mapping in reverse insertion order."""

    def rev(d: dict[str, Any]) -> dict[str, Any]:
        return {k: rev(v) if isinstance(v, dict) else v for k, v in reversed(list(d.items()))}

    events = None
    if node.events is not None:
        events = {name: type(b)(b.handler, b.catch, rev(b.dataset)) for name, b in reversed(list(node.events.items()))}
    children = None if node.children is None else [_reordered(c) for c in node.children]
    return RenderNode(node.id, node.type, rev(node.props), rev(node.style), events, children)


@pytest.mark.parametrize("name", sorted(all_documents()))
def test_output_validates_against_the_render_ir_schema(name: str) -> None:
    text = JsonBackend().render(all_documents()[name])
    VALIDATOR.validate(json.loads(text))


def test_two_renders_of_equal_documents_are_byte_identical() -> None:
    first = JsonBackend().render(drink_list(LIGHT_375)).encode()
    second = JsonBackend().render(drink_list(LIGHT_375)).encode()
    assert first == second


def test_insertion_order_does_not_change_the_bytes() -> None:
    doc = drink_list(DARK_414)
    rebuilt = RenderDocument(1, DARK_414, _reordered(doc.root))
    assert list(rebuilt.root.style) != list(doc.root.style)  # the rebuild really is in another order
    assert JsonBackend().render(rebuilt).encode() == JsonBackend().render(doc).encode()


def test_keys_are_sorted_and_the_file_ends_with_a_newline() -> None:
    text = JsonBackend().render(drink_list(LIGHT_375))
    assert text.endswith("}\n")
    assert list(json.loads(text)) == ["root", "version", "viewport"]
    assert '"id": "0"' in text and "拿铁" in text  # UTF-8 kept, not \u-escaped


def test_compact_option_is_one_line_with_the_same_data() -> None:
    doc = drink_list(LIGHT_375)
    compact = JsonBackend().render(doc, options=RenderOptions(indent=None))
    assert compact.count("\n") == 1
    assert json.loads(compact) == json.loads(JsonBackend().render(doc))


@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(render_documents())
def test_any_document_round_trips_through_the_output(doc: RenderDocument) -> None:
    text = JsonBackend().render(doc)
    data = json.loads(text)
    VALIDATOR.validate(data)
    assert from_plain(data) == doc
    assert JsonBackend().render(from_plain(data)) == text
