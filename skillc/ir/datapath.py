"""setData paths: ``"order.total"``, ``"drinks[3].price"``, and applying them to component data.

WeChat's setData takes an object whose keys are paths; each value replaces what is at its
path, creating objects (or arrays, for a numeric segment written ``[n]``) on the way.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

DataPath = tuple[str | int, ...]

_FIRST = re.compile(r"[^.\[\]]+")
_NEXT = re.compile(r"\[(\d+)\]|\.([^.\[\]]+)")


# The largest array index a setData path may name (WeChat grows arrays to reach an index; so
# would this, one null per missing item). The renderer passes its RenderLimits.max_data_index.
MAX_DATA_INDEX = 100_000


class DataPathError(ValueError):
    """A setData key that is not a path (``"a..b"``, ``"a[x]"``, ``""``)."""


class PathIndexError(DataPathError):
    """A setData path names an array index beyond the limit; nothing was allocated for it."""


def parse_data_path(path: str) -> DataPath:
    """``"list[2].price"`` -> ``("list", 2, "price")``."""
    if not path:
        raise DataPathError("an empty setData key")
    first = _FIRST.match(path)
    if first is None:
        raise DataPathError(f"setData key {path!r} does not start with a property name")
    out: list[str | int] = [first.group()]
    pos = first.end()
    while pos < len(path):
        m = _NEXT.match(path, pos)
        if m is None:
            raise DataPathError(f"setData key {path!r} is not a path (at character {pos + 1})")
        out.append(int(m.group(1)) if m.group(1) is not None else m.group(2))
        pos = m.end()
    return tuple(out)


def normalise(path: DataPath) -> DataPath:
    """Digit strings as ints, so ``a.3`` and ``a[3]`` meet in dependency lookups."""
    # isdecimal, not isdigit: "²" is a digit that int() refuses.
    return tuple(int(p) if isinstance(p, str) and p.isdecimal() else p for p in path)


def set_path(data: dict[str, Any], path: DataPath, value: Any, *, max_index: int = MAX_DATA_INDEX) -> None:
    target: Any = data
    for i, seg in enumerate(path[:-1]):
        nxt = path[i + 1]
        child = _get(target, seg)
        if not isinstance(child, (dict, list)):
            child = [] if isinstance(nxt, int) else {}
            _put(target, seg, child, max_index)
        target = child
    _put(target, path[-1], value, max_index)


def _check_created(path: DataPath, start: int, max_index: int) -> None:
    """From ``start`` on, an int segment goes into an array (one created for it, or already
    there): refuse one beyond ``max_index`` before anything is written."""
    for seg in path[start:]:
        if isinstance(seg, int) and seg > max_index:
            raise PathIndexError(f"setData path index [{seg}] is beyond the largest allowed index")


def _get(container: Any, seg: str | int) -> Any:
    if isinstance(container, list):
        if isinstance(seg, int) and 0 <= seg < len(container):
            return container[seg]
        return None
    return container.get(str(seg)) if isinstance(container, dict) else None


def _put(container: Any, seg: str | int, value: Any, max_index: int = MAX_DATA_INDEX) -> None:
    if isinstance(container, list):
        if isinstance(seg, int):
            if seg > max_index and seg >= len(container):
                raise PathIndexError(f"setData path index [{seg}] is beyond the largest allowed index")
            while len(container) <= seg:
                container.append(None)  # JS leaves holes; JSON (and so the card) sees null
            container[seg] = value
            return
        raise DataPathError(f"cannot set property {seg!r} of an array")
    container[str(seg)] = value


def set_data(data: dict[str, Any], changes: Mapping[str, Any], *, max_index: int = MAX_DATA_INDEX) -> list[DataPath]:
    """Apply a setData object in key order; return the parsed (normalised) paths."""
    paths = []
    for key, value in changes.items():
        path = parse_data_path(key)
        set_path(data, path, value, max_index=max_index)
        paths.append(normalise(path))
    return paths


_MISSING = object()


def merge_data(data: dict[str, Any], changes: Mapping[str, Any], *, max_index: int = MAX_DATA_INDEX) -> list[DataPath]:
    """Apply a setData object like :func:`set_data`, but reuse the containers already there.

    The value at each path is merged into what is there: objects key by key, arrays of the same
    length index by index, so references held elsewhere (a loop's current item) see the new
    values. Returns the normalised paths of exactly the leaves that changed (an array whose
    length changed, or a value whose type changed, counts as one changed leaf).

    A path naming an array index beyond ``max_index`` raises :class:`PathIndexError` before
    that key writes anything (the keys before it are applied).
    """
    changed: list[DataPath] = []
    for key, value in changes.items():
        path = normalise(parse_data_path(key))
        target: Any = data
        for depth, seg in enumerate(path[:-1]):
            _check_index(target, seg, max_index)
            child = _get(target, seg)
            if not isinstance(child, (dict, list)):
                # Containers created on the way: the first one created is the changed leaf.
                _check_created(path, depth + 1, max_index)
                _set_within(target, path[depth:], value, max_index)
                changed.append(path[: depth + 1])
                break
            target = child
        else:
            _check_index(target, path[-1], max_index)
            _assign(target, path[-1], value, path, changed)
    return changed


def _check_index(container: Any, seg: str | int, max_index: int) -> None:
    if isinstance(container, list) and isinstance(seg, int) and seg > max_index and seg >= len(container):
        raise PathIndexError(f"setData path index [{seg}] is beyond the largest allowed index")


def _set_within(target: Any, rest: DataPath, value: Any, max_index: int) -> None:
    """set_path relative to any container, an array included."""
    holder: dict[str, Any] = {"_": target}
    set_path(holder, ("_", *rest), value, max_index=max_index)


def _assign(parent: Any, key: str | int, new: Any, path: DataPath, changed: list[DataPath]) -> None:
    old = _get(parent, key) if _has(parent, key) else _MISSING
    if isinstance(old, dict) and isinstance(new, dict):
        for k in [k for k in old if k not in new]:
            del old[k]
            changed.append((*path, _segment(k)))
        for k, v in new.items():
            # Most leaves of a replaced list are unchanged: skip them before building their path.
            if not _same_leaf(old.get(k, _MISSING), v):
                _assign(old, k, v, (*path, _segment(k)), changed)
        return
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for i, v in enumerate(new):
            if not _same_leaf(old[i], v):
                _assign(old, i, v, (*path, i), changed)
        return
    if _same_leaf(old, new):
        return
    _put(parent, key, new)
    changed.append(path)


def _same_leaf(old: Any, new: Any) -> bool:
    """Whether ``new`` is a scalar a template would print exactly as ``old``. 1 == True and
    1 == 1.0 in Python, not in what a template prints: the types are compared too."""
    return old is not _MISSING and type(old) is type(new) and not isinstance(new, (dict, list)) and old == new


def _segment(key: Any) -> str | int:
    """One key of an object as a normalised path segment (see :func:`normalise`)."""
    return int(key) if isinstance(key, str) and key.isdecimal() else key


def _has(container: Any, key: str | int) -> bool:
    if isinstance(container, list):
        return isinstance(key, int) and 0 <= key < len(container)
    return isinstance(container, dict) and str(key) in container
