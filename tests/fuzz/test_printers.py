"""Property tests of the Table printers (``kubectl get``): any object of a kind that fits
its schema, defaulted as stored, prints one cell per column, as kube's printers do for
any Go value of the kind."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

import platform_api.endpoints.componentstatus  # noqa: F401  # registers its printer, as dispatch does
from platform_api.endpoints.tables import COLUMNS
from platform_api.registry.defaults import apply_defaults
from tests.fuzz.schema_objects import SCHEME, objects_of

Obj = dict[str, Any]
# kube's IPAddress row carries the age too, though no column names it
EXTRA_CELLS = {("networking.platform.io", "ipaddresses"): 1}


def _printed() -> st.SearchStrategy[tuple[tuple[str, str], Obj]]:
    cases = []
    for rt in SCHEME.all():
        if rt.custom or (rt.group, rt.plural) not in COLUMNS:
            continue
        key = (rt.group, rt.plural)
        cases.append(st.tuples(st.just(key), objects_of(rt.definition)))
    assert len(cases) > 40
    return st.one_of(cases)


@given(_printed())
def test_every_printer_prints_a_cell_per_column(case: tuple[tuple[str, str], Obj]) -> None:
    (group, plural), body = case
    rt = SCHEME.lookup(group, "v1", plural) or next(
        r for r in SCHEME.all() if (r.group, r.plural) == (group, plural)
    )
    obj = {"apiVersion": rt.api_version, "kind": rt.kind, **body}
    obj.setdefault("metadata", {}).setdefault("name", "x")  # as every stored object has
    apply_defaults(group, rt.kind, obj)
    printer = COLUMNS[(group, plural)]
    cells = printer.cells(obj)
    assert len(cells) == len(printer.columns) + EXTRA_CELLS.get((group, plural), 0)
    if printer.conditions is not None:
        printer.conditions(obj)
