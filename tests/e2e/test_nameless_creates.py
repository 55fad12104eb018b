"""Creates that name nothing or name by ``generateName``, and a review's metadata, as
kube-apiserver v1.36 answered the same requests (reference): a LimitRange is named with
a UUID, an APIService's name rule is applied to its ``generateName`` too, a namespace
named by ``generateName`` is labelled with its name unowned, and a review's refused
metadata is shown as Go marshals ObjectMeta."""

from __future__ import annotations

import re

import requests

from tests.e2e.conftest import Server

UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def test_a_nameless_limit_range_is_named_with_a_uuid(
    server: Server, admin: requests.Session
) -> None:
    body = {"metadata": {}, "spec": {"limits": [{"type": "Container", "max": {"cpu": "1"}}]}}
    answer = admin.post(server.url + "/api/v1/namespaces/default/limitranges", json=body)
    assert answer.status_code == 201
    assert UUID.match(answer.json()["metadata"]["name"])
    generated = {"metadata": {"generateName": "lr-"}, "spec": body["spec"]}
    answer = admin.post(server.url + "/api/v1/namespaces/default/limitranges", json=generated)
    assert re.match(r"^lr-[a-z0-9]{5}$", answer.json()["metadata"]["name"])


def test_an_apiservice_name_rule_applies_to_its_generate_name(
    server: Server, admin: requests.Session
) -> None:
    spec = {"group": "x.example.com", "version": "v1", "groupPriorityMinimum": 1}
    body = {"metadata": {"generateName": "v1.x-"}, "spec": {**spec, "versionPriority": 1}}
    path = "/apis/apiregistration.platform.io/v1/apiservices?dryRun=All"
    answer = admin.post(server.url + path, json=body).json()
    name = answer["details"]["name"]
    rule = 'must be `spec.version+"."+spec.group`: "v1.x.example.com"'
    assert answer["message"] == (
        f'APIService.apiregistration.platform.io "{name}" is invalid: ['
        f'metadata.generateName: Invalid value: "v1.x-": {rule}, '
        f'metadata.name: Invalid value: "{name}": {rule}]'
    )


def test_a_generated_namespace_is_labelled_unowned(server: Server, admin: requests.Session) -> None:
    answer = admin.post(
        server.url + "/api/v1/namespaces", json={"metadata": {"generateName": "g-"}}
    )
    meta = answer.json()["metadata"]
    assert meta["labels"] == {"platform.io/metadata.name": meta["name"]}
    assert meta["managedFields"][0]["fieldsV1"] == {"f:metadata": {"f:generateName": {}}}
    admin.delete(f"{server.url}/api/v1/namespaces/{meta['name']}")


def test_a_reviews_metadata_is_shown_in_go_order(server: Server, admin: requests.Session) -> None:
    meta = {"name": "ok", "namespace": "default", "labels": {"b": "1", "a": "2"}}
    spec = {"user": "u", "resourceAttributes": {"namespace": "default", "verb": "get"}}
    path = "/apis/authorization.platform.io/v1/namespaces/default/localsubjectaccessreviews"
    message = admin.post(server.url + path, json={"metadata": meta, "spec": spec}).json()["message"]
    shown = re.sub(r'"time":"[^"]+"', '"time":"T"', message)
    assert shown == (
        '.authorization.platform.io "" is invalid: metadata: Invalid value: '
        '{"name":"ok","namespace":"default","labels":{"a":"2","b":"1"},"managedFields":'
        '[{"manager":"python-requests","operation":"Update","apiVersion":'
        '"authorization.platform.io/v1","time":"T","fieldsType":"FieldsV1","fieldsV1":'
        '{"f:metadata":{"f:labels":{".":{},"f:a":{},"f:b":{}}},"f:spec":{"f:resourceAttributes":'
        '{".":{},"f:namespace":{},"f:verb":{}},"f:user":{}}}}]}: must be empty except for '
        "namespace"
    )
