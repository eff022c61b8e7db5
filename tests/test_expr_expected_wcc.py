"""The values stored in tests/expr_expected.json are still what wcc says: the table cannot drift.

test_expr_semantics.py trusts the file; this re-records it from the real wcc and compares. When it
fails after a deliberate change of cases or data, re-record with `python -m tests.expr_expected`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.expr_expected import TABLE, dump, load, record

pytestmark = pytest.mark.node


def test_the_stored_values_are_what_wcc_gives(node_bin: str, peers_dir: Path) -> None:
    assert (peers_dir / "miniprogram-compiler" / "bin" / "linux" / "wcc").exists(), "wcc binary missing"
    fresh = record(node_bin, peers_dir)
    stored = load()
    assert fresh["data"] == stored["data"]
    changed = [(s, f) for s, f in zip(stored["cases"], fresh["cases"], strict=False) if s != f]
    assert changed == []
    assert len(fresh["cases"]) == len(stored["cases"])
    assert TABLE.read_text(encoding="utf-8") == dump(fresh), "re-record: python -m tests.expr_expected"
