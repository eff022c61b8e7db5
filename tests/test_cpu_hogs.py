"""The ``--cpu-hogs N`` plugin (tests/cpu_hogs.py): its hogs burn CPU while the session runs and
none is left once it ends, whether pytest stops them or dies without a chance to."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.conftest import ROOT
from tests.cpu_hogs import start_hogs, stop_hogs
from tests.waiting import PATIENCE_S, cpu_seconds, wait_until


def _alive(pid: int) -> bool:
    """Whether ``pid`` is a process that is neither gone nor a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_hogs_burn_cpu_until_stopped() -> None:
    hogs = start_hogs(2)
    try:
        assert all(h.poll() is None for h in hogs)
        # A process that sleeps gains no CPU ticks: these must, whatever the load.
        for hog in hogs:
            wait_until(lambda hog=hog: cpu_seconds(hog.pid) >= 0.1, PATIENCE_S, f"hog {hog.pid} to burn CPU")  # type: ignore[misc]
    finally:
        stop_hogs(hogs)
    assert all(h.returncode is not None for h in hogs)
    assert not any(_alive(h.pid) for h in hogs)


def test_a_hog_ends_when_the_process_that_started_it_is_killed(tmp_path: Path) -> None:
    parent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from tests.cpu_hogs import start_hogs; import time\n"
            "print(start_hogs(1)[0].pid, flush=True); time.sleep(600)",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert parent.stdout is not None
        pid = int(parent.stdout.readline())
        assert _alive(pid)
    finally:
        parent.kill()  # no unconfigure, no atexit: only the hog's own watch can end it
        parent.wait()
    wait_until(lambda: not _alive(pid), PATIENCE_S, f"orphaned hog {pid} to exit")


def test_a_session_with_hogs_says_so_and_leaves_none(tmp_path: Path) -> None:
    probe = tmp_path / "test_probe.py"
    probe.write_text(
        textwrap.dedent("""\
        def test_nothing():
            pass
    """)
    )
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-q",
            "--rootdir",
            str(ROOT),
            "-p",
            "tests.cpu_hogs",
            "--cpu-hogs",
            "2",
            "-c",
            str(ROOT / "pyproject.toml"),
            str(probe),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    m = re.search(r"^cpu hogs: 2 CPU-burning processes for the whole session \(pids (\d+) (\d+)\)$", done.stdout, re.M)
    assert m is not None, done.stdout
    for pid in map(int, m.groups()):
        assert not _alive(pid), f"hog {pid} outlived the session"


def test_an_interrupted_session_stops_its_hogs(tmp_path: Path) -> None:
    probe = tmp_path / "test_probe.py"
    probe.write_text(
        textwrap.dedent("""\
        import time

        def test_waits():
            print("started", flush=True)
            time.sleep(600)
    """)
    )
    session = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-s",
            "--rootdir",
            str(ROOT),
            "-p",
            "tests.cpu_hogs",
            "--cpu-hogs",
            "1",
            "-c",
            str(ROOT / "pyproject.toml"),
            str(probe),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
        # A shell without job control starts background jobs with SIGINT ignored, which the child
        # would inherit; Ctrl-C must reach it as it does a terminal's.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        assert session.stdout is not None
        pids: list[int] = []
        for line in session.stdout:
            if m := re.match(r"cpu hogs: 1 CPU-burning processes for the whole session \(pids (\d+)\)", line):
                pids.append(int(m.group(1)))
            if "started" in line:
                break
        assert len(pids) == 1
        session.send_signal(signal.SIGINT)  # Ctrl-C
        session.communicate(timeout=120)
    finally:
        if session.poll() is None:
            session.kill()
            session.wait()
    assert session.returncode == 2  # interrupted
    assert not _alive(pids[0])
