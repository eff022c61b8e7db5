"""Severity parity with WeChat's gate on WXSS: every sub-rule of the official V005 (style
properties and values) and V006 (selectors) is an error in `skillc check`, and what those rules
let through but cards cannot render stays a warning (notes/ai-mode-spec.md section 6).

Fixture: tests/fixtures/styles-official-rules. ``components/official/index.wxss`` breaks one
sub-rule per line; ``components/skillc-only/index.wxss`` holds skillc's own findings.
"""

from __future__ import annotations

from functools import cache

import pytest

from skillc.check import check_path
from skillc.diagnostics import CATALOGUE, Diagnostic, Severity

from .conftest import FIXTURES

FIXTURE = FIXTURES / "styles-official-rules"
OFFICIAL = "components/official/index.wxss"
SKILLC_ONLY = "components/skillc-only/index.wxss"

_NOT_IN = "is not supported in cards; the declaration is ignored"
_GAP_HINT = "use margins on the children (margin-right on all but the last, or a class from the wx:for index)"
_VAR_HINT = "write the literal value where it is used, or a class per theme (.dark .title { color: ... })"
_PSEUDO = "is not supported in cards; the selector"
_CLIPS = "to pass the gate, remove it; a card clips its content at its fixed height"
# What the gate refuses and WeChat still draws: the finding says both, never "ignored".
_DRAWN = "is refused by WeChat's gate (V005), while the renderer draws it, as WeChat does"
_REFUSED = "is refused by WeChat's gate (V005), while the renderer draws"
_CLAMP = "as a line clamp together with"

# sub-rule -> (line, column, code, message, hint); every row is an error.
V005: dict[str, tuple[int, int, str, str, str | None]] = {
    "position fixed": (2, 29, "WXSS008", "position: fixed is not supported in cards",
                       "a card does not scroll; use position: relative or absolute"),
    "position sticky": (3, 30, "WXSS008", "position: sticky is not supported in cards",
                        "a card does not scroll; use position: relative or absolute"),
    "z-index": (4, 12, "WXSS007", f"'z-index' {_NOT_IN}",
                "cards stack elements in document order; reorder the elements instead"),
    "display grid": (5, 26, "WXSS008", "display: grid is not supported in cards", "use display: flex"),
    "display table": (6, 27, "WXSS008", "display: table-cell is not supported in cards", None),
    "display inline-flex": (7, 33, "WXSS008", "display: inline-flex is not supported in cards", "use display: flex"),
    "display -webkit-box": (8, 32, "WXSS008",
                            f"display: -webkit-box {_REFUSED} it {_CLAMP} -webkit-line-clamp and "
                            "-webkit-box-orient: vertical, as WeChat does",
                            "use -wx-line-clamp with display: block"),
    "float": (9, 10, "WXSS007", f"'float' {_NOT_IN}", "use display: flex"),
    "text-decoration": (10, 20, "WXSS007", f"'text-decoration' {_NOT_IN}",
                        "cards cannot draw text decorations; use a border-bottom instead"),
    "custom property --x:": (11, 20, "WXSS009", "CSS variables are not supported in cards: '--accent' is ignored",
                             _VAR_HINT),
    "var()": (12, 15, "WXSS009",
              "CSS variables are not supported in cards: var() cannot be resolved; the declaration is ignored",
              _VAR_HINT),
    "transition": (13, 15, "WXSS007",
                   f"'transition' {_REFUSED} its end state, the element's declared style, without animating",
                   "cards do not animate"),
    "animation": (14, 14, "WXSS007", f"'animation' {_REFUSED} the element's own style, without animating",
                  "cards do not animate"),
    "@keyframes": (15, 1, "WXSS011", "@keyframes is not supported in cards: cards do not animate; the rule is ignored",
                   "remove the animation"),
    "overflow": (16, 13, "WXSS007", f"'overflow' {_DRAWN}", _CLIPS),
    "overflow-x": (17, 15, "WXSS007", f"'overflow-x' {_DRAWN}", _CLIPS),
    "overflow-y": (18, 15, "WXSS007", f"'overflow-y' {_DRAWN}", _CLIPS),
    "-webkit-line-clamp": (19, 15, "WXSS007",
                           f"'-webkit-line-clamp' {_REFUSED} it {_CLAMP} display: -webkit-box and "
                           "-webkit-box-orient: vertical, as WeChat does",
                           "use -wx-line-clamp"),
    "-webkit-box-orient": (20, 15, "WXSS007",
                           f"'-webkit-box-orient' {_REFUSED} it {_CLAMP} display: -webkit-box and "
                           "-webkit-line-clamp, as WeChat does",
                           "use -wx-line-clamp with display: block"),
    "gap": (21, 8, "WXSS007", f"'gap' {_DRAWN}", _GAP_HINT),
    "row-gap": (22, 12, "WXSS007", f"'row-gap' {_DRAWN}", _GAP_HINT),
    "column-gap": (23, 15, "WXSS007", f"'column-gap' {_DRAWN}", _GAP_HINT),
    "cursor": (24, 11, "WXSS007", f"'cursor' {_NOT_IN}", "cards are touch-only"),
}  # fmt: skip

