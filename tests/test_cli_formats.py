"""`skillc check --format text|json|github|sarif`, colour, `-q`, and the renderers behind them.

tests/sarif-schema-2.1.0.json is the official OASIS SARIF 2.1.0 schema (errata01, the text of
Schemata/sarif-schema-2.1.0.json in the OASIS TC's sarif-spec repository), vendored unchanged so
the test needs no network.
"""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner

from skillc import __version__
from skillc.cli import main, use_color
from skillc.diagnostics import CATALOGUE, Diagnostic, Span, render_github, render_text, sarif_log

from .conftest import COFFEE, FIXTURES, ROOT

SARIF_SCHEMA = json.loads((Path(__file__).parent / "sarif-schema-2.1.0.json").read_text("utf-8"))
BROKEN = FIXTURES / "broken-skills"


def invoke(*args: str, env: dict[str, str] | None = None, color: bool = False) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), env=env, color=color)
    return result.exit_code, result.stdout, result.stderr


def _diags() -> list[Diagnostic]:
    return [
        Diagnostic.make(
            "JSON003", 'duplicate key "a" (first at line 2, column 3)', file="mcp.json", span=Span.point(3, 3, 3)
        ),
        Diagnostic.make(
            "MCP017",
            "50% done, a: b",
            file="components/x/index.wxml",
            span=Span(line=1, column=2, end_line=3, end_column=4),
        ),
        Diagnostic.make("SKL007", "index.js is missing", hint="write it\nthen rerun"),
        Diagnostic.make("SRV003", "two skills, one API"),
    ]


# -- github --------------------------------------------------------------------------------------


def test_github_annotations_are_exact_and_escaped() -> None:
    assert render_github(_diags(), prefix="skills/a").splitlines() == [
        "::error file=skills/a,title=SKL007::index.js is missing%0Ahint: write it%0Athen rerun",
        "::notice file=skills/a,title=SRV003::two skills, one API",
        "::warning file=skills/a/components/x/index.wxml,line=1,col=2,endLine=3,endColumn=3,title=MCP017::"
        "50%25 done, a: b",
        '::error file=skills/a/mcp.json,line=3,col=3,endLine=3,endColumn=5,title=JSON003::duplicate key "a" '
        "(first at line 2, column 3)",
    ]
    # A property value escapes ',' and ':' too (a file name may hold them); no prefix, no file= for a file-less one.
    odd = Diagnostic.make("SKL009", "x", file="a,b:c.js", span=Span.point(1, 1))
    assert render_github([odd]) == "::error file=a%2Cb%3Ac.js,line=1,col=1,endLine=1,endColumn=1,title=SKL009::x\n"
    assert render_github([Diagnostic.make("SKL009", "y")]) == "::error title=SKL009::y\n"


def test_check_format_github_on_a_broken_skill() -> None:
    skill = BROKEN / "mcp-json-duplicate-key"
    code, out, err = invoke("check", "--format", "github", str(skill))
    assert code == 1
    assert (
        f"::error file={skill}/mcp.json,line=6,col=7,endLine=6,endColumn=19,title=JSON003::"
        'duplicate key "description" (first at line 5, column 7)'
        "%0Ahint: remove one of them; JSON.parse keeps only the last"
    ) in out.splitlines()
    assert all(line.startswith("::") for line in out.splitlines())  # stdout is workflow commands only
    assert err.strip().endswith("(failed)")


# -- sarif ---------------------------------------------------------------------------------------


def _validate(doc: object) -> None:
    jsonschema.Draft4Validator.check_schema(SARIF_SCHEMA)
    jsonschema.Draft4Validator(SARIF_SCHEMA, format_checker=jsonschema.FormatChecker()).validate(doc)


def test_vendored_schema_is_the_official_one() -> None:
    import hashlib

    blob = (Path(__file__).parent / "sarif-schema-2.1.0.json").read_bytes()
    assert hashlib.sha256(blob).hexdigest() == "c3b4bb2d6093897483348925aaa73af03b3e3f4bd4ca38cef26dcb4212a2682e"
    assert (
        SARIF_SCHEMA["id"]
        == "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
    )
    assert SARIF_SCHEMA["properties"]["version"]["enum"] == ["2.1.0"]


