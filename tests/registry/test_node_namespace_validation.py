"""Nodes, Namespaces and IngressClasses refused as kube-apiserver v1.36 refused each
(reference: dry-run creates, and dry-run updates of a stored object, of its ``/status``
and, for namespaces, ``/finalize``); "" where kube accepted.  Only the names this server
brands differ (``scheduler.alpha.platform.io``, ``networking.platform.io``).

The cases, with kube's aggregate after ``is invalid: ``, are in
fixtures/node_namespace_ingressclass_kube.json (Go's map order varies, so each case names
one resource of a quantity map)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from platform_api import errors
from platform_api.registry.prepare import before_create, before_update
from platform_api.registry.strategy import FinalizeStrategy, StatusStrategy, Strategy, strategy_for
from platform_api.scheme.catalog import builtin_scheme
from platform_api.scheme.types import ResourceType

Obj = dict[str, Any]
KUBE = json.loads(
    (Path(__file__).parent / "fixtures" / "node_namespace_ingressclass_kube.json").read_text()
)
NOW = "2026-01-01T00:00:00Z"
NODE = ("", "nodes")
NAMESPACE = ("", "namespaces")
INGRESS_CLASS = ("networking.platform.io", "ingressclasses")
CONFIG_MAP = {"configMap": {"namespace": "a", "name": "b", "kubeletConfigKey": "k"}}
NODE_BASE: Obj = {
    "metadata": {"name": "vhelper-gen-node", "labels": {"a": "b"}},
    "spec": {
        "podCIDRs": ["10.0.0.0/24"],
        "providerID": "p://1",
        "externalID": "e1",
        "configSource": CONFIG_MAP,
    },
    "status": {
        "capacity": {"cpu": "2"},
        "addresses": [{"type": "InternalIP", "address": "1.2.3.4"}],
        "config": {"active": CONFIG_MAP},
        "declaredFeatures": ["Abc"],
    },
}
NAMESPACE_BASE: Obj = {
    "metadata": {"name": "vhelper-gen-ns"},
    "spec": {"finalizers": ["example.com/x"]},
}
INGRESS_CLASS_BASE: Obj = {
    "metadata": {"name": "vhelper-gen-ic"},
    "spec": {"controller": "acme.io/foo"},
}


def _resource(which: tuple[str, str]) -> ResourceType:
    rt = builtin_scheme().lookup(which[0], "v1", which[1])
    assert rt is not None
    return rt


def _refusal(write: Any) -> str:
    """What kube's Invalid message says after the object's name ("" when accepted)."""
    try:
        write()
    except errors.StatusError as e:
        assert (e.code, e.reason) == (422, "Invalid"), e.message
        return e.message.split(" is invalid: ", 1)[1]
    return ""


def create(which: tuple[str, str], body: Obj) -> str:
    rt = _resource(which)
    obj = copy.deepcopy(body)
    obj.setdefault("metadata", {}).setdefault("name", "x1")
    return _refusal(lambda: before_create(rt, strategy_for(rt), "", obj, NOW))


def stored(which: tuple[str, str], body: Obj) -> Obj:
    """``body`` as the store keeps it after a create."""
    rt = _resource(which)
    obj = copy.deepcopy(body)
    before_create(rt, strategy_for(rt), "", obj, NOW)
    obj["metadata"]["resourceVersion"] = "1"
    return obj


def merged(obj: Obj, patch: Obj) -> Obj:
    """A JSON merge patch: None removes a field."""
    out = copy.deepcopy(obj)
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merged(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def _strategy(rt: ResourceType, subresource: str) -> Strategy:
    main = strategy_for(rt)
    if not subresource:
        return main
    own = getattr(main, "subresource_strategies", dict)()
    defaults = {"status": StatusStrategy(main), "finalize": FinalizeStrategy(main)}
    strategy: Strategy = {**defaults, **own}[subresource]
    return strategy


def update(which: tuple[str, str], old: Obj, subresource: str, patch: Obj) -> str:
    rt = _resource(which)
    new = merged(old, patch)
    target = ("", old["metadata"]["name"])
    strategy = _strategy(rt, subresource.strip("/"))
    return _refusal(lambda: before_update(rt, strategy, not subresource, target, new, old))


def _cases(table: str) -> Any:
    return pytest.mark.parametrize("case", KUBE[table], ids=[c["name"] for c in KUBE[table]])


@_cases("node_creates")
def test_node_creates(case: Obj) -> None:
    assert create(NODE, case["body"]) == case["message"]


@_cases("node_updates")
def test_node_updates(case: Obj) -> None:
    old = stored(NODE, NODE_BASE)
    assert update(NODE, old, case["subresource"], case["patch"]) == case["message"]


@_cases("namespace_creates")
def test_namespace_creates(case: Obj) -> None:
    assert create(NAMESPACE, case["body"]) == case["message"]


@_cases("namespace_updates")
def test_namespace_updates(case: Obj) -> None:
    old = stored(NAMESPACE, NAMESPACE_BASE)
    assert update(NAMESPACE, old, case["subresource"], case["patch"]) == case["message"]


@_cases("terminating_namespace_updates")
def test_terminating_namespace_updates(case: Obj) -> None:
    old = stored(NAMESPACE, {"metadata": {"name": "vhelper-gen-del"}})
    old["metadata"]["deletionTimestamp"] = NOW
    old["status"]["phase"] = "Terminating"
    assert update(NAMESPACE, old, case["subresource"], case["patch"]) == case["message"]


@_cases("ingress_class_creates")
def test_ingress_class_creates(case: Obj) -> None:
    assert create(INGRESS_CLASS, case["body"]) == case["message"]


@_cases("ingress_class_updates")
def test_ingress_class_updates(case: Obj) -> None:
    old = stored(INGRESS_CLASS, INGRESS_CLASS_BASE)
    assert update(INGRESS_CLASS, old, case["subresource"], case["patch"]) == case["message"]


def _written(which: tuple[str, str], old: Obj, subresource: str, patch: Obj) -> Obj:
    """What an accepted update stores."""
    rt = _resource(which)
    new = merged(old, patch)
    strategy = _strategy(rt, subresource.strip("/"))
    before_update(rt, strategy, not subresource, ("", old["metadata"]["name"]), new, old)
    return new


def test_node_defaults_and_drops() -> None:
    """kube's conversions keep podCIDR and podCIDRs in step (the single field wins),
    allocatable defaults to capacity, the removed dynamic config is dropped."""
    node = stored(NODE, NODE_BASE)
    assert node["spec"]["podCIDR"] == "10.0.0.0/24"
    assert "configSource" not in node["spec"] and "config" not in node["status"]
    assert node["status"]["allocatable"] == {"cpu": "2"}
    older = stored(NODE, {"metadata": {"name": "n"}, "spec": {"podCIDR": "10.1.0.0/24"}})
    assert older["spec"]["podCIDRs"] == ["10.1.0.0/24"]
    kept = _written(NODE, node, "", {"spec": {"podCIDRs": ["10.2.0.0/24"]}})
    assert kept["spec"]["podCIDRs"] == ["10.0.0.0/24"]
    status = _written(
        NODE, node, "/status", {"status": {"capacity": {"cpu": "4"}, "allocatable": None}}
    )
    assert status["status"]["allocatable"] == {"cpu": "4"}
    config = _written(NODE, node, "/status", {"status": {"config": {"active": CONFIG_MAP}}})
    assert "config" not in config["status"]


def test_node_warnings() -> None:
    node = {"spec": {"externalID": "x", "podCIDRs": ["10.0.0.0/24", "FD00:0::/64"]}}
    assert strategy_for(_resource(NODE)).warnings(node, None) == [
        "spec.externalID: this field is deprecated, and is unused by Kubernetes",
        'spec.podCIDRs[1]: IPv6 CIDR value "FD00:0::/64" should be in RFC 5952 canonical '
        'format ("fd00::/64")',
    ]


def test_namespace_status_and_finalize_writes() -> None:
    """``/status`` defaults an empty phase to Active; ``/finalize`` takes the request's
    metadata and finalizers and keeps the stored status."""
    namespace = stored(NAMESPACE, NAMESPACE_BASE)
    status = _written(NAMESPACE, namespace, "/status", {"status": None})
    assert status["status"] == {"phase": "Active"}
    patch = {
        "metadata": {"labels": {"x": "y"}},
        "spec": {"finalizers": []},
        "status": {"phase": "Bogus"},
    }
    finalized = _written(NAMESPACE, namespace, "/finalize", patch)
    assert finalized["spec"] == {} and finalized["status"] == {"phase": "Active"}
    assert finalized["metadata"]["labels"] == {
        "platform.io/metadata.name": "vhelper-gen-ns",
        "x": "y",
    }


def test_ingress_class_generation_and_default_scope() -> None:
    ingress_class = stored(INGRESS_CLASS, INGRESS_CLASS_BASE)
    assert ingress_class["metadata"]["generation"] == 1
    parameters = {"spec": {"parameters": {"kind": "K", "name": "n"}}}
    changed = _written(INGRESS_CLASS, ingress_class, "", parameters)
    assert changed["metadata"]["generation"] == 2
    assert changed["spec"]["parameters"]["scope"] == "Cluster"
    labelled = _written(INGRESS_CLASS, ingress_class, "", {"metadata": {"labels": {"a": "b"}}})
    assert labelled["metadata"]["generation"] == 1
