"""MutatingAdmissionPolicies mutating writes end to end: apply configurations and JSON
patches through kubectl and HTTP, dry runs, updates, and kube's refusal when one fails."""

from __future__ import annotations

import json
from typing import Any

import requests

from tests.e2e.answers import internal_error
from tests.e2e.conftest import Server
from tests.e2e.crds import crd_manifest, create_crd, eventually, ns_path, version

API = "/apis/admissionregistration.platform.io/v1"


def create(admin: requests.Session, server: Server, plural: str, body: dict[str, Any]) -> None:
    body = {"apiVersion": API[6:], **body}
    r = admin.post(f"{server.url}{API}/{plural}", json=body)
    assert r.status_code == 201, r.text


def policy(name: str, label: str, *mutations: dict[str, Any], **spec: Any) -> dict[str, Any]:
    rules = [
        {
            "apiGroups": [""],
            "apiVersions": ["v1"],
            "operations": ["CREATE", "UPDATE"],
            "resources": ["configmaps"],
        }
    ]
    return {
        "kind": "MutatingAdmissionPolicy",
        "metadata": {"name": name},
        "spec": {
            "matchConstraints": {
                "resourceRules": rules,
                "objectSelector": {"matchLabels": {"probe": label}},
            },
            "reinvocationPolicy": "Never",
            "mutations": list(mutations),
            **spec,
        },
    }


def bind(admin: requests.Session, server: Server, body: dict[str, Any]) -> None:
    create(admin, server, "mutatingadmissionpolicies", body)
    name = body["metadata"]["name"]
    binding = {
        "kind": "MutatingAdmissionPolicyBinding",
        "metadata": {"name": name},
        "spec": {"policyName": name},
    }
    create(admin, server, "mutatingadmissionpolicybindings", binding)


LABEL = {
    "patchType": "ApplyConfiguration",
    "applyConfiguration": {
        "expression": 'Object{metadata: Object.metadata{labels: {"team": "blue"}},'
        ' data: {"added": string(size(object.data))}}'
    },
}
ANNOTATE = {
    "patchType": "JSONPatch",
    "jsonPatch": {
        "expression": '[JSONPatch{op: "add", path: "/metadata/annotations",'
        ' value: {"seen.example.com/by": request.userInfo.username}}]'
    },
}


def configmap(name: str, label: str, **data: str) -> dict[str, Any]:
    meta = {"name": name, "labels": {"probe": label}}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data}


