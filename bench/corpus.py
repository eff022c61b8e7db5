"""The real frontend corpus: TDesign, WeUI and Vant's mini-program components from npm, and one
timing of our frontend against WeChat's wcc / wcsc over it, library by library.

The libraries are pinned in bench/corpus/package.json; install them with

    npm ci --prefix bench/corpus

Each library is compiled the way the developer tools compile a project: wcc (or wcsc) once over all
of its files, in the library's folder; ours parses (and, for WXML, lowers) the same files in this
process, an @import resolved inside the library, each imported sheet parsed once per library (as
`skillc check` does per skill), every round from empty memos (a cold build). Ours and the peer
alternate in every round and get the same warm-up; the figure of a side is the median of its rounds,
CPU beside wall.
"""

from __future__ import annotations

import posixpath
import resource
import statistics
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODULES = ROOT / "bench" / "corpus" / "node_modules"
# Each library's built mini-program folder inside its npm package.
LIBRARIES = {
    "tdesign": "tdesign-miniprogram/miniprogram_dist",
    "weui": "weui-miniprogram/miniprogram_dist",
    "vant": "@vant/weapp/dist",
}
INSTALL = "npm ci --prefix bench/corpus"


@dataclass(frozen=True)
class Library:
    name: str
    root: Path
    files: dict[str, str]  # root-relative path -> text, every .wxml, .wxs and .wxss

    def of(self, ext: str) -> list[str]:
        return sorted(p for p in self.files if p.endswith(ext))

    def size(self, ext: str) -> int:
        return sum(len(self.files[p].encode("utf-8")) for p in self.of(ext))


def libraries(modules: Path = MODULES) -> list[Library] | str:
    """The installed libraries, or why there are none (the command that installs them)."""
    found = []
    for name, rel in LIBRARIES.items():
        root = modules / rel
        if not root.is_dir():
            return f"{name} not installed: {INSTALL}"
        files = {
            p.relative_to(root).as_posix(): p.read_text(encoding="utf-8", errors="replace")
            for p in sorted(root.rglob("*"))
            if p.suffix in (".wxml", ".wxs", ".wxss") and p.is_file()
        }
        found.append(Library(name, root, files))
    return found


@dataclass(frozen=True)
class Timing:
    wall_s: float
    cpu_s: float


def children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def peer_command(binary: Path, lib: Library, ext: str) -> list[str]:
    """How the developer tools call wcc / wcsc for a folder (miniprogram-compiler's src/*.js)."""
    if ext == ".wxml":
        return [str(binary), "-d", "-cc", "0", *lib.of(".wxml"), *lib.of(".wxs"), "-gn", "$gwx"]
    # wcsc wants the components' sheets (those with a .json beside them) first, then the rest.
    sheets = lib.of(".wxss")
    parts = [s for s in sheets if (lib.root / s).with_suffix(".json").is_file()]
    return [str(binary), "-db", "-pc", str(len(parts)), *parts, *[s for s in sheets if s not in parts]]


def run_peer(cmd: list[str], cwd: Path) -> Timing:
    c0 = children_cpu_s()
    t0 = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, check=False, timeout=600)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise RuntimeError(f"{Path(cmd[0]).name} exited {done.returncode}: {done.stderr[:300]!r}")
    return Timing(wall, children_cpu_s() - c0)


def ours_wxml(lib: Library) -> Callable[[], int]:
    """Parse and lower every template of ``lib``; returns the number of errors (for a sanity check)."""
    from skillc.diagnostics import DiagnosticSink
    from skillc.frontend.expr.parser import forget_parses
    from skillc.frontend.wxml import parse_wxml
    from skillc.frontend.wxml.nodes import forget_spans
    from skillc.ir.lower import lower_document

    def run() -> int:
        # Each round is a cold build of the library, as wcc's is: the process-wide memos of
        # expressions and spans start empty (what they save within a library still counts).
        forget_parses()
        forget_spans()
        errors = 0
        for path in lib.of(".wxml"):
            sink = DiagnosticSink()
            doc = parse_wxml(lib.files[path], file=path, sink=sink)
            lower_document(doc, load=lib.files.get, sink=sink)
            errors += sum(1 for d in sink if d.severity == "error")
        return errors

    return run


def ours_wxss(lib: Library) -> Callable[[], int]:
    """Parse every sheet of ``lib``, @import resolved in the library, imported sheets shared."""
    from skillc.diagnostics import DiagnosticSink
    from skillc.frontend.wxss import SheetCache, parse_wxss

    def load(path: str) -> str | None:
        return lib.files.get(posixpath.normpath(path))

    def run() -> int:
        errors = 0
        cache = SheetCache()
        for path in lib.of(".wxss"):
            sink = DiagnosticSink()
            parse_wxss(lib.files[path], file=path, sink=sink, load=load, cache=cache)
            errors += sum(1 for d in sink if d.severity == "error")
        return errors

    return run


def timed(fn: Callable[[], object]) -> Timing:
    c0 = time.process_time()
    t0 = time.perf_counter()
    fn()
    return Timing(time.perf_counter() - t0, time.process_time() - c0)


@dataclass(frozen=True)
class Pair:
    ours: Timing
    peer: Timing | None


def median(samples: list[Timing]) -> Timing:
    return Timing(statistics.median(s.wall_s for s in samples), statistics.median(s.cpu_s for s in samples))


def compare(libs: list[Library], ext: str, binary: Path | None, rounds: int, warm_up: int = 1) -> dict[str, Pair]:
    """Per library and in total: ours and the peer's median over ``rounds`` interleaved rounds,
    after ``warm_up`` rounds of each (the same count for both)."""
    ours_of = {lib.name: (ours_wxml if ext == ".wxml" else ours_wxss)(lib) for lib in libs}
    mine: dict[str, list[Timing]] = {lib.name: [] for lib in libs}
    peer: dict[str, list[Timing]] = {lib.name: [] for lib in libs}
    for r in range(warm_up + rounds):
        for lib in libs:
            a = timed(ours_of[lib.name])
            b = run_peer(peer_command(binary, lib, ext), lib.root) if binary is not None else None
            if r >= warm_up:
                mine[lib.name].append(a)
                if b is not None:
                    peer[lib.name].append(b)
    out = {name: Pair(median(mine[name]), median(peer[name]) if peer[name] else None) for name in mine}
    # The whole corpus: per round, the sum over the libraries, then the median of those sums.
    sums = [Timing(sum(mine[n][i].wall_s for n in mine), sum(mine[n][i].cpu_s for n in mine)) for i in range(rounds)]
    peer_sums = (
        [Timing(sum(peer[n][i].wall_s for n in peer), sum(peer[n][i].cpu_s for n in peer)) for i in range(rounds)]
        if binary is not None
        else []
    )
    out["all"] = Pair(median(sums), median(peer_sums) if peer_sums else None)
    return out
