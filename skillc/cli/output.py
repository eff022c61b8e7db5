"""Exit statuses and the printing every command shares."""

from __future__ import annotations

import os
import sys
from typing import TextIO

import click

EXIT_OK, EXIT_ERRORS, EXIT_USAGE = 0, 1, 2


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def use_color(choice: str, stream: TextIO | None = None) -> bool:
    """Whether to colour: --color always/never decide; auto honours NO_COLOR (https://no-color.org:
    any non-empty value) and colours only a terminal."""
    if choice == "always":
        return True
    if choice == "never" or os.environ.get("NO_COLOR"):
        return False
    out = stream if stream is not None else sys.stdout
    try:
        return out.isatty()
    except (AttributeError, ValueError):
        return False


def echo_text(text: str, *, err: bool = False, nl: bool = True, color: bool = False) -> None:
    """click.echo of text that is valid UTF-8: lone surrogates become U+FFFD (docs/security.md)."""
    from skillc.runtime.api.values import clean_text

    click.echo(clean_text(text)[0], err=err, nl=nl, color=color)


def one_line(err: Exception) -> str:
    """A pydantic ValidationError as one line (``width: Input should be ...``), else str(err)."""
    from pydantic import ValidationError

    if isinstance(err, ValidationError):
        first = err.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"])
        return f"{where}: {first['msg']}" if where else first["msg"]
    return str(err).splitlines()[0] if str(err) else type(err).__name__
