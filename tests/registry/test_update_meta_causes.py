"""How many times an update's metadata problem is a cause, as kube-apiserver v1.36
answered the same patches (reference): its validateCommonFields checks the metadata as
a create's and as an update's, then the kind's ValidateUpdate checks it again, as an
update's (most kinds), as a create's (FlowSchemas, LimitRanges, EndpointSlices, webhook
configurations), both (ConfigMaps, Secrets, Pods, Jobs, ...), twice as a create's
(PersistentVolumes) or not at all (PodDisruptionBudgets).  The message names each
problem once."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from twisted.internet.defer import succeed

from platform_api.errors import StatusError
from platform_api.registry.store import Store
from platform_api.scheme.catalog import builtin_scheme
from platform_api.storage.lmdb_store import LMDBStorage, open_environment
from tests.synchronous import run

Obj = dict[str, Any]
OWNER = {"apiVersion": "v1", "kind": "Pod", "name": "", "uid": ""}
CHANGES: dict[str, Callable[[Obj], None]] = {
    "labels": lambda meta: meta.update(labels={"-x": "y"}),
    "uid": lambda meta: meta.update(uid="x"),
    "finalizers": lambda meta: meta.update(finalizers=["bad/x/y"]),
    "owners": lambda meta: meta.update(ownerReferences=[OWNER]),
}
DEPLOYMENT = {
    "replicas": 1,
    "selector": {"matchLabels": {"a": "b"}},
    "template": {
        "metadata": {"labels": {"a": "b"}},
        "spec": {"containers": [{"name": "c", "image": "i"}]},
    },
}
PV = {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/x"}}
KINDS: dict[str, tuple[str, str, str, Obj]] = {
    "configmaps": ("", "v1", "ConfigMap", {"data": {"a": "b"}}),
    "deployments": ("apps", "apps/v1", "Deployment", {"spec": DEPLOYMENT}),
    "clusterroles": (
        "rbac.authorization.platform.io",
        "rbac.authorization.platform.io/v1",
        "ClusterRole",
        {},
    ),
    "poddisruptionbudgets": (
        "policy",
        "policy/v1",
        "PodDisruptionBudget",
        {"spec": {"minAvailable": 1}},
    ),
    "limitranges": ("", "v1", "LimitRange", {"spec": {"limits": []}}),
    "persistentvolumes": ("", "v1", "PersistentVolume", {"spec": PV}),
    "validatingwebhookconfigurations": (
        "admissionregistration.platform.io",
        "admissionregistration.platform.io/v1",
        "ValidatingWebhookConfiguration",
        {},
    ),
}
# (kind, change) -> causes, as the reference counted them
EXPECTED = {
    ("configmaps", "labels"): 4,
    ("configmaps", "uid"): 2,
    ("configmaps", "finalizers"): 2,
    ("configmaps", "owners"): 8,  # two per check: name and uid
    ("deployments", "labels"): 3,
    ("deployments", "uid"): 2,
    ("deployments", "finalizers"): 1,
    ("deployments", "owners"): 6,
    ("clusterroles", "finalizers"): 2,
    ("poddisruptionbudgets", "labels"): 2,  # the generic checks alone
    ("poddisruptionbudgets", "uid"): 1,
    ("limitranges", "uid"): 1,  # the kind checks the metadata as a create's
    ("limitranges", "finalizers"): 2,
    ("persistentvolumes", "finalizers"): 3,  # as a create's, twice
    ("persistentvolumes", "uid"): 1,
    ("validatingwebhookconfigurations", "labels"): 3,
    ("validatingwebhookconfigurations", "uid"): 1,
}


@pytest.fixture(scope="module")
def storage(tmp_path_factory: pytest.TempPathFactory) -> LMDBStorage:
    path = tmp_path_factory.mktemp("causes") / "db"
    return LMDBStorage(open_environment(str(path), 64 * 2**20), lambda w: succeed(w()))


@pytest.mark.parametrize(("plural", "change"), sorted(EXPECTED), ids="-".join)
def test_a_metadata_problem_is_counted_as_in_kube(
    storage: LMDBStorage, plural: str, change: str
) -> None:
    group, api_version, kind, rest = KINDS[plural]
    rt = builtin_scheme().lookup(group, "v1", plural)
    assert rt is not None
    store = Store(rt, storage)
    namespace = "default" if rt.namespaced else ""
    name = f"{plural}-{change}"
    body = {"apiVersion": api_version, "kind": kind, "metadata": {"name": name}, **rest}
    run(store.create(namespace, copy.deepcopy(body)))

    def changed(old: Obj) -> Obj:
        new = copy.deepcopy(old)
        CHANGES[change](new["metadata"])
        return new

    with pytest.raises(StatusError) as e:
        run(store.update(namespace, name, changed))
    causes = e.value.details["causes"]
    assert (e.value.code, len(causes)) == (422, EXPECTED[(plural, change)])
    first = f"{causes[0]['field']}: {causes[0]['message']}"
    assert e.value.message.count(first) == 1


@pytest.mark.parametrize(
    ("name", "spec", "message"),
    [
        # kube's ValidatePodDisruptionBudget checks the spec alone; BeforeCreate then
        # checks the metadata (names as path segments, no finalizer rules)
        ("A_B", {"minAvailable": 1}, None),
        (
            "",
            {"minAvailable": "-1"},
            'PodDisruptionBudget.policy "" is invalid: spec.minAvailable: Invalid value: "-1": '
            "a valid percent string must be a numeric string followed by an ending '%' (e.g. "
            "'1%',  or '93%', regex used for validation is '[0-9]+%')",
        ),
        (
            "a/b",
            {"minAvailable": 1},
            'PodDisruptionBudget.policy "a/b" is invalid: metadata.name: Invalid value: "a/b": '
            "may not contain '/'",
        ),
    ],
)
def test_a_budgets_metadata_is_checked_after_its_spec(
    storage: LMDBStorage, name: str, spec: Obj, message: str | None
) -> None:
    """The reference's answers to these creates."""
    rt = builtin_scheme().lookup("policy", "v1", "poddisruptionbudgets")
    assert rt is not None
    meta = {"name": name, "finalizers": ["bad"]}
    body = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": meta}
    body["spec"] = {**spec, "selector": {"matchLabels": {"a": "b"}}}
    created = Store(rt, storage).create("default", body)
    if message is None:
        run(created)
        return
    with pytest.raises(StatusError) as e:
        run(created)
    assert (e.value.code, e.value.message) == (422, message)
