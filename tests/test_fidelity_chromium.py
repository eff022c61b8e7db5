"""Fidelity: every text, image and button box of skillc's HTML against a reference of WeChat's
rendering, both laid out in the same headless Chromium at 375 px (method: docs/fidelity.md).

The reference is WeChat's wcc (through miniprogram-simulate) for the DOM, WeChat's wcsc for the
CSS and the base library's default styles for the built-ins. Each box's delta (rendered minus
reference) is held to the tolerance recorded in tests/fixtures/fidelity/recorded.json: 2 px, or
today's delta plus slack where a known renderer gap is named. A box that got closer passes.

Re-record after a renderer change: SKILLC_FIDELITY_RECORD=1 .venv/bin/pytest tests/test_fidelity_chromium.py
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import fidelity
from tests.test_html_chromium import TINY_PNG, browser

pytestmark = [pytest.mark.chromium, pytest.mark.node]
__all__ = ["browser"]  # the module-scoped fixture, shared with the backend's Chromium tests

RECORDING = os.environ.get(fidelity.RECORD_ENV, "").strip() not in ("", "0")
CARD_KEYS = [fidelity.card_key(skill, component) for skill, component in fidelity.CARDS]


@pytest.fixture(scope="module")
def page(browser: Any) -> Iterator[Any]:
    """One page for every card and both sides: same fonts, same width, light scheme, 1x pixels."""
    context = browser.new_context(
        viewport={"width": fidelity.WIDTH, "height": fidelity.HEIGHT}, device_scale_factor=1, color_scheme="light"
    )

    def answer(route: Any) -> None:
        # The card images are fixed-size boxes; any picture does, and nothing leaves the machine.
        if route.request.resource_type == "image":
            route.fulfill(status=200, content_type="image/png", body=TINY_PNG)
        else:
            route.abort()

    try:
        page = context.new_page()
        page.route("**/*", answer)
        yield page
    finally:
        context.close()


@pytest.fixture(scope="module")
def measured(page: Any, node_bin: str, peers_dir: Path) -> dict[str, dict[str, dict[str, Any]]]:
    """card key -> box key -> {kind, text, delta}, measured now; written to the record when recording."""
    reference = fidelity.reference_markup(node_bin, fidelity.CARDS)
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for skill, component in fidelity.CARDS:
        key = fidelity.card_key(skill, component)
        page.set_content(fidelity.skillc_page(skill, component), wait_until="load")
        ours = fidelity.boxes(page.evaluate(fidelity.MEASURE_JS, fidelity.SKILLC_SELECTOR))
        markup, css = reference[key]
        page.set_content(fidelity.reference_page(markup, css), wait_until="load")
        theirs = fidelity.boxes(page.evaluate(fidelity.MEASURE_JS, fidelity.REFERENCE_SELECTOR))
        assert theirs, f"{key}: the reference holds no text or image element"
        out[key] = fidelity.deltas(ours, theirs)
    if RECORDING:
        fidelity.write_recorded(
            {
                card: {box: fidelity.recorded_entry(card, box, row) for box, row in rows.items()}
                for card, rows in out.items()
            }
        )
    return out


def test_every_card_is_recorded() -> None:
    if RECORDING:
        pytest.skip("recording")
    assert sorted(fidelity.load_recorded()["cards"]) == sorted(CARD_KEYS), (
        f"re-record: {fidelity.RECORD_ENV}=1 .venv/bin/pytest tests/test_fidelity_chromium.py"
    )


@pytest.mark.parametrize("card", CARD_KEYS)
def test_boxes_stay_within_their_recorded_tolerance(card: str, measured: dict[str, Any]) -> None:
    stored = fidelity.load_recorded()["cards"].get(card)
    assert stored is not None, f"{card} is not recorded: run with {fidelity.RECORD_ENV}=1"
    unexplained = [key for key, row in stored.items() if row.get("reason") == "UNEXPLAINED"]
    assert not unexplained, (
        f"{card}: boxes beyond {fidelity.TOLERANCE_PX} px with no reason in tests/fidelity.py REASONS: {unexplained}"
    )
    problems = fidelity.failures(card, measured[card], stored)
    assert not problems, "\n".join(problems)


def test_a_box_that_moved_further_fails_and_one_that_came_closer_passes() -> None:
    stored = {"t": {"text": "a", "delta": {"x": -8.0, "y": 0.0}, "tolerance": 8.5}}

    def now(x: float) -> dict[str, dict[str, Any]]:
        return {"t": {"text": "a", "delta": {"x": x, "y": 0.0}}}

    assert fidelity.failures("c", now(0.0), stored) == []
    assert fidelity.failures("c", now(-8.4), stored) == []
    assert len(fidelity.failures("c", now(-9.0), stored)) == 1
    assert len(fidelity.failures("c", now(9.0), stored)) == 1
    assert "the boxes changed" in fidelity.failures("c", {}, stored)[0]


def test_recording_names_a_reason_for_every_box_beyond_the_tolerance() -> None:
    near = fidelity.recorded_entry("c", "k", {"text": "a", "delta": {"x": 1.5}})
    assert (near["tolerance"], near.get("reason")) == (fidelity.TOLERANCE_PX, None)
    far = fidelity.recorded_entry("fidelity-skill/gap-row", "chip-3", {"text": "a", "delta": {"x": -24.0}})
    assert far["tolerance"] == 24.5 and far["reason"].startswith("gap is not drawn yet")
    assert fidelity.recorded_entry("c", "k", {"text": "a", "delta": {"x": 3.0}})["reason"] == "UNEXPLAINED"
