"""The versions a built-in kind's field manager compares entries in (fieldversions.py)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from platform_api.endpoints.fieldversions import versions_for
from platform_api.fieldmanager.manager import FieldManager, for_resource
from platform_api.fieldmanager.versions import MISSING, VersionView
from platform_api.scheme.catalog import builtin_scheme
from platform_api.scheme.types import ResourceType
from tests.authorization.rbac_cluster import Cluster


def test_builtin_versions(tmp_path: Path) -> None:
    cluster = Cluster(str(tmp_path))
    scheme = builtin_scheme()

    def trackers(rt: ResourceType) -> FieldManager:
        return for_resource(scheme.schemas, rt)

    rt = cluster.stores[("autoscaling", "v1", "horizontalpodautoscalers")].resource
    versions = versions_for(scheme, cluster.stores, trackers, rt)
    assert versions is not None
    v2 = versions("autoscaling/v2")
    assert isinstance(v2, VersionView)
    stored = cluster.stores[("autoscaling", "v2", rt.plural)].resource
    assert v2.node is scheme.schemas.get(stored.definition)  # v2's schema
    hpa = {"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler"}
    assert v2.convert(hpa) == hpa  # these test stores hold every version as it is
    # a version the group does not have, or another group: kube drops the entry
    assert versions("autoscaling/v9") is MISSING
    assert versions("apps/v1") is MISSING
    # what kube cannot parse fails the conversion, and with it the write's ownership
    odd = versions("a/b/c")
    assert isinstance(odd, VersionView)
    with pytest.raises(ValueError, match="unexpected GroupVersion string: a/b/c"):
        odd.convert({})


def test_a_tracker_follows_its_schema() -> None:
    """A CRD's change replaces its schema node: the tracker is built again for it, and
    kept while the node and the status sub-resource are the same."""
    scheme = builtin_scheme()
    rt = scheme.lookup("", "v1", "configmaps")
    assert rt is not None
    kept = for_resource(scheme.schemas, rt)
    assert for_resource(scheme.schemas, rt, kept) is kept
    schemaless = dataclasses.replace(rt, definition="")
    assert for_resource(scheme.schemas, schemaless, kept) is not kept
    pods = scheme.lookup("", "v1", "pods")
    assert pods is not None
    changed = dataclasses.replace(rt, subresources=pods.subresources)
    rebuilt = for_resource(scheme.schemas, changed, kept)
    assert rebuilt is not kept and rebuilt.has_status
