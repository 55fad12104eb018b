"""AlwaysAdmit, AlwaysDeny, DenyServiceExternalIPs, NamespaceAutoProvision and
NamespaceExists: kube's admission_test.go cases, with kube's messages."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from twisted.internet.defer import fail, succeed

from platform_api.admission.alwaysadmit import AlwaysAdmit
from platform_api.admission.alwaysdeny import AlwaysDeny
from platform_api.admission.denyexternalips import DenyServiceExternalIPs
from platform_api.admission.lifecycle import NamespaceLifecycle
from platform_api.admission.namespaces.autoprovision import NamespaceAutoProvision
from platform_api.admission.namespaces.exists import NamespaceExists
from platform_api.storage.interface import (
    KEY_NOT_FOUND,
    UNREADABLE,
    StorageError,
    Stored,
    Unreadable,
)
from tests.admission.plugin_kit import Cluster, attrs, refused, run

Obj = dict[str, Any]


@pytest.fixture
def cluster(tmp_path: Path) -> Cluster:
    return Cluster(str(tmp_path / "db"))


def test_always_admit_and_deny() -> None:
    admit, deny = AlwaysAdmit(), AlwaysDeny()
    for op in ("CREATE", "UPDATE", "DELETE"):
        a = attrs(op, "configmaps", "cm")
        admit.admit(a, None, None)
        admit.validate(a, None, None)
        for phase in (deny.admit, deny.validate):
            error = refused(lambda phase=phase, a=a: phase(a, None, None))
            assert error.code == 403 and error.reason == "Forbidden"
            assert error.message == (
                'configmaps "cm" is forbidden: admission control is denying all modifications'
            )
            assert error.details == {"name": "cm", "kind": "configmaps"}
    nameless = attrs("CREATE", "configmaps")
    generated = {"metadata": {"generateName": "cm-"}}
    assert refused(lambda: deny.admit(nameless, generated, None)).message.startswith(
        'configmaps "cm-" is forbidden'
    )
    assert deny.runs_last is True


def service(*ips: str) -> Obj:
    spec: Obj = {"ports": [{"port": 80}]}
    if ips:
        spec["externalIPs"] = list(ips)
    return {"metadata": {"name": "s", "namespace": "default"}, "spec": spec}


@pytest.mark.parametrize(
    ("new", "old", "denied"),
    [
        (service(), None, False),
        (service("1.1.1.1"), None, True),
        (service(), service("1.1.1.1"), False),
        (service("1.1.1.1"), service("1.1.1.1", "2.2.2.2"), False),
        (service("1.1.1.1", "3.3.3.3"), service("1.1.1.1"), True),
        (service("2.2.2.2"), service(), True),
    ],
)
def test_deny_external_ips(new: Obj, old: Obj | None, denied: bool) -> None:
    plugin = DenyServiceExternalIPs()
    a = attrs("UPDATE" if old else "CREATE", "services", "s")
    if not denied:
        plugin.validate(a, new, old)
        return
    error = refused(lambda: plugin.validate(a, new, old))
    assert error.message == (
        'services "s" is forbidden: Use of external IPs is denied by admission control'
    )


def test_deny_external_ips_ignores_status_and_other_kinds() -> None:
    plugin = DenyServiceExternalIPs()
    plugin.validate(attrs("UPDATE", "services", "s", sub="status"), service("9.9.9.9"), service())
    plugin.validate(attrs("CREATE", "configmaps", "s"), service("9.9.9.9"), None)


def test_namespace_auto_provision(cluster: Cluster) -> None:
    plugin = NamespaceAutoProvision(cluster.store("namespaces"))
    cm = {"metadata": {"name": "cm"}}
    run(plugin.admit(attrs("CREATE", "configmaps", "cm", namespace="made"), cm, None))
    made = cluster.store("namespaces").get("", "made").object
    assert made["metadata"]["name"] == "made"
    run(plugin.admit(attrs("CREATE", "configmaps", "cm", namespace="made"), cm, None))  # exists
    dry = attrs("CREATE", "configmaps", "cm", namespace="dry", dry_run=True)
    run(plugin.admit(dry, cm, None))
    run(plugin.admit(attrs("UPDATE", "configmaps", "cm", namespace="upd"), cm, None))
    run(plugin.admit(attrs("CREATE", "namespaces", "ns2", namespace="ns2"), cm, None))
    for name in ("dry", "upd", "ns2"):
        assert refused(lambda name=name: cluster.store("namespaces").get("", name)).code == 404


def test_namespace_exists(cluster: Cluster) -> None:
    plugin = NamespaceExists(cluster.store("namespaces"))
    for op in ("CREATE", "UPDATE", "DELETE"):
        error = refused(
            lambda op=op: plugin.validate(
                attrs(op, "configmaps", "cm", namespace="nope"), None, None
            )
        )
        assert (error.code, error.message) == (404, 'namespaces "nope" not found')
    plugin.validate(attrs("CREATE", "nodes", "n"), None, None)
    plugin.validate(attrs("CREATE", "namespaces", "nope", namespace="nope"), None, None)
    cluster.create("namespaces", {"metadata": {"name": "here"}})
    plugin.validate(attrs("CREATE", "configmaps", "cm", namespace="here"), None, None)


def test_namespace_lifecycle_sees_a_namespace_start_terminating(cluster: Cluster) -> None:
    """Namespaces come from an informer; one it has not seen yet is read from storage
    (created a moment ago, or through another worker), a missing one is a 404."""
    namespaces = cluster.store("namespaces")
    lifecycle = NamespaceLifecycle(cluster.storage, cluster.hub, namespaces.prefix)
    lifecycle.start()
    cluster.create("namespaces", {"metadata": {"name": "shop"}})
    create = attrs("CREATE", "configmaps", "cm", namespace="shop")
    lifecycle.admit(create, {}, None)  # not published yet: read from storage
    cluster.settle()
    read: list[bytes] = []
    real_get = cluster.storage.get
    cluster.storage.get = lambda key: read.append(key) or real_get(key)  # type: ignore[method-assign]
    lifecycle.admit(create, {}, None)
    assert read == []  # the informer's copy

    run(namespaces.delete("", "shop"))  # its finalizer keeps it, Terminating
    cluster.settle()
    error = refused(lambda: lifecycle.admit(create, {}, None))
    assert (error.code, error.reason, error.message) == (
        403,
        "Forbidden",
        'configmaps "cm" is forbidden: unable to create new content in namespace shop '
        "because it is being terminated",
    )
    missing = refused(
        lambda: lifecycle.admit(attrs("CREATE", "configmaps", namespace="gone"), {}, None)
    )
    assert (missing.code, missing.reason, missing.message) == (
        404,
        "NotFound",
        'namespaces "gone" not found',
    )


def test_namespace_lifecycle_keeps_kube_system_namespaces_with_upstream_names(
    cluster: Cluster,
) -> None:
    prefix = cluster.store("namespaces").prefix
    branded = NamespaceLifecycle(cluster.storage, cluster.hub, prefix)
    upstream = NamespaceLifecycle(cluster.storage, cluster.hub, prefix, upstream=True)
    for name in ("kube-system", "kube-public"):
        delete = attrs("DELETE", "namespaces", name)
        error = refused(lambda d=delete: upstream.admit(d, None, None))  # type: ignore[misc]
        assert (error.code, error.message) == (
            403,
            f'namespaces "{name}" is forbidden: this namespace may not be deleted',
        )
        branded.admit(delete, None, None)  # only a namespace like any other
    upstream.admit(attrs("DELETE", "namespaces", "kube-node-lease"), None, None)


class LaggingCache:
    """A storage read from a cache (etcd's watch cache) that a namespace created through
    another replica has not reached yet: it is there once the cache has etcd's current
    revision."""

    def __init__(self, key: bytes, value: bytes | None, fails: bool = False) -> None:
        self.key, self.value, self.fails = key, value, fails
        self.caught_up: list[int] = []

    def consistent_revision(self) -> Any:
        if self.fails:
            return fail(StorageError("Unavailable", b"", "etcd unreachable"))
        return succeed(7)

    def wait_for_revision(self, revision: int) -> Any:
        self.caught_up.append(revision)
        return succeed(None)

    def get(self, key: bytes) -> Stored:
        if self.caught_up and key == self.key and self.value is not None:
            return Stored(key, 7, self.value)
        raise StorageError(KEY_NOT_FOUND, key)


NS_KEY = b"/core/namespaces/shop"


def lifecycle_on(storage: LaggingCache) -> NamespaceLifecycle:
    hub: Any = None  # the informer is never started: it has seen nothing
    return NamespaceLifecycle(storage, hub, b"/core/namespaces/")  # type: ignore[arg-type]


def test_namespace_lifecycle_looks_up_a_namespace_of_another_replica_consistently() -> None:
    """kube's live lookup is a consistent GET: a namespace just created through another
    replica is found once this one's cache has etcd's current revision, not 404."""
    storage = LaggingCache(NS_KEY, b'{"metadata":{"name":"shop"}}')
    create = attrs("CREATE", "configmaps", "cm", namespace="shop")
    run(lifecycle_on(storage).admit(create, {}, None))
    assert storage.caught_up == [7]
    terminating = LaggingCache(
        NS_KEY, b'{"metadata":{"name":"shop"},"status":{"phase":"Terminating"}}'
    )
    error = refused(lambda: lifecycle_on(terminating).admit(create, {}, None))
    assert (error.code, error.reason) == (403, "Forbidden")


def test_namespace_lifecycle_on_a_cache_refuses_a_missing_namespace_and_an_unreachable_store() -> (
    None
):
    create = attrs("CREATE", "configmaps", "cm", namespace="shop")
    missing = refused(lambda: lifecycle_on(LaggingCache(NS_KEY, None)).admit(create, {}, None))
    assert (missing.code, missing.reason, missing.message) == (
        404,
        "NotFound",
        'namespaces "shop" not found',
    )
    down = LaggingCache(NS_KEY, b"{}", fails=True)
    error = refused(lambda: lifecycle_on(down).admit(create, {}, None))
    assert (error.code, error.reason, error.message) == (
        500,
        "InternalError",
        "Internal error occurred: Internal error occurred: etcd unreachable",
    )


class HoldsUnreadable:
    """A storage whose namespace value does not decode; read from a cache (``lagging``:
    the lookup waits for it) or current (LMDB: read as it is)."""

    def __init__(self, lagging: bool) -> None:
        if lagging:
            self.consistent_revision = lambda: succeed(7)
            self.wait_for_revision = lambda revision: succeed(None)

    def get(self, key: bytes) -> Stored:
        why = StorageError(UNREADABLE, key, "json: cannot unmarshal array into Go value")
        return Unreadable(key, 7, b"[1]", why, key.decode())


@pytest.mark.parametrize("lagging", [True, False])
def test_namespace_lifecycle_answers_a_namespace_that_does_not_decode_as_kube(
    lagging: bool,
) -> None:
    """kube's live lookup is a GET, whose error (here the GET's 500 for a value that does
    not decode) the plugin wraps as an InternalError; not a 404."""
    create = attrs("CREATE", "configmaps", "cm", namespace="shop")
    lifecycle = lifecycle_on(HoldsUnreadable(lagging))  # type: ignore[arg-type]
    error = refused(lambda: lifecycle.admit(create, {}, None))
    text = "json: cannot unmarshal array into Go value"
    assert (error.code, error.reason, error.message, error.details) == (
        500,
        "InternalError",
        f"Internal error occurred: {text}",
        {"causes": [{"message": text}]},
    )
