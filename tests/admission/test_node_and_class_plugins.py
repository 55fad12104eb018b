"""DefaultIngressClass, TaintNodesByCondition, NodeDeclaredFeatureValidator and the plugins
inert here (gates off in v1.36, or subresources not served): kube's cases and messages."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from platform_api.admission.defaultingressclass import DefaultIngressClass
from platform_api.admission.gated import (
    jobvalidation,
    podgroupprotection,
    podgroupworkload,
    podresize,
)
from platform_api.admission.nodefeatures import NodeDeclaredFeatureValidator, required_features
from platform_api.admission.nodetaint import TaintNodesByCondition
from platform_api.scheme.nodetaints import keys
from tests.admission.plugin_kit import Cluster, attrs, refused

Obj = dict[str, Any]
NG = "networking.platform.io"


@pytest.fixture
def cluster(tmp_path: Path) -> Cluster:
    return Cluster(str(tmp_path / "db"))


def ingress_class(name: str, default: str | None = None) -> Obj:
    meta: Obj = {"name": name}
    if default is not None:
        meta["annotations"] = {"ingressclass.platform.io/is-default-class": default}
    return {"apiVersion": f"{NG}/v1", "kind": "IngressClass", "metadata": meta,
            "spec": {"controller": "example.com/c"}}  # fmt: skip


def ingress(**spec: Any) -> Obj:
    return {"metadata": {"name": "i", "namespace": "default"}, "spec": dict(spec)}


def test_default_ingress_class(cluster: Cluster, monkeypatch: pytest.MonkeyPatch) -> None:
    plugin = DefaultIngressClass(cluster.storage, cluster.store("ingressclasses", NG).prefix)
    create = attrs("CREATE", "ingresses", "i", group=NG)
    obj = ingress()
    plugin.admit(create, obj, None)
    assert "ingressClassName" not in obj["spec"]  # no classes at all
    cluster.create("ingressclasses", ingress_class("plain", "false"), NG)
    store = cluster.store("ingressclasses", NG)
    for name, at in (("older", 10.0), ("newer", 20.0)):
        monkeypatch.setattr(store, "clock", lambda at=at: at)
        cluster.create("ingressclasses", ingress_class(name, "true"), NG)
    plugin.admit(create, obj, None)
    assert obj["spec"]["ingressClassName"] == "newer"
    given = ingress(ingressClassName="mine")
    plugin.admit(create, given, None)
    assert given["spec"]["ingressClassName"] == "mine"
    legacy = ingress()
    legacy["metadata"]["annotations"] = {"platform.io/ingress.class": "nginx"}
    plugin.admit(create, legacy, None)
    assert "ingressClassName" not in legacy["spec"]
    updated = ingress()
    plugin.admit(attrs("UPDATE", "ingresses", "i", group=NG), updated, ingress())
    assert "ingressClassName" not in updated["spec"]


def test_not_ready_taint_with_kubes_group_names() -> None:
    plugin = TaintNodesByCondition(keys(upstream=True))
    node: Obj = {"metadata": {"name": "n"}}
    plugin.admit(attrs("CREATE", "nodes", "n"), node, None)
    taint = {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}
    assert node["spec"]["taints"] == [taint]


def test_not_ready_taint() -> None:
    plugin = TaintNodesByCondition()
    create = attrs("CREATE", "nodes", "n")
    node: Obj = {"metadata": {"name": "n"}}
    plugin.admit(create, node, None)
    assert node["spec"]["taints"] == [{"key": "node.platform.io/not-ready", "effect": "NoSchedule"}]
    plugin.admit(create, node, None)
    assert len(node["spec"]["taints"]) == 1
    other = {"key": "a", "value": "b", "effect": "NoExecute"}
    present = {"key": "node.platform.io/not-ready", "value": "x", "effect": "NoSchedule"}
    node = {"metadata": {"name": "n"}, "spec": {"taints": [other, present]}}
    plugin.admit(create, node, None)
    assert node["spec"]["taints"] == [other, present]
    node = {"metadata": {"name": "n"}, "spec": {"taints": [other]}}
    plugin.admit(create, node, None)
    assert node["spec"]["taints"][-1]["key"] == "node.platform.io/not-ready"
    for op, sub in (("UPDATE", ""), ("CREATE", "status")):
        untouched: Obj = {"metadata": {"name": "n"}, "spec": {}}
        plugin.admit(attrs(op, "nodes", "n", sub=sub), untouched, None)
        assert untouched["spec"] == {}


def pod(generation: int, node: str = "n1", **spec: Any) -> Obj:
    body = {"nodeName": node, "containers": [{"name": "c", "image": "i"}], **spec}
    return {"metadata": {"name": "p", "namespace": "default", "generation": generation},
            "spec": body}  # fmt: skip


def test_required_features() -> None:
    cpu1 = {"requests": {"cpu": "1"}}
    assert required_features(pod(1), pod(2)) == []
    assert (
        required_features(pod(1, resources=cpu1), pod(2, resources={"requests": {"cpu": "1000m"}}))
        == []
    )
    assert required_features(pod(1), pod(2, resources=cpu1)) == [
        "InPlacePodLevelResourcesVerticalScaling"
    ]
    init = [{"name": "i", "resources": cpu1}]
    sidecar = [{"name": "s", "restartPolicy": "Always", "resources": cpu1}]
    changed = [{"name": "i", "resources": {"requests": {"cpu": "2"}}}]
    assert required_features(pod(1, initContainers=init), pod(2, initContainers=changed)) == [
        "InPlacePodVerticalScalingInitContainers"
    ]
    changed_sidecar = [{**changed[0], "restartPolicy": "Always"}]
    assert (
        required_features(pod(1, initContainers=sidecar), pod(2, initContainers=changed_sidecar))
        == []
    )


def test_node_declared_features(cluster: Cluster) -> None:
    node = {"metadata": {"name": "n1"}, "status": {"declaredFeatures": ["Other"]}}
    cluster.create("nodes", node)
    plugin = NodeDeclaredFeatureValidator(cluster.store("nodes"))
    update = attrs("UPDATE", "pods", "p")
    cpu = {"requests": {"cpu": "1"}}
    message = refused(lambda: plugin.validate(update, pod(2, resources=cpu), pod(1))).message
    assert message == (
        'pods "p" is forbidden: pod update requires features '
        'InPlacePodLevelResourcesVerticalScaling which are not available on node "n1"'
    )
    gone = refused(lambda: plugin.validate(update, pod(2, "n9", resources=cpu), pod(1, "n9")))
    assert gone.message == 'pods "p" is forbidden: node "n9" not found'
    plugin.validate(update, pod(1, resources=cpu), pod(1))  # same generation
    plugin.validate(update, pod(2, "", resources=cpu), pod(1, ""))  # not bound
    plugin.validate(attrs("UPDATE", "pods", "p", sub="status"), pod(2, resources=cpu), pod(1))
    declared = ["InPlacePodLevelResourcesVerticalScaling"]
    cluster.create("nodes", {"metadata": {"name": "n2"}, "status": {"declaredFeatures": declared}})
    plugin.validate(update, pod(2, "n2", resources=cpu), pod(1, "n2"))


def test_inert_plugins_accept_everything() -> None:
    for module in (podgroupprotection, podgroupworkload, jobvalidation, podresize):
        plugin = module.build(None)
        assert plugin.name and plugin.validate(attrs("UPDATE", "pods", "p"), pod(2), pod(1)) is None