_DESCENDANT = "use a descendant selector (a space) or a class on the element"
V006: dict[str, tuple[int, int, str, str, str | None]] = {
    "child >": (25, 7, "WXSS006", f"child combinator '>' {_PSEUDO} '.card > .title' is ignored", _DESCENDANT),
    "adjacent +": (26, 8, "WXSS006", f"adjacent sibling combinator '+' {_PSEUDO} '.title + .title' is ignored",
                   _DESCENDANT),
    "sibling ~": (27, 8, "WXSS006", f"sibling combinator '~' {_PSEUDO} '.title ~ .title' is ignored", _DESCENDANT),
    "pseudo-element ::": (28, 7, "WXSS006", f"pseudo-element '::after' {_PSEUDO} '.title::after' is ignored",
                          "put the content in the template as its own element"),
    ":hover": (29, 6, "WXSS006", f"pseudo-class ':hover' {_PSEUDO} '.card:hover' is ignored",
               'use hover-class="..." on the element'),
    ":first-child": (30, 7, "WXSS006", f"pseudo-class ':first-child' {_PSEUDO} '.title:first-child' is ignored",
                     "add a class to the first item in the template"),
    ":last-child": (31, 7, "WXSS006", f"pseudo-class ':last-child' {_PSEUDO} '.title:last-child' is ignored",
                    "add a class to the last item in the template (wx:for index)"),
    ":nth-child": (32, 7, "WXSS006", f"pseudo-class ':nth-child' {_PSEUDO} '.title:nth-child(2)' is ignored",
                   "add a class from the wx:for index"),
    ":first-of-type": (33, 7, "WXSS006",
                       f"pseudo-class ':first-of-type' {_PSEUDO} '.title:first-of-type' is ignored",
                       "add a class to the first item in the template"),
    "[attr=": (34, 7, "WXSS006", f"attribute selector {_PSEUDO} '.title[data-state=\"on\"]' is ignored",
               "add a class to the element instead"),
}  # fmt: skip

# What the official rules let through: skillc's own findings, warnings.
SKILLC_OWN: dict[str, tuple[int, int, str, str]] = {
    "transition of opacity/transform": (
        2,
        9,
        "WXSS019",
        "'transition' does not animate in cards: the renderer draws its end state, the element's declared style",
    ),
    "universal *": (3, 1, "WXSS018", f"universal selector '*' {_PSEUDO} '*' is ignored"),
    "[attr] without a value": (4, 7, "WXSS018", f"attribute selector {_PSEUDO} '.title[data-state]' is ignored"),
    "grid-* property": (5, 17, "WXSS019", f"'grid-template-columns' {_NOT_IN}"),
    "clear": (6, 10, "WXSS019", f"'clear' {_NOT_IN}"),
    "unknown property": (7, 11, "WXSS019", "unknown property 'colr'; the declaration is ignored"),
    "dashed border": (8, 23, "WXSS020", "border style 'dashed' is not supported in cards (only solid and none)"),
    "filter other than blur": (9, 22, "WXSS020", "filter grayscale() is not supported in cards (only blur())"),
    "display contents": (10, 22, "WXSS020", "display: contents is not supported in cards"),
    "@supports": (11, 1, "WXSS021", "@supports is not supported in cards; the rule is ignored"),
}


@cache
def _findings(file: str) -> dict[int, Diagnostic]:
    [report] = check_path(FIXTURE, "styles-official-rules")
    mine = [d for d in report.diagnostics if d.file == file]
    by_line = {d.span.line: d for d in mine if d.span is not None}
    assert len(by_line) == len(mine), "one finding per line"
    return by_line


@pytest.mark.parametrize("rule", sorted(V005))
def test_v005_sub_rule_is_an_error(rule: str) -> None:
    line, column, code, message, hint = V005[rule]
    found = _findings(OFFICIAL)[line]
    assert (found.code, found.severity, found.span.column, found.message, found.hint) == (  # type: ignore[union-attr]
        code, Severity.ERROR, column, message, hint
    )  # fmt: skip


@pytest.mark.parametrize("rule", sorted(V006))
def test_v006_sub_rule_is_an_error(rule: str) -> None:
    line, column, code, message, hint = V006[rule]
    found = _findings(OFFICIAL)[line]
    assert (found.code, found.severity, found.span.column, found.message, found.hint) == (  # type: ignore[union-attr]
        code, Severity.ERROR, column, message, hint
    )  # fmt: skip


def test_every_line_of_the_official_sheet_is_one_error() -> None:
    lines = {row[0] for row in (*V005.values(), *V006.values())}
    assert set(_findings(OFFICIAL)) == lines == set(range(2, 35))


@pytest.mark.parametrize("finding", sorted(SKILLC_OWN))
def test_what_the_official_rules_pass_stays_a_warning(finding: str) -> None:
    line, column, code, message = SKILLC_OWN[finding]
    found = _findings(SKILLC_ONLY)[line]
    assert (found.code, found.severity, found.span.column, found.message) == (  # type: ignore[union-attr]
        code, Severity.WARNING, column, message
    )  # fmt: skip
    assert set(_findings(SKILLC_ONLY)) == {row[0] for row in SKILLC_OWN.values()}


def test_transition_of_opacity_names_both_official_versions() -> None:
    # v0.2.1's regex flags this allowed transition (a known false positive); O6b bans every
    # transition. skillc warns, and the hint says what passes both.
    found = _findings(SKILLC_ONLY)[2]
    assert found.hint == (
        "WeChat's v0.2.1 validator means to allow transitions of opacity and transform (its check flags "
        "them anyway); the newer official rules refuse every transition: remove it to pass both"
    )


def test_catalogue_marks_the_official_codes() -> None:
    official = {c: CATALOGUE[c].official for c in ("WXSS006", "WXSS007", "WXSS008", "WXSS009", "WXSS011")}
    assert official == {"WXSS006": "V006", "WXSS007": "V005", "WXSS008": "V005", "WXSS009": "V005", "WXSS011": "V005"}
    assert all(CATALOGUE[c].severity is Severity.ERROR for c in official)
    own = ("WXSS018", "WXSS019", "WXSS020", "WXSS021", "WXSS022")
    assert [(CATALOGUE[c].severity, CATALOGUE[c].official) for c in own] == [(Severity.WARNING, "")] * len(own)
