"""The backend registry: entry-point discovery, built-ins, plug-ins installed from a test, failures."""

from __future__ import annotations

import sys
import textwrap
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from skillc.backends.base import Backend, RenderOptions
from skillc.backends.cardspec_backend import CardSpecBackend
from skillc.backends.html_backend import HtmlBackend
from skillc.backends.json_backend import JsonBackend
from skillc.backends.registry import (
    BUILTIN_BACKENDS,
    GROUP,
    BackendError,
    available_backends,
    backend_entries,
    find_backend,
    get_backend,
    load_backends,
)
from skillc.diagnostics import DiagnosticSink, Severity
from tests.conftest import ROOT
from tests.test_backends_samples import LIGHT_375, payment_result

UPPER_MODULE = '''
"""A backend from outside skillc: it imports nothing from skillc."""


class UpperBackend:
    name = "upper"
    media_type = "text/plain"
    extension = ".txt"

    def render(self, doc, *, options=None):
        return doc.root.text_content().upper()
'''


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A directory on sys.path where a test 'installs' distributions; their modules are forgotten after."""
    monkeypatch.syspath_prepend(str(tmp_path))
    before = set(sys.modules)
    yield tmp_path
    for name in set(sys.modules) - before:
        if name.startswith("plugin_"):
            del sys.modules[name]


def install(site: Path, dist: str, entry_points: dict[str, str], modules: dict[str, str]) -> None:
    """What `pip install` leaves behind: a dist-info folder with METADATA and entry_points.txt."""
    info = site / f"{dist}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n", encoding="utf-8")
    lines = [f"[{GROUP}]"] + [f"{name} = {target}" for name, target in entry_points.items()]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    for module, source in modules.items():
        (site / f"{module}.py").write_text(textwrap.dedent(source), encoding="utf-8")


def test_builtins_are_available_in_sorted_order() -> None:
    assert {"cardspec", "html", "json"} <= set(available_backends())
    assert available_backends() == sorted(available_backends())


@pytest.mark.parametrize(
    ("name", "cls", "media_type", "extension"),
    [
        ("json", JsonBackend, "application/json", ".json"),
        ("cardspec", CardSpecBackend, "application/vnd.microsoft.card.adaptive+json", ".card.json"),
        ("html", HtmlBackend, "text/html", ".html"),
    ],
)
def test_get_backend_returns_the_builtin(name: str, cls: type, media_type: str, extension: str) -> None:
    backend = get_backend(name)
    assert isinstance(backend, cls)
    assert isinstance(backend, Backend)
    assert (backend.name, backend.media_type, backend.extension) == (name, media_type, extension)
    assert backend.render(payment_result(LIGHT_375)).strip()


def test_builtins_table_matches_the_entry_points_in_pyproject() -> None:
    # The registry repeats the built-ins for stale editable installs; the two must not drift.
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert pyproject["project"]["entry-points"][GROUP] == dict(BUILTIN_BACKENDS)


def test_unknown_backend_error_lists_the_available_names() -> None:
    with pytest.raises(BackendError) as caught:
        get_backend("pdf")
    diag = caught.value.diagnostic
    assert diag.code == "RND101"
    assert diag.severity is Severity.ERROR
    assert diag.message == f"unknown backend 'pdf'; available: {', '.join(available_backends())}"
    assert str(caught.value) == diag.message


def test_find_backend_reports_instead_of_raising() -> None:
    sink = DiagnosticSink()
    assert find_backend("nope", sink) is None
    assert [d.code for d in sink] == ["RND101"]


def test_plugin_installed_from_a_test_is_found_and_runs(site: Path) -> None:
    install(site, "skillc_upper", {"upper": "plugin_upper:UpperBackend"}, {"plugin_upper": UPPER_MODULE})
    assert "upper" in available_backends()
    entry = backend_entries()["upper"]
    assert (entry.target, entry.source) == ("plugin_upper:UpperBackend", "skillc_upper")
    backend = get_backend("upper")
    assert isinstance(backend, Backend)
    assert backend.render(payment_result(LIGHT_375), options=RenderOptions()) == (
        "✓支付成功¥88取餐码A 042订单 NO.20260728001 · 请到柜台出示取餐码"
    )


def test_plugin_may_register_a_ready_instance(site: Path) -> None:
    install(
        site,
        "skillc_upper_instance",
        {"upper2": "plugin_upper_instance:BACKEND"},
        {"plugin_upper_instance": UPPER_MODULE + "\nBACKEND = UpperBackend()\n"},
    )
    assert get_backend("upper2").render(payment_result(LIGHT_375)).startswith("✓支付成功")


def test_broken_plugin_is_reported_and_the_others_still_load(site: Path) -> None:
    install(
        site,
        "skillc_broken",
        {"broken": "plugin_broken:Backend", "missing": "plugin_not_there:Backend"},
        {"plugin_broken": "import skillc_no_such_dependency\n"},
    )
    sink = DiagnosticSink()
    loaded = load_backends(sink)
    assert {"json", "cardspec", "html"} <= set(loaded)
    assert "broken" not in loaded and "missing" not in loaded
    messages = {d.message for d in sink}
    assert messages == {
        "backend 'broken' (plugin_broken:Backend from skillc_broken) failed to load:"
        " ModuleNotFoundError: No module named 'skillc_no_such_dependency'",
        "backend 'missing' (plugin_not_there:Backend from skillc_broken) failed to load:"
        " ModuleNotFoundError: No module named 'plugin_not_there'",
    }
    assert {d.code for d in sink} == {"RND102"}
    with pytest.raises(BackendError) as caught:
        get_backend("broken")
    assert caught.value.diagnostic.code == "RND102"


def test_plugin_raising_while_constructed_is_reported(site: Path) -> None:
    source = "class Boom:\n    def __init__(self):\n        raise RuntimeError('no licence')\n"
    install(site, "skillc_boom", {"boom": "plugin_boom:Boom"}, {"plugin_boom": source})
    sink = DiagnosticSink()
    assert find_backend("boom", sink) is None
    assert [(d.code, d.message) for d in sink] == [
        ("RND102", "backend 'boom' (plugin_boom:Boom from skillc_boom) failed to load: RuntimeError: no licence")
    ]


def test_object_that_is_not_a_backend_is_reported(site: Path) -> None:
    source = "class NoRender:\n    name = 'x'\n    media_type = 'text/plain'\n    extension = '.txt'\n"
    source += "class BadName:\n    name = 3\n    media_type = 't'\n    extension = '.t'\n"
    source += "    def render(self, doc, *, options=None):\n        return ''\n"
    install(
        site,
        "skillc_odd",
        {"norender": "plugin_odd:NoRender", "badname": "plugin_odd:BadName"},
        {"plugin_odd": source},
    )
    for name in ("norender", "badname"):
        sink = DiagnosticSink()
        assert find_backend(name, sink) is None
        assert [d.code for d in sink] == ["RND103"]
        assert f"backend {name!r} (plugin_odd:" in next(iter(sink)).message


def test_first_declaration_on_sys_path_wins_over_the_builtin_fallback(site: Path) -> None:
    # The built-in table only fills names nobody declared; a distribution earlier on sys.path
    # (the test's site is prepended) owns the name.
    install(site, "skillc_json_override", {"json": "plugin_upper:UpperBackend"}, {"plugin_upper": UPPER_MODULE})
    assert backend_entries()["json"].source == "skillc_json_override"
    assert get_backend("json").name == "upper"
