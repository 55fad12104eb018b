"""The small pod plugins: DefaultTolerationSeconds, ExtendedResourceToleration,
PodTolerationRestriction, AlwaysPullImages, LimitPodHardAntiAffinityTopology,
PodNodeSelector and PodTopologyLabels (cases from kube's admission_test.go files)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from platform_api.admission.alwayspullimages import AlwaysPullImages
from platform_api.admission.antiaffinity import LimitPodHardAntiAffinityTopology
from platform_api.admission.defaulttolerationseconds import DefaultTolerationSeconds
from platform_api.admission.defaulttolerationseconds import build as build_toleration_seconds
from platform_api.admission.extendedresourcetoleration import ExtendedResourceToleration
from platform_api.admission.plugins import PluginContext
from platform_api.admission.podnodeselector import PodNodeSelector
from platform_api.admission.podtolerationrestriction import (
    DEFAULT_TOLERATIONS,
    WHITELIST,
    PodTolerationRestriction,
    read_settings,
)
from platform_api.admission.podtopologylabels import PodTopologyLabels
from platform_api.apiserver.config import from_flags
from platform_api.apiserver.flagvalues import ConfigError
from platform_api.scheme.nodetaints import keys
from tests.admission.plugin_kit import Cluster, attrs, refused

Obj = dict[str, Any]
CREATE = attrs("CREATE", "pods", "p")


def pod(**spec: Any) -> Obj:
    spec.setdefault("containers", [{"name": "c", "image": "nginx:1"}])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec}


def namespace(cluster: Cluster, name: str, **annotations: str) -> None:
    meta: Obj = {"name": name, "annotations": annotations}
    cluster.create("namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": meta})


@pytest.fixture
def cluster(tmp_path: Path) -> Cluster:
    return Cluster(str(tmp_path / "db"))


def test_default_toleration_seconds() -> None:
    p = pod()
    DefaultTolerationSeconds().admit(CREATE, p, None)
    assert p["spec"]["tolerations"] == [
        {
            "key": f"node.platform.io/{k}",
            "operator": "Exists",
            "effect": "NoExecute",
            "tolerationSeconds": 300,
        }
        for k in ("not-ready", "unreachable")
    ]
    own = {
        "key": "node.platform.io/not-ready",
        "operator": "Exists",
        "effect": "NoExecute",
        "tolerationSeconds": 60,
    }
    p = pod(tolerations=[own])
    DefaultTolerationSeconds(10, 20).admit(CREATE, p, None)
    assert [t.get("tolerationSeconds") for t in p["spec"]["tolerations"]] == [60, 20]
    everything = pod(tolerations=[{"operator": "Exists"}])
    DefaultTolerationSeconds().admit(CREATE, everything, None)
    assert everything["spec"]["tolerations"] == [{"operator": "Exists"}]


def test_kubes_taint_keys_with_its_group_names(cluster: Cluster) -> None:
    upstream = keys(upstream=True)
    p = pod()
    DefaultTolerationSeconds(keys=upstream).admit(CREATE, p, None)
    assert [t["key"] for t in p["spec"]["tolerations"]] == [
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
    ]
    namespace(cluster, "default")
    plugin = PodTolerationRestriction(cluster.store("namespaces"), [], [], upstream)
    burstable = pod(containers=[{"name": "c", "resources": {"requests": {"cpu": "1"}}}])
    plugin.admit(CREATE, burstable, None)
    pressure = {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists"}
    assert burstable["spec"]["tolerations"] == [{**pressure, "effect": "NoSchedule"}]


def test_toleration_seconds_flags() -> None:
    cfg = from_flags(
        {
            "default-not-ready-toleration-seconds": "30",
            "default-unreachable-toleration-seconds": "40",
        }
    )
    plugin = build_toleration_seconds(PluginContext(cfg, None, None, {}, None, None))  # type: ignore[arg-type]
    p = pod()
    plugin.admit(CREATE, p, None)
    assert [t["tolerationSeconds"] for t in p["spec"]["tolerations"]] == [30, 40]


def test_extended_resource_toleration() -> None:
    requests = {"example.com/gpu": "1", "cpu": "1", "platform.io/native": "1"}
    p = pod(
        containers=[{"name": "c", "resources": {"requests": requests}}],
        initContainers=[{"name": "i", "resources": {"requests": {"acme.io/fpga": "1"}}}],
        tolerations=[{"key": "example.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
    )
    ExtendedResourceToleration().admit(CREATE, p, None)
    assert p["spec"]["tolerations"] == [
        {"key": "example.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "acme.io/fpga", "operator": "Exists", "effect": "NoSchedule"},
    ]


def test_pod_toleration_restriction(cluster: Cluster) -> None:
    default = [{"key": "team", "operator": "Equal", "value": "a", "effect": "NoSchedule"}]
    namespace(
        cluster,
        "default",
        **{DEFAULT_TOLERATIONS: json.dumps(default), WHITELIST: json.dumps(default)},
    )
    plugin = PodTolerationRestriction(cluster.store("namespaces"), [], [])
    p = pod()
    plugin.admit(CREATE, p, None)
    assert p["spec"]["tolerations"] == default
    burstable = pod(containers=[{"name": "c", "resources": {"requests": {"cpu": "1"}}}])
    err = refused(lambda: plugin.admit(CREATE, burstable, None))  # memory-pressure is not allowed
    assert (err.code, err.reason, err.message) == (
        500,
        "",
        "pod tolerations (possibly merged with namespace default tolerations) conflict with its namespace whitelist",
    )
    namespace(cluster, "open")
    strict = PodTolerationRestriction(
        cluster.store("namespaces"), default, [{"key": "x", "operator": "Exists"}]
    )
    err = refused(lambda: strict.admit(attrs("CREATE", "pods", "p", namespace="open"), pod(), None))
    assert err.message.endswith("conflict with its cluster whitelist")
    with pytest.raises(ConfigError, match="invalid config"):
        read_settings({"default": [{"key": "k", "operator": "Bogus"}]})


def test_always_pull_images() -> None:
    plugin = AlwaysPullImages()
    p = pod(initContainers=[{"name": "i", "image": "busybox", "imagePullPolicy": "Never"}])
    p["spec"]["volumes"] = [
        {"name": "v", "image": {"reference": "img", "pullPolicy": "IfNotPresent"}}
    ]
    plugin.admit(CREATE, p, None)
    assert [
        c["imagePullPolicy"] for c in p["spec"]["initContainers"] + p["spec"]["containers"]
    ] == ["Always"] * 2
    assert p["spec"]["volumes"][0]["image"]["pullPolicy"] == "Always"
    plugin.validate(CREATE, p, None)
    p["spec"]["containers"][0]["imagePullPolicy"] = "IfNotPresent"
    err = refused(lambda: plugin.validate(CREATE, p, None))
    assert (err.code, err.message) == (
        500,
        'pods "p" is forbidden: spec.containers[0].imagePullPolicy: Unsupported value: "IfNotPresent": '
        'supported values: "Always"',
    )
    same = pod(containers=[{"name": "c", "image": "nginx:1", "imagePullPolicy": "Never"}])
    plugin.admit(attrs("UPDATE", "pods", "p"), same, same)  # no new image: left alone
    assert same["spec"]["containers"][0]["imagePullPolicy"] == "Never"


def test_hard_anti_affinity_only_per_host() -> None:
    plugin = LimitPodHardAntiAffinityTopology()

    def with_key(key: str) -> Obj:
        term = {"labelSelector": {}, "topologyKey": key}
        return pod(
            affinity={"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
        )

    plugin.validate(CREATE, with_key("platform.io/hostname"), None)
    err = refused(lambda: plugin.validate(CREATE, with_key("topology.platform.io/zone"), None))
    assert err.message == (
        'pods "p" is forbidden: affinity.PodAntiAffinity.RequiredDuringScheduling has TopologyKey '
        "topology.platform.io/zone but only key platform.io/hostname is allowed"
    )


def test_pod_node_selector(cluster: Cluster) -> None:
    namespace(cluster, "default", **{"scheduler.alpha.platform.io/node-selector": "env=prod"})
    namespace(cluster, "plain")
    config = {"clusterDefaultNodeSelector": "tier=web", "default": "env=prod,disk=ssd"}
    plugin = PodNodeSelector(cluster.store("namespaces"), config)
    p = pod(nodeSelector={"disk": "ssd"})
    plugin.admit(CREATE, p, None)
    assert p["spec"]["nodeSelector"] == {"env": "prod", "disk": "ssd"}
    err = refused(lambda: plugin.admit(CREATE, pod(nodeSelector={"env": "dev"}), None))
    assert (
        err.message
        == 'pods "p" is forbidden: pod node label selector conflicts with its namespace node label selector'
    )
    err = refused(lambda: plugin.admit(CREATE, pod(nodeSelector={"gpu": "yes"}), None))
    assert (
        err.message
        == 'pods "p" is forbidden: pod node label selector labels conflict with its namespace whitelist'
    )
    plain = pod()
    plugin.admit(attrs("CREATE", "pods", "p", namespace="plain"), plain, None)
    assert plain["spec"]["nodeSelector"] == {"tier": "web"}


def test_pod_topology_labels(cluster: Cluster) -> None:
    labels = {"topology.platform.io/zone": "z1", "topology.platform.io/region": "r1", "other": "x"}
    cluster.create(
        "nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": labels}}
    )
    plugin = PodTopologyLabels(cluster.store("nodes"))
    p = pod(nodeName="n1")
    plugin.admit(CREATE, p, None)
    assert p["metadata"]["labels"] == {
        "topology.platform.io/zone": "z1",
        "topology.platform.io/region": "r1",
    }
    binding = {"metadata": {"name": "p"}, "target": {"kind": "Node", "name": "n1"}}
    plugin.admit(attrs("CREATE", "pods", "p", sub="binding"), binding, None)
    assert binding["metadata"]["labels"]["topology.platform.io/zone"] == "z1"
    nowhere = pod(nodeName="missing")
    plugin.admit(CREATE, nowhere, None)
    assert "labels" not in nowhere["metadata"]
