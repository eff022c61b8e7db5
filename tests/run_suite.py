"""The suite on both state stores, whatever the first half gives: ``python -m tests.run_suite [pytest args]``.

``make test`` runs this. The SQLite half runs first, then the PostgreSQL half (``--state-store=postgresql``
on ``$PG_TESTS`` when set), each streaming its own output. At the end: each half's closing
line, the skip reasons of both halves grouped with a count, and one plain closing line
``tests: N passed, N failed, N skipped``. The exit status is 0 only when both halves passed.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from tests.skip_summary import REPORT_OPTION, format_reasons

# pytest's closing line: "==== 2850 passed, 12 skipped, 3 warnings in 711.20s (0:11:51) ====", and
# under -q the same without the rules.
_CLOSING = re.compile(r"^(?:=+ )?(?P<body>(?:\d+ \w+(?:, \d+ \w+)*|no tests ran) in [\d.]+s(?: \([\d:]+\))?)(?: =+)?$")
_COUNT = re.compile(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed)")


@dataclass
class Half:
    name: str
    args: list[str]
    exit_code: int = -1
    closing: str = ""
    seconds: float = 0.0
    counts: Counter[str] = field(default_factory=Counter)
    skips: Counter[str] = field(default_factory=Counter)

    @property
    def failed(self) -> int:
        counted = self.counts["failed"] + self.counts["error"]
        # A half that failed with nothing counted (a crash, a kill, no tests collected) failed as a whole.
        return max(1, counted) if self.exit_code != 0 else counted


def parse_closing(line: str) -> tuple[str, Counter[str]] | None:
    """The body of pytest's closing line and its counts (``error``/``errors`` as one key)."""
    m = _CLOSING.match(line.strip())
    if not m:
        return None
    counts: Counter[str] = Counter()
    for n, kind in _COUNT.findall(m["body"]):
        counts["error" if kind.startswith("error") else kind] += int(n)
    return m["body"], counts


def run_half(half: Half) -> None:
    with tempfile.TemporaryDirectory(prefix="skillc-skips-") as tmp:
        report = Path(tmp) / "skips.json"
        command = [sys.executable, "-m", "pytest", *half.args, f"{REPORT_OPTION}={report}"]
        print(f"== {half.name} half: {' '.join(command[1:])}", flush=True)
        started = time.monotonic()
        with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1) as proc:
            assert proc.stdout is not None
            for line in proc.stdout:
                sys.stdout.write(line)
                parsed = parse_closing(line)
                if parsed:
                    half.closing, half.counts = parsed
            half.exit_code = proc.wait()
        half.seconds = time.monotonic() - started
        if report.exists():
            half.skips = Counter(json.loads(report.read_text(encoding="utf-8")))


def summary(halves: list[Half]) -> list[str]:
    lines = ["", "=" * 30 + " both state stores " + "=" * 30]
    for half in halves:
        closing = half.closing or "no closing line"
        lines.append(f"{half.name + ':':12s}{closing} (exit {half.exit_code}, {half.seconds:.0f} s)")
    skips: Counter[str] = Counter()
    for half in halves:
        skips.update({f"[{half.name}] {reason}": n for reason, n in half.skips.items()})
    if skips:
        lines.append(f"skipped, by reason ({sum(skips.values())} in all):")
        lines.extend(format_reasons(skips))
    passed = sum(h.counts["passed"] for h in halves)
    failed = sum(h.failed for h in halves)
    skipped = sum(h.counts["skipped"] for h in halves)
    lines.append(f"tests: {passed} passed, {failed} failed, {skipped} skipped")
    return lines


def halves_for(argv: list[str], environ: Mapping[str, str]) -> list[Half]:
    """The SQLite half with the given pytest arguments, then the PostgreSQL half ($PG_TESTS narrows it)."""
    pg_tests = environ.get("PG_TESTS", "").split()
    return [
        Half("SQLite", [*argv]),
        Half("PostgreSQL", ["-q", "-p", "no:cacheprovider", "--state-store=postgresql", *argv, *pg_tests]),
    ]


def run(halves: list[Half]) -> int:
    """Every half, whatever the ones before gave; 0 only when all passed."""
    for half in halves:
        run_half(half)
    print("\n".join(summary(halves)), flush=True)
    return 0 if all(h.exit_code == 0 for h in halves) else 1


if __name__ == "__main__":
    sys.exit(run(halves_for(sys.argv[1:], os.environ)))
