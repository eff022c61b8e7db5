"""One line per skip reason, with a count, at the end of a run (in place of one line per skipped test).

A local run without PostgreSQL or node skips hundreds of tests for a handful of reasons; listing
each test hid the reasons. ``--skip-report=FILE`` also writes the counts as JSON, so the two-store
runner (tests/run_suite.py) can add up both halves.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

REPORT_OPTION = "--skip-report"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(REPORT_OPTION, default=None, metavar="FILE", help="write the skip reasons and counts as JSON")


def skip_reason(report: pytest.TestReport) -> str:
    """The one-line reason a skipped test gave (pytest keeps it as (file, line, "Skipped: why"))."""
    longrepr = report.longrepr
    text = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    text = text.removeprefix("Skipped: ")
    return text.splitlines()[0].strip() if text.strip() else "(no reason given)"


def count_reasons(reports: list[pytest.TestReport]) -> Counter[str]:
    return Counter(skip_reason(r) for r in reports)


def format_reasons(counts: Counter[str]) -> list[str]:
    """Most frequent first; ties in reason order, so two runs print the same lines."""
    return [f"{n:6d}  {reason}" for reason, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]


@pytest.hookimpl(trylast=True)
def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    reports = [r for r in terminalreporter.stats.get("skipped", []) if isinstance(r, pytest.TestReport)]
    counts = count_reasons(reports)
    target = config.getoption(REPORT_OPTION)
    if target:
        Path(target).write_text(json.dumps(dict(counts), ensure_ascii=False, indent=1), encoding="utf-8")
    if not counts:
        return
    terminalreporter.section(f"{sum(counts.values())} skipped, by reason", sep="-")
    for line in format_reasons(counts):
        terminalreporter.write_line(line)
