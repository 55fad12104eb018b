"""The node graph and the Node authorizer, over real storage and a watch hub on a fake clock."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from twisted.internet.defer import ensureDeferred, succeed
from twisted.internet.task import Clock

from platform_api.authentication.user import UserInfo
from platform_api.authorization.interface import Attributes, Decision
from platform_api.authorization.node import NodeAuthorizer, node_identity
from platform_api.authorization.nodegraph import NodeGraph
from platform_api.storage.lmdb_store import LMDBStorage, open_environment
from platform_api.storage.watch import WatchHub

Obj = dict[str, Any]
N1 = UserInfo("system:node:n1", groups=("system:nodes", "system:authenticated"))
NO_RELATION = "no relationship found between node 'n1' and this object"


class World:
    """Storage whose writes complete at once; the hub delivers on ``flush``."""

    def __init__(self, path: str, attachments: bool = False, slices: bool = False) -> None:
        self.storage = LMDBStorage(open_environment(path, 64 * 2**20), lambda w: succeed(w()))
        self.hub = WatchHub(self.storage, Clock())
        self.storage.on_commit = self.hub.committed
        self.graph = NodeGraph(self.storage, self.hub, attachments, slices)
        self.authorizer = NodeAuthorizer(self.graph)

    def put(self, key: bytes, obj: Obj) -> None:
        d = ensureDeferred(
            self.storage.guaranteed_update(key, lambda *_: obj, ignore_not_found=True)
        )
        assert d.called
        self.hub.flush()

    def remove(self, key: bytes) -> None:
        assert ensureDeferred(self.storage.delete(key)).called
        self.hub.flush()

    def decide(self, user: UserInfo = N1, **kw: Any) -> tuple[Decision, str]:
        kw.setdefault("resource_request", True)
        kw.setdefault("verb", "get")
        return self.authorizer.decide(Attributes(user=user, **kw))


def pod(name: str, node: str, ns: str = "default", **spec: Any) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "uid": f"uid-{name}"},
        "spec": {"nodeName": node, "containers": [{"name": "c", "image": "i"}], **spec},
    }


def pod_key(name: str, ns: str = "default") -> bytes:
    return f"/core/pods/{ns}/{name}".encode()


def secret_volume(secret: str) -> list[Obj]:
    return [{"name": "v", "secret": {"secretName": secret}}]


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    w = World(str(tmp_path / "db"))
    w.graph.start()
    yield w
    w.graph.stop()


def read(world: World, resource: str, name: str, ns: str = "default", **kw: Any) -> Decision:
    return world.decide(resource=resource, name=name, namespace=ns, **kw)[0]


def test_secret_of_a_bound_pod_is_readable_only_by_its_node(world: World) -> None:
    world.put(pod_key("p1"), pod("p1", "n1", volumes=secret_volume("s1")))
    world.put(pod_key("p2"), pod("p2", "n2", volumes=secret_volume("s2")))
    assert read(world, "secrets", "s1") is Decision.ALLOW
    assert world.decide(resource="secrets", name="s2", namespace="default") == (
        Decision.NO_OPINION,
        NO_RELATION,
    )
    assert read(world, "secrets", "s1", ns="other") is Decision.NO_OPINION


def test_graph_listed_at_start_sees_existing_pods(tmp_path: Path) -> None:
    w = World(str(tmp_path / "db"))
    w.put(pod_key("p1"), pod("p1", "n1", imagePullSecrets=[{"name": "pull"}]))
    w.graph.start()
    assert read(w, "secrets", "pull") is Decision.ALLOW


def test_every_kind_of_reference(world: World) -> None:
    container = {
        "name": "c",
        "image": "i",
        "env": [
            {"name": "A", "valueFrom": {"secretKeyRef": {"name": "env-s", "key": "k"}}},
            {"name": "B", "valueFrom": {"configMapKeyRef": {"name": "env-cm", "key": "k"}}},
        ],
        "envFrom": [{"secretRef": {"name": "from-s"}}, {"configMapRef": {"name": "from-cm"}}],
    }
    volumes = [
        {"name": "a", "configMap": {"name": "vol-cm"}},
        {"name": "b", "projected": {"sources": [{"secret": {"name": "proj-s"}}]}},
        {"name": "c", "persistentVolumeClaim": {"claimName": "claim"}},
        {"name": "d", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}},
        {"name": "e", "csi": {"driver": "x", "nodePublishSecretRef": {"name": "csi-s"}}},
    ]
    spec = {"initContainers": [container], "volumes": volumes, "serviceAccountName": "sa"}
    world.put(pod_key("p1"), pod("p1", "n1", **spec))
    for name in ("env-s", "from-s", "proj-s", "csi-s"):
        assert read(world, "secrets", name) is Decision.ALLOW, name
    for name in ("env-cm", "from-cm", "vol-cm"):
        assert read(world, "configmaps", name) is Decision.ALLOW, name
    assert read(world, "persistentvolumeclaims", "claim") is Decision.ALLOW
    assert read(world, "persistentvolumeclaims", "p1-d") is Decision.ALLOW
    token = {"verb": "create", "subresource": "token"}
    assert read(world, "serviceaccounts", "sa", **token) is Decision.ALLOW
    assert world.decide(resource="serviceaccounts", name="other", namespace="default", **token) == (
        Decision.NO_OPINION,
        NO_RELATION,
    )


def test_pod_delete_and_rebind_move_access(world: World) -> None:
    world.put(pod_key("p1"), pod("p1", "n1", volumes=secret_volume("s")))
    world.put(pod_key("p2"), pod("p2", "n1", volumes=secret_volume("s")))
    world.remove(pod_key("p1"))
    assert read(world, "secrets", "s") is Decision.ALLOW  # p2 still needs it
    world.put(pod_key("p2"), pod("p2", "n2", volumes=secret_volume("s")))
    assert read(world, "secrets", "s") is Decision.NO_OPINION
    n2 = UserInfo("system:node:n2", groups=("system:nodes",))
    assert read_as(world, n2, "secrets", "s") is Decision.ALLOW
    world.remove(pod_key("p2"))
    assert read_as(world, n2, "secrets", "s") is Decision.NO_OPINION


def read_as(world: World, user: UserInfo, resource: str, name: str) -> Decision:
    return world.decide(user=user, resource=resource, name=name, namespace="default")[0]


def test_unbound_and_mirror_pods_grant_nothing(world: World) -> None:
    world.put(pod_key("pending"), pod("pending", "", volumes=secret_volume("s1")))
    mirror = pod("m", "n1", volumes=secret_volume("s2"))
    mirror["metadata"]["annotations"] = {"platform.io/config.mirror": "x"}
    world.put(pod_key("m"), mirror)
    assert read(world, "secrets", "s1") is Decision.NO_OPINION
    assert read(world, "secrets", "s2") is Decision.NO_OPINION
    assert read(world, "pods", "m") is Decision.ALLOW  # its own mirror pod


def test_volume_and_its_secret_through_the_claim(world: World) -> None:
    pv = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": "pv1"},
        "spec": {
            "claimRef": {"namespace": "default", "name": "claim"},
            "csi": {"driver": "d", "nodeStageSecretRef": {"name": "pv-s", "namespace": "vault"}},
            "rbd": {"secretRef": {"name": "rbd-s"}},
        },
    }
    world.put(b"/core/persistentvolumes/pv1", pv)
    assert world.decide(resource="persistentvolumes", name="pv1") == (
        Decision.NO_OPINION,
        NO_RELATION,
    )
    volumes = [{"name": "v", "persistentVolumeClaim": {"claimName": "claim"}}]
    world.put(pod_key("p1"), pod("p1", "n1", volumes=volumes))
    assert world.decide(resource="persistentvolumes", name="pv1") == (Decision.ALLOW, "")
    assert read(world, "secrets", "pv-s", ns="vault") is Decision.ALLOW
    assert read(world, "secrets", "rbd-s") is Decision.ALLOW  # the claim's namespace
    world.remove(b"/core/persistentvolumes/pv1")
    assert read(world, "secrets", "pv-s", ns="vault") is Decision.NO_OPINION


def test_volume_attachments_when_served(tmp_path: Path) -> None:
    w = World(str(tmp_path / "db"), attachments=True)
    w.graph.start()
    va = {"metadata": {"name": "va1"}, "spec": {"nodeName": "n1"}}
    w.put(b"/storage.platform.io/volumeattachments/va1", va)
    group = {"api_group": "storage.platform.io", "resource": "volumeattachments"}
    assert w.decide(name="va1", **group) == (Decision.ALLOW, "")
    w.remove(b"/storage.platform.io/volumeattachments/va1")
    assert w.decide(name="va1", **group) == (Decision.NO_OPINION, NO_RELATION)


def test_resource_slices_of_the_node(tmp_path: Path) -> None:
    """kube's authorizeResourceSlice (its answers recorded from the reference): create
    for any node (NodeRestriction checks the object), one object by the graph's edge from
    its spec.nodeName, collections with the node's field selector only."""
    w = World(str(tmp_path / "db"), slices=True)
    w.graph.start()
    slice_ = {"metadata": {"name": "s1"}, "spec": {"nodeName": "n1", "driver": "d.example.com"}}
    w.put(b"/resource.platform.io/resourceslices/s1", slice_)
    group = {"api_group": "resource.platform.io", "resource": "resourceslices"}
    assert w.decide(verb="create", **group) == (Decision.ALLOW, "")
    for verb in ("get", "update", "patch", "delete"):
        assert w.decide(verb=verb, name="s1", **group) == (Decision.ALLOW, "")
    assert w.decide(name="s2", **group) == (Decision.NO_OPINION, NO_RELATION)
    scoped = "spec.nodeName=n1"
    for verb in ("list", "watch", "deletecollection"):
        assert w.decide(verb=verb, field_selector=scoped, **group) == (Decision.ALLOW, "")
    assert w.decide(verb="list", field_selector="spec.nodeName=n2", **group) == (
        Decision.NO_OPINION,
        "can only list/watch/deletecollection resourceslices with nodeName field selector",
    )
    assert w.decide(verb="get", name="s1", subresource="status", **group) == (
        Decision.NO_OPINION,
        "cannot authorize ResourceSlice subresources",
    )
    w.put(b"/resource.platform.io/resourceslices/s1", {**slice_, "spec": {"allNodes": True}})
    assert w.decide(name="s1", **group) == (Decision.NO_OPINION, NO_RELATION)


