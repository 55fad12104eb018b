"""NodeRestriction: each of kube's rules, with kube's messages, over real stores."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from twisted.internet.defer import ensureDeferred, succeed

from platform_api.admission.interface import Attributes
from platform_api.admission.noderestriction import NodeRestriction, forbidden_labels
from platform_api.authentication.user import UserInfo
from platform_api.errors import StatusError
from platform_api.registry.store import Store
from platform_api.scheme.catalog import builtin_scheme
from platform_api.scheme.optional import OPTIONAL_TYPES
from platform_api.storage.lmdb_store import LMDBStorage, open_environment

Obj = dict[str, Any]
SCHEME = builtin_scheme()
N1 = UserInfo("system:node:n1", groups=("system:nodes",))
MIRROR = {"platform.io/config.mirror": "hash"}


def rt(plural: str, group: str = "") -> Any:
    version = "v1"
    found = SCHEME.lookup(group, version, plural)
    assert found is not None
    return found


class Setup:
    def __init__(self, path: str) -> None:
        storage = LMDBStorage(open_environment(path, 64 * 2**20), lambda w: succeed(w()))
        self.pods = Store(rt("pods"), storage)
        self.nodes = Store(rt("nodes"), storage)
        self.plugin = NodeRestriction(self.pods, self.nodes)
        node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}
        self.node_uid = self._create(self.nodes, "", node)["metadata"]["uid"]
        for name, bound in (("mine", "n1"), ("theirs", "n2")):
            self._create(self.pods, "default", pod(name, bound))

    @staticmethod
    def _create(store: Store, ns: str, obj: Obj) -> Obj:
        d = ensureDeferred(store.create(ns, obj))
        return d.result.object  # type: ignore[no-any-return]

    def owner(self, **extra: Any) -> Obj:
        ref = {"apiVersion": "v1", "kind": "Node", "name": "n1", "uid": self.node_uid}
        return {**ref, "controller": True, **extra}


def pod(name: str, node: str, **meta: Any) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", **meta},
        "spec": {"nodeName": node, "containers": [{"name": "c", "image": "i"}]},
    }


@pytest.fixture
def setup(tmp_path: Path) -> Setup:
    return Setup(str(tmp_path / "db"))


def attrs(
    op: str, plural: str, name: str = "", *, group: str = "", sub: str = "", **kw: Any
) -> Attributes:
    ns = kw.pop("namespace", "default" if rt(plural, group).namespaced else "")
    return Attributes(op, rt(plural, group), sub, ns, name, kw.pop("user", N1), False)


def refused(call: Callable[[], None]) -> StatusError:
    with pytest.raises(StatusError) as caught:
        call()
    return caught.value


def test_other_users_are_not_restricted(setup: Setup) -> None:
    admin = UserInfo("admin", groups=("system:masters",))
    not_in_group = UserInfo("system:node:n1")
    for user in (admin, not_in_group):
        setup.plugin.admit(attrs("CREATE", "pods", "x", user=user), pod("x", "n2"))
    nameless = UserInfo("system:node:", groups=("system:nodes",))
    error = refused(
        lambda: setup.plugin.admit(attrs("CREATE", "pods", "x", user=nameless), pod("x", ""))
    )
    assert (
        error.message == 'pods "x" is forbidden: could not determine node from user "system:node:"'
    )


def test_mirror_pods(setup: Setup) -> None:
    def create(obj: Obj) -> str:
        name = obj["metadata"].get("name", "")
        return refused(lambda: setup.plugin.admit(attrs("CREATE", "pods", name), obj)).message

    plain = pod("p", "n1")
    assert create(plain) == (
        'pods "p" is forbidden: pod does not have "platform.io/config.mirror" annotation, '
        'node "n1" can only create mirror pods'
    )
    assert create(pod("p", "n2", annotations=MIRROR)) == (
        'pods "p" is forbidden: node "n1" can only create pods with spec.nodeName set to itself'
    )
    assert create(pod("p", "n1", annotations=MIRROR)) == (
        'pods "p" is forbidden: node "n1" can only create pods with an owner reference set to itself'
    )
    two = [setup.owner(), setup.owner()]
    assert "with a single owner reference" in create(
        pod("p", "n1", annotations=MIRROR, ownerReferences=two)
    )
    cases = {
        "can only create pods with a controller owner reference set to itself": setup.owner(
            controller=False
        ),
        "must not set blockOwnerDeletion on an owner reference": setup.owner(
            blockOwnerDeletion=True
        ),
        "node n1 UID mismatch: expected other got": setup.owner(uid="other"),
    }
    for message, owner in cases.items():
        assert message in create(pod("p", "n1", annotations=MIRROR, ownerReferences=[owner]))
    good = pod("p", "n1", annotations=MIRROR, ownerReferences=[setup.owner()])
    setup.plugin.admit(attrs("CREATE", "pods", "p"), good)


@pytest.mark.parametrize(
    ("spec", "what"),
    [
        ({"serviceAccountName": "default"}, "a service account"),
        ({"imagePullSecrets": [{"name": "s"}]}, "secrets"),
        ({"volumes": [{"name": "v", "configMap": {"name": "c"}}]}, "configmaps"),
        (
            {"volumes": [{"name": "v", "projected": {"sources": [{"clusterTrustBundle": {}}]}}]},
            "clustertrustbundles",
        ),
        (
            {"volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": "c"}}]},
            "persistentvolumeclaims",
        ),
    ],
)
def test_mirror_pods_reference_nothing(setup: Setup, spec: Obj, what: str) -> None:
    obj = pod("p", "n1", annotations=MIRROR, ownerReferences=[setup.owner()])
    obj["spec"].update(spec)
    error = refused(lambda: setup.plugin.admit(attrs("CREATE", "pods", "p"), obj))
    assert error.code == 403
    assert (
        error.message
        == f'pods "p" is forbidden: node "n1" can not create pods that reference {what}'
    )


def test_mirror_pod_needs_its_node(setup: Setup) -> None:
    n9 = UserInfo("system:node:n9", groups=("system:nodes",))
    owner = {**setup.owner(), "name": "n9"}
    obj = pod("p", "n9", annotations=MIRROR, ownerReferences=[owner])
    error = refused(lambda: setup.plugin.admit(attrs("CREATE", "pods", "p", user=n9), obj))
    assert error.code == 404


def test_pod_delete_status_and_eviction(setup: Setup) -> None:
    mine, theirs = (
        setup.pods.get("default", "mine").object,
        setup.pods.get("default", "theirs").object,
    )
    setup.plugin.validate(attrs("DELETE", "pods", "mine"), mine, mine)
    error = refused(
        lambda: setup.plugin.validate(attrs("DELETE", "pods", "theirs"), theirs, theirs)
    )
    assert error.message == (
        'pods "theirs" is forbidden: node "n1" can only delete pods with spec.nodeName set to itself'
    )
    status = attrs("UPDATE", "pods", "theirs", sub="status")
    error = refused(lambda: setup.plugin.validate(status, theirs, theirs))
    assert error.message == (
        'pods "theirs" is forbidden: node "n1" can only update pod status for pods with '
        "spec.nodeName set to itself"
    )
    relabeled = {**mine, "metadata": {**mine["metadata"], "labels": {"a": "b"}}}
    error = refused(
        lambda: setup.plugin.validate(
            attrs("UPDATE", "pods", "mine", sub="status"), relabeled, mine
        )
    )
    assert (
        error.message
        == 'pods "mine" is forbidden: node "n1" cannot update labels through pod status'
    )
    setup.plugin.validate(attrs("UPDATE", "pods", "mine", sub="status"), mine, mine)
    error = refused(lambda: setup.plugin.validate(attrs("UPDATE", "pods", "mine"), mine, mine))
    assert error.message == (
        'pods "mine" is forbidden: unexpected operation "UPDATE", node "n1" can only create and '
        "delete mirror pods"
    )
    eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "theirs"}}
    error = refused(
        lambda: setup.plugin.admit(attrs("CREATE", "pods", "theirs", sub="eviction"), eviction)
    )
    assert error.message == (
        'pods "theirs" is forbidden: node n1 can only evict pods with spec.nodeName set to itself'
    )
    setup.plugin.admit(attrs("CREATE", "pods", "mine", sub="eviction"), eviction)
    error = refused(lambda: setup.plugin.admit(attrs("CREATE", "pods", "mine", sub="binding"), {}))
    assert (
        "unexpected pod subresource \"binding\", only 'status' and 'eviction' are allowed"
        in error.message
    )


def node(name: str, **meta: Any) -> Obj:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, **meta}, "spec": {}}


def test_nodes(setup: Setup) -> None:
    error = refused(lambda: setup.plugin.admit(attrs("CREATE", "nodes", "n2"), node("n2")))
    assert error.message == 'nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"'
    old = node("n1")
    error = refused(
        lambda: setup.plugin.validate(attrs("UPDATE", "nodes", "n2", sub="status"), node("n2"), old)
    )
    assert error.message == 'nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"'
    labels = {
        "node-restriction.platform.io/x": "1",
        "platform.io/hostname": "h",
        "example.com/a": "b",
    }
    error = refused(
        lambda: setup.plugin.admit(attrs("CREATE", "nodes", "n1"), node("n1", labels=labels))
    )
    assert error.message == (
        'nodes "n1" is forbidden: node "n1" is not allowed to set the following labels: '
        "node-restriction.platform.io/x"
    )
    configured = node("n1")
    configured["spec"]["configSource"] = {"configMap": {}}
    error = refused(lambda: setup.plugin.admit(attrs("CREATE", "nodes", "n1"), configured))
    assert "is not allowed to create pods with a non-nil configSource" in error.message
    tainted = node("n1")
    tainted["spec"]["taints"] = [{"key": "k", "effect": "NoSchedule"}]
    error = refused(lambda: setup.plugin.validate(attrs("UPDATE", "nodes", "n1"), old, tainted))
    assert error.message == 'nodes "n1" is forbidden: node "n1" is not allowed to modify taints'
    error = refused(lambda: setup.plugin.validate(attrs("UPDATE", "nodes", "n1"), configured, old))
    assert "is not allowed to update configSource to a new non-nil configSource" in error.message
    relabeled = node("n1", labels={"platform.io/foo": "1", "node.platform.io/ok": "1"})
    error = refused(lambda: setup.plugin.validate(attrs("UPDATE", "nodes", "n1"), relabeled, old))
    assert (
        error.message == 'nodes "n1" is forbidden: is not allowed to modify labels: platform.io/foo'
    )
    fine = node(
        "n1", labels={"kubelet.platform.io/a": "1", "topology.platform.io/zone": "z", "x": "y"}
    )
    setup.plugin.validate(attrs("UPDATE", "nodes", "n1"), fine, old)
    setup.plugin.validate(attrs("DELETE", "nodes", "n1"), old, old)


def test_forbidden_labels_count_removals() -> None:
    assert forbidden_labels({}, {"sub.platform.io/x": "1"}) == ["sub.platform.io/x"]
    assert forbidden_labels({"a.node-restriction.platform.io/x": "1"}, {}) == [
        "a.node-restriction.platform.io/x"
    ]
    assert forbidden_labels({"platform.io/os": "linux"}, {"platform.io/os": "other"}) == []


def test_leases(setup: Setup) -> None:
    lease = {"metadata": {"name": "n2", "namespace": "platform-node-lease"}}
    ns = "platform-node-lease"
    group = "coordination.platform.io"
    error = refused(
        lambda: setup.plugin.admit(
            attrs("CREATE", "leases", "n2", group=group, namespace=ns), lease
        )
    )
    assert error.message == (
        'leases.coordination.platform.io "n2" is forbidden: can only access node lease with the same '
        "name as the requesting node"
    )
    # A PUT that creates runs the mutating phase inside the store, as a CREATE.
    put = attrs("CREATE", "leases", "n2", group=group, namespace=ns)
    assert "same name" in refused(lambda: setup.plugin.admit(put, lease, None)).message
    mine = attrs("UPDATE", "leases", "n1", group=group, namespace=ns)
    setup.plugin.validate(mine, {"metadata": {"name": "n1"}}, {"metadata": {"name": "n1"}})
    elsewhere = attrs("UPDATE", "leases", "n1", group=group, namespace="default")
    error = refused(lambda: setup.plugin.validate(elsewhere, {}, {}))
    assert 'can only access leases in the "platform-node-lease" system namespace' in error.message


def test_claims_and_tokens(setup: Setup) -> None:
    pvc = {
        "metadata": {"name": "c", "resourceVersion": "1"},
        "spec": {"x": 1},
        "status": {"phase": "Bound"},
    }
    grown = {
        **pvc,
        "metadata": {"name": "c", "resourceVersion": "2"},
        "status": {"phase": "Bound", "capacity": {"storage": "2Gi"}},
    }
    status = attrs("UPDATE", "persistentvolumeclaims", "c", sub="status")
    setup.plugin.validate(status, grown, pvc)
    relabeled = {**grown, "metadata": {"name": "c", "labels": {"a": "b"}}}
    error = refused(lambda: setup.plugin.validate(status, relabeled, pvc))
    assert error.message == (
        'persistentvolumeclaims "c" is forbidden: node "n1" is not allowed to update fields other '
        "than status.capacity and status.conditions: metadata"
    )
    error = refused(
        lambda: setup.plugin.validate(attrs("UPDATE", "persistentvolumeclaims", "c"), pvc, pvc)
    )
    assert error.message == 'persistentvolumeclaims "c" is forbidden: may only update PVC status'

    token = attrs("CREATE", "serviceaccounts", "default", sub="token")
    uid = setup.pods.get("default", "mine").object["metadata"]["uid"]

    def request(**ref: Any) -> Obj:
        return {"spec": {"boundObjectRef": ref}}

    def why(obj: Obj) -> str:
        return refused(lambda: setup.plugin.admit(token, obj)).message.split("forbidden: ", 1)[1]

    assert why({"spec": {}}) == "node requested token not bound to a pod"
    assert why(request(apiVersion="v1", kind="Pod", name="mine")) == (
        "node requested token with a pod binding without a uid"
    )
    assert why(request(apiVersion="v1", kind="Pod", name="mine", uid="bad")).startswith(
        "the UID in the bound object reference (bad) does not match the UID in record."
    )
    theirs = setup.pods.get("default", "theirs").object["metadata"]["uid"]
    assert why(request(apiVersion="v1", kind="Pod", name="theirs", uid=theirs)) == (
        "node requested token bound to a pod scheduled on a different node"
    )
    setup.plugin.admit(token, request(apiVersion="v1", kind="Pod", name="mine", uid=uid))


def test_resource_slices_of_other_nodes(setup: Setup) -> None:
    """kube's admitResourceSlice (answers recorded from the reference): a node creates and
    deletes only slices that name it (the node authorizer sees neither a create's object
    nor each slice of a collection delete)."""
    (slices,) = [t for t in OPTIONAL_TYPES if (t.plural, t.version) == ("resourceslices", "v1")]

    def slice_attrs(op: str, name: str) -> Attributes:
        return Attributes(op, slices, "", "", name, N1, False)

    theirs = {"metadata": {"name": "s2"}, "spec": {"nodeName": "n2"}}
    everywhere = {"metadata": {"name": "s3"}, "spec": {"allNodes": True}}
    for other in (theirs, everywhere):
        name = other["metadata"]["name"]
        error = refused(lambda o=other, n=name: setup.plugin.admit(slice_attrs("CREATE", n), o))
        assert error.message == (
            f'resourceslices.resource.platform.io "{name}" is forbidden: can '
            "only create ResourceSlice with the same NodeName as the requesting node"
        )
    error = refused(lambda: setup.plugin.validate(slice_attrs("DELETE", "s2"), None, theirs))
    assert "can only delete ResourceSlice with the same NodeName" in error.message
    mine = {"metadata": {"name": "s1"}, "spec": {"nodeName": "n1"}}
    setup.plugin.admit(slice_attrs("CREATE", "s1"), mine)
    setup.plugin.validate(slice_attrs("DELETE", "s1"), None, mine)
    setup.plugin.validate(slice_attrs("UPDATE", "s1"), mine, theirs)  # the authorizer's part
