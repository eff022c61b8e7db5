"""The bench scripts run where `make bench` runs them: bench/frontend.py with a wcc binary that npm
installed without its execute bit, and bench/growth.py at small sizes. Speed is not asserted."""

from __future__ import annotations

import dataclasses
import importlib.util
import itertools
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import ROOT, require

BENCH = ROOT / "bench"
EXEC_BITS = stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH


def load_bench(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there while it runs
    spec.loader.exec_module(module)
    return module


@pytest.mark.node
def test_frontend_bench_restores_the_execute_bit_of_wcc(
    peers_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    frontend = load_bench("frontend")
    installed = peers_dir / "miniprogram-compiler" / "bin" / "linux" / "wcc"
    require(installed.is_file(), f"{installed} is missing (make peers)")
    assert installed == frontend.WCC  # the bench looks where npm puts it
    wcc = tmp_path / "wcc"
    shutil.copyfile(installed, wcc)  # copyfile: contents only, mode 0o644 as npm leaves it
    os.chmod(wcc, 0o644)
    assert os.stat(wcc).st_mode & EXEC_BITS == 0
    seconds = frontend.wcc_seconds(frontend.generated_template(5_000), binary=wcc)
    assert seconds is not None and seconds > 0
    assert os.stat(wcc).st_mode & EXEC_BITS == EXEC_BITS
    assert os.stat(wcc).st_mode & 0o777 == 0o755  # only the execute bits were added
    out = capsys.readouterr().out
    assert out.count("had no execute bit") == 1
    # Once set, nothing more is said.
    assert frontend.resolve_wcc(wcc) == wcc
    assert "execute bit" not in capsys.readouterr().out


def test_frontend_bench_without_peers_skips_wcc(tmp_path: Path) -> None:
    frontend = load_bench("frontend")
    assert frontend.resolve_wcc(tmp_path / "missing" / "wcc") is None
    assert frontend.wcc_seconds("<view/>", binary=tmp_path / "missing" / "wcc") is None


def test_growth_bench_prints_per_node_cost() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH / "growth.py"), "--sizes", "20,200", "--repeat", "1", "--paired"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if "us/node" in line]
    assert len(lines) == 2, done.stdout
    assert lines[0].split()[:2] == ["20", "items"] and lines[1].split()[:2] == ["200", "items"]
    assert "ratio 1.00x / 1.00x" in lines[0]  # the 20-item cost is the baseline
    assert done.stdout.count("setData one field") == 2
    assert done.stdout.count("peak RSS") >= 2
    # --paired: only the larger size is paired with renders of the smallest, one ratio per round
    # (200 items get 10 rounds at --repeat 1).
    paired = [line for line in done.stdout.splitlines() if "paired with" in line]
    assert len(paired) == 1, done.stdout
    line = r"paired with 20-item renders just before each: CPU/node ratio \d+\.\d\dx \(median of 10 rounds, "
    assert re.search(line, paired[0]), paired[0]


SCORECARD_ROWS = [str(n) for n in range(1, 12)]


def scorecard(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(BENCH / "scorecard.py"), "--quick", *args],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )


def table_rows(out: str) -> list[list[str]]:
    """The scorecard's data rows, split into cells (the header and its rule left out)."""
    rows = [
        [c.strip() for c in line.strip().strip("|").split("|")] for line in out.splitlines() if line.startswith("| ")
    ]
    assert rows and rows[0][0] == "case", out
    return rows[2:]


def is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def test_scorecard_prints_every_row_with_numbers() -> None:
    done = scorecard()
    assert done.returncode == 0, done.stdout + done.stderr
    assert "load average" in done.stdout and "python 3." in done.stdout
    rows = table_rows(done.stdout)
    assert sorted({r[0].split()[0] for r in rows}, key=int) == SCORECARD_ROWS, done.stdout
    for case, ours_wall, ours_cpu, peer, peer_wall, peer_cpu, ratio_wall, ratio_cpu, goal, met in rows:
        assert is_number(ours_wall), case
        assert is_number(ours_cpu) or case.endswith("p99 ms"), case  # a percentile has no CPU form
        if peer.endswith(")") and "skipped (" in peer:
            assert peer_wall == peer_cpu == ratio_wall == "-", case
        else:
            assert is_number(peer_wall), case
            assert ratio_wall.endswith("x") and is_number(ratio_wall[:-1]), case
            assert ratio_cpu == "-" or is_number(ratio_cpu.removesuffix("x")), case
        assert goal and met in ("yes", "no", "-"), case


