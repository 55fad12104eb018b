"""MutatingAdmissionPolicies and bindings through stock kubectl and HTTP, as kube-apiserver
v1.36 serves them: create, read, list, update, delete, the ``kubectl get`` columns,
discovery, and a bad policy's 422 body.  The policies match a group no other test writes,
so the admission plugin enforcing them changes nothing elsewhere."""

from __future__ import annotations

import json

import requests

from platform_api.codec import protobuf
from tests.e2e.conftest import Server

GROUP = "admissionregistration.platform.io"
POLICIES = f"/apis/{GROUP}/v1/mutatingadmissionpolicies"
BINDINGS = f"/apis/{GROUP}/v1/mutatingadmissionpolicybindings"
PB = "application/vnd.kubernetes.protobuf"

VALID = f"""\
apiVersion: {GROUP}/v1
kind: MutatingAdmissionPolicy
metadata:
  name: e2e-map-labels
spec:
  paramKind: {{apiVersion: v1, kind: ConfigMap}}
  matchConstraints:
    resourceRules:
    - apiGroups: [e2e-map.example.com]
      apiVersions: [v1]
      operations: [CREATE, UPDATE]
      resources: [widgets]
  reinvocationPolicy: Never
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: 'Object{{metadata: Object.metadata{{labels: {{"team": params.data.team}}}}}}'
  - patchType: JSONPatch
    jsonPatch:
      expression: '[JSONPatch{{op: "add", path: "/metadata/annotations", value: {{}}}}]'
---
apiVersion: {GROUP}/v1
kind: MutatingAdmissionPolicyBinding
metadata:
  name: e2e-map-labels
spec:
  policyName: e2e-map-labels
  paramRef: {{name: team, namespace: default, parameterNotFoundAction: Allow}}
"""

BAD = f"""\
apiVersion: {GROUP}/v1
kind: MutatingAdmissionPolicy
metadata:
  name: e2e-map-bad
spec:
  failurePolicy: Sometimes
  matchConstraints:
    resourceRules:
    - apiGroups: [apps]
      apiVersions: [v1]
      operations: [CREATE, DELETE]
      resources: [deployments]
  variables:
  - name: count
    expression: "1"
  mutations:
  - patchType: JSONPatch
    applyConfiguration:
      expression: "Object{{}}"
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: "variables.count"
  reinvocationPolicy: Always
"""

# What kube-apiserver v1.36 answers for BAD (group rebranded), cause by cause.
BAD_CAUSES = [
    (
        "FieldValueNotSupported",
        'Unsupported value: "Sometimes": supported values: "Fail", "Ignore"',
        "spec.failurePolicy",
    ),
    (
        "FieldValueNotSupported",
        'Unsupported value: "DELETE": supported values: "*", "CONNECT", "CREATE", "UPDATE"',
        "spec.matchConstraints.resourceRules.operations",
    ),
    (
        "FieldValueRequired",
        "Required value: must be specified when patchType is JSONPatch",
        "spec.mutations[0].jsonPatch",
    ),
    (
        "FieldValueInvalid",
        'Invalid value: "{applyConfiguration}": must not be specified when patchType is JSONPatch',
        "spec.mutations[0].applyConfiguration",
    ),
    (
        "FieldValueInvalid",
        'Invalid value: "variables.count": must evaluate to Object but got int',
        "spec.mutations[1].applyConfiguration.expression",
    ),
    (
        "FieldValueNotSupported",
        'Unsupported value: "Always": supported values: "IfNeeded", "Never"',
        "spec.reinvocationPolicy",
    ),
]


def test_create_read_update_delete(server: Server, admin: requests.Session) -> None:
    try:
        _create_and_read_back(server, admin)
        _update_and_delete(server, admin)
    finally:
        server.kubectl("delete", "--ignore-not-found", "-f", "-", stdin=VALID)


