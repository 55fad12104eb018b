"""kube-apiserver's etcd key layout, both ways."""

from __future__ import annotations

import pytest

from platform_api.apiserver.enablement import keyed_resources
from platform_api.storage.etcd.layout import KeyLayout, default_kube_key

BUILTIN = [
    ("", "configmaps"),
    ("", "services"),
    ("", "endpoints"),
    ("", "nodes"),
    ("", "namespaces"),
    ("", "replicationcontrollers"),
    ("apps", "deployments"),
    ("networking.platform.io", "ingresses"),
    ("apiextensions.platform.io", "customresourcedefinitions"),
    ("", "events"),
]


@pytest.mark.parametrize(
    ("key", "etcd"),
    [
        (b"/core/configmaps/ns/a", b"/registry/configmaps/ns/a"),
        (b"/core/services/ns/s", b"/registry/services/specs/ns/s"),
        (b"/core/endpoints/ns/s", b"/registry/services/endpoints/ns/s"),
        (b"/core/nodes/n1", b"/registry/minions/n1"),
        (b"/core/namespaces/default", b"/registry/namespaces/default"),
        (b"/core/replicationcontrollers/ns/r", b"/registry/controllers/ns/r"),
        (b"/apps/deployments/ns/d", b"/registry/deployments/ns/d"),
        (b"/networking.platform.io/ingresses/ns/i", b"/registry/ingress/ns/i"),
        (
            b"/apiextensions.platform.io/customresourcedefinitions/crontabs.example.com",
            b"/registry/apiextensions.platform.io/customresourcedefinitions/crontabs.example.com",
        ),
        (b"/core/events/ns/e", b"/registry/events/ns/e"),
        (b"/example.com/crontabs/ns/c", b"/registry/example.com/crontabs/ns/c"),
        (b"/example.com/clusterthings/t", b"/registry/example.com/clusterthings/t"),
        # the API servers' address leases, where kube keeps them (apiserver/masterleases.py)
        (b"/core/masterleases/10.0.0.1", b"/registry/masterleases/10.0.0.1"),
    ],
)
def test_keys_map_both_ways(key: bytes, etcd: bytes) -> None:
    layout = KeyLayout("/registry", BUILTIN)
    assert layout.etcd_key(key) == etcd
    assert layout.registry_key(etcd) == key
    # A backend with no layout (LMDB's sizes and messages) names it the same from its group.
    assert default_kube_key(key) == etcd.decode()


@pytest.mark.parametrize(
    "etcd",
    [
        b"compact_rev_key",
        b"/other/configmaps/ns/a",
        b"/registry/unknownthing/ns/a",
        b"/registry/configmaps/",
        b"/registry/configmaps/ns/a/extra",
    ],
)
def test_keys_that_are_not_objects_are_ignored(etcd: bytes) -> None:
    assert KeyLayout("/registry", BUILTIN).registry_key(etcd) is None


def test_a_custom_prefix() -> None:
    layout = KeyLayout("/tenant-a/", BUILTIN)
    assert layout.etcd_key(b"/core/configmaps/ns/a") == b"/tenant-a/configmaps/ns/a"
    assert layout.registry_key(b"/tenant-a/configmaps/ns/a") == b"/core/configmaps/ns/a"
    assert layout.registry_key(b"/registry/configmaps/ns/a") is None


def test_both_event_apis_are_one_resource_in_etcd() -> None:
    """events.platform.io Events are stored as core Events: the server's layout has no
    keys of their own, so etcd's events come back as core keys whichever API wrote them."""
    resources = keyed_resources()
    assert ("", "events") in resources and ("events.platform.io", "events") not in resources
    layout = KeyLayout("/registry", resources)
    assert layout.registry_key(b"/registry/events/ns/e") == b"/core/events/ns/e"


def test_each_built_in_resource_names_the_type_its_values_are_read_into() -> None:
    """A stored value that names no type is read as its resource's (kube decodes into
    the resource's Go type); a custom resource has none to read into."""
    layout = KeyLayout("/registry", keyed_resources())
    assert layout.type_of(b"/core/configmaps/ns/a") == ("v1", "ConfigMap")
    assert layout.type_of(b"/apps/deployments/ns/d") == ("apps/v1", "Deployment")
    assert layout.type_of(b"/core/events/ns/e") == ("v1", "Event")
    assert layout.type_of(b"/example.com/widgets/ns/w") is None