def test_scorecard_without_peers_skips_them_and_exits_0(tmp_path: Path) -> None:
    done = scorecard("--rows", "1,10", "--peers", str(tmp_path / "missing"))
    assert done.returncode == 0, done.stdout + done.stderr
    rows = table_rows(done.stdout)
    assert [r[0].split()[0] for r in rows] == ["1", "1", "10"], done.stdout
    for row in rows:
        assert is_number(row[1]) and is_number(row[2]), row
        assert "skipped (" in row[3] and row[4] == "-", row
    assert "wcsc not installed" in rows[2][3]


def test_scorecard_rejects_unknown_rows() -> None:
    done = scorecard("--rows", "12")
    assert done.returncode == 2 and "--rows" in done.stderr


def test_serve_load_quick_compares_one_and_two_workers() -> None:
    env = {k: v for k, v in os.environ.items() if k != "SKILLC_STATE_URL"}  # the SQLite half only
    done = subprocess.run(
        [sys.executable, str(BENCH / "serve_load.py"), "--quick"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env=env,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert [line for line in out.splitlines() if line.startswith("== ")] == [
        "== sqlite store, 1 worker",
        "== sqlite store, 2 workers",
        "== workers",
    ]
    assert out.count("  completed 200, failed 0, lost 0") == 2
    rss = [line for line in out.splitlines() if line.startswith("  RSS per worker after the run: ")]
    assert [line.count(" MB") for line in rss] == [1, 2]  # one figure per worker
    summary = out.splitlines()[-1]
    assert re.fullmatch(r"  sqlite, legacy: 2 workers \d+ calls/s vs 1 worker \d+ calls/s: \d+\.\d\dx", summary), (
        summary
    )


def test_callpath_prints_cpu_per_call_of_each_kind_beside_the_bare_sdk_tool() -> None:
    # The baseline is this tree itself: the point is that a third server runs, interleaved, labelled.
    done = subprocess.run(
        [sys.executable, str(BENCH / "callpath.py"), "--quick", "--baseline", str(ROOT), "--threads"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    rows = {
        m.group(1): float(m.group(3))
        for m in re.finditer(r"^  (\S+) +(\d+\.\d\d) +\d+\.\d\d +(\d+\.\d\d)x +\d+ +\d+ +\d+$", done.stdout, re.M)
    }
    assert set(rows) == {"card", "card@base", "apps", "apps@base", "plain", "plain@base", "bare"}, done.stdout
    assert rows["bare"] == 1.0  # the ratio column is against the bare SDK tool
    assert re.search(r"^  goal: <= 2x the bare SDK tool: (met|missed) \(worst: \w+\)$", done.stdout, re.M)
    # --threads: a line per kind, each part a thread name and its CPU ms per call (a thread that
    # used less than a clock tick over the whole run is left out; a kind may show none: "-").
    by_thread = done.stdout.split("  by thread, CPU ms per call (clock ticks of 10 ms summed over every round):\n")
    assert len(by_thread) == 2, done.stdout
    lines = by_thread[1].splitlines()[: len(rows)]
    assert [line.split()[0] for line in lines] == list(rows), done.stdout
    for line in lines:
        shown = line.split(None, 1)[1]
        parts = re.findall(r"(event loop|other|skillc-[a-z]+(?:-[a-z]+)*) (\d+\.\d\d)", shown)
        assert shown == "-" or "  ".join(f"{name} {ms}" for name, ms in parts) == shown, line
    loaded = re.findall(
        r"^  (\S+) +\d+ calls/s +\d+ calls per server CPU-s  p99 [\d.]+ ms  \d+ context switches per call$",
        done.stdout,
        re.M,
    )
    assert loaded == ["card", "card@base", "bare"], done.stdout


def test_callpath_distinct_gives_every_skillc_call_arguments_of_its_own() -> None:
    callpath = load_bench("callpath")
    callpath._nonces = itertools.count(1)
    try:
        args = [callpath.request(kind, 1)[0]["params"]["arguments"] for kind in ("card", "apps", "plain", "card")]
        assert [a["keyword"] for a in args] == ["latte"] * 4
        assert len({a["nonce"] for a in args}) == 4  # no two cards mount on the same notifications
        assert callpath.request("bare", 1)[0]["params"]["arguments"] == {"keyword": "latte"}
    finally:
        callpath._nonces = None
    assert "nonce" not in callpath.request("card", 1)[0]["params"]["arguments"]


def test_serve_load_rejects_bad_worker_counts() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH / "serve_load.py"), "--workers", "0,2"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == (
        "serve_load.py: error: --workers 0,2: comma-separated numbers from 1, e.g. 1,2"
    )


def canned(case: str, met: bool | None, measured: bool = True) -> object:
    scorecard = load_bench("scorecard")
    figure = scorecard.Figure(1.0, 1.0) if measured else None
    return scorecard.Row(case, figure, "peer", scorecard.Figure(1.0, 1.0), "goal", met)


def test_scorecard_check_exits_1_only_for_a_missed_goal_or_a_failure() -> None:
    verdict = load_bench("scorecard").verdict
    met, unjudged = canned("a", True), canned("b", None)
    missed, failed = canned("c", False), canned("d", False, measured=False)
    assert verdict([met, unjudged], check=True) == (0, [])
    assert verdict([met, missed, unjudged], check=True) == (1, ["c"])
    # Without --check a missed goal is printed, not an error; a failed measurement always is.
    assert verdict([met, missed], check=False) == (0, [])
    assert verdict([met, failed], check=False) == (1, ["d"])
    assert verdict([failed, missed], check=True) == (1, ["d", "c"])


def test_scorecard_check_prints_what_was_missed() -> None:
    # Row 11 alone, with a goal no process can meet: --check exits 1 and names the row; the same
    # run without --check exits 0.
    env = {**os.environ, "SKILLC_SCORECARD_STARTUP_GOAL_S": "-1"}
    runs = [
        subprocess.run(
            [sys.executable, str(BENCH / "scorecard.py"), "--quick", "--rows", "11", *flag],
            capture_output=True,
            text=True,
            timeout=600,
            cwd=ROOT,
            env=env,
        )
        for flag in (["--check"], [])
    ]
    checked, plain = runs
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert "goals missed or failed: 11 skillc check coffee-skill (whole process), s" in checked.stdout
    assert plain.returncode == 0, plain.stdout + plain.stderr


def test_scorecard_growth_row_takes_the_median_of_every_paired_round(tmp_path: Path) -> None:
    scorecard = load_bench("scorecard")
    growth = scorecard.load_bench("growth")
    # Three N-item children, each pairing its rounds with 20-item renders in the same process: the
    # seven rounds' ratios sorted are 0.5 1.1 1.2 1.25 1.3 2.0 3.0, so the median is 1.25; the
    # row's time is the median child's (12 s CPU), not the first or the last.
    children = iter([(20.0, [2.0, 1.1]), (12.0, [0.5, 1.2, 1.25]), (10.0, [3.0, 1.3])])
    asked: list[tuple[int, int]] = []

    def child(n: int, repeat: int, gc_off: bool, reference: int = 0) -> dict[str, object]:
        asked.append((n, reference))
        cpu, ratios = next(children)
        return {
            "nodes": 100,
            "render_cpu_s": cpu,
            "render_wall_s": 0.5,
            "reference_nodes": 10,
            "paired_ratios": ratios,
        }

    settings = dataclasses.replace(scorecard.QUICK, big=(7,), growth_children=3, peers=tmp_path / "missing")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(growth, "run_child", child)
        [row] = scorecard.growth_rows(settings)
    assert asked == [(7, 20)] * 3
    assert row.goal == "CPU/node <= 1.3x the 20-item's (10 nodes, paired): 1.25x (rounds 0.50-3.00x)"
    assert row.met is True and row.skillc is not None and row.skillc.cpu == 12000.0