def test_mutations_reach_creates_updates_and_dry_runs(
    server: Server, admin: requests.Session
) -> None:
    bind(admin, server, policy("map-team", "map", LABEL, ANNOTATE))
    url = f"{server.url}/api/v1/namespaces/default/configmaps"

    def mutated() -> bool:
        r = admin.post(url + "?dryRun=All", json=configmap("dry", "map", k="v"))
        return r.status_code == 201 and r.json()["metadata"]["labels"].get("team") == "blue"

    eventually(mutated)
    assert admin.get(url + "/dry").status_code == 404  # a dry run stores nothing
    out = server.kubectl(
        "create", "-o", "json", "-f", "-", stdin=json.dumps(configmap("m1", "map", k="v"))
    )
    made = json.loads(out.stdout)
    assert made["metadata"]["labels"] == {"probe": "map", "team": "blue"}
    assert made["data"] == {"k": "v", "added": "1"}
    assert made["metadata"]["annotations"] == {"seen.example.com/by": "platform-admin"}
    r = admin.patch(
        url + "/m1",
        json={"data": {"k": "v", "x": "y"}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert r.status_code == 200, r.text
    assert r.json()["data"] == {"k": "v", "x": "y", "added": "3"}


def test_a_failing_mutation_refuses_as_kube(server: Server, admin: requests.Session) -> None:
    broken = {
        "patchType": "JSONPatch",
        "jsonPatch": {"expression": '[JSONPatch{op: "remove", path: "/data/missing"}]'},
    }
    bind(admin, server, policy("map-broken", "broken", broken))
    bind(admin, server, policy("map-ignored", "broken", broken, failurePolicy="Ignore"))
    url = f"{server.url}/api/v1/namespaces/default/configmaps"
    eventually(lambda: admin.post(url, json=configmap("b1", "broken", k="v")).status_code == 403)
    r = admin.post(url, json=configmap("b1", "broken", k="v"))
    body = r.json()
    message = body["message"]
    assert message.startswith(
        "policy 'map-broken' with binding 'map-broken' denied request: JSON Patch: "
    )
    assert body == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": "Invalid",
        "details": {"name": "b1", "kind": "configmaps", "causes": [{"message": message}]},
        "code": 403,
    }
    assert admin.get(url + "/b1").status_code == 404


def test_mutations_see_the_kinds_defaults(server: Server, admin: requests.Session) -> None:
    """kube's decoder defaults a body before admission: a mutation reads ``type`` of a
    Secret that did not set it (Opaque), on create and on an update that left it out."""
    rules = [
        {
            "apiGroups": [""],
            "apiVersions": ["v1"],
            "operations": ["CREATE", "UPDATE"],
            "resources": ["secrets"],
        }
    ]
    body = policy(
        "defaults-seen",
        "defaults",
        {
            "patchType": "ApplyConfiguration",
            "applyConfiguration": {
                "expression": "Object{metadata: Object.metadata{labels: {'seen': object.type}}}"
            },
        },
    )
    body["spec"]["matchConstraints"]["resourceRules"] = rules
    bind(admin, server, body)
    url = f"{server.url}/api/v1/namespaces/default/secrets"
    secret = {"metadata": {"name": "defaults-seen", "labels": {"probe": "defaults"}}}

    def labels() -> dict[str, str]:
        r = admin.post(url, json=secret, params={"dryRun": "All"})
        assert r.status_code == 201, r.text
        return dict(r.json()["metadata"]["labels"])

    eventually(lambda: labels().get("seen") == "Opaque")
    assert admin.post(url, json=secret).status_code == 201
    update = {**secret, "metadata": {**secret["metadata"], "labels": {"probe": "defaults"}}}
    r = admin.put(f"{url}/defaults-seen", json=update)
    assert r.status_code == 200, r.text
    assert r.json()["metadata"]["labels"] == {"probe": "defaults", "seen": "Opaque"}
    assert r.json()["type"] == "Opaque"
    for plural in ("mutatingadmissionpolicybindings", "mutatingadmissionpolicies"):
        assert admin.delete(f"{server.url}{API}/{plural}/defaults-seen").status_code == 200


def _service_policy(name: str, label: str, *mutations: dict[str, Any]) -> dict[str, Any]:
    body = policy(name, label, *mutations)
    rules = body["spec"]["matchConstraints"]["resourceRules"]
    rules[0]["resources"] = ["services"]
    return body


def test_a_services_addresses_are_allocated_after_the_mutations(
    server: Server, admin: requests.Session
) -> None:
    """kube allocates a Service's cluster IP and node ports in its store, after every
    mutating policy and webhook: they see none on create, and one they set is the one
    allocated (not a second address beside one allocated before them)."""
    kubernetes = admin.get(f"{server.url}/api/v1/namespaces/default/services/kubernetes").json()
    # In the range's static part, which random allocation leaves for last (KEP-3070).
    picked = kubernetes["spec"]["clusterIP"].rsplit(".", 1)[0] + ".7"
    saw = {
        "patchType": "ApplyConfiguration",
        "applyConfiguration": {
            "expression": "Object{metadata: Object.metadata{annotations: {"
            '"saw-cluster-ip": has(object.spec.clusterIP) ? "yes" : "no", '
            '"saw-node-port": object.spec.ports.exists(p, has(p.nodePort)) ? "yes" : "no"}}}'
        },
    }
    pick = {
        "patchType": "ApplyConfiguration",
        "applyConfiguration": {
            "expression": f'Object{{spec: Object.spec{{clusterIP: "{picked}"}}}}'
        },
    }
    bind(admin, server, _service_policy("map-saw", "svc-saw", saw))
    bind(admin, server, _service_policy("map-pick", "svc-pick", pick))
    url = f"{server.url}/api/v1/namespaces/default/services"

    def service(name: str, label: str) -> dict[str, Any]:
        meta = {"name": name, "labels": {"probe": label}}
        spec = {"type": "NodePort", "ports": [{"port": 80}], "selector": {"app": name}}
        return {"apiVersion": "v1", "kind": "Service", "metadata": meta, "spec": spec}

    def annotated() -> bool:
        r = admin.post(url + "?dryRun=All", json=service("dry", "svc-saw"))
        return r.status_code == 201 and "saw-cluster-ip" in r.json()["metadata"]["annotations"]

    eventually(annotated)
    r = admin.post(url, json=service("seen", "svc-saw"))
    assert r.status_code == 201, r.text
    made = r.json()
    assert made["metadata"]["annotations"] == {"saw-cluster-ip": "no", "saw-node-port": "no"}
    assert made["spec"]["clusterIP"] and made["spec"]["ports"][0]["nodePort"]
    r = admin.post(url, json=service("picked", "svc-pick"))
    assert r.status_code == 201, r.text
    assert r.json()["spec"]["clusterIP"] == picked
    assert r.json()["spec"]["clusterIPs"] == [picked]
    addresses = admin.get(f"{server.url}/apis/networking.platform.io/v1/ipaddresses").json()
    owners = {
        a["metadata"]["name"]: a["spec"]["parentRef"]["name"]
        for a in addresses["items"]
        if a["spec"]["parentRef"]["namespace"] == "default"
    }
    assert owners[picked] == "picked"
    assert sorted(owners.values()).count("picked") == 1  # no address left behind


def test_a_patch_the_type_cannot_hold_is_an_internal_error(
    server: Server, admin: requests.Session
) -> None:
    """kube decodes a JSON patch's result strictly into the object's type; what does not
    decode is returned as kube's internal error whatever the failure policy (as kube's
    reference answered), and nothing is stored."""
    number = {
        "patchType": "JSONPatch",
        "jsonPatch": {"expression": '[JSONPatch{op: "add", path: "/data/n", value: 1}]'},
    }
    unknown = {
        "patchType": "JSONPatch",
        "jsonPatch": {"expression": '[JSONPatch{op: "add", path: "/spec", value: "x"}]'},
    }
    bind(admin, server, policy("map-number", "number", number, failurePolicy="Ignore"))
    bind(admin, server, policy("map-unknown", "unknown", unknown))
    url = f"{server.url}/api/v1/namespaces/default/configmaps"
    for label, message in (
        (
            "number",
            "json: cannot unmarshal number into Go struct field ConfigMap.data of type string",
        ),
        ("unknown", 'strict decoding error: unknown field "spec"'),
    ):

        def refused(label: str = label) -> bool:
            probe = configmap("t1", label, k="v")
            return admin.post(url + "?dryRun=All", json=probe).status_code == 500

        eventually(refused)
        r = admin.post(url, json=configmap("t1", label, k="v"))
        assert r.json() == internal_error(message)
        assert admin.get(url + "/t1").status_code == 404


def test_an_ifneeded_policy_runs_again_after_a_mutation(
    server: Server, admin: requests.Session
) -> None:
    """A mutation made sends kube's admission chain round its mutations once more, and a
    policy with reinvocationPolicy IfNeeded that ran runs again then: its count of the
    data sees the key it added (as kube's reference answered); a Never one runs once."""
    count = {
        "patchType": "JSONPatch",
        "jsonPatch": {
            "expression": '[JSONPatch{op: "add", path: "/data/n", value: string(size(object.data))}]'
        },
    }
    bind(admin, server, policy("map-again", "again", count, reinvocationPolicy="IfNeeded"))
    bind(admin, server, policy("map-once", "once", count))
    url = f"{server.url}/api/v1/namespaces/default/configmaps?dryRun=All"
    for label, expected in (("again", "2"), ("once", "1")):

        def counted(label: str = label) -> bool:
            r = admin.post(url, json=configmap("n1", label, k="v"))
            return r.status_code == 201 and "n" in r.json()["data"]

        eventually(counted)
        r = admin.post(url, json=configmap("n1", label, k="v"))
        assert r.json()["data"] == {"k": "v", "n": expected}


def test_a_policy_sees_the_requests_namespace_in_the_object(
    server: Server, admin: requests.Session
) -> None:
    """kube's handlers put the request's namespace in the object before admission: a
    body without one is seen with it (as kube's reference answered)."""
    seen = {
        "patchType": "JSONPatch",
        "jsonPatch": {
            "expression": '[JSONPatch{op: "add", path: "/data/ns",'
            ' value: object.metadata.?namespace.orValue("none")}]'
        },
    }
    bind(admin, server, policy("map-ns", "ns", seen))
    url = f"{server.url}/api/v1/namespaces/default/configmaps?dryRun=All"

    def added() -> Any:
        return admin.post(url, json=configmap("ns1", "ns", k="v")).json()["data"].get("ns")

    assert eventually(added) == "default"


def test_a_custom_resource_is_read_back_and_defaulted_after_a_patch(
    server: Server, admin: requests.Session
) -> None:
    """A patch that nulls a defaulted field gets the default back, one that drops the
    kind is kube's internal error quoting the document (as kube's reference answered)."""
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {"mode": {"type": "string", "default": "auto"}},
            }
        },
    }
    group = "readback.example.com"
    versions = [version("v1", schema=schema), version("v2", storage=False, schema=schema)]
    create_crd(admin, server, crd_manifest(group, versions=versions))
    rules = [
        {
            "apiGroups": [group],
            "apiVersions": ["v1"],
            "operations": ["CREATE"],
            "resources": ["crontabs"],
        }
    ]
    for name, expression in (
        ("map-null", '[JSONPatch{op: "add", path: "/spec/mode", value: null}]'),
        ("map-kindless", '[JSONPatch{op: "remove", path: "/kind"}]'),
        ("map-v2", f'[JSONPatch{{op: "replace", path: "/apiVersion", value: "{group}/v2"}}]'),
        ("map-v9", f'[JSONPatch{{op: "replace", path: "/apiVersion", value: "{group}/v9"}}]'),
    ):
        mutation = {"patchType": "JSONPatch", "jsonPatch": {"expression": expression}}
        body = policy(name, name, mutation)
        body["spec"]["matchConstraints"] = {
            "resourceRules": rules,
            "objectSelector": {"matchLabels": {"probe": name}},
        }
        bind(admin, server, body)
    url = f"{server.url}{ns_path(group, 'default')}?dryRun=All"

    def tab(label: str) -> dict[str, Any]:
        return {
            "apiVersion": f"{group}/v1",
            "kind": "CronTab",
            "metadata": {"name": "t", "labels": {"probe": label}},
            "spec": {"mode": "manual"},
        }

    def defaulted() -> Any:
        return admin.post(url, json=tab("map-null")).json().get("spec")

    assert eventually(lambda: defaulted() == {"mode": "auto"})
    eventually(lambda: admin.post(url, json=tab("map-kindless")).status_code == 500)
    message = admin.post(url, json=tab("map-kindless")).json()["message"]
    assert message.startswith(
        "Internal error occurred: Object 'Kind' is missing in "
        f'\'{{"apiVersion":"{group}/v1","metadata":{{'
    )
    # another version of the resource converts back; one it does not have is kube's
    # conversion error
    assert eventually(lambda: admin.post(url, json=tab("map-v2")).status_code == 201)
    assert admin.post(url, json=tab("map-v2")).json()["apiVersion"] == f"{group}/v1"
    eventually(lambda: admin.post(url, json=tab("map-v9")).status_code == 500)
    assert admin.post(url, json=tab("map-v9")).json() == internal_error(
        f"failed to convert object: request to convert CR from an invalid group/version: {group}/v9"
    )
