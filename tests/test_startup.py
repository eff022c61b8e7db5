"""Start-up: what `import skillc.cli` and `skillc check` load, each in a fresh interpreter.

Every command imports the phases it needs when it runs. A module-level import that drags the MCP
server, the runtime or a browser driver into `--help` or `check` goes unnoticed in a test process
that has them all loaded already, so these tests look at ``sys.modules`` of a new process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from .conftest import COFFEE, ROOT

# What serving, running and debugging need and `check` never does.
SERVER_STACK = ("mcp", "uvicorn", "starlette", "httpx", "anyio", "playwright", "sqlite3")
SKILLC_NOT_FOR_CHECK = (
    "skillc.server",
    "skillc.backends",
    "skillc.build",
    "skillc.ir.evaluate",
    "skillc.ir.diff",
    "skillc.runtime.api",
    "skillc.runtime.cards",
    "skillc.runtime.flows",
)


def _loaded(
    code: str, out: Path, *argv: str, cache_home: Path | None = None
) -> tuple[set[str], subprocess.CompletedProcess[str]]:
    """Run ``code`` in a fresh interpreter and return the modules loaded when it exits (whatever
    the exit status: click ends every command with sys.exit). ``cache_home``: its XDG_CACHE_HOME."""
    prelude = (
        "import atexit, json, sys\n"
        f"atexit.register(lambda: open({str(out)!r}, 'w').write(json.dumps(sorted(sys.modules))))\n"
    )
    env = dict(os.environ, XDG_CACHE_HOME=str(cache_home)) if cache_home is not None else None
    done = subprocess.run(
        [sys.executable, "-c", prelude + code, *argv], cwd=ROOT, capture_output=True, text=True, timeout=120, env=env
    )
    return set(json.loads(out.read_text())), done


def _offenders(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == n or m.startswith(n + ".") for n in names))


def test_import_cli_loads_only_click(tmp_path: Path) -> None:
    # --help, --version and shell completion import the CLI and nothing else.
    modules, done = _loaded("import skillc.cli", tmp_path / "modules.json")
    assert done.returncode == 0, done.stderr
    assert "skillc.cli" in modules and "click" in modules
    heavy = ("pydantic", "jsonschema", "lark", "quickjs", "tinycss2", "re2", "asyncio", *SERVER_STACK)
    assert _offenders(modules, heavy) == []
    assert _offenders(modules, ("skillc.check", "skillc.diagnostics", "skillc.frontend", "skillc.ir")) == []
    assert _offenders(modules, ("skillc.runtime", *SKILLC_NOT_FOR_CHECK)) == []


def test_help_runs_without_the_phases(tmp_path: Path) -> None:
    code = "import runpy; sys.argv = ['skillc', '--help']; runpy.run_module('skillc', run_name='__main__')"
    modules, done = _loaded(code, tmp_path / "modules.json")
    assert done.returncode == 0, done.stderr
    assert "Commands:" in done.stdout and "check" in done.stdout
    assert _offenders(modules, ("pydantic", "skillc.diagnostics", "skillc.frontend", *SERVER_STACK)) == []


CHECK = "import runpy; sys.argv = ['skillc', *sys.argv[1:]]; runpy.run_module('skillc', run_name='__main__')"


def test_check_loads_no_server_runtime_or_browser(tmp_path: Path) -> None:
    # An empty user cache: every script is compiled.
    modules, done = _loaded(CHECK, tmp_path / "modules.json", "check", str(COFFEE), cache_home=tmp_path / "cache")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "checked 1 skill: 0 errors" in done.stdout
    # It did check: templates were lowered, styles compiled, scripts compiled with QuickJS.
    assert {"skillc.ir.lower", "skillc.ir.styles", "skillc.runtime.sandbox.syntax", "quickjs"} <= modules
    assert _offenders(modules, SERVER_STACK) == []
    assert _offenders(modules, SKILLC_NOT_FOR_CHECK) == []
    # Its schemas are plainly valid (frontend/plain_schema.py): jsonschema is never needed.
    assert _offenders(modules, ("jsonschema",)) == []


def test_check_of_unchanged_scripts_loads_no_quickjs(tmp_path: Path) -> None:
    # A check the user cache cannot replay (another format) still finds every script's clean
    # verdict there: the JavaScript engine and the runtime's configuration are never imported.
    cache = tmp_path / "cache"
    first, done = _loaded(CHECK, tmp_path / "first.json", "check", str(COFFEE), cache_home=cache)
    assert done.returncode == 0 and "quickjs" in first, done.stderr
    second, again = _loaded(CHECK, tmp_path / "second.json", "check", "--format", "json", str(COFFEE), cache_home=cache)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["errors"] == 0
    assert "skillc.frontend.wxml" in second  # it did check
    assert _offenders(second, ("quickjs", "_quickjs", "skillc.runtime.sandbox", "skillc.runtime.config")) == []
    # The committed parser tables: lark never analyses the grammar in a check.
    assert "skillc.frontend.wxml.generated" in second


def test_a_repeated_check_loads_no_compiler(tmp_path: Path) -> None:
    # The same check of the same files again is replayed from the user cache (skillc/check_cache.py):
    # the same output and status, with neither the phases nor pydantic loaded.
    cache = tmp_path / "cache"
    _first, done = _loaded(CHECK, tmp_path / "first.json", "check", str(COFFEE), cache_home=cache)
    assert done.returncode == 0, done.stderr
    second, again = _loaded(CHECK, tmp_path / "second.json", "check", str(COFFEE), cache_home=cache)
    assert (again.returncode, again.stdout, again.stderr) == (done.returncode, done.stdout, done.stderr)
    assert _offenders(second, ("pydantic", "lark", "tinycss2", "quickjs", "skillc.check", "skillc.frontend")) == []
    assert _offenders(second, ("skillc.diagnostics", "skillc.ir", "skillc.runtime", *SERVER_STACK)) == []
