"""``status.typeChecking`` of ValidatingAdmissionPolicies, written by the server's own
validatingadmissionpolicy-status-controller, read back with stock kubectl."""

from __future__ import annotations

import json
import time
from typing import Any

import requests
import yaml

from tests.e2e.conftest import Server
from tests.e2e.crds import crd_manifest, create_crd, delete_crd

GROUP = "admissionregistration.platform.io"
POLICY = f"""\
apiVersion: {GROUP}/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: e2e-typecheck-{{name}}
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [apps]
      apiVersions: [v1]
      operations: [CREATE]
      resources: [deployments]
  validations:
  - expression: {{expression}}
"""


def typechecked(server: Server, name: str) -> dict[str, Any]:
    """The policy once the controller has checked its generation."""
    deadline = time.monotonic() + 15
    while True:
        out = server.kubectl(
            "get", "validatingadmissionpolicy", name, "-o", "yaml", "--show-managed-fields"
        ).stdout
        policy: dict[str, Any] = yaml.safe_load(out)
        status = policy.get("status") or {}
        if status.get("observedGeneration") == policy["metadata"]["generation"]:
            assert "typeChecking" in status, out
            return policy
        assert time.monotonic() < deadline, out
        time.sleep(0.1)


def test_kubectl_shows_type_checking_warnings(server: Server) -> None:
    wrong = POLICY.format(name="wrong", expression="object.foo == 1")
    server.kubectl("apply", "-f", "-", stdin=wrong)
    policy = typechecked(server, "e2e-typecheck-wrong")
    assert policy["status"]["typeChecking"] == {
        "expressionWarnings": [
            {
                "fieldRef": "spec.validations[0].expression",
                "warning": "apps/v1, Kind=Deployment: ERROR: <input>:1:7: undefined field 'foo'\n"
                " | object.foo == 1\n"
                " | ......^\n",
            }
        ]
    }
    assert "conditions" not in policy["status"]
    managers = {e["manager"]: e for e in policy["metadata"]["managedFields"]}
    entry = managers["validatingadmissionpolicy-status"]
    assert (entry["operation"], entry["subresource"]) == ("Apply", "status")

    # Fixed, the next generation is checked again and the warning goes.
    fixed = POLICY.format(name="wrong", expression="object.spec.replicas > 1")
    server.kubectl("apply", "-f", "-", stdin=fixed)
    policy = typechecked(server, "e2e-typecheck-wrong")
    assert policy["metadata"]["generation"] == 2
    assert policy["status"] == {"observedGeneration": 2, "typeChecking": {}}
    out = server.kubectl(
        "get", "validatingadmissionpolicy", "e2e-typecheck-wrong", "-o", "json"
    ).stdout
    assert json.loads(out)["status"]["typeChecking"] == {}
    server.kubectl("delete", "validatingadmissionpolicy", "e2e-typecheck-wrong")


def test_custom_resource_kinds_are_checked(server: Server, admin: requests.Session) -> None:
    """kube's e2e "should type check a CRD", over HTTP."""
    group = "typecheck.e2e.example.com"
    crd = create_crd(admin, server, crd_manifest(group))
    policies = f"{server.url}/apis/{GROUP}/v1/validatingadmissionpolicies"
    rule = {"apiGroups": [group], "apiVersions": ["v1"], "resources": ["crontabs"]}
    body: dict[str, Any] = {
        "apiVersion": f"{GROUP}/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": "e2e-typecheck-crd"},
        "spec": {
            "matchConstraints": {"resourceRules": [{**rule, "operations": ["CREATE"]}]},
            "validations": [
                {"expression": "object.spec.replicas > '1'"},
                {"expression": "object.spec.maxRetries < 10"},
            ],
        },
    }
    r = admin.post(policies, json=body)
    assert r.status_code == 201, r.text
    try:
        policy = typechecked(server, "e2e-typecheck-crd")
        found = policy["status"]["typeChecking"]["expressionWarnings"]
        assert [w["fieldRef"] for w in found] == [
            "spec.validations[0].expression",
            "spec.validations[1].expression",
        ]
        assert found[0]["warning"].startswith(
            f"{group}/v1, Kind=CronTab: ERROR: <input>:1:22: found no matching overload for"
            " '_>_' applied to '(int, string)'\n"
        )
        assert found[1]["warning"] == (
            f"{group}/v1, Kind=CronTab: ERROR: <input>:1:12: undefined field 'maxRetries'\n"
            " | object.spec.maxRetries < 10\n"
            " | ...........^\n"
        )
    finally:
        admin.delete(f"{policies}/e2e-typecheck-crd")
        delete_crd(admin, server, crd["metadata"]["name"])
