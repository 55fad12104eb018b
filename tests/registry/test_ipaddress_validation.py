"""An IPAddress update is validated whole, then for what may not change, as kube's
strategy validates it (the reference kube-apiserver's answers, 2026-12-07)."""

from __future__ import annotations

import copy

from platform_api.registry.servicecidr import IPAddressStrategy
from platform_api.scheme.catalog import builtin_scheme
from platform_api.validation.field import aggregate


def test_an_updated_parent_reference_is_checked_before_it_is_refused_as_immutable() -> None:
    rt = builtin_scheme().lookup("networking.platform.io", "v1", "ipaddresses")
    assert rt is not None
    old = {
        "apiVersion": "networking.platform.io/v1",
        "kind": "IPAddress",
        "metadata": {
            "name": "10.200.0.9",
            "uid": "u",
            "resourceVersion": "5",
            "creationTimestamp": "2026-12-07T00:00:00Z",
        },
        "spec": {"parentRef": {"resource": "services", "namespace": "default", "name": "svc"}},
    }
    new = copy.deepcopy(old)
    new["spec"]["parentRef"]["resource"] = "a/b"
    assert aggregate(IPAddressStrategy(rt).validate_update(new, old)) == (
        "[spec.parentRef.resource: Invalid value: \"a/b\": may not contain '/', "
        'spec.parentRef: Invalid value: {"Group":"","Resource":"a/b","Namespace":"default",'
        '"Name":"svc"}: field is immutable]'
    )
