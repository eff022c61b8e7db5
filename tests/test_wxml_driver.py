"""The WXML driver (skillc/frontend/wxml/driver.py) builds exactly what lark alone builds.

The driver hands one-token items to the builder without lark's parse loop, reads a well-formed
<wxs> element whole, and feeds other tags to lark's LALR parser token by token; after a syntax
error it goes on where the recovery says. Lark over the whole text, restarting after each error,
is the reference: the same tree and the same diagnostics, on real files, on defects of every
kind, and on generated <wxs> tags (where the driver's own pattern must accept nothing the
piecewise rule reads differently). The grammar's possessive runs are checked against the
grammar written without them in tests/test_parse_fast_paths.py.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from skillc.diagnostics import DiagnosticSink
from skillc.frontend.wxml import builder as wxml_builder
from skillc.frontend.wxml import document_to_json, driver
from skillc.frontend.wxml import parser as wxml_parser

from .test_wxml_tables import BROKEN

ROOT = Path(__file__).resolve().parents[1]
FILES = sorted([*(ROOT / "tests" / "fixtures").rglob("*.wxml"), *(ROOT / "examples").rglob("*.wxml")])


def _parse(text: str, *, driven: bool) -> tuple[object, list[dict[str, object]]]:
    sink = DiagnosticSink()
    doc = wxml_parser._parse(text, "components/x/index.wxml", sink, driven=driven)
    return document_to_json(doc), [d.model_dump() for d in sink]


def _same(text: str) -> None:
    assert _parse(text, driven=True) == _parse(text, driven=False), text


def test_the_driver_reads_the_committed_tables() -> None:
    """parse_wxml runs the driver (were it None, every comparison here would be lark against
    itself), with every one-token item of the grammar and nothing else."""
    lark, _ = wxml_parser._parser()
    found = wxml_parser._driver(lark)
    assert found is not None
    assert sorted(found.items) == [
        "CLOSE_TAG",
        "COMMENT",
        "FAST_TAG",
        "LEAF",
        "OPEN_MUSTACHE",
        "STRAY_LT",
        "TEXT",
        "UNCLOSED_COMMENT",
    ]


def test_every_fixture_and_example_parses_as_with_lark_alone() -> None:
    assert len(FILES) > 50
    for path in FILES:
        _same(path.read_text(encoding="utf-8"))


DEFECTS = [
    *BROKEN,
    "<view a=b>x</view>",
    "<view a='{{x'>\n  <text>{{ y </text>\n</view>",
    '<view class="a"\n  hidden\n  b = "c" >t</view>',
    "text {{ a }} more {{ b\n<view/>",
    "<wxs src='a.wxs' module='m'/><wxs module='n'>var x = '</wxs>';</wxs>",
    "<wxs module='m'></wxs></wxs><view/>",
    "<view>a < b</view>",
    "<wxs a\u3000b='c'/>",
    "<view>" * 3 + "<" * 150,
    "\n".join("<v a=>" for _ in range(120)),
]


@pytest.mark.parametrize("text", DEFECTS, ids=range(len(DEFECTS)))
def test_defects_parse_as_with_lark_alone(text: str) -> None:
    _same(text)


def test_more_defects_than_restarts_are_cut_off_as_lark_alone_does() -> None:
    text = "\n".join("<v a=>" for _ in range(wxml_parser.MAX_RESTARTS + 20))
    tree, diags = _parse(text, driven=True)
    assert [d["code"] for d in diags].count("WXML013") == 1
    assert (tree, diags) == _parse(text, driven=False)


_WS = [" ", "\n", "\t", "\f", "\r\n", "\v", "\u3000", "\u00a0", ""]
_NAMES = ["src", "module", "a", ":b", "@c", "d-e", "f.g", "1x", "-x", "h\u00e9"]
_VALUES = ['"x"', "'y'", '""', "''", '"a b"', '"{{x}}"', '"{x}"', '"a&lt;b"', "z", '"q\'"', "'q\"'", '"open']
_BODIES = ["", "var a = 1;", "</wxs>", "a</wxs >b", " ", "\n", "</wx", "<view/>", "{{x}}"]
_CLOSES = ["</wxs>", "</wxs >", "</wxs\n>", "</ wxs>", "", "</wxs\u3000>"]


def _wxs(rng: random.Random) -> str:
    parts = ["<wxs" + rng.choice(["", "x", "-", ":"])]
    for _ in range(rng.randint(0, 3)):
        parts.append(rng.choice(_WS) + rng.choice(_NAMES))
        if rng.random() < 0.7:
            parts.append(rng.choice(_WS) + "=" + rng.choice(_WS) + rng.choice(_VALUES))
    parts.append(rng.choice(_WS))
    if rng.random() < 0.5:
        parts.append(rng.choice(["/>", "/ >", ">"]))
    else:
        parts.append(">" + rng.choice(_BODIES) + rng.choice(_CLOSES) + rng.choice(_BODIES))
    before = rng.choice(["", "<view>", "text ", "\n  "])
    return before + "".join(parts) + rng.choice(["", "<text>{{a}}</text>", "</view>", "<wxs/>"])


def test_generated_wxs_tags_parse_as_with_lark_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    whole = 0
    real = wxml_builder._Builder.whole_wxs

    def counting(self: wxml_builder._Builder, *args: object) -> None:
        nonlocal whole
        whole += 1
        real(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(wxml_builder._Builder, "whole_wxs", counting)
    rng = random.Random(31)
    for _ in range(3000):
        _same(_wxs(rng))
    assert whole > 500  # the fast path was compared, not only lark against itself


def test_mutated_files_parse_as_with_lark_alone() -> None:
    texts = [p.read_text(encoding="utf-8") for p in FILES]
    rng = random.Random(7)
    alphabet = [*"<>/=\"'{}!- \n\tax\\", "<wxs", "</wxs>", "{{", "}}", "<!--", "-->", "<view", "</view>", "&lt;"]
    for _ in range(600):
        chars = list(rng.choice(texts)[:1500])
        for _ in range(rng.randint(1, 6)):
            at = rng.randrange(len(chars) + 1)
            roll = rng.random()
            if roll < 0.4:
                chars.insert(at, rng.choice(alphabet))
            elif roll < 0.8 and chars:
                del chars[min(at, len(chars) - 1)]
            else:
                chars[at:at] = list(rng.choice(alphabet) * rng.randint(1, 3))
        _same("".join(chars))


def test_a_parser_the_driver_cannot_read_is_run_by_lark_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    text = (FILES[0]).read_text(encoding="utf-8")
    expected = _parse(text, driven=True)
    monkeypatch.setattr(wxml_parser._local, "driver", None)
    monkeypatch.setattr(driver, "_Driver", _refuse)
    assert _parse(text, driven=True) == expected
    lark, _ = wxml_parser._parser()
    assert wxml_parser._driver(lark) is None


def _refuse(_lark: object) -> None:
    raise driver.Unsupported("test")
