"""Skills inside a mini-program project: shared code under the subpackage root, what is not skill
code, and the same boundary in check, call, cards and serve.

The fixture (tests/fixtures/projects/shared-code) has the form published skills use: a
project.config.json whose miniprogramRoot holds app.json, one subpackage root ``skills/`` with two
skills, shared code in ``skills/_shared/`` required as ``../_shared/...``, a skill that reaches out
of the subpackage (``../../utils/util``), and a skill folder that ships cloudfunctions/ and tests/.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import shutil
from pathlib import Path

import pytest

from skillc.check import check_path, check_skill
from skillc.diagnostics import Diagnostic, DiagnosticSink
from skillc.frontend.modpaths import CodeRoot
from skillc.frontend.package import load_skill
from skillc.frontend.project import find_project
from skillc.runtime.api.api_runtime import ApiRuntime
from skillc.runtime.cards.card_host import CardHost
from skillc.runtime.config import RuntimeConfig

PROJECT = Path(__file__).parent / "fixtures" / "projects" / "shared-code"
SKILLS = PROJECT / "miniprogram" / "skills"
ORDERS = SKILLS / "orders"
NOT_CODE = (
    "1 JavaScript file not reachable from index.js or a component's index.js is not skill code: "
    "only compiled, as WeChat's upload compiles every file: tests/list.test.js"
)
CLOUD = (
    "cloudfunctions/ holds cloud functions (2 JavaScript files), Node code deployed to WeChat's cloud "
    "on its own: not compiled or checked as skill code"
)
MENU_ESCAPES = "todaysMenu threw Error: require('../../utils/util') escapes the subpackage root skills/ at index.js:3."
ALONE_HINT = (
    "inside a mini-program project a skill may require files under its subpackage root (such as "
    "../_shared/): skillc finds the project from app.json above the skill folder"
)


def _found(diags: list[Diagnostic]) -> list[tuple[str, str | None, int | None, str]]:
    return [(d.code, d.file, d.span.line if d.span else None, d.message) for d in diags]


def _copy(tmp_path: Path) -> Path:
    dest = tmp_path / "shared-code"
    shutil.copytree(PROJECT, dest)
    return dest


# -- the boundary, statically ---------------------------------------------------------------------


def test_a_project_check_accepts_shared_code_and_refuses_a_reach_out_of_the_subpackage() -> None:
    reports = {r.name: r for r in check_path(PROJECT)}
    assert sorted(reports) == ["app.json", "menu", "orders"]
    assert _found(reports["orders"].diagnostics) == [
        ("SKL011", None, None, NOT_CODE),
        ("SKL012", "cloudfunctions", None, CLOUD),
    ]
    menu = reports["menu"].diagnostics
    assert _found(menu) == [
        ("JS003", "index.js", 3, "require('../../utils/util') escapes the subpackage root skills/"),
    ]
    assert menu[0].hint == "move the shared code under the subpackage root skills/ (for example into _shared/)"
    assert menu[0].span is not None and menu[0].span.column == 29


def test_a_skill_folder_inside_a_project_is_recognised_from_its_own_path() -> None:
    report = check_skill(ORDERS)
    assert _found(report.diagnostics) == [
        ("SKL011", None, None, NOT_CODE),
        ("SKL012", "cloudfunctions", None, CLOUD),
    ]
    pkg = report.package
    assert pkg is not None and pkg.project is not None
    assert pkg.project.root == PROJECT / "miniprogram"
    assert pkg.code_root == CodeRoot(("orders",), "the subpackage root skills/")
    # the shared files are read under the relative names that reach them, and checked as skill code
    shared = sorted(p for p in pkg.sources if p.startswith("../"))
    assert shared == ["../_shared/format/index.js", "../_shared/money.js"]
    assert pkg.api_files == {"index.js", "apis/list.js", "../_shared/money.js", "../_shared/format/index.js"}
    assert pkg.card_files == {"components/order-list/index.js", "../_shared/money.js"}


def test_the_same_skill_alone_refuses_the_shared_requires_and_names_the_project_form(tmp_path: Path) -> None:
    alone = tmp_path / "orders"
    shutil.copytree(ORDERS, alone)
    report = check_skill(alone)
    assert _found(report.diagnostics) == [
        ("SKL011", None, None, NOT_CODE),
        ("JS003", "apis/list.js", 1, "require('../../_shared/format') escapes the skill folder"),
        ("SKL012", "cloudfunctions", None, CLOUD),
        ("JS003", "components/order-list/index.js", 1, "require('../../../_shared/money') escapes the skill folder"),
        ("JS003", "index.js", 2, "require('../_shared/money') escapes the skill folder"),
    ]
    assert {d.hint for d in report.diagnostics if d.code == "JS003"} == {ALONE_HINT}


def test_a_project_is_found_upward_only_where_the_skill_is_inside_the_mini_program(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    assert find_project(root / "miniprogram" / "skills" / "orders") is not None
    beside = root / "cloud-skill"  # next to miniprogram/, under the project folder: not its code
    shutil.copytree(ORDERS, beside)
    assert find_project(beside) is None
    assert find_project(tmp_path) is None


def test_a_symlink_out_of_the_subpackage_root_is_not_followed(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    shared = root / "miniprogram" / "skills" / "_shared"
    (shared / "money.js").unlink()
    os.symlink(root / "miniprogram" / "utils" / "util.js", shared / "money.js")
    report = check_skill(root / "miniprogram" / "skills" / "orders")
    codes = [(d.code, d.file) for d in report.diagnostics]
    assert ("SKL008", "../_shared/money.js") in codes
    assert "../_shared/money.js" not in (report.package.sources if report.package else {})
    message = next(d.message for d in report.diagnostics if d.code == "SKL008")
    assert message.startswith('symbolic link "../_shared/money.js" points outside the subpackage root skills/ (')


def test_require_cannot_name_a_file_above_the_code_root_by_any_path(tmp_path: Path) -> None:
    root = CodeRoot(("a",), "the subpackage root skills/")
    files = {"index.js", "../_shared/x.js", "../b/y.js"}
    assert root.resolve("../_shared/x", "index.js", files) == "../_shared/x.js"
    assert root.resolve("../a/index", "apis/z.js", files) == "missing"  # ../a from apis/ is apis' sibling
    assert root.resolve("../../a/index", "apis/z.js", files) == "index.js"  # back into the skill: one name
    assert root.resolve("../b/y", "../_shared/x.js", files) == "../b/y.js"
    assert root.resolve("../../x", "index.js", files) == "escapes"
    assert root.resolve("../../../x", "../_shared/x.js", files) == "escapes"
    assert root.resolve("express", "index.js", files) == "bare"
    assert CodeRoot().resolve("../x", "index.js", {"../x.js"}) == "escapes"


# -- the boundary at run time ---------------------------------------------------------------------


@pytest.fixture
def runtime(tmp_path: Path) -> ApiRuntime:
    pkg = load_skill(ORDERS, DiagnosticSink())
    assert pkg is not None
    return ApiRuntime(pkg, RuntimeConfig(state_dir=tmp_path / "state"))


def test_an_api_runs_with_shared_code(runtime: ApiRuntime) -> None:
    try:
        outcome = asyncio.run(runtime.call("listOrders", {}))
    finally:
        runtime.close()
    assert not outcome.result.is_error, outcome.result.text
    assert outcome.result.text == "A1: ¥12.50; B2: ¥3.00"
    assert [c.text for c in outcome.console] == ["orders loaded; a coffee costs ¥12.50"]


def test_a_require_out_of_the_subpackage_fails_at_run_time_with_the_boundary(tmp_path: Path) -> None:
    pkg = load_skill(SKILLS / "menu", DiagnosticSink())
    assert pkg is not None
    runtime = ApiRuntime(pkg, RuntimeConfig(state_dir=tmp_path / "state"))
    try:
        outcome = asyncio.run(runtime.call("todaysMenu", {}))
    finally:
        runtime.close()
    assert outcome.result.is_error
    assert outcome.result.text == MENU_ESCAPES


def test_cloud_functions_are_not_loaded_into_the_api_vm(runtime: ApiRuntime) -> None:
    # express is not a module of the skill: had the loader defined cloudfunctions/, listing would still
    # work (it is never required), but the code the VM holds is only what index.js reaches
    try:
        assert sorted(path for path, _ in runtime.code.scripts) == [
            "../_shared/format/index.js",
            "../_shared/money.js",
            "apis/list.js",
            "index.js",
        ]
    finally:
        runtime.close()


def test_a_card_renders_with_shared_code(runtime: ApiRuntime) -> None:
    counter = itertools.count(1)
    host = CardHost(runtime, card_ids=lambda: f"card-{next(counter)}")
    loop = asyncio.new_event_loop()
    try:
        out = loop.run_until_complete(host.call("listOrders", {}, runtime.context(session_id="s")))
        assert out.card is not None, out.diagnostics
        texts = [n.text for n in out.card.document.root.walk() if n.text and n.text.strip()]
        assert texts == ["A1 ¥12.50", "B2 ¥3.00"]
        loop.run_until_complete(host.close())
    finally:
        loop.close()
        runtime.close()


# -- serve: a project folder serves every skill it lists, each with its own boundary --------------


def test_serve_a_project_with_shared_code(tmp_path: Path) -> None:
    from mcp.client import Client

    from skillc.server.runner import ServeHandle, ServeOptions

    async def session(url: str) -> tuple[list[str], str, str]:
        async with Client(url, mode="legacy") as client:
            tools = sorted(t.name for t in (await client.list_tools()).tools)
            orders = await client.call_tool("listOrders", {})
            menu = await client.call_tool("todaysMenu", {})
            return tools, orders.content[0].text, menu.content[0].text

    options = ServeOptions(paths=(PROJECT,), port=0, runtime=RuntimeConfig(state_dir=tmp_path / "state"))
    with ServeHandle.start(options) as handle:
        tools, orders, menu = asyncio.run(session(handle.url))
    assert [t for t in tools if not t.startswith(("skillc", "ui_control__"))] == ["listOrders", "todaysMenu"]
    assert orders == "A1: ¥12.50; B2: ¥3.00"
    assert menu == MENU_ESCAPES


def test_skillc_call_and_build_take_the_skill_path_inside_the_project(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from skillc.cli import main

    runner = CliRunner()
    out = runner.invoke(main, ["call", str(ORDERS), "listOrders", "--state-dir", str(tmp_path / "s"), "--json"])
    assert out.exit_code == 0, out.output
    assert '"A1: ¥12.50; B2: ¥3.00"' in out.output
    out = runner.invoke(main, ["build", str(ORDERS), "-o", str(tmp_path / "build")])
    assert out.exit_code == 0, out.output


def test_get_app_is_refused_where_the_skill_code_calls_it(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    index = root / "miniprogram" / "skills" / "orders" / "index.js"
    index.write_text(
        index.read_text(encoding="utf-8") + "const app = getApp()\n// getApp() in a comment\nwx.getAppBaseInfo()\n",
        encoding="utf-8",
    )
    report = check_skill(index.parent)
    found = [(d.code, d.file, d.span.line if d.span else None, d.message) for d in report.diagnostics]
    assert [f for f in found if f[0] == "JS009"] == [
        (
            "JS009",
            "index.js",
            7,
            "getApp() is not available to a skill: skills run in an independent subpackage, without the app",
        )
    ]


def test_an_at_alias_require_is_refused_with_the_relative_path_as_the_fix(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    index = root / "miniprogram" / "skills" / "orders" / "index.js"
    index.write_text(index.read_text(encoding="utf-8") + "const fmt = require('@/_shared/money')\n", encoding="utf-8")
    report = check_skill(index.parent)
    found = [(*_found([d])[0], d.hint) for d in report.diagnostics if d.code == "JS003"]
    assert found == [
        (
            "JS003",
            "index.js",
            7,
            "require('@/_shared/money'): only relative paths inside the skill can be required",
            "WeChat refuses '@/' aliases in skills: require the file by its relative path",
        )
    ]
