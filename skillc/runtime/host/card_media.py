"""The arguments of ``wx.previewMedia`` and ``wx.makePhoneCall`` in a card, checked in WeChat's shapes.

Both are card actions: skillc shows no media viewer and dials no phone, so the card host records
what the card asked for and the host (``skillc run``'s report, the MCP Apps view) carries it out.
The JS hands the options over as they are; :func:`check_preview_media` and
:func:`check_phone_call` return the typed request, or the text of WeChat's
``parameter error`` (``parameter.sources should be Array instead of Undefined;``) that the
call fails with.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict


class PreviewMediaArgs(BaseModel):
    """``wx.previewMedia(options)`` as the JS sends it; a key the card left undefined is absent."""

    model_config = ConfigDict(extra="ignore")

    sources: Any = None
    current: Any = None


class PhoneCallArgs(BaseModel):
    """``wx.makePhoneCall(options)`` as the JS sends it."""

    model_config = ConfigDict(extra="ignore")

    phoneNumber: Any = None  # WeChat's option name


class MediaSource(BaseModel):
    """One item of ``previewMedia({sources})``."""

    model_config = ConfigDict(frozen=True)

    url: str
    type: Literal["image", "video"] = "image"
    poster: str | None = None


@dataclass(frozen=True)
class Refused:
    """WeChat's parameter error for a call: the text after ``<api>:fail``."""

    message: str


def js_type(value: Any, *, given: bool = True) -> str:
    """The type name WeChat's parameter errors use for a JSON value."""
    if value is None:
        return "Null" if given else "Undefined"
    if isinstance(value, bool):
        return "Boolean"
    if isinstance(value, int | float):
        return "Number"
    if isinstance(value, str):
        return "String"
    return "Array" if isinstance(value, list) else "Object"


def _wrong(path: str, expected: str, value: Any, *, given: bool = True) -> Refused:
    return Refused(f"parameter error: parameter.{path} should be {expected} instead of {js_type(value, given=given)};")


def _bad(path: str, should: str) -> Refused:
    return Refused(f"parameter error: parameter.{path} should {should};")


def check_preview_media(a: PreviewMediaArgs) -> tuple[list[MediaSource], int] | Refused:
    """The sources and the index shown first, or the parameter error."""
    given = a.model_fields_set
    if not isinstance(a.sources, list):
        return _wrong("sources", "Array", a.sources, given="sources" in given)
    if not a.sources:
        return _bad("sources", "not be empty")
    sources: list[MediaSource] = []
    for i, raw in enumerate(a.sources):
        where = f"sources[{i}]"
        if not isinstance(raw, dict):
            return _wrong(where, "Object", raw)
        url = raw.get("url")
        if not isinstance(url, str):
            return _wrong(f"{where}.url", "String", url, given="url" in raw)
        if not url.strip():
            return _bad(f"{where}.url", "not be empty")
        kind = raw.get("type", "image")
        if kind not in ("image", "video"):
            return _bad(f"{where}.type", 'be "image" or "video"')
        poster = raw.get("poster")
        if poster is not None and not isinstance(poster, str):
            return _wrong(f"{where}.poster", "String", poster)
        sources.append(MediaSource(url=url.strip(), type=kind, poster=poster))
    current = a.current if "current" in given and a.current is not None else 0
    if isinstance(current, bool) or not isinstance(current, int | float) or current != int(current):
        return _wrong("current", "Number", current)
    if not 0 <= current < len(sources):
        return _bad("current", f"be an index of sources (0 to {len(sources) - 1})")
    return sources, int(current)


def check_phone_call(a: PhoneCallArgs) -> str | Refused:
    """The number to call, or the parameter error."""
    number = a.phoneNumber
    if not isinstance(number, str):
        return _wrong("phoneNumber", "String", number, given="phoneNumber" in a.model_fields_set)
    if not number.strip():
        return _bad("phoneNumber", "not be empty")
    return number.strip()
