"""The page runtime without a browser (skillc/runtime/pages): a handoff route opened as WeChat
opens it (Page({data}), onLoad with the query, onShow, onReady), taps calling page methods whose
setData changes the Render IR, and what a page uses beyond the console reported as PAGE
diagnostics with file:line:col while the page still renders."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from skillc.backends.html_backend import render_html_fragment
from skillc.diagnostics import Diagnostic, DiagnosticSink
from skillc.frontend.package import load_skill
from skillc.ir.viewport import Viewport
from skillc.runtime.api.api_runtime import ApiRuntime
from skillc.runtime.config import RuntimeConfig
from skillc.runtime.pages.opener import Opened, open_page, parse_query
from tests.conftest import FIXTURES

PROJECT = FIXTURES / "pages"
PHONE = Viewport(width=375, height=667)


def _runtime(project: Path, state: Path) -> ApiRuntime:
    pkg = load_skill(project / "skills" / "teahouse", DiagnosticSink())
    assert pkg is not None
    return ApiRuntime(pkg, RuntimeConfig(state_dir=state))


@pytest.fixture(scope="module")
def runtime(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiRuntime]:
    rt = _runtime(PROJECT, tmp_path_factory.mktemp("page-state"))
    yield rt
    rt.close()


def _html(opened: Opened) -> str:
    assert opened.step.document is not None
    return render_html_fragment(opened.step.document)


def _where(d: Diagnostic) -> tuple[str, str | None, int | None, int | None]:
    return (d.code, d.file, d.span.line if d.span else None, d.span.column if d.span else None)


def test_on_load_gets_the_handoff_query(runtime: ApiRuntime) -> None:
    opened = open_page(runtime, "/pages/order/detail?orderId=T-7&cups=2", PHONE)
    assert opened.page is not None
    try:
        assert opened.query == {"orderId": "T-7", "cups": "2"}
        assert opened.step.data == {"orderId": "T-7", "cups": 2, "note": "loaded"}
        html = _html(opened)
        assert ">Order T-7<" in html and ">2 cups<" in html and ">loaded<" in html
        assert [d for d in opened.step.diagnostics if d.severity.value != "info"] == []
        # onShow ran after onLoad, with the data onLoad set, and its console line says where.
        [line] = opened.step.console
        assert (line.text, line.file, line.line) == ("order page shown T-7", "pages/order/detail.js", 8)
    finally:
        opened.page.close()


def test_a_tap_runs_the_page_method_and_set_data_re_renders(runtime: ApiRuntime) -> None:
    opened = open_page(runtime, "/pages/order/detail?orderId=T-8&cups=1", PHONE)
    assert opened.page is not None
    try:
        [button] = [n for n in opened.step.document.root.walk() if n.events and "tap" in n.events]  # type: ignore[union-attr]
        step = opened.page.tap(button.id)
        assert step.handled == ["addCup"]
        assert step.data["cups"] == 2
        assert step.document is not None and ">2 cups<" in render_html_fragment(step.document)
        again = opened.page.tap(button.id)
        assert again.document is not None and ">3 cups<" in render_html_fragment(again.document)
    finally:
        opened.page.close()


def test_what_a_page_uses_beyond_the_console_is_reported_and_it_still_renders(runtime: ApiRuntime) -> None:
    opened = open_page(runtime, "/pages/legacy/index?tab=all", PHONE)
    assert opened.page is not None
    try:
        assert [_where(d) for d in opened.step.diagnostics] == [
            ("PAGE010", "pages/legacy/index.js", 6, 5),
            ("PAGE007", "pages/legacy/index.js", 8, 3),
            ("PAGE010", "pages/legacy/index.js", 9, 5),
            ("PAGE006", "pages/legacy/index.js", 11, 3),
            ("PAGE009", "pages/legacy/index.js", 13, 5),
            ("PAGE013", "pages/legacy/index.json", 2, 3),
            ("PAGE013", "pages/legacy/index.json", 3, 3),
            ("PAGE011", "pages/legacy/index.json", 5, 18),
            ("PAGE012", "pages/legacy/index.wxml", 3, 4),
        ]
        messages = {d.code: d.message for d in opened.step.diagnostics}
        assert messages["PAGE009"] == (
            "pages/legacy/index calls wx.navigateTo: the debug console shows one page (the handoff's), "
            "so the call fails; render the other page with render_page instead"
        )
        assert messages["PAGE012"] == (
            "<order-row> is a custom component (usingComponents); the debug console does not run custom "
            "components and draws it as a plain box with its children"
        )
        html = _html(opened)
        assert ">Tab: all<" in html and ">A-100<" in html and ">A-101<" in html
        # The row's tap calls wx.navigateTo, which fails inside the page: no crash, no change.
        row = next(n for n in opened.step.document.root.walk() if n.events and "tap" in n.events)  # type: ignore[union-attr]
        step = opened.page.tap(row.id)
        assert step.handled == ["openRow"] and step.document is not None
    finally:
        opened.page.close()


def _project_with(tmp: Path, js: str) -> Path:
    """The fixture project with pages/order/detail.js replaced."""
    project = tmp / "project"
    shutil.copytree(PROJECT, project)
    (project / "pages" / "order" / "detail.js").write_text(js, encoding="utf-8")
    return project


@pytest.mark.parametrize(
    ("js", "expected", "data"),
    [
        (
            "Page({\n  data: { orderId: 'none', cups: 0 },\n  onLoad(query) {\n    this.setData({ cups: 5 })\n"
            "    query.missing.deeper = 1\n  },\n})\n",
            ("PAGE003", "pages/order/detail.js", 5, 5),
            {"orderId": "none", "cups": 5},
        ),
        ("Page({ data: { orderId: 'x' }, onLoad( {\n", ("PAGE002", "pages/order/detail.js", 1, 41), {}),
        ("const nothing = 1\n", ("PAGE002", "pages/order/detail.js", None, None), {}),
    ],
    ids=["onLoad-throws", "syntax-error", "no-Page-call"],
)
def test_a_page_whose_code_fails_still_renders(
    tmp_path: Path, js: str, expected: tuple[str, str, int | None, int | None], data: dict[str, object]
) -> None:
    rt = _runtime(_project_with(tmp_path, js), tmp_path / "state")
    try:
        opened = open_page(rt, "/pages/order/detail?orderId=Z", PHONE)
        assert [_where(d) for d in opened.step.diagnostics] == [expected]
        assert opened.step.document is not None and opened.step.data == data
        assert opened.page is not None
        tap = opened.page.tap("0.3")  # the page's button: a tap on a page that did not load is no crash
        assert tap.document is not None and tap.handled == []
        assert [d.code for d in tap.diagnostics] == ["PAGE005" if expected[0] == "PAGE003" else "PAGE002"]
        opened.page.close()
    finally:
        rt.close()


def test_a_page_that_spins_is_stopped(tmp_path: Path) -> None:
    js = "Page({ data: { n: 0 }, onLoad() { for (;;) {} } })\n"
    rt = _runtime(_project_with(tmp_path, js), tmp_path / "state")
    try:
        opened = open_page(rt, "/pages/order/detail", PHONE, slice_timeout_s=0.3)
        assert [d.code for d in opened.step.diagnostics] == ["PAGE016"]
        assert opened.step.document is not None  # the WXML with the data it had
        assert opened.page is not None
        tap = opened.page.tap("0.3")
        assert [d.code for d in tap.diagnostics] == ["PAGE016"] and tap.document is not None
        opened.page.close()
    finally:
        rt.close()


def test_a_route_without_page_files_is_page001(runtime: ApiRuntime) -> None:
    opened = open_page(runtime, "/pages/gone/index?x=1", PHONE)
    assert opened.page is None and opened.step.document is None
    assert [(d.code, d.file, d.message) for d in opened.step.diagnostics] == [
        (
            "PAGE001",
            "pages/gone/index.wxml",
            "the project pages has no pages/gone/index.wxml to render /pages/gone/index",
        )
    ]


def test_the_query_is_decoded_as_on_load_sees_it() -> None:
    assert parse_query("/pages/a?x=1&name=%E6%8B%BF%E9%93%81&empty=") == {"x": "1", "name": "拿铁", "empty": ""}


def test_app_calls_page_events_unknown_tags_and_a_broken_json_are_reported(tmp_path: Path) -> None:
    js = (
        "const app = getApp()\n"
        "Page({\n"
        "  data: { who: '' },\n"
        "  onLoad(query) { this.setData({ who: app.globalData.user || query.who }) },\n"
        "  onPageScroll() {},\n"
        "})\n"
    )
    project = _project_with(tmp_path, js)
    page = project / "pages" / "order"
    (page / "detail.json").write_text('{"usingComponents": ', encoding="utf-8")
    (page / "detail.wxml").write_text("<view>\n  <swiper><text>{{who}}</text></swiper>\n</view>\n", encoding="utf-8")
    rt = _runtime(project, tmp_path / "state")
    try:
        opened = open_page(rt, "/pages/order/detail?who=Mei", PHONE)
        assert [_where(d) for d in opened.step.diagnostics] == [
            ("PAGE015", "pages/order/detail.js", 1, 13),
            ("PAGE008", "pages/order/detail.js", 5, 3),
            ("PAGE014", "pages/order/detail.json", 1, 21),
            ("PAGE017", "pages/order/detail.wxml", 2, 4),
        ]
        assert opened.step.data == {"who": "Mei"}
        assert ">Mei<" in _html(opened)
        assert opened.page is not None
        opened.page.close()
    finally:
        rt.close()


def test_a_loaded_page_collects_cycles_at_quickjs_default(runtime: ApiRuntime) -> None:
    """A page lives on between taps, as a card does: once loaded, its context no longer waits for
    1/8 of its memory limit before collecting cycles."""
    opened = open_page(runtime, "/pages/order/detail?orderId=T-8&cups=1", PHONE)
    assert opened.page is not None
    try:
        vm = opened.page.vm
        assert vm is not None and vm.session._native is not None
        assert vm.session._native.gc_threshold == 256 << 10
    finally:
        opened.page.close()
