"""merge_data: setData merged into the data in place, reporting exactly the leaves that changed."""

from __future__ import annotations

from typing import Any

import pytest

from skillc.ir.datapath import merge_data


def _drinks(price: int) -> list[dict[str, Any]]:
    return [{"id": f"d{i}", "name": f"Drink {i}", "price": price + i} for i in range(3)]


def test_only_the_changed_leaves_are_reported_and_containers_are_kept() -> None:
    data: dict[str, Any] = {"title": "Menu", "drinks": _drinks(20)}
    second = data["drinks"][1]
    changed = merge_data(data, {"drinks": [*_drinks(20)[:1], {**_drinks(20)[1], "price": 99}, _drinks(20)[2]]})
    assert changed == [("drinks", 1, "price")]
    assert data["drinks"][1] is second  # a loop's item holds this object: it sees the new price
    assert second["price"] == 99


def test_nothing_changed_reports_nothing() -> None:
    data: dict[str, Any] = {"drinks": _drinks(20), "n": 1}
    assert merge_data(data, {"drinks": _drinks(20), "n": 1}) == []


@pytest.mark.parametrize(
    ("old", "new"),
    [(1, True), (True, 1), (1, 1.0), (0, False), ("1", 1), (None, 0), (0, None)],
)
def test_equal_in_python_but_printed_differently_is_a_change(old: Any, new: Any) -> None:
    data: dict[str, Any] = {"items": [{"v": old}], "top": old}
    assert merge_data(data, {"items": [{"v": new}], "top": new}) == [("items", 0, "v"), ("top",)]
    assert type(data["items"][0]["v"]) is type(new)
    assert type(data["top"]) is type(new)


def test_removed_and_added_keys_and_digit_keys_are_normalised() -> None:
    data: dict[str, Any] = {"m": {"a": 1, "b": 2, "7": 3}}
    changed = merge_data(data, {"m": {"a": 1, "c": 4, "7": 5}})
    assert changed == [("m", "b"), ("m", "c"), ("m", 7)]
    assert data["m"] == {"a": 1, "7": 5, "c": 4}


def test_a_list_of_another_length_is_one_changed_leaf() -> None:
    data: dict[str, Any] = {"drinks": _drinks(20)}
    assert merge_data(data, {"drinks": _drinks(20)[:2]}) == [("drinks",)]
    assert len(data["drinks"]) == 2


def test_a_scalar_becoming_a_container_is_one_changed_leaf() -> None:
    data: dict[str, Any] = {"a": [1, 2], "b": {"x": 1}}
    assert merge_data(data, {"a": [1, {"y": 2}], "b": {"x": [1]}}) == [("a", 1), ("b", "x")]
