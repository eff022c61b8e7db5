"""The skill's icon, for the ``icons`` of its tools and of ``serverInfo`` (MCP 2025-11-25).

WeChat keeps a mini program's icon in its console, not in the project, so a skill has an icon
when its folder holds one: ``icon.svg``, ``icon.png``, ``icon.webp`` or ``icon.jpg`` (the first
found, in that order), ``icon-dark.*`` beside it for dark themes. It is sent inline as a
``data:`` URI (a host need not fetch anything, and the skill needs no public URL); a file over
``MAX_ICON_BYTES`` is not sent, since every tools/list would carry it.
"""

from __future__ import annotations

import base64
import logging
import struct
from pathlib import Path

from mcp_types import Icon

log = logging.getLogger("skillc.server")

MAX_ICON_BYTES = 32 * 1024
_FORMATS = {".svg": "image/svg+xml", ".png": "image/png", ".webp": "image/webp", ".jpg": "image/jpeg"}
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def skill_icons(root: Path) -> list[Icon]:
    """The icons of the skill at ``root`` ([] when it has none that can be sent)."""
    icons: list[Icon] = []
    for stem, theme in (("icon", None), ("icon-dark", "dark")):
        icon = _first(root, stem, theme)
        if icon is not None:
            icons.append(icon)
    return icons


def _first(root: Path, stem: str, theme: str | None) -> Icon | None:
    for suffix, mime in _FORMATS.items():
        path = root / f"{stem}{suffix}"
        if not path.is_file() or path.is_symlink():
            continue
        data = path.read_bytes()
        if len(data) > MAX_ICON_BYTES:
            log.warning("%s is %d bytes, over %d: it is not sent as the tools' icon", path, len(data), MAX_ICON_BYTES)
            return None
        src = f"data:{mime};base64,{base64.b64encode(data).decode()}"
        return Icon(src=src, mime_type=mime, sizes=_sizes(suffix, data), theme=theme)  # type: ignore[arg-type]
    return None


def _sizes(suffix: str, data: bytes) -> list[str] | None:
    if suffix == ".svg":
        return ["any"]
    if suffix == ".png" and data.startswith(_PNG_SIGNATURE) and len(data) >= 24:
        width, height = struct.unpack(">II", data[16:24])  # the IHDR chunk comes first
        return [f"{width}x{height}"]
    return None  # the host reads the size from the image
