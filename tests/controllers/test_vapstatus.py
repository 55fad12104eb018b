"""The validatingadmissionpolicy-status-controller over real storage, the hub and a test clock."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from platform_api.controllers import registry
from platform_api.controllers.vapstatus import FIELD_MANAGER, GROUP, VAPStatusController
from platform_api.scheme.catalog import builtin_scheme
from tests.authorization.rbac_cluster import Cluster

Obj = dict[str, Any]


def vap(name: str, expression: str) -> Obj:
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name},
        "spec": {
            "matchConstraints": {
                "resourceRules": [
                    {
                        "apiGroups": ["apps"],
                        "apiVersions": ["v1"],
                        "resources": ["deployments"],
                        "operations": ["CREATE"],
                    }
                ]
            },
            "validations": [{"expression": expression}],
        },
    }


def test_status_written_once_per_generation(tmp_path: Path) -> None:
    cluster = Cluster(str(tmp_path))
    store = cluster.stores[(GROUP, "v1", "validatingadmissionpolicies")]
    cluster.run(store.create("", vap("before", "object.spec.replicas > 1")))
    controller = VAPStatusController(store, builtin_scheme(), cluster.hub, cluster.clock)
    controller.start()
    cluster.settle()
    before = store.get("", "before").object
    assert before["status"] == {"observedGeneration": 1, "typeChecking": {}}
    # (created past the REST layer it had no managedFields: apply adds before-first-apply)
    [entry] = [e for e in before["metadata"]["managedFields"] if e["manager"] == FIELD_MANAGER]
    assert entry["manager"] == FIELD_MANAGER
    assert (entry["operation"], entry["subresource"]) == ("Apply", "status")
    assert entry["fieldsV1"] == {"f:status": {"f:observedGeneration": {}, "f:typeChecking": {}}}

    cluster.run(store.create("", vap("after", "object.foo == 1")))
    cluster.settle()
    after = store.get("", "after").object
    assert after["status"] == {
        "observedGeneration": 1,
        "typeChecking": {
            "expressionWarnings": [
                {
                    "fieldRef": "spec.validations[0].expression",
                    "warning": "apps/v1, Kind=Deployment: ERROR: <input>:1:7: undefined field"
                    " 'foo'\n | object.foo == 1\n | ......^\n",
                }
            ]
        },
    }
    version = after["metadata"]["resourceVersion"]
    cluster.settle()  # its own status write does not check it again
    assert store.get("", "after").object["metadata"]["resourceVersion"] == version

    # A new generation is checked again; the fixed policy loses its warnings.
    def fix(obj: Obj | None) -> Obj:
        assert obj is not None
        obj["spec"]["validations"] = [{"expression": "object.spec.replicas > 1"}]
        return obj

    cluster.run(store.update("", "after", fix))
    cluster.settle()
    fixed = store.get("", "after").object
    assert fixed["metadata"]["generation"] == 2
    assert fixed["status"] == {"observedGeneration": 2, "typeChecking": {}}
    controller.stop()


def test_registered_on_by_default_under_kube_s_names() -> None:
    name = "validatingadmissionpolicy-status-controller"
    assert registry.names()["validatingadmissionpolicy-status"] == name
    assert name in registry.default_on()
    assert name not in registry.parse("*,-validatingadmissionpolicy-status")