def _create_and_read_back(server: Server, admin: requests.Session) -> None:
    out = server.kubectl("apply", "-f", "-", stdin=VALID).stdout
    assert out.splitlines() == [
        f"mutatingadmissionpolicy.{GROUP}/e2e-map-labels created",
        f"mutatingadmissionpolicybinding.{GROUP}/e2e-map-labels created",
    ]
    policy = ("mutatingadmissionpolicies", "e2e-map-labels")  # other tests' policies too
    for args in (policy, (*policy, "-o", "wide")):
        table = server.kubectl("get", *args).stdout.splitlines()
        assert table[0].split() == ["NAME", "MUTATIONS", "PARAMKIND", "AGE"]
        assert table[1].split()[:3] == ["e2e-map-labels", "2", "v1/ConfigMap"]
    table = server.kubectl(
        "get", "mutatingadmissionpolicybindings", "e2e-map-labels", "-o", "wide"
    ).stdout
    assert table.splitlines()[0].split() == ["NAME", "POLICYNAME", "PARAMREF", "AGE"]
    assert table.splitlines()[1].split()[:3] == ["e2e-map-labels", "e2e-map-labels", "default/team"]
    got = json.loads(
        server.kubectl("get", "mutatingadmissionpolicy", "e2e-map-labels", "-o", "json").stdout
    )
    assert "status" not in got and got["metadata"]["generation"] == 1
    spec = got["spec"]
    assert (spec["failurePolicy"], spec["reinvocationPolicy"]) == ("Fail", "Never")
    assert spec["matchConstraints"]["matchPolicy"] == "Equivalent"
    assert spec["matchConstraints"]["namespaceSelector"] == {}
    assert spec["matchConstraints"]["resourceRules"][0]["scope"] == "*"
    listed = admin.get(server.url + POLICIES).json()
    assert listed["kind"] == "MutatingAdmissionPolicyList"
    assert "e2e-map-labels" in [item["metadata"]["name"] for item in listed["items"]]
    as_pb = admin.get(server.url + BINDINGS + "/e2e-map-labels", headers={"Accept": PB})
    assert as_pb.headers["Content-Type"] == PB
    assert protobuf.decode(as_pb.content)["spec"] == {
        "policyName": "e2e-map-labels",
        "paramRef": {"name": "team", "namespace": "default", "parameterNotFoundAction": "Allow"},
    }


def _update_and_delete(server: Server, admin: requests.Session) -> None:
    changed = VALID.replace("reinvocationPolicy: Never", "reinvocationPolicy: IfNeeded")
    out = server.kubectl("apply", "-f", "-", stdin=changed).stdout
    assert out.splitlines() == [
        f"mutatingadmissionpolicy.{GROUP}/e2e-map-labels configured",
        f"mutatingadmissionpolicybinding.{GROUP}/e2e-map-labels unchanged",
    ]
    server.kubectl("label", "mutatingadmissionpolicy", "e2e-map-labels", "a=b")
    got = admin.get(server.url + POLICIES + "/e2e-map-labels").json()
    assert got["metadata"]["generation"] == 2  # the label is no spec change
    assert got["spec"]["reinvocationPolicy"] == "IfNeeded"
    out = server.kubectl("delete", "-f", "-", stdin=VALID).stdout
    assert out.splitlines() == [
        f'mutatingadmissionpolicy.{GROUP} "e2e-map-labels" deleted',
        f'mutatingadmissionpolicybinding.{GROUP} "e2e-map-labels" deleted',
    ]
    r = admin.get(server.url + POLICIES + "/e2e-map-labels")
    assert (r.status_code, r.json()["message"]) == (
        404,
        f'mutatingadmissionpolicies.{GROUP} "e2e-map-labels" not found',
    )


def test_updates_need_a_resource_version(server: Server, admin: requests.Session) -> None:
    """kube's strategy allows no unconditional update."""
    policy = VALID.split("---", maxsplit=1)[0].replace("e2e-map-labels", "e2e-map-rv")
    server.kubectl("apply", "-f", "-", stdin=policy)
    try:
        got = admin.get(server.url + POLICIES + "/e2e-map-rv").json()
        del got["metadata"]["resourceVersion"]
        r = admin.put(server.url + POLICIES + "/e2e-map-rv", json=got)
        assert (r.status_code, r.json()["reason"]) == (422, "Invalid")
        assert r.json()["details"]["causes"] == [
            {
                "reason": "FieldValueInvalid",
                "message": "Invalid value: 0: must be specified for an update",
                "field": "metadata.resourceVersion",
            }
        ]
        assert r.json()["message"] == (
            f'mutatingadmissionpolicies.{GROUP} "e2e-map-rv" is invalid: '
            "metadata.resourceVersion: Invalid value: 0: must be specified for an update"
        )
    finally:
        server.kubectl("delete", "mutatingadmissionpolicy", "e2e-map-rv")