def test_sarif_log_regions_rules_and_levels() -> None:
    log = sarif_log([("skills/a b", _diags())], tool_version="9.9")
    _validate(log)
    runs: Any = log["runs"]
    [run] = runs
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == list(CATALOGUE)
    by_rule = {r["ruleId"]: r for r in run["results"]}
    dup = by_rule["JSON003"]
    assert rules[dup["ruleIndex"]]["id"] == "JSON003"
    assert dup["level"] == "error" and dup["message"] == {"text": 'duplicate key "a" (first at line 2, column 3)'}
    assert dup["locations"] == [
        {
            "physicalLocation": {
                "artifactLocation": {"uri": "skills/a%20b/mcp.json"},
                "region": {"startLine": 3, "startColumn": 3, "endLine": 3, "endColumn": 6},
            }
        }
    ]
    assert by_rule["MCP017"]["level"] == "warning" and by_rule["SRV003"]["level"] == "note"
    assert by_rule["SKL007"]["locations"] == [{"physicalLocation": {"artifactLocation": {"uri": "skills/a%20b"}}}]
    assert by_rule["SKL007"]["message"]["text"] == "index.js is missing\nhint: write it\nthen rerun"
    assert rules[list(CATALOGUE).index("SKL010")]["defaultConfiguration"] == {"level": "warning"}


@pytest.mark.parametrize(
    "target", [COFFEE, BROKEN / "mcp-json-duplicate-key", BROKEN / "component-file-missing", BROKEN / "not-a-skill"]
)
def test_check_format_sarif_validates_against_the_schema(target: Path) -> None:
    code, out, _err = invoke("check", "--format", "sarif", str(target))
    doc = json.loads(out)
    _validate(doc)
    [run] = doc["runs"]
    assert run["tool"]["driver"]["name"] == "skillc" and run["tool"]["driver"]["version"] == __version__
    errors = [r for r in run["results"] if r["level"] == "error"]
    assert code == (2 if target.name == "not-a-skill" else 1 if errors else 0)
    for result in run["results"]:
        uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        assert uri.startswith(str(target).lstrip("/")) or uri.startswith(str(target))


def test_sarif_of_a_project(tmp_path: Path) -> None:
    import shutil

    shutil.copytree(COFFEE, tmp_path / "skills" / "coffee-skill")
    (tmp_path / "app.json").write_text('{"agent": {"skills": [{"name": "c", "path": "skills/nope"}]}}', "utf-8")
    code, out, _err = invoke("check", "--format", "sarif", str(tmp_path))
    assert code == 1
    _validate(json.loads(out))


# -- colour and -q -------------------------------------------------------------------------------


def test_colour_in_text() -> None:
    [diag] = [d for d in _diags() if d.code == "JSON003"]
    coloured = render_text([diag], {"mcp.json": "{\n  'a': 1,\n  'a': 2\n}"}, prefix="s", color=True)
    assert coloured.splitlines() == [
        '\x1b[1ms/mcp.json:3:3:\x1b[0m \x1b[1;31merror[JSON003]\x1b[0m: duplicate key "a" (first at line 2, column 3)',
        " 3 |   'a': 2",
        "   | \x1b[1;31m  ^^^\x1b[0m",
    ]
    assert "\x1b[" not in render_text([diag], prefix="s")


def test_use_color_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    class Tty:
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    assert use_color("auto", Tty()) is True  # type: ignore[arg-type]
    assert use_color("never", Tty()) is False  # type: ignore[arg-type]
    monkeypatch.setenv("NO_COLOR", "1")
    assert use_color("auto", Tty()) is False  # type: ignore[arg-type]
    assert use_color("always", Tty()) is True  # type: ignore[arg-type]  # the flag overrides the variable
    monkeypatch.setenv("NO_COLOR", "")
    assert use_color("auto", Tty()) is True  # type: ignore[arg-type]  # an empty NO_COLOR is unset


def test_check_color_flag() -> None:
    skill = str(BROKEN / "mcp-json-duplicate-key")
    _code, out, _err = invoke("check", "--color", "always", skill, env={"NO_COLOR": "1"}, color=True)
    assert "\x1b[1;31merror[JSON003]\x1b[0m" in out
    _code, out, _err = invoke("check", "--color", "never", skill, color=True)
    assert "\x1b[" not in out
    _code, out, _err = invoke("check", skill, color=True)  # auto, and CliRunner's stdout is no terminal
    assert "\x1b[" not in out


