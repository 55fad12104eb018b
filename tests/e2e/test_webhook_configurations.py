"""Admission webhook configurations through stock kubectl and HTTP, as kube-apiserver serves them."""

from __future__ import annotations

import json

import requests

from platform_api.codec import protobuf
from tests.e2e.conftest import Server

GROUP = "admissionregistration.platform.io"
VALIDATING = f"/apis/{GROUP}/v1/validatingwebhookconfigurations"
PB = "application/vnd.kubernetes.protobuf"

VALID = f"""\
apiVersion: {GROUP}/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: e2e-pods
webhooks:
- name: pods.e2e.example.com
  sideEffects: None
  admissionReviewVersions: [v1]
  clientConfig:
    service: {{namespace: default, name: e2e}}
  rules:
  - operations: [CREATE]
    apiGroups: [""]
    apiVersions: [v1]
    resources: [pods]
  matchConditions:
  - name: not-dry-run
    expression: "!request.dryRun"
- name: url.e2e.example.com
  sideEffects: NoneOnDryRun
  admissionReviewVersions: [v1, v1beta1]
  clientConfig:
    url: https://hooks.example.com/validate
"""

BAD = f"""\
apiVersion: {GROUP}/v1
kind: MutatingWebhookConfiguration
metadata:
  name: e2e-bad
webhooks:
- name: bad
  sideEffects: Some
  admissionReviewVersions: [v2]
  timeoutSeconds: 60
  clientConfig:
    url: http://hooks.example.com/?x=1
"""

# What kube-apiserver v1.36 answers for BAD (group rebranded).
BAD_MESSAGE = (
    f'MutatingWebhookConfiguration.{GROUP} "e2e-bad" is invalid: ['
    'webhooks[0].name: Invalid value: "bad": should be a domain with at least three segments '
    "separated by dots, "
    'webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun", '
    "webhooks[0].timeoutSeconds: Invalid value: 60: the timeout value must be between 1 and 30 "
    "seconds, "
    "webhooks[0].clientConfig.url: Invalid value: \"http\": 'https' is the only allowed URL "
    "scheme; desired format: https://host[/path], "
    'webhooks[0].clientConfig.url: Invalid value: "x=1": query parameters are not permitted in '
    "the URL, "
    'webhooks[0].admissionReviewVersions: Invalid value: ["v2"]: must include at least one of '
    "v1, v1beta1]"
)


def test_create_get_and_default(server: Server, admin: requests.Session) -> None:
    out = server.kubectl("apply", "-f", "-", stdin=VALID).stdout
    assert f"validatingwebhookconfiguration.{GROUP}/e2e-pods created" in out
    table = server.kubectl("get", "validatingwebhookconfigurations").stdout.splitlines()
    assert table[0].split() == ["NAME", "WEBHOOKS", "AGE"]
    assert [line.split()[:2] for line in table[1:]] == [["e2e-pods", "2"]]
    got = json.loads(
        server.kubectl("get", "validatingwebhookconfiguration", "e2e-pods", "-o", "json").stdout
    )
    first, second = got["webhooks"]
    assert got["metadata"]["generation"] == 1
    assert first["clientConfig"]["service"]["port"] == 443
    assert first["rules"][0]["scope"] == "*"
    assert (first["failurePolicy"], first["matchPolicy"], first["timeoutSeconds"]) == (
        "Fail",
        "Equivalent",
        10,
    )
    assert first["namespaceSelector"] == {} and second["objectSelector"] == {}
    as_pb = admin.get(server.url + VALIDATING + "/e2e-pods", headers={"Accept": PB})
    assert as_pb.headers["Content-Type"] == PB
    assert protobuf.decode(as_pb.content)["webhooks"] == got["webhooks"]
    server.kubectl(
        "patch", "validatingwebhookconfiguration", "e2e-pods", "--type=json",
        "-p", '[{"op": "replace", "path": "/webhooks/1/timeoutSeconds", "value": 5}]',
    )  # fmt: skip
    patched = admin.get(server.url + VALIDATING + "/e2e-pods").json()
    assert patched["metadata"]["generation"] == 2
    server.kubectl("delete", "validatingwebhookconfiguration", "e2e-pods")


def test_invalid_configuration_is_refused_as_kube_does(
    server: Server, admin: requests.Session
) -> None:
    result = server.kubectl("create", "-f", "-", stdin=BAD, check=False)
    assert result.returncode == 1
    assert 'The MutatingWebhookConfiguration "e2e-bad" is invalid: \n' in result.stderr
    assert "* webhooks[0].timeoutSeconds: Invalid value: 60: the timeout value must be" in (
        result.stderr
    )
    body = json.loads(
        server.kubectl("create", "-f", "-", "--dry-run=client", "-o", "json", stdin=BAD).stdout
    )
    r = admin.post(server.url + f"/apis/{GROUP}/v1/mutatingwebhookconfigurations", json=body)
    assert r.status_code == 422
    status = r.json()
    assert (status["reason"], status["code"], status["message"]) == ("Invalid", 422, BAD_MESSAGE)
    assert status["details"]["kind"] == "MutatingWebhookConfiguration"
    assert status["details"]["causes"][0] == {
        "reason": "FieldValueInvalid",
        "message": 'Invalid value: "bad": should be a domain with at least three segments '
        "separated by dots",
        "field": "webhooks[0].name",
    }


def test_updates_need_a_resource_version(server: Server, admin: requests.Session) -> None:
    server.kubectl("apply", "-f", "-", stdin=VALID.replace("e2e-pods", "e2e-rv"))
    obj = admin.get(server.url + VALIDATING + "/e2e-rv").json()
    del obj["metadata"]["resourceVersion"]
    r = admin.put(server.url + VALIDATING + "/e2e-rv", json=obj)
    assert r.status_code == 422
    assert r.json()["message"].endswith(
        "metadata.resourceVersion: Invalid value: 0: must be specified for an update"
    )
    server.kubectl("delete", "validatingwebhookconfiguration", "e2e-rv")
