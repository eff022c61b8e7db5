"""A generic Adaptive Card built from an API result's `structuredContent` alone.

It stands in when the result's component is missing or fails to render, so it never needs the
skill's templates. Scalars (nested objects flattened to dotted labels) become one FactSet;
arrays of objects become lists of Containers showing image, name and price where the objects
have fields that look like them. Everything is bounded so a 200 KB result gives a small card.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from skillc.backends.cardspec_backend import Element, new_card, text_block
from skillc.backends.cardspec_style import TextLook

MAX_FACTS = 30
MAX_LISTS = 4
MAX_LIST_ITEMS = 8
MAX_ITEM_DETAILS = 4
MAX_DEPTH = 4
MAX_VALUE_CHARS = 200
MAX_FALLBACK_TEXT_CHARS = 4000

# Matched case-insensitively, in this order of preference.
IMAGE_KEYS = ("image", "imageurl", "img", "thumbnail", "thumb", "photo", "picture", "pic", "cover", "icon", "avatar")
NAME_KEYS = ("name", "title", "label", "displayname", "productname")
PRICE_KEYS = ("price", "amount", "total", "cost", "fee", "saleprice")

_TITLE = TextLook(size="Medium", weight="Bolder")
_HEADING = TextLook(weight="Bolder")
_NAME = TextLook(weight="Bolder")
_PRICE = TextLook(color="Accent")
_SUBTLE = TextLook(subtle=True)
_PLAIN = TextLook()


@dataclass(slots=True)
class _Collected:
    facts: list[tuple[str, str]] = field(default_factory=list)
    lists: list[tuple[str, list[Mapping[str, Any]]]] = field(default_factory=list)


def fallback_card(
    structured_content: Mapping[str, Any], *, title: str | None = None, text: str | None = None
) -> dict[str, Any]:
    """An Adaptive Cards 1.5 card showing `structured_content`, headed by `title` and `text`."""
    collected = _Collected()
    _flatten(
        structured_content if isinstance(structured_content, Mapping) else {"value": structured_content},
        "",
        0,
        collected,
    )
    body: list[Element] = []
    lines: list[str] = []
    if title and title.strip():
        body.append(text_block(_clip(title.strip()), _TITLE))
        lines.append(title.strip())
    if text and text.strip():
        body.append(text_block(_clip(text.strip()), _PLAIN))
        lines.append(text.strip())
    if collected.facts:
        shown = collected.facts[:MAX_FACTS]
        body.append({"type": "FactSet", "facts": [{"title": label, "value": value} for label, value in shown]})
        lines += [f"{label}: {value}" for label, value in shown]
        hidden = len(collected.facts) - len(shown)
        if hidden:
            body.append(text_block(f"… {hidden} more fields", _SUBTLE))
    for label, items in collected.lists[:MAX_LISTS]:
        body.append(text_block(label, _HEADING))
        lines.append(label)
        for index, item in enumerate(items[:MAX_LIST_ITEMS]):
            container, line = _list_item(item)
            if index:
                container["separator"] = True
            body.append(container)
            lines.append(line)
        hidden = len(items) - MAX_LIST_ITEMS
        if hidden > 0:
            body.append(text_block(f"… and {hidden} more", _SUBTLE))
    if not body:
        body.append(text_block("No details.", _SUBTLE))
        lines.append("No details.")
    fallback_text = "\n".join(line for line in lines if line)
    return new_card(body, _clip(fallback_text, MAX_FALLBACK_TEXT_CHARS))


def _flatten(obj: Mapping[str, Any], prefix: str, depth: int, out: _Collected) -> None:
    for key, value in obj.items():
        label = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, Mapping):
            if depth + 1 >= MAX_DEPTH:
                out.facts.append((label, _clip(_scalar_text(value))))
            else:
                _flatten(value, label, depth + 1, out)
        elif isinstance(value, list):
            if value and all(isinstance(v, Mapping) for v in value):
                out.lists.append((label, value))
            elif all(not isinstance(v, Mapping | list) for v in value):
                shown = ", ".join(_scalar_text(v) for v in value[:MAX_LIST_ITEMS])
                more = ", …" if len(value) > MAX_LIST_ITEMS else ""
                out.facts.append((label, _clip(shown + more) if value else "—"))
            else:
                out.facts.append((label, f"{len(value)} items"))
        else:
            out.facts.append((label, _clip(_scalar_text(value))))


def _list_item(item: Mapping[str, Any]) -> tuple[Element, str]:
    """A Container for one object of a list: image beside name, price, a few other fields."""
    by_key = {str(k).lower(): k for k in item}
    image_key = next((by_key[k] for k in IMAGE_KEYS if k in by_key and _is_image_url(item[by_key[k]])), None)
    name_key = next((by_key[k] for k in NAME_KEYS if k in by_key and _is_scalar(item[by_key[k]])), None)
    price_key = next((by_key[k] for k in PRICE_KEYS if k in by_key and _is_scalar(item[by_key[k]])), None)
    texts: list[Element] = []
    parts: list[str] = []
    if name_key is not None:
        name = _clip(_scalar_text(item[name_key]))
        texts.append(text_block(name, _NAME))
        parts.append(name)
    if price_key is not None:
        price = _clip(_scalar_text(item[price_key]))
        texts.append(text_block(price, _PRICE))
        parts.append(price)
    used = {image_key, name_key, price_key}
    details = [
        f"{k}: {_clip(_scalar_text(v))}" for k, v in item.items() if k not in used and _is_scalar(v) and v is not None
    ][:MAX_ITEM_DETAILS]
    if details:
        texts.append(text_block(" · ".join(details), _SUBTLE))
        parts += details
    if not texts:
        texts.append(text_block(_clip(_scalar_text(item)), _SUBTLE))
        parts.append(texts[-1]["text"])
    if image_key is None:
        return {"type": "Container", "items": texts}, " · ".join(parts)
    image: Element = {"type": "Image", "url": item[image_key], "size": "Small"}
    columns = [
        {"type": "Column", "width": "auto", "items": [image]},
        {"type": "Column", "width": "stretch", "items": texts, "verticalContentAlignment": "Center"},
    ]
    return {"type": "Container", "items": [{"type": "ColumnSet", "columns": columns}]}, " · ".join(parts)


def _is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def _is_image_url(value: Any) -> bool:
    return isinstance(value, str) and value.startswith(("https://", "http://", "data:image/"))


def _scalar_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    # JSON spelling for the rest: true/false/null, and objects stay readable.
    return json.dumps(value, ensure_ascii=False, default=str)


def _clip(text: str, limit: int = MAX_VALUE_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