def test_discovery(server: Server) -> None:
    lines = server.kubectl("api-resources", "--api-group", GROUP, "-o", "wide").stdout.splitlines()
    rows = {line.split()[0]: line.split()[1:] for line in lines[1:]}
    verbs = "create,delete,deletecollection,get,list,patch,update,watch"
    for name, kind in (
        ("mutatingadmissionpolicies", "MutatingAdmissionPolicy"),
        ("mutatingadmissionpolicybindings", "MutatingAdmissionPolicyBinding"),
    ):
        assert rows[name] == [f"{GROUP}/v1", "false", kind, verbs, "api-extensions"]


def test_explain(server: Server) -> None:
    """kubectl explain reads the kinds' OpenAPI schemas from this server."""
    out = server.kubectl("explain", "mutatingadmissionpolicies.spec.mutations").stdout
    assert out.startswith(
        f"GROUP:      {GROUP}\nKIND:       MutatingAdmissionPolicy\nVERSION:    v1\n\n"
        "FIELD: mutations <[]Mutation>\n"
    )
    assert "  patchType\t<string> -required-\n" in out


def test_no_status_subresource(admin: requests.Session, server: Server) -> None:
    resources = admin.get(server.url + f"/apis/{GROUP}/v1").json()["resources"]
    names = [r["name"] for r in resources]
    assert "mutatingadmissionpolicies/status" not in names
    assert names.index("mutatingadmissionpolicies") < names.index("mutatingwebhookconfigurations")


def test_invalid_policy_is_refused_as_kube_does(server: Server, admin: requests.Session) -> None:
    result = server.kubectl("create", "-f", "-", stdin=BAD, check=False)
    assert result.returncode == 1
    lines = "".join(f"* {field}: {message}\n" for _, message, field in BAD_CAUSES)
    assert result.stderr == f'The MutatingAdmissionPolicy "e2e-map-bad" is invalid: \n{lines}'
    body = json.loads(
        server.kubectl("create", "-f", "-", "--dry-run=client", "-o", "json", stdin=BAD).stdout
    )
    r = admin.post(server.url + POLICIES, json=body)
    assert r.status_code == 422
    status = r.json()
    messages = ", ".join(f"{field}: {message}" for _, message, field in BAD_CAUSES)
    assert status["message"] == (
        f'MutatingAdmissionPolicy.{GROUP} "e2e-map-bad" is invalid: [{messages}]'
    )
    assert (status["reason"], status["code"]) == ("Invalid", 422)
    assert status["details"]["name"] == "e2e-map-bad"
    assert (status["details"]["group"], status["details"]["kind"]) == (
        GROUP,
        "MutatingAdmissionPolicy",
    )
    causes = [(c["reason"], c["message"], c["field"]) for c in status["details"]["causes"]]
    assert causes == BAD_CAUSES


def test_binding_may_not_match_deletes(server: Server) -> None:
    bad = f"""\
apiVersion: {GROUP}/v1
kind: MutatingAdmissionPolicyBinding
metadata:
  name: e2e-map-bad
spec:
  policyName: e2e-map-labels
  matchResources:
    resourceRules:
    - {{apiGroups: [""], apiVersions: [v1], operations: [DELETE], resources: [pods]}}
"""
    result = server.kubectl("create", "-f", "-", stdin=bad, check=False)
    assert (result.returncode, result.stderr) == (
        1,
        'The MutatingAdmissionPolicyBinding "e2e-map-bad" is invalid: '
        'spec.matchResources.resourceRules.operations: Unsupported value: "DELETE": '
        'supported values: "*", "CONNECT", "CREATE", "UPDATE"\n',
    )
