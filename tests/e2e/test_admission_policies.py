"""ValidatingAdmissionPolicies and bindings through stock kubectl and HTTP, as kube-apiserver
v1.36 serves them."""

from __future__ import annotations

import json

import requests

from platform_api.codec import protobuf
from tests.e2e.conftest import Server
from tests.e2e.crds import eventually

GROUP = "admissionregistration.platform.io"
POLICIES = f"/apis/{GROUP}/v1/validatingadmissionpolicies"
BINDINGS = f"/apis/{GROUP}/v1/validatingadmissionpolicybindings"
PB = "application/vnd.kubernetes.protobuf"

VALID = f"""\
apiVersion: {GROUP}/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: e2e-replicas
spec:
  paramKind: {{apiVersion: v1, kind: ConfigMap}}
  matchConstraints:  # a group no other test writes: the policy may be enforced
    resourceRules:
    - apiGroups: [e2e.example.com]
      apiVersions: [v1]
      operations: [CREATE, UPDATE]
      resources: [widgets]
  variables:
  - name: replicas
    expression: object.spec.replicas
  validations:
  - expression: variables.replicas <= int(params.data.max)
    messageExpression: "'at most ' + params.data.max + ' replicas'"
---
apiVersion: {GROUP}/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: e2e-replicas
spec:
  policyName: e2e-replicas
  validationActions: [Deny]
  paramRef: {{name: limits, namespace: default, parameterNotFoundAction: Deny}}
"""

BAD = f"""\
apiVersion: {GROUP}/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: e2e-bad
spec:
  failurePolicy: Sometimes
  matchConstraints:
    resourceRules:
    - apiGroups: [apps]
      apiVersions: [v1]
      operations: [CREATE, "*"]
      resources: [deployments]
  variables:
  - name: limit
    expression: "5"
  validations:
  - expression: "object.spec.replicas <= variables.limit && variables.limit == 'five'"
  - expression: "params.max > 1"
    messageExpression: variables.limit
    reason: Teapot
"""

SOURCE = "object.spec.replicas <= variables.limit && variables.limit == 'five'"
# What kube-apiserver v1.36 answers for BAD (group rebranded), cause by cause.
BAD_CAUSES = [
    (
        "FieldValueNotSupported",
        'Unsupported value: "Sometimes": supported values: "Fail", "Ignore"',
        "spec.failurePolicy",
    ),
    (
        "FieldValueInvalid",
        'Invalid value: ["CREATE","*"]: if \'*\' is present, must not specify other operations',
        "spec.matchConstraints.resourceRules[0].operations",
    ),
    (
        "FieldValueInvalid",
        f'Invalid value: "{SOURCE}": compilation failed: ERROR: <input>:1:60: found no matching '
        f"overload for '_==_' applied to '(int, string)'\n | {SOURCE}\n | {'.' * 59}^",
        "spec.validations[0].expression",
    ),
    (
        "FieldValueInvalid",
        'Invalid value: "params.max > 1": compilation failed: ERROR: <input>:1:1: undeclared '
        "reference to 'params' (in container '')\n | params.max > 1\n | ^",
        "spec.validations[1].expression",
    ),
    (
        "FieldValueInvalid",
        'Invalid value: "variables.limit": must evaluate to string but got int',
        "spec.validations[1].messageExpression",
    ),
    (
        "FieldValueNotSupported",
        'Unsupported value: "Teapot": supported values: "Forbidden", "Invalid", '
        '"RequestEntityTooLarge"',
        "spec.validations[1].reason",
    ),
]


def test_create_list_and_read_back(server: Server, admin: requests.Session) -> None:
    try:
        _create_list_and_read_back(server, admin)
    finally:
        server.kubectl("delete", "--ignore-not-found", "-f", "-", stdin=VALID)


