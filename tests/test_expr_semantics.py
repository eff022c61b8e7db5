"""{{ }} semantics against values recorded from wcc (tests/expr_expected.json), without node.

`==` / `!=` / `===` / `!==` across null, undefined, numbers, NaN, strings, booleans, arrays and
objects; arithmetic; string concatenation; ternaries; member access; and how null, undefined and
objects render in text. tests/test_expr_expected_wcc.py keeps the stored values equal to wcc's.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from tests.expr_expected import CASES, DATA, FEW, GROUPS, OPERANDS, load, ours

TABLE = load()


def test_the_stored_table_is_the_recording_of_these_cases() -> None:
    """A case or a data value changed without re-recording (python -m tests.expr_expected) fails here."""
    assert [(c["group"], c["content"]) for c in TABLE["cases"]] == CASES
    assert TABLE["data"] == DATA
    assert len({c for _, c in CASES}) == len(CASES), "duplicate cases"
    assert all(set(c) == {"group", "content", "value", "text"} for c in TABLE["cases"])


def test_the_table_covers_equality_across_every_kind_of_operand() -> None:
    counts = Counter(g for g, _ in CASES)
    assert set(counts) == set(GROUPS) and min(counts.values()) >= 20, counts
    contents = {c for _, c in CASES}
    for op, operands in (("==", OPERANDS), ("===", OPERANDS), ("!=", FEW), ("!==", FEW)):
        for x in operands:
            for y in operands:
                assert f"{{{{ {x} {op} {y} }}}}" in contents
    # The results are not one-sided: each operator is true for some pairs and false for others.
    for op in ("==", "===", "!=", "!=="):
        texts = {c["text"] for c in TABLE["cases"] if c["group"] == "equality" and f" {op} " in c["content"]}
        assert texts == {"true", "false"}, op


def _mismatches(group: str) -> list[dict[str, Any]]:
    out = []
    for case in TABLE["cases"]:
        if case["group"] != group:
            continue
        value, text, errors = ours(case["content"], TABLE["data"])
        if errors or text != case["text"] or value != case["value"]:
            out.append(
                {"content": case["content"], "wcc": (case["value"], case["text"]), "ours": (value, text, errors)}
            )
    return out


@pytest.mark.parametrize("group", GROUPS)
def test_our_evaluator_gives_the_recorded_wcc_values(group: str) -> None:
    assert any(c["group"] == group for c in TABLE["cases"])
    assert _mismatches(group) == []
