"""`skillc run` and `skillc render --result` print the card VM's own console (mount, taps), with
file:line, as `skillc call` prints an API's."""

from __future__ import annotations

import json
import re
from pathlib import Path

from .conftest import FIXTURES
from .test_cli_commands import invoke

SKILL = FIXTURES / "cards" / "console-skill"
STAMP = r"\d\d:\d\d:\d\d\.\d\d\d"


def test_run_prints_the_api_and_the_card_console_of_each_step() -> None:
    code, out, _err = invoke("run", str(SKILL), "--script", str(SKILL / "flows" / "greet.json"))
    assert code == 0, out
    call, tap = out.split("[2] ")
    assert re.search(rf"\n    console:\n      {STAMP} log   index\.js:4  api greets Lin\n", call)
    assert re.search(rf"\n  card console:\n    {STAMP} log   components/greeting/index\.js:10  card attached\n", call)
    assert re.search(
        rf"\n  card console:\n    {STAMP} warn  components/greeting/index\.js:16  greeting tapped 1\n", tap
    )
    assert "card attached" not in tap  # each line once, in the step that logged it


def test_run_json_carries_the_card_console_per_step() -> None:
    code, out, _err = invoke("run", str(SKILL), "--script", str(SKILL / "flows" / "greet.json"), "--format", "json")
    assert code == 0, out
    first, second = json.loads(out)
    assert [(c["level"], c["text"], c["file"], c["line"]) for c in first["console"]] == [
        ("log", "card attached", "components/greeting/index.js", 10)
    ]
    assert [(c["level"], c["text"]) for c in second["console"]] == [("warn", "greeting tapped 1")]


def test_render_result_prints_the_card_console_on_stderr(tmp_path: Path) -> None:
    result = tmp_path / "result.json"
    result.write_text(json.dumps({"content": [{"type": "text", "text": "hi"}], "structuredContent": {"name": "Mo"}}))
    code, out, err = invoke("render", str(SKILL), "greeting", "--result", str(result), "--backend", "json")
    assert code == 0, err
    assert re.fullmatch(rf"card console:\n  {STAMP} log   components/greeting/index\.js:10  card attached\n", err)
    assert "card attached" not in out  # stdout stays the rendered card alone
    assert json.loads(out)["root"]["type"] == "view"
