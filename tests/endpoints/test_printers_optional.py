"""Table cells of the kinds served through ``--runtime-config``, as kube's printers."""

from __future__ import annotations

from typing import Any

from platform_api.endpoints.tables import COLUMNS

RESOURCE = "resource.platform.io"


def cells(group: str, plural: str, obj: dict[str, Any]) -> list[Any]:
    printer = COLUMNS[(group, plural)]
    out = printer.cells(obj)
    assert len(out) == len(printer.columns)
    return out


def test_resource_claim_state() -> None:
    def state(meta: dict[str, Any], status: dict[str, Any]) -> str:
        obj = {"metadata": {"name": "c", **meta}, "status": status}
        return str(cells(RESOURCE, "resourceclaims", obj)[1])

    assert state({}, {}) == "pending"
    assert state({"deletionTimestamp": "2026-01-01T00:00:00Z"}, {}) == "deleted"
    assert state({}, {"allocation": {"devices": {}}}) == "allocated"
    reserved = {"allocation": {"devices": {}}, "reservedFor": [{"name": "p"}]}
    assert state({}, reserved) == "allocated,reserved"
    assert state({"deletionTimestamp": "x"}, reserved) == "deleted,allocated,reserved"


def test_columns() -> None:
    slice_ = {"metadata": {"name": "s"}, "spec": {"driver": "d", "pool": {"name": "p"}}}
    assert cells(RESOURCE, "resourceslices", slice_)[:4] == ["s", "", "d", "p"]
    names = [c.name for c in COLUMNS[(RESOURCE, "resourceslices")].columns]
    assert names == ["Name", "Node", "Driver", "Pool", "Age"]
    bundle = {"metadata": {"name": "b"}, "spec": {}}
    assert cells("certificates.platform.io", "clustertrustbundles", bundle) == ["b", "<none>"]
    cidr = {"metadata": {"name": "k"}, "spec": {"cidrs": ["10.0.0.0/16", "fd00::/108"]}}
    assert cells("networking.platform.io", "servicecidrs", cidr)[1] == "10.0.0.0/16,fd00::/108"
