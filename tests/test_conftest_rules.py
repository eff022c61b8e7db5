"""The rules tests/conftest.py sets for every run: what counts as CI, and one hypothesis profile.

The subprocess runs load tests/conftest.py as a plugin (-p tests.conftest) on a throwaway test
file, with a clean environment, so the real hooks read the real variables.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import settings

from tests import conftest
from tests.conftest import ROOT, ci_enabled


@pytest.mark.parametrize("value", ["true", "True", "1", "yes", "on", "false", "github"])
def test_any_non_empty_ci_value_is_ci(value: str) -> None:
    assert ci_enabled({"CI": value}) is True


@pytest.mark.parametrize("environ", [{}, {"CI": ""}, {"CI": "  "}, {"GITHUB_ACTIONS": "true"}])
def test_no_ci_value_is_not_ci(environ: dict[str, str]) -> None:
    assert ci_enabled(environ) is False


def test_require_skips_locally_and_fails_under_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(conftest, "IN_CI", False)
    with pytest.raises(pytest.skip.Exception, match=r"^wcc is missing$"):
        conftest.require(False, "wcc is missing")
    monkeypatch.setattr(conftest, "IN_CI", True)
    with pytest.raises(pytest.fail.Exception, match=r"required tool is missing: wcc is missing$"):
        conftest.require(False, "wcc is missing")
    conftest.require(True, "present")  # nothing happens when the tool is there


DRAW = """
import os
from hypothesis import given, settings, strategies as st

@given(st.integers(), st.text(max_size=5))
def test_draw(n, s):
    with open(os.environ["DRAWS"], "a", encoding="utf-8") as f:
        f.write(repr((n, s)) + "\\n")

def test_missing_tool():
    from tests.conftest import require
    require(False, "a tool this test pretends is missing")
"""


def _clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CI", conftest.SEED_ENV) and not k.startswith("PYTEST")}
    return {**env, **extra}


def _run(tmp_path: Path, name: str, *args: str, **env: str) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    test = tmp_path / "t" / "test_draw.py"
    test.parent.mkdir(exist_ok=True)
    test.write_text(DRAW, encoding="utf-8")
    draws = tmp_path / f"{name}.txt"
    command = [sys.executable, "-m", "pytest", "-p", "tests.conftest", "-p", "no:cacheprovider", "-rs", str(test)]
    env = _clean_env(DRAWS=str(draws), **env)
    done = subprocess.run([*command, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    return done, draws.read_text(encoding="utf-8").splitlines() if draws.exists() else []


def test_the_same_examples_run_with_and_without_ci(tmp_path: Path) -> None:
    local, local_draws = _run(tmp_path, "local")
    ci, ci_draws = _run(tmp_path, "ci", CI="1")
    _, again_draws = _run(tmp_path, "again")
    assert len(local_draws) >= 50
    assert local_draws == ci_draws == again_draws
    header = "hypothesis: profile 'skillc', derandomized"
    assert header in local.stdout and header in ci.stdout
    # The CI rule: the missing tool skips locally and fails under CI=1.
    assert local.returncode == 0 and "SKIPPED" in local.stdout
    assert ci.returncode == 1 and "CI is set but a required tool is missing" in ci.stdout


def test_a_seed_gives_other_examples_reproducibly(tmp_path: Path) -> None:
    _, default = _run(tmp_path, "default")
    first, seeded = _run(tmp_path, "seed-1", **{conftest.SEED_ENV: "1"})
    _, seeded_again = _run(tmp_path, "seed-1-again", CI="true", **{conftest.SEED_ENV: "1"})
    _, by_option = _run(tmp_path, "option-1", "--hypothesis-seed=1")
    _, other = _run(tmp_path, "seed-2", **{conftest.SEED_ENV: "2"})
    assert seeded == seeded_again == by_option
    assert seeded != default and seeded != other
    assert "hypothesis: profile 'skillc-seeded', seed 1 (rerun with SKILLC_HYPOTHESIS_SEED=1)" in first.stdout


def test_a_random_seed_is_named_in_the_header(tmp_path: Path) -> None:
    done, draws = _run(tmp_path, "random", **{conftest.SEED_ENV: "random"})
    [line] = [x for x in done.stdout.splitlines() if x.startswith("hypothesis: ")]
    seed = line.split("seed ")[1].split(" ")[0]
    _, replay = _run(tmp_path, "replay", **{conftest.SEED_ENV: seed})
    assert draws and replay == draws


def test_a_bad_seed_is_a_usage_error(tmp_path: Path) -> None:
    done, _ = _run(tmp_path, "bad", **{conftest.SEED_ENV: "often"})
    assert done.returncode == 4
    assert "SKILLC_HYPOTHESIS_SEED must be an integer or 'random', not 'often'" in done.stderr


def test_this_run_uses_the_project_profile() -> None:
    profile = settings.get_current_profile_name()
    assert profile in (conftest.PROFILE, conftest.SEEDED_PROFILE)
    assert settings.default.database is None and settings.default.deadline is None
    assert settings.default.derandomize is (profile == conftest.PROFILE)
