"""A kind's extra reset fields (kube's GetResetFields): no writer there owns them."""

from __future__ import annotations

from typing import Any

from platform_api.fieldmanager.manager import Who, for_resource
from platform_api.scheme.catalog import builtin_scheme

NOW = "2026-12-08T00:00:00Z"


def _manager() -> Any:
    scheme = builtin_scheme()
    rt = scheme.lookup("certificates.platform.io", "v1", "certificatesigningrequests")
    assert rt is not None
    manager = for_resource(scheme.schemas, rt)
    manager.reset = {"": (("f:spec",),), "status": (("f:status", "f:conditions"),)}
    return manager


def _csr(**status: Any) -> dict[str, Any]:
    spec = {"request": "cmVx", "signerName": "example.com/foo", "usages": ["client auth"]}
    return {"metadata": {"name": "c", "labels": {"a": "1"}}, "spec": spec, "status": status}


def test_the_spec_of_a_create_is_nobodys() -> None:
    new = _csr()
    _manager().update(None, new, Who("maker", "certificates.platform.io/v1"), NOW)
    [entry] = new["metadata"]["managedFields"]
    assert entry["fieldsV1"] == {"f:metadata": {"f:labels": {".": {}, "f:a": {}}}}


def test_a_status_write_owns_the_certificate_not_the_conditions() -> None:
    live = _csr()
    _manager().update(None, live, Who("maker", "certificates.platform.io/v1"), NOW)
    conditions = [{"type": "Failed", "status": "True"}]
    new = _csr(certificate="Y2VydA==", conditions=conditions)
    _manager().update(live, new, Who("signer", "certificates.platform.io/v1", "status"), NOW)
    signer = [e for e in new["metadata"]["managedFields"] if e["manager"] == "signer"]
    assert [e["fieldsV1"] for e in signer] == [{"f:status": {"f:certificate": {}}}]
