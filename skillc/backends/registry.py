"""Finding output backends: the `skillc.backends` entry-point group.

Any installed distribution can add a backend by declaring, in its pyproject.toml::

    [project.entry-points."skillc.backends"]
    upper = "my_package.upper:UpperBackend"

The target is a class (instantiated with no arguments) or a ready instance meeting
:class:`~skillc.backends.base.Backend`. Plug-ins are imported only when asked for, so a broken
one costs nothing until it is used, and then it is reported as a diagnostic, never a crash.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib.metadata import EntryPoint, entry_points

from skillc.backends.base import Backend
from skillc.diagnostics import Diagnostic, DiagnosticSink

GROUP = "skillc.backends"

# The built-ins are declared in pyproject.toml under the same group. They are repeated here
# because a source checkout whose installed metadata predates a backend (an editable install
# made before the entry point was added) would otherwise lose it; a test keeps the two equal.
BUILTIN_BACKENDS: Mapping[str, str] = {
    "cardspec": "skillc.backends.cardspec_backend:CardSpecBackend",
    "html": "skillc.backends.html_backend:HtmlBackend",
    "json": "skillc.backends.json_backend:JsonBackend",
}


@dataclass(frozen=True, slots=True)
class BackendEntry:
    """A declared backend, not yet imported."""

    name: str
    target: str
    """`module:attribute`, as in the entry point."""
    source: str
    """The distribution that declares it, for error messages."""


class BackendError(LookupError):
    """`get_backend` could not provide the backend; `diagnostic` says why (RND101-RND103)."""

    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


def backend_entries() -> dict[str, BackendEntry]:
    """Every declared backend by name. The first declaration of a name on sys.path wins.

    Reading the installed metadata costs milliseconds, so it is done once per ``sys.path``: a
    distribution on a path added later (a test's site folder) is still found.
    """
    return dict(_discover(tuple(sys.path)))


@lru_cache(maxsize=8)
def _discover(path: tuple[str, ...]) -> dict[str, BackendEntry]:
    # `path` is only the cache key: entry_points() reads sys.path itself.
    found: dict[str, BackendEntry] = {}
    for ep in entry_points(group=GROUP):
        if ep.name not in found:
            dist = ep.dist.name if ep.dist is not None else "an unknown distribution"
            found[ep.name] = BackendEntry(ep.name, ep.value, dist)
    for name, target in BUILTIN_BACKENDS.items():
        found.setdefault(name, BackendEntry(name, target, "skillc (built-in)"))
    return dict(sorted(found.items()))


def available_backends() -> list[str]:
    """The names `get_backend` accepts, sorted. Nothing is imported to list them."""
    return list(backend_entries())


def find_backend(name: str, sink: DiagnosticSink) -> Backend | None:
    """The backend called `name`, or None with a diagnostic in `sink` saying why."""
    entries = backend_entries()
    entry = entries.get(name)
    if entry is None:
        sink.emit(
            "RND101",
            f"unknown backend {name!r}; available: {', '.join(entries) or '(none)'}",
            hint="install the package that provides it, or pick one of the available names",
        )
        return None
    return _load(entry, sink)


def get_backend(name: str) -> Backend:
    """The backend called `name`; raises :class:`BackendError` when it is unknown or broken."""
    sink = DiagnosticSink()
    backend = find_backend(name, sink)
    if backend is None:
        raise BackendError(next(iter(sink)))
    return backend


def load_backends(sink: DiagnosticSink) -> dict[str, Backend]:
    """Every backend that loads, by name; each one that does not is reported in `sink`."""
    loaded: dict[str, Backend] = {}
    for name, entry in backend_entries().items():
        backend = _load(entry, sink)
        if backend is not None:
            loaded[name] = backend
    return loaded


def _load(entry: BackendEntry, sink: DiagnosticSink) -> Backend | None:
    where = f"{entry.target} from {entry.source}"
    try:
        target = EntryPoint(name=entry.name, value=entry.target, group=GROUP).load()
        backend = target() if isinstance(target, type) else target
    except Exception as exc:  # a plug-in can fail in any way while importing; skillc must not
        sink.emit(
            "RND102",
            f"backend {entry.name!r} ({where}) failed to load: {type(exc).__name__}: {exc}",
            hint="fix or reinstall the plug-in; the other backends are unaffected",
        )
        return None
    if not isinstance(backend, Backend) or not _conforms(backend):
        sink.emit(
            "RND103",
            f"backend {entry.name!r} ({where}) is not a backend: it needs string attributes"
            " name, media_type and extension and a render(doc, *, options=None) method",
        )
        return None
    return backend


def _conforms(candidate: Backend) -> bool:
    # The Protocol check only sees that the attributes exist; their types matter too.
    return all(isinstance(getattr(candidate, attr), str) for attr in ("name", "media_type", "extension")) and callable(
        candidate.render
    )
