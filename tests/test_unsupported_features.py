"""What cards do not have is said at its line, once, not ignored in silence.

tests/fixtures/unsupported-features/poster-skill has a card whose Component({...}) uses
behaviors, relations, externalClasses and pageLifetimes (JS020), and whose WXSS has an
@font-face (WXSS030, info: WeChat loads the font, skillc's renderers do not), prefixed filters
and masks, backdrop-filter and user-select (WXSS019 with the reason), filter: grayscale()
(WXSS020, as before); the card also uses what cards do have (filter: blur(), mask-image,
observers, lifetimes), which nothing reports. The notes on WeChat's cards name none of these
options or properties as refused by its gate, so they are warnings.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from skillc.cli import main
from skillc.diagnostics import DiagnosticSink
from skillc.frontend.component_options import check_component_options
from skillc.frontend.wxss import parse_wxss

from .conftest import FIXTURES

SKILL = FIXTURES / "unsupported-features" / "poster-skill"
JS = "components/poster/index.js"
WXSS = "components/poster/index.wxss"
MASK = "cards take only the unprefixed mask properties"
SELECT = "card text cannot be selected or copied"


def option(name: str, why: str) -> str:
    return f"Component option `{name}` is not supported in cards: {why}; it is ignored"


def prop(name: str, why: str) -> str:
    return f"'{name}' is not supported in cards: {why}; the declaration is ignored"


EXPECTED = [
    (
        "JS020",
        "warning",
        option(
            "behaviors",
            "a card has no Behavior(), so the mixins' data, properties, methods and lifetimes never reach it",
        ),
        JS,
        4,
        3,
    ),
    ("JS020", "warning", option("relations", "a card has no custom components to relate to"), JS, 5, 3),
    ("JS020", "warning", option("externalClasses", "a card has no parent component to pass classes in"), JS, 6, 3),
    (
        "JS020",
        "warning",
        option("pageLifetimes", "a card lives in a conversation, not on a page: show, hide and resize never fire"),
        JS,
        7,
        3,
    ),
    (
        "WXSS030",
        "info",
        "@font-face \"Poster Serif\": WeChat's cards load this font, skillc's renderers do not; "
        "text in it is drawn in the next family of its font-family list",
        WXSS,
        1,
        1,
    ),
    ("WXSS019", "warning", prop("-webkit-filter", "cards take only the unprefixed filter, with blur()"), WXSS, 14, 3),
    (
        "WXSS019",
        "warning",
        prop("backdrop-filter", "cards blur only the element itself (filter: blur())"),
        WXSS,
        15,
        3,
    ),
    ("WXSS019", "warning", prop("user-select", SELECT), WXSS, 16, 3),
    ("WXSS019", "warning", prop("-webkit-user-select", SELECT), WXSS, 17, 3),
    ("WXSS020", "warning", "filter grayscale() is not supported in cards (only blur())", WXSS, 21, 11),
    ("WXSS019", "warning", prop("-webkit-mask-image", MASK), WXSS, 22, 3),
]


def test_check_says_each_unsupported_feature_once_at_its_line() -> None:
    done = CliRunner().invoke(main, ["check", str(SKILL), "--format", "json"])
    assert done.exit_code == 0, done.output
    [unit] = json.loads(done.output)["units"]
    rows = [
        (d["code"], d["severity"], d["message"], d["file"], d["span"]["line"], d["span"]["column"])
        for d in unit["diagnostics"]
    ]
    assert rows == EXPECTED
    hints = {(d["code"], d["span"]["line"]): d.get("hint") for d in unit["diagnostics"]}
    assert hints[("JS020", 7)] == (
        "use lifetimes (created, attached, detached) and the Expire notification of getViewContext(this)"
    )
    assert hints[("WXSS019", 22)] == "write mask-image"
    assert hints[("WXSS030", 1)] == 'follow the family with a fallback, as in font-family: "Brand", sans-serif'


def texts(node: dict[str, Any]) -> list[str]:
    found = [node["props"]["text"]] if node["type"] == "#text" else []
    for child in node.get("children") or []:
        found += texts(child)
    return found


def test_skillc_run_the_card_renders_without_the_ignored_options(tmp_path: Path) -> None:
    script = tmp_path / "flow.json"
    script.write_text(json.dumps({"steps": [{"call": "showPoster", "arguments": {"title": "jazz night"}}]}))
    done = CliRunner().invoke(main, ["run", str(SKILL), "--script", str(script), "--json"])
    assert done.exit_code == 0, done.output
    [step] = json.loads(done.output)
    # observers ran (the shared module shouts the title); pageLifetimes.show never fires in a card
    assert texts(step["cards"][0]["document"]["root"]) == ["jazz night", "JAZZ NIGHT", "not shown"]
    assert step["diagnostics"] == []


def options_found(source: str) -> list[tuple[str, int, int]]:
    sink = DiagnosticSink()
    check_component_options({"components/c/index.js": source}, ["components/c"], sink)
    return [(d.message.split("`")[1], d.span.line, d.span.column) for d in sink if d.span is not None]


def test_options_are_read_from_the_component_literal_only() -> None:
    # a method form, after other keys; comments and nested objects are not options
    source = (
        "// behaviors: [] in a comment\n"
        "Component({\n"
        "  data: { relations: 1 },\n"
        "  methods: { externalClasses () {} },\n"
        "  pageLifetimes () {}\n"
        "})\n"
    )
    assert options_found(source) == [("pageLifetimes", 5, 3)]
    # Bad input: no Component() literal, a spread, an unterminated literal: nothing, and no crash.
    assert options_found("const def = { behaviors: [] }\nComponent(def)\n") == []
    assert options_found("Component({ ...base, lifetimes: {} })\n") == []
    assert options_found("Component({ behaviors: [") == [("behaviors", 1, 13)]
    assert options_found("") == []


def test_font_face_names_its_family_however_it_is_written() -> None:
    def note(css: str) -> list[str]:
        sink = DiagnosticSink()
        parse_wxss(css, file="c/index.wxss", sink=sink)
        return [d.message.split(":", 1)[0] for d in sink if d.code == "WXSS030"]

    assert note("@font-face { font-family: Brand Sans; src: url(https://x.cn/b.woff2); }") == [
        '@font-face "Brand Sans"'
    ]
    assert note("@font-face { src: url(https://x.cn/b.woff2); }") == ["@font-face (no font-family)"]
    # not at the top level: WXSS021 says it is ignored, and there is no font to talk about
    assert note("@media (min-width: 1px) { @font-face { font-family: A; } }") == []


def test_a_prefixed_mask_property_cards_lack_unprefixed_too_gets_the_general_hint() -> None:
    sink = DiagnosticSink()
    parse_wxss(".a { -webkit-mask-box-image: none; }", file="c/index.wxss", sink=sink)
    assert [(d.code, d.message, d.hint) for d in sink] == [
        ("WXSS019", prop("-webkit-mask-box-image", MASK), "use mask, mask-image, mask-size or mask-position")
    ]
