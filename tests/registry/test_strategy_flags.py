"""Two of each kind's strategy flags, against kube v1.36's registries
(pkg/registry/*): which kinds' DELETE answers the deleted object (the store's
ReturnDeletedObject; the others answer a Status) and which a PUT may create (the
strategy's AllowCreateOnUpdate; the others answer 404)."""

from __future__ import annotations

import pytest

from platform_api.registry.strategy import strategy_for
from platform_api.scheme.catalog import builtin_scheme
from platform_api.scheme.optional import OPTIONAL_TYPES

KUBE_RETURNS_DELETED = {
    ("", "Namespace"),
    ("", "PersistentVolume"),
    ("", "PersistentVolumeClaim"),
    ("", "Pod"),
    ("", "PodTemplate"),
    ("", "ResourceQuota"),
    ("", "Service"),
    ("", "ServiceAccount"),
    ("resource.platform.io", "DeviceClass"),
    ("resource.platform.io", "DeviceTaintRule"),
    ("resource.platform.io", "ResourceClaim"),
    ("resource.platform.io", "ResourceClaimTemplate"),
    ("resource.platform.io", "ResourcePoolStatusRequest"),
    ("resource.platform.io", "ResourceSlice"),
    ("storage.platform.io", "CSIDriver"),
    ("storage.platform.io", "CSINode"),
    ("storage.platform.io", "StorageClass"),
    ("storage.platform.io", "VolumeAttachment"),
    ("storage.platform.io", "VolumeAttributesClass"),
}
TYPES = {(rt.group, rt.kind): rt for rt in (*builtin_scheme().all(), *OPTIONAL_TYPES)}


@pytest.mark.parametrize("key", sorted(TYPES), ids="/".join)
def test_a_delete_answers_what_kubes_store_answers(key: tuple[str, str]) -> None:
    strategy = strategy_for(TYPES[key])
    assert strategy.returns_deleted_object == (key in KUBE_RETURNS_DELETED)


def test_every_kind_kube_names_is_served() -> None:
    assert set(TYPES) >= KUBE_RETURNS_DELETED


KUBE_CREATES_ON_UPDATE = {
    ("", "Endpoints"),
    ("", "Event"),
    ("", "LimitRange"),
    ("", "Service"),
    ("coordination.platform.io", "Lease"),
    ("coordination.platform.io", "LeaseCandidate"),
    ("events.platform.io", "Event"),
    ("node.platform.io", "RuntimeClass"),
    ("rbac.authorization.platform.io", "ClusterRole"),
    ("rbac.authorization.platform.io", "ClusterRoleBinding"),
    ("rbac.authorization.platform.io", "Role"),
    ("rbac.authorization.platform.io", "RoleBinding"),
}


@pytest.mark.parametrize("key", sorted(TYPES), ids="/".join)
def test_a_put_creates_where_kubes_strategy_allows(key: tuple[str, str]) -> None:
    """kube's AllowCreateOnUpdate (true only for the kinds above, in kube v1.36)."""
    strategy = strategy_for(TYPES[key])
    assert strategy.allow_create_on_update == (key in KUBE_CREATES_ON_UPDATE)
    assert set(TYPES) >= KUBE_CREATES_ON_UPDATE
