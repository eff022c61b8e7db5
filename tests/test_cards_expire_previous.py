"""``getViewContext(this).expirePreviousCards``: only cards created before the calling card expire.

tests/fixtures/cards/expiry-skill shows note cards (which call expirePreviousCards from a tap,
with and without a componentPaths filter) and memo cards on another component path. Cards are
ordered by when they were created (the card table's seq), so a card shown after the caller is
never expired by it, and the filter still picks the component paths.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from skillc.cli import main

from .conftest import FIXTURES

SKILL = FIXTURES / "cards" / "expiry-skill"

# card-1 note A, card-2 memo M, card-3 note B, card-4 note C.
SHOW = [
    {"call": "showNote", "arguments": {"title": "A"}},
    {"call": "showMemo", "arguments": {"title": "M"}},
    {"call": "showNote", "arguments": {"title": "B"}},
    {"call": "showNote", "arguments": {"title": "C"}},
]


def run_flow(tmp_path: Path, steps: list[dict[str, Any]]) -> tuple[int, list[dict[str, Any]]]:
    script = tmp_path / "flow.json"
    script.write_text(json.dumps({"steps": steps}), encoding="utf-8")
    done = CliRunner().invoke(main, ["run", str(SKILL), "--script", str(script), "--json"])
    return done.exit_code, json.loads(done.output)


def tap(handler: str, card: str) -> dict[str, Any]:
    return {"tap": {"handler": handler, "card": card}}


def test_the_middle_card_expires_only_the_older_card_on_its_path(tmp_path: Path) -> None:
    code, steps = run_flow(
        tmp_path,
        [
            *SHOW,
            tap("onExpireOlderNotes", "card-3"),  # B: A goes; M (a memo) and C (newer) stay
            tap("onExpireOlderNotes", "card-4"),  # C is live: it answers, and expires B
            tap("onExpireOlderNotes", "card-1"),  # A is expired: the tap is ignored
        ],
    )
    assert code == 0
    assert [s["actions"] for s in steps[4:6]] == [
        [
            {
                "type": "expirePreviousCards",
                "cardId": "card-3",
                "componentPaths": ["components/note/index"],
                "expired": ["card-1"],
            }
        ],
        [
            {
                "type": "expirePreviousCards",
                "cardId": "card-4",
                "componentPaths": ["components/note/index"],
                "expired": ["card-3"],
            }
        ],
    ]
    assert [s["handled"] for s in steps[4:6]] == [["onExpireOlderNotes"], ["onExpireOlderNotes"]]
    assert steps[6]["handled"] == []
    assert [(d["code"], d["severity"], d["message"]) for d in steps[6]["diagnostics"]] == [
        ("CMPVM012", "warning", "card card-1 has expired; the tap on 0.1 was ignored")
    ]


def test_without_a_filter_every_older_card_expires_and_no_newer_one(tmp_path: Path) -> None:
    code, steps = run_flow(tmp_path, [*SHOW, tap("onExpireAllOlder", "card-3"), tap("onExpireAllOlder", "card-4")])
    assert code == 0
    assert [s["actions"] for s in steps[4:]] == [
        [{"type": "expirePreviousCards", "cardId": "card-3", "expired": ["card-1", "card-2"]}],
        [{"type": "expirePreviousCards", "cardId": "card-4", "expired": ["card-3"]}],
    ]


def test_the_oldest_card_has_nothing_before_it(tmp_path: Path) -> None:
    code, steps = run_flow(tmp_path, [*SHOW, tap("onExpireAllOlder", "card-1"), tap("onExpireOlderNotes", "card-4")])
    assert code == 0
    assert steps[4]["actions"] == [{"type": "expirePreviousCards", "cardId": "card-1", "expired": []}]
    # card-1 is still live, so the newest note's filter reaches it as well as card-3
    assert steps[5]["actions"][0]["expired"] == ["card-1", "card-3"]