def _create_list_and_read_back(server: Server, admin: requests.Session) -> None:
    out = server.kubectl("apply", "-f", "-", stdin=VALID).stdout
    assert f"validatingadmissionpolicy.{GROUP}/e2e-replicas created" in out
    assert f"validatingadmissionpolicybinding.{GROUP}/e2e-replicas created" in out
    table = server.kubectl("get", "validatingadmissionpolicies").stdout.splitlines()
    assert table[0].split() == ["NAME", "VALIDATIONS", "PARAMKIND", "AGE"]
    assert table[1].split()[:3] == ["e2e-replicas", "1", "v1/ConfigMap"]
    table = server.kubectl("get", "validatingadmissionpolicybindings").stdout.splitlines()
    assert table[0].split() == ["NAME", "POLICYNAME", "PARAMREF", "AGE"]
    assert table[1].split()[:3] == ["e2e-replicas", "e2e-replicas", "default/limits"]
    got = admin.get(server.url + POLICIES + "/e2e-replicas").json()
    # The type-checking controller writes the status soon after: nothing to warn of here.
    checked = {"observedGeneration": 1, "typeChecking": {}}
    assert got["spec"]["failurePolicy"] == "Fail" and got["status"] in ({}, checked)
    url = server.url + POLICIES + "/e2e-replicas"
    eventually(lambda: admin.get(url).json()["status"] == checked)
    assert got["spec"]["matchConstraints"]["matchPolicy"] == "Equivalent"
    assert got["spec"]["matchConstraints"]["resourceRules"][0]["scope"] == "*"
    as_pb = admin.get(server.url + POLICIES + "/e2e-replicas", headers={"Accept": PB})
    assert as_pb.headers["Content-Type"] == PB
    assert protobuf.decode(as_pb.content)["spec"] == got["spec"]


def test_protobuf_create(server: Server, admin: requests.Session) -> None:
    body = {
        "apiVersion": f"{GROUP}/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": "e2e-pb"},
        "spec": {"policyName": "p", "validationActions": ["Audit"], "matchResources": {}},
    }
    r = admin.post(
        server.url + BINDINGS,
        data=protobuf.encode(body),
        headers={"Content-Type": PB, "Accept": "application/json"},
    )
    assert r.status_code == 201, r.text
    assert r.json()["spec"]["matchResources"] == {
        "matchPolicy": "Equivalent",
        "namespaceSelector": {},
        "objectSelector": {},
    }
    admin.delete(server.url + BINDINGS + "/e2e-pb")


def test_discovery(admin: requests.Session, server: Server) -> None:
    resources = admin.get(server.url + f"/apis/{GROUP}/v1").json()["resources"]
    by_name = {r["name"]: r for r in resources}
    for name in ("validatingadmissionpolicies", "validatingadmissionpolicybindings"):
        assert by_name[name]["categories"] == ["api-extensions"]
        assert not by_name[name].get("shortNames") and not by_name[name]["namespaced"]
    assert by_name["validatingadmissionpolicies/status"]["verbs"] == ["get", "patch", "update"]
    assert "validatingadmissionpolicybindings/status" not in by_name


def test_invalid_policy_is_refused_as_kube_does(server: Server, admin: requests.Session) -> None:
    result = server.kubectl("create", "-f", "-", stdin=BAD, check=False)
    assert result.returncode == 1
    assert 'The ValidatingAdmissionPolicy "e2e-bad" is invalid: \n' in result.stderr
    body = json.loads(
        server.kubectl("create", "-f", "-", "--dry-run=client", "-o", "json", stdin=BAD).stdout
    )
    r = admin.post(server.url + POLICIES, json=body)
    assert r.status_code == 422
    status = r.json()
    messages = ", ".join(f"{field}: {message}" for _, message, field in BAD_CAUSES)
    assert status["message"] == (
        f'ValidatingAdmissionPolicy.{GROUP} "e2e-bad" is invalid: [{messages}]'
    )
    assert (status["reason"], status["code"]) == ("Invalid", 422)
    assert status["details"]["name"] == "e2e-bad"
    assert status["details"]["kind"] == "ValidatingAdmissionPolicy"
    assert [(c["reason"], c["message"], c["field"]) for c in status["details"]["causes"]] == (
        BAD_CAUSES
    )
