"""The official WXML rule V003, sub-rule by sub-rule, on tests/fixtures/templates-v003.

Where WeChat's validator (wxa-skills-validate, validate.mjs v0.2.1 plus the newer rules of
VALIDATE_RULES.md) fails a build, `skillc check` reports an error; where skillc finds more than
the official regexes (`<textarea>` slips their prefix match, `scroll-x="false"`), its own
findings keep their severity; where the official rule lets a construct pass (a bare `scroll-y`),
skillc does not make it an error either. Each test names the component of the fixture it reads.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from skillc.check import CheckReport, check_skill
from skillc.diagnostics import Severity

FIXTURE = Path(__file__).parent / "fixtures" / "templates-v003"
E, W, N = Severity.ERROR, Severity.WARNING, Severity.INFO  # N: a note (info)


@pytest.fixture(scope="module")
def report() -> CheckReport:
    return check_skill(FIXTURE)


def found(report: CheckReport, component: str) -> list[tuple[str, Severity, int, int, str]]:
    file = f"components/{component}/index.wxml"
    return [
        (d.code, d.severity, d.span.line if d.span else 0, d.span.column if d.span else 0, d.message)
        for d in report.diagnostics
        if d.file == file
    ]


def test_the_allowed_tags_pass(report: CheckReport) -> None:
    # view/text/image/button/block/template/scroll-view, collapsible-view (rendered), map and
    # canvas (allowed; skillc shows static previews: never an error). A canvas without
    # type="2d" passes the gate too, but cards have only the 2d canvas: a warning.
    assert found(report, "tags-allowed") == [
        (
            "TPL002",
            N,
            1,
            77,
            "<map> is shown by skillc as a static preview: a box of its size listing its centre and markers "
            "(no map tiles, no gestures)",
        ),
        (
            "TPL030",
            W,
            1,
            83,
            '<canvas> without type="2d": cards have only the 2d canvas (wx.createCanvasContext is not available), '
            "so this one stays blank",
        ),
    ]


def test_other_tags_are_errors(report: CheckReport) -> None:
    assert found(report, "tags-refused") == [
        ("TPL001", E, 2, 4, "<navigator> is not a card component (official rule V003)"),
        # The official regex lets <textarea> through (it starts with "text"); skillc does not.
        (
            "TPL001",
            E,
            3,
            4,
            "<textarea> is not a card component; the official rule V003 lets it pass (its tag pattern matches "
            "the prefix <text>), but WeChat's cards do not render it",
        ),
        ("TPL001", E, 4, 4, "<swiper> is not a card component (official rule V003)"),
    ]


def test_import_and_include_in_index_wxml_fail_the_official_gate(report: CheckReport) -> None:
    allowed = "view, text, image, map, button, canvas, scroll-view, collapsible-view, block and template"
    assert found(report, "import-include") == [
        (
            "TPL020",
            E,
            1,
            2,
            f"<import> fails the official validator (V003 allows only {allowed} in a card's index.wxml)",
        ),
        (
            "TPL020",
            E,
            2,
            2,
            f"<include> fails the official validator (V003 allows only {allowed} in a card's index.wxml)",
        ),
    ]
    # The imported file itself is not a card's index.wxml: the official rule never reads it.
    assert all(d.file != "components/import-include/row.wxml" for d in report.diagnostics)


def test_button_open_type_is_an_error(report: CheckReport) -> None:
    assert found(report, "open-type") == [("TPL007", E, 2, 11, "button open-type is not available in cards")]


def test_scroll_view_needs_scroll_x(report: CheckReport) -> None:
    # scroll-x="true", "{{true}}" and the bare attribute all satisfy it.
    assert found(report, "scroll-x") == [("TPL005", E, 2, 4, "scroll-view in a card needs scroll-x")]


def test_scroll_y_true_is_an_error_and_a_bare_or_bound_scroll_y_a_warning(report: CheckReport) -> None:
    refused = "scroll-view in a card scrolls horizontally only: scroll-y is not supported"
    assert found(report, "scroll-y") == [
        ("TPL006", E, 2, 25, refused),  # scroll-y="true"
        ("TPL006", E, 3, 25, refused),  # scroll-y="{{true}}"
        ("TPL006", E, 4, 25, refused),  # scroll-y="{{ true }}"
        # The official pattern needs `scroll-y=` followed by true: these pass its gate.
        ("TPL019", W, 5, 25, "a bare scroll-y passes the official validator, but cards scroll horizontally only"),
        (
            "TPL019",
            W,
            6,
            25,
            'scroll-y="{{vertical}}" passes the official validator, but cards scroll horizontally only',
        ),
        # scroll-y="false" and "{{false}}" say nothing.
    ]


def test_image_formats_cards_do_not_show(report: CheckReport) -> None:
    def msg(ext: str) -> str:
        return (
            f"<image> src ends in .{ext}, a format cards do not show "
            "(official rule V003: no .webp, .gif, .svg, .bmp or .avif)"
        )

    # .png, a data path named gif ({{item.gif}}) and a folder named webp are fine.
    assert found(report, "image-format") == [
        ("TPL021", E, 2, 14, msg("webp")),
        ("TPL021", E, 3, 14, msg("gif")),  # upper case, with a query
        ("TPL021", E, 4, 14, msg("svg")),
        ("TPL021", E, 5, 14, msg("bmp")),  # after a bound base URL
        ("TPL021", E, 6, 14, msg("avif")),  # a string literal in {{ }}
    ]


def test_banned_bind_events_are_errors(report: CheckReport) -> None:
    names = [
        (2, 9, "touchstart"),
        (2, 29, "touchmove"),
        (2, 48, "longpress"),
        (2, 67, "longtap"),
        (3, 9, "input"),
        (3, 24, "change"),
        (3, 40, "submit"),
        (3, 56, "scroll"),
        (4, 9, "blur"),
        (4, 23, "focus"),
        (4, 38, "confirm"),
    ]
    assert found(report, "bind-events") == [
        ("TPL008", E, line, col, f"bind:{name}: the {name} event is not delivered to cards (official rule V003)")
        for line, col, name in names
    ]


def test_the_fixture_fails_check_only_on_these(report: CheckReport) -> None:
    components = sorted(p.name for p in (FIXTURE / "components").iterdir())
    wxml = {f"components/{c}/index.wxml" for c in components}
    others = [(d.code, d.file) for d in report.diagnostics if d.file not in wxml and d.severity is not Severity.INFO]
    assert others == []
    assert report.counts.errors == 26
