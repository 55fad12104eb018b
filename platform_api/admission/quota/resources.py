"""Resource lists (``corev1.ResourceList``) and kube's quota arithmetic on them.

A list maps a resource name to a ``Quantity``.  Sums keep the format of their first
non-zero term, as apimachinery's ``Quantity.Add`` does, so ``0 + 1Gi`` prints ``1Gi``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

from platform_api.quantity import DECIMAL_SI, Quantity, QuantityError, parse

ResourceList = dict[str, Quantity]
ZERO = Quantity(Decimal(0), DECIMAL_SI)
ONE = Quantity(Decimal(1), DECIMAL_SI)


def quantity_of(value: Any) -> Quantity | None:
    """A stored quantity (a string, or a JSON number), or None when it does not parse."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        return parse(str(value))
    except QuantityError:
        return None


def from_object(raw: Mapping[str, Any] | None) -> ResourceList:
    """A ResourceList of an object's field; entries that do not parse are left out
    (the API never stores them, so they count for nothing)."""
    out: ResourceList = {}
    for name, value in (raw or {}).items():
        q = quantity_of(value)
        if q is not None:
            out[name] = q
    return out


def to_object(items: ResourceList) -> dict[str, str]:
    """The JSON form, in sorted key order as kube serializes maps."""
    return {name: str(items[name]) for name in sorted(items)}


def add_quantity(a: Quantity, b: Quantity) -> Quantity:
    fmt = b.format if a.value == 0 else a.format
    return Quantity(a.value + b.value, fmt)


def sub_quantity(a: Quantity, b: Quantity) -> Quantity:
    fmt = b.format if a.value == 0 else a.format
    return Quantity(a.value - b.value, fmt)


def add(a: ResourceList, b: ResourceList) -> ResourceList:
    out = dict(a)
    for name, value in b.items():
        out[name] = add_quantity(out[name], value) if name in out else value
    return out


def subtract_non_negative(a: ResourceList, b: ResourceList) -> ResourceList:
    """``quota.SubtractWithNonNegativeResult``: a - b, never below zero."""
    out: ResourceList = {}
    for name, value in a.items():
        diff = sub_quantity(value, b[name]) if name in b else value
        out[name] = diff if diff.value > 0 else Quantity(Decimal(0), value.format)
    for name, value in b.items():
        if name not in out:
            out[name] = Quantity(Decimal(0), value.format)
    return out


def at_least(items: ResourceList, floor: ResourceList) -> ResourceList:
    """Each of ``items``, raised to its value in ``floor`` where that is larger."""
    return {
        name: floor[name] if name in floor and floor[name].value > value.value else value
        for name, value in items.items()
    }


def mask(items: ResourceList, names: Iterable[str]) -> ResourceList:
    keep = set(names)
    return {name: value for name, value in items.items() if name in keep}


def remove_zeros(items: ResourceList) -> ResourceList:
    return {name: value for name, value in items.items() if value.value != 0}


def negative(items: ResourceList) -> list[str]:
    return [name for name, value in items.items() if value.value < 0]


def equals(a: ResourceList, b: ResourceList) -> bool:
    """``quota.Equals``: same names, same values (formats do not matter)."""
    return a.keys() == b.keys() and all(a[k].value == b[k].value for k in a)


def less_than_or_equal(a: ResourceList, b: ResourceList) -> tuple[bool, list[str]]:
    """``quota.LessThanOrEqual``: whether every entry of a named in b fits, and which do not."""
    exceeded = [name for name, value in a.items() if name in b and value.value > b[name].value]
    return not exceeded, exceeded


def pretty(items: ResourceList) -> str:
    """``name=value`` pairs in name order, as kube's quota messages print them."""
    return ",".join(f"{name}={items[name]}" for name in sorted(items))
