"""A custom resource's printer columns, cell by cell as kube-apiserver v1.36 printed the
same objects (reference, 2026-12-06): values of another type are empty, a date that
does not parse is ``<invalid>``, an explicit null in a string column is ``<no value>``."""

from __future__ import annotations

from typing import Any

import pytest

from platform_api.apiextensions.printers import printer_for
from platform_api.endpoints import printers as core

COLUMNS = [
    {"name": "Int", "type": "integer", "jsonPath": ".spec.i"},
    {"name": "Num", "type": "number", "jsonPath": ".spec.n"},
    {"name": "Bool", "type": "boolean", "jsonPath": ".spec.b"},
    {"name": "Date", "type": "date", "jsonPath": ".spec.d"},
    {"name": "Obj", "type": "string", "jsonPath": ".spec.o"},
    {"name": "Missing", "type": "string", "jsonPath": ".spec.nope"},
]
CRD = {"spec": {"versions": [{"name": "v1", "additionalPrinterColumns": COLUMNS}]}}
NOW = 1_767_225_600.0 + 339 * 86400  # 2026-01-01 plus 339 days


@pytest.fixture(autouse=True)
def frozen_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(core, "clock", lambda: NOW)


@pytest.mark.parametrize(
    ("spec", "cells"),
    [
        (
            {"i": 5, "n": 1.5, "b": True, "d": "2026-01-01T00:00:00Z", "o": {"x": 1, "a": [1]}},
            [5, 1.5, True, "339d", '{"a":[1],"x":1}', None],
        ),
        (
            {"i": 1.0, "n": 3, "b": "no", "d": "not a date", "o": {}},
            [1, 3.0, None, "<invalid>", "{}", None],
        ),
        ({"d": "2026-01-01", "o": None}, [None, None, None, "<invalid>", "<no value>", None]),
        ({"d": "", "i": "7"}, [None, None, None, "<unknown>", None, None]),
        ({"d": 5}, [None, None, None, None, None, None]),
        # Go's int64 of a float64: truncated, and past int64 amd64's minimum (it was a
        # 500 here: the integer could not be written)
        ({"i": -1.5, "n": 1e21}, [-1, 1e21, None, None, None, None]),
        ({"i": 1e21}, [-(2**63), None, None, None, None, None]),
        ({"i": -9.3e18}, [-(2**63), None, None, None, None, None]),
    ],
)
def test_cells_read_as_kubes(spec: dict[str, Any], cells: list[Any]) -> None:
    printer = printer_for(CRD, "v1")
    assert printer.cells({"metadata": {"name": "t"}, "spec": spec}) == ["t", *cells]