def test_the_claim_made_for_a_pods_extended_resources(world: World) -> None:
    bound = pod("p1", "n1")
    bound["status"] = {"extendedResourceClaimStatus": {"resourceClaimName": "p1-extended"}}
    world.put(pod_key("p1"), bound)
    group = {"api_group": "resource.platform.io", "resource": "resourceclaims"}
    assert world.decide(name="p1-extended", namespace="default", **group)[0] is Decision.ALLOW
    assert world.decide(name="other", namespace="default", **group) == (
        Decision.NO_OPINION,
        NO_RELATION,
    )


def test_read_verbs_and_names(world: World) -> None:
    world.put(pod_key("p1"), pod("p1", "n1", volumes=secret_volume("s1")))
    assert world.decide(resource="secrets", namespace="default", verb="list") == (
        Decision.NO_OPINION,
        "No Object name found",
    )
    # list/watch with a metadata.name field selector carries the name (request info).
    assert read(world, "secrets", "s1", verb="watch") is Decision.ALLOW
    assert world.decide(resource="secrets", name="s1", namespace="default", verb="update") == (
        Decision.NO_OPINION,
        "can only read resources of this type",
    )
    assert world.decide(resource="secrets", name="s1", verb="get") == (
        Decision.NO_OPINION,
        "can only read namespaced object of this type",
    )
    assert world.decide(resource="persistentvolumes", name="x", verb="list") == (
        Decision.NO_OPINION,
        "can only get individual resources of this type",
    )