def _on_a_terminal(*args: str, env: dict[str, str]) -> str:
    """Run skillc with its stdout on a pseudo-terminal, as a user's shell would."""
    leader, follower = pty.openpty()
    command = [sys.executable, "-m", "skillc", *args]
    with subprocess.Popen(command, stdout=follower, stderr=subprocess.DEVNULL, cwd=ROOT, env=env) as proc:
        os.close(follower)
        chunks: list[bytes] = []
        while True:
            ready, _, _ = select.select([leader], [], [], 60)
            if not ready:
                break
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO once the child closed its end
                break
            if not chunk:
                break
            chunks.append(chunk)
        proc.wait(60)
    os.close(leader)
    return b"".join(chunks).decode("utf-8")


def test_auto_colour_on_a_terminal_honours_no_color() -> None:
    skill = str(BROKEN / "mcp-json-duplicate-key")
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    assert "\x1b[1;31merror[JSON003]\x1b[0m" in _on_a_terminal("check", skill, env=env)
    assert "\x1b[" not in _on_a_terminal("check", skill, env={**env, "NO_COLOR": "1"})


def _error_and_warning(tmp_path: Path) -> Path:
    """The coffee skill with one error (a broken expression) and one warning (wx:for without wx:key)."""
    import shutil

    skill = tmp_path / "coffee"
    shutil.copytree(COFFEE, skill)
    wxml = skill / "components" / "drink-list" / "index.wxml"
    text = wxml.read_text("utf-8").replace(' wx:key="id"', "").replace("{{title}}", "{{title +}}")
    wxml.write_text(text, "utf-8")
    return skill


def test_quiet_prints_errors_only(tmp_path: Path) -> None:
    assert invoke("check", "-q", str(COFFEE))[:2] == (0, "")
    skill = _error_and_warning(tmp_path)
    code, out, _err = invoke("check", str(skill))
    heads = [line for line in out.splitlines() if "[" in line and "]: " in line]
    assert code == 1 and {"error[EXPR001]", "warning[TPL010]"} <= {h.split(": ")[1] for h in heads}, out
    code, out, _err = invoke("check", "-q", str(skill))
    assert code == 1
    heads = [line for line in out.splitlines() if "[" in line and "]: " in line]
    assert [h.split(": ")[1] for h in heads] == ["error[EXPR001]"], out
    assert out.splitlines()[-1].startswith("checked 1 skill: 1 error")
    code, out, _err = invoke("check", "-q", "--format", "json", str(skill))
    [unit] = json.loads(out)["units"]
    assert [d["code"] for d in unit["diagnostics"]] == ["EXPR001"]
    code, out, _err = invoke("check", "-q", "--format", "github", str(skill))
    assert [line.split("title=")[1].split("::")[0] for line in out.splitlines()] == ["EXPR001"]


def test_a_diagnostic_without_a_file_is_located_at_the_skill() -> None:
    code, out, _err = invoke("check", str(BROKEN / "missing-index-js"))
    assert code == 1
    assert f"{BROKEN / 'missing-index-js'}: error[SKL007]: index.js is missing" in out.splitlines()
    # With no skill to name there is no location at all, never a placeholder.
    assert render_text([Diagnostic.make("SKL007", "index.js is missing")]) == "error[SKL007]: index.js is missing\n"


def test_build_colours_its_diagnostics_on_request(tmp_path: Path) -> None:
    skill = str(_error_and_warning(tmp_path))
    out = str(tmp_path / "out")
    _code, text, _err = invoke("build", skill, "-o", out, "--backend", "json", "--color", "always", color=True)
    assert "\x1b[1;31merror[EXPR001]\x1b[0m" in text and "\x1b[1;33mwarning[TPL010]\x1b[0m" in text
    _code, text, _err = invoke("build", skill, "-o", out, "--backend", "json", color=True)
    assert "error[EXPR001]" in text and "\x1b[" not in text


def test_readme_documents_the_output_options() -> None:
    readme = (ROOT / "README.md").read_text("utf-8")
    for text in (
        r"--format text\|json\|github\|sarif",
        r"--color auto\|always\|never",
        "[-q]",
        r"--result FILE [--args JSON]",
        r"--format text\|json]",
        "`NO_COLOR`",
    ):
        assert text in readme, text
