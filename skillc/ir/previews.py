"""The typed props of the two card built-ins skillc shows as static previews: map and canvas.

WeChat draws a ``<map>`` from map tiles and a ``<canvas type="2d">`` from what the card paints
on it; skillc has neither a tile server nor a GPU, so the Render IR carries what a preview
needs instead (docs/render-ir.md, "map and canvas"):

- a ``map`` node's ``latitude``, ``longitude`` and ``scale`` props are numbers and its
  ``markers`` a list of :class:`MapMarker` (a marker without numeric coordinates is left out),
  whatever text or data the WXML bound them to;
- a ``canvas`` node carries ``drawing`` (:class:`CanvasDrawing`) once the card has painted on it
  through the 2d API: the picture as an SVG data URL and the bitmap size it was drawn at.

Backends read both through :func:`map_props` and :func:`canvas_drawing`, which accept any JSON
(a host may hand a document back through ``from_plain``) and never raise.
"""

from __future__ import annotations

import math
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

# WeChat's canvas is 300x150 unless styled; a map gets the same box (its default is not
# documented), so an unstyled preview still shows up.
DEFAULT_WIDTH = 300
DEFAULT_HEIGHT = 150
PREVIEW_TAGS = frozenset({"map", "canvas"})


class MapMarker(BaseModel):
    """One marker as a preview lists it. ``title`` falls back to the marker's callout or label
    text, as those are what WeChat shows beside the pin."""

    model_config = ConfigDict(frozen=True)

    id: int | float | str | None = None
    latitude: float = Field(ge=-90, le=90)
    longitude: float = Field(ge=-180, le=180)
    title: str | None = None


class MapProps(BaseModel):
    """What a map preview reads: the centre, the zoom level and the markers."""

    model_config = ConfigDict(frozen=True)

    latitude: float | None = None
    longitude: float | None = None
    scale: float = 16
    markers: list[MapMarker] = Field(default_factory=list)


DRAWING_URL = re.compile(r"^data:image/svg\+xml;base64,[A-Za-z0-9+/=]*$")


class CanvasDrawing(BaseModel):
    """A canvas's picture: ``src`` an ``image/svg+xml`` data URL, ``width`` and ``height`` the
    canvas's bitmap size (``canvas.width`` / ``canvas.height``) the picture was drawn at."""

    model_config = ConfigDict(frozen=True)

    src: str = Field(pattern=DRAWING_URL.pattern)
    width: int = Field(ge=0)
    height: int = Field(ge=0)


def number(value: Any) -> float | None:
    """A finite number from a JSON number or numeric text (``"31.23"``), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        result = float(value)
    elif isinstance(value, str):
        try:
            result = float(value.strip())
        except ValueError:
            return None
    else:
        return None
    return result if math.isfinite(result) else None


def _plain_number(value: float) -> int | float:
    return int(value) if value.is_integer() and abs(value) < 2**53 else value


def _marker(raw: Any) -> MapMarker | None:
    if not isinstance(raw, dict):
        return None
    lat, lng = number(raw.get("latitude")), number(raw.get("longitude"))
    if lat is None or lng is None:
        return None
    title = raw.get("title")
    if not isinstance(title, str) or not title:
        title = next(
            (
                box["content"]
                for box in (raw.get("callout"), raw.get("label"))
                if isinstance(box, dict) and isinstance(box.get("content"), str) and box["content"]
            ),
            None,
        )
    marker_id = raw.get("id")
    if isinstance(marker_id, bool) or not isinstance(marker_id, int | float | str):
        marker_id = None
    try:
        return MapMarker(id=marker_id, latitude=lat, longitude=lng, title=title)
    except ValidationError:  # coordinates off the globe
        return None


def normalise_map_props(props: dict[str, Any]) -> dict[str, Any]:
    """A map element's evaluated props in the Render IR's typed form (numbers, typed markers);
    other props stay as they are. Called by the renderer on every map node."""
    out = dict(props)
    for name in ("latitude", "longitude", "scale"):
        if name in out:
            value = number(out[name])
            if value is None:
                del out[name]
            else:
                out[name] = _plain_number(value)
    if "markers" in out:
        raw = out["markers"]
        markers = [_marker(m) for m in raw] if isinstance(raw, list) else []
        out["markers"] = [m.model_dump(exclude_none=True) for m in markers if m is not None]
    return out


def map_props(props: dict[str, Any]) -> MapProps:
    """The preview's reading of a map node's props (any JSON; bad values are left out)."""
    typed = normalise_map_props(props)
    lat, lng, scale = typed.get("latitude"), typed.get("longitude"), typed.get("scale")
    markers = [MapMarker.model_validate(m) for m in typed.get("markers", [])]
    return MapProps(
        latitude=lat if lat is not None and -90 <= lat <= 90 else None,
        longitude=lng if lng is not None and -180 <= lng <= 180 else None,
        scale=scale if scale is not None else 16,
        markers=markers,
    )


def canvas_drawing(props: dict[str, Any]) -> CanvasDrawing | None:
    """A canvas node's drawing, or None when the card has not drawn on it (or the prop is bad)."""
    raw = props.get("drawing")
    if not isinstance(raw, dict):
        return None
    try:
        return CanvasDrawing.model_validate(raw)
    except ValidationError:
        return None


def coordinate(value: float) -> str:
    """A latitude or longitude as previews print it: up to 6 decimals, no trailing zeros."""
    text = f"{value:.6f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def marker_line(marker: MapMarker) -> str:
    """``Store A · 31.2304, 121.4737`` (the coordinates alone for an untitled marker)."""
    where = f"{coordinate(marker.latitude)}, {coordinate(marker.longitude)}"
    return f"{marker.title} · {where}" if marker.title else where


def map_caption(props: MapProps) -> str:
    """The preview's first line: ``Map 31.2304, 121.4737 · 2 markers``."""
    centre = (
        f"{coordinate(props.latitude)}, {coordinate(props.longitude)}"
        if props.latitude is not None and props.longitude is not None
        else "(no centre)"
    )
    count = len(props.markers)
    return f"Map {centre} · {count} marker{'' if count == 1 else 's'}"


def drawing_summary(drawing: CanvasDrawing | None) -> str:
    """``drawn 400x200 (1520 bytes of SVG)`` or ``not drawn``, for reports."""
    if drawing is None:
        return "not drawn"
    size = len(drawing.src) - drawing.src.index(",") - 1
    return f"drawn {drawing.width}x{drawing.height} ({size} bytes of base64 SVG)"


def preview_summary(node_type: str, props: dict[str, Any]) -> str | None:
    """One line for a map or canvas node in a text report (``skillc run``), else None."""
    if node_type == "map":
        return map_caption(map_props(props))
    if node_type == "canvas":
        return drawing_summary(canvas_drawing(props))
    return None
