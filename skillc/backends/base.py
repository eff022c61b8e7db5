"""The contract every output backend meets, built-in or plug-in."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from skillc.ir.render import RenderDocument


@dataclass(frozen=True, slots=True)
class RenderOptions:
    """Knobs shared by all backends; a backend ignores the ones that mean nothing to it.

    indent: JSON indentation (json, cardspec); None gives the compact form.
    title: the HTML `<title>`; the other built-ins have no place for it.
    """

    indent: int | None = 2
    title: str | None = None


DEFAULT_OPTIONS = RenderOptions()


@runtime_checkable
class Backend(Protocol):
    """Render IR in, one text document out.

    A Protocol rather than a base class so a plug-in needs no import of skillc to qualify;
    subclassing it is fine too. The registry instantiates the entry point's class with no
    arguments, so a backend keeps no per-render state on itself.
    """

    name: str
    media_type: str
    extension: str

    def render(self, doc: RenderDocument, *, options: RenderOptions | None = None) -> str: ...