def test_own_node_only(world: World) -> None:
    assert world.decide(resource="nodes", name="n1")[0] is Decision.ALLOW
    assert world.decide(resource="nodes", name="n2") == (
        Decision.NO_OPINION,
        "node 'n1' cannot read 'n2', only its own Node object",
    )
    assert world.decide(resource="nodes", verb="list") == (
        Decision.NO_OPINION,
        "node 'n1' cannot read all nodes, only its own Node object",
    )
    for verb, sub in (("create", ""), ("patch", ""), ("update", "status")):
        assert world.decide(resource="nodes", name="n2", verb=verb, subresource=sub)[0] is (
            Decision.ALLOW
        )
    assert world.decide(resource="nodes", name="n1", verb="delete") == (Decision.NO_OPINION, "")


def test_pods_list_needs_the_node_selector(world: World) -> None:
    world.put(pod_key("p1"), pod("p1", "n1"))
    world.put(pod_key("p2"), pod("p2", "n2"))
    pods = {"resource": "pods", "namespace": ""}
    assert world.decide(verb="list", field_selector="spec.nodeName=n1", **pods)[0] is Decision.ALLOW
    assert world.decide(verb="watch", field_selector="spec.nodeName==n1", **pods)[0] is (
        Decision.ALLOW
    )
    denied = (Decision.NO_OPINION, "can only list/watch pods with spec.nodeName field selector")
    assert world.decide(verb="list", **pods) == denied
    assert world.decide(verb="list", field_selector="spec.nodeName=n2", **pods) == denied
    assert world.decide(verb="list", field_selector="spec.nodeName!=n1", **pods) == denied
    assert read(world, "pods", "p1") is Decision.ALLOW
    assert world.decide(resource="pods", name="p2", namespace="default") == (
        Decision.NO_OPINION,
        NO_RELATION,
    )
    for verb, sub in (("create", ""), ("delete", ""), ("patch", "status"), ("create", "eviction")):
        assert world.decide(resource="pods", name="p2", verb=verb, subresource=sub)[0] is (
            Decision.ALLOW
        )
    assert world.decide(resource="pods", name="p1", verb="update") == (Decision.NO_OPINION, "")
    binding = {"verb": "create", "subresource": "binding"}
    assert world.decide(resource="pods", name="p1", **binding) == (Decision.NO_OPINION, "")


