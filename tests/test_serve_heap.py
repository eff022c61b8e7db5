"""A serving process puts what it built to serve out of the cyclic collector's reach once it
listens (skillc/server/runner.py freeze_heap), so full collections stop walking the skills."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from .conftest import COFFEE, ROOT

# serve_foreground as `skillc serve` and each worker run it; on_listening reports the collector's
# permanent generation and stops the process, as a SIGTERM would.
SCRIPT = textwrap.dedent(
    """
    import gc, os, signal, sys
    from pathlib import Path
    from skillc.runtime.config import RuntimeConfig
    from skillc.server.runner import ServeOptions, prepare, serve_foreground

    state = Path(sys.argv[2])
    prepared = prepare(ServeOptions(paths=(Path(sys.argv[1]),), port=0, runtime=RuntimeConfig(state_dir=state)))
    before = gc.get_freeze_count()

    def listening(host, port):
        print("frozen", before, gc.get_freeze_count(), gc.get_threshold()[0], flush=True)
        os.kill(os.getpid(), signal.SIGTERM)

    serve_foreground(prepared, "127.0.0.1", 0, listening)
    """
)


def test_a_serving_process_freezes_its_heap_and_collects_less_often_once_it_listens(tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(COFFEE), str(tmp_path / "state")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    line = next(x for x in run.stdout.splitlines() if x.startswith("frozen"))
    before, after, young = (int(x) for x in line.split()[1:])
    assert before == 0
    assert after > 10_000  # the skill, its compiled components, the SDK: all of it
    assert young == 10_000  # not a collection of the young generation on every call