def test_leases_in_kube_node_lease_with_upstream_names(world: World) -> None:
    lease = {"api_group": "coordination.platform.io", "resource": "leases", "verb": "update"}
    upstream = NodeAuthorizer(world.graph, upstream=True)
    for ns in ("platform-node-lease", "kube-node-lease"):
        attrs = Attributes(user=N1, resource_request=True, name="n1", namespace=ns, **lease)
        assert upstream.decide(attrs)[0] is Decision.ALLOW
    assert world.decide(name="n1", namespace="kube-node-lease", **lease) == (
        Decision.NO_OPINION,
        'can only access leases in the "platform-node-lease" system namespace',
    )


def test_leases_static_rules_and_non_resource(world: World) -> None:
    lease = {"api_group": "coordination.platform.io", "resource": "leases"}
    ns = "platform-node-lease"
    assert world.decide(name="n1", namespace=ns, verb="update", **lease)[0] is Decision.ALLOW
    assert world.decide(namespace=ns, verb="create", **lease)[0] is Decision.ALLOW
    assert world.decide(name="n2", namespace=ns, **lease) == (
        Decision.NO_OPINION,
        "can only access node lease with the same name as the requesting node",
    )
    assert world.decide(name="n1", namespace="default", **lease) == (
        Decision.NO_OPINION,
        'can only access leases in the "platform-node-lease" system namespace',
    )
    assert world.decide(namespace=ns, verb="list", **lease)[1].startswith("can only get, create")
    allowed = (
        {"resource": "events", "verb": "create", "namespace": "default"},
        {"resource": "services", "verb": "watch"},
        {"resource": "endpoints", "verb": "get", "name": "e", "namespace": "default"},
        {"api_group": "authentication.platform.io", "resource": "tokenreviews", "verb": "create"},
        {
            "api_group": "certificates.platform.io",
            "resource": "certificatesigningrequests",
            "verb": "list",
        },
    )
    for attrs in allowed:
        assert world.decide(**attrs)[0] is Decision.ALLOW, attrs
    assert world.decide(resource="endpoints", verb="list") == (Decision.NO_OPINION, "")
    assert world.decide(resource="deployments", api_group="apps", verb="get") == (
        Decision.NO_OPINION,
        "",
    )
    assert world.decide(resource_request=False, verb="get", path="/healthz")[0] is (
        Decision.NO_OPINION
    )


def test_only_node_identities_are_decided(world: World) -> None:
    for user in (
        UserInfo("alice", groups=("system:nodes",)),
        UserInfo("system:node:n1"),  # not in the group
        UserInfo("system:serviceaccount:default:x", groups=("system:nodes",)),
    ):
        assert world.decide(user=user, resource="services", verb="list") == (
            Decision.NO_OPINION,
            "",
        )
    nameless = UserInfo("system:node:", groups=("system:nodes",))
    assert world.decide(user=nameless, resource="services", verb="list") == (
        Decision.NO_OPINION,
        'unknown node for user "system:node:"',
    )
    assert node_identity(N1) == ("n1", True)


def test_authorize_is_awaitable(world: World) -> None:
    d = ensureDeferred(
        world.authorizer.authorize(Attributes(N1, "list", True, resource="services"))
    )
    assert d.result == (Decision.ALLOW, "")
