"""A refused PersistentVolume create and a refused claim update, end to end: the Status
bodies kube-apiserver v1.36 answered (reference), and nothing stored or changed."""

from __future__ import annotations

import requests

from tests.e2e.conftest import Server

VOLUMES = "/api/v1/persistentvolumes"
CLAIMS = "/api/v1/namespaces/default/persistentvolumeclaims"
TWO_SOURCES = "Forbidden: may not specify more than 1 volume type"
IMMUTABLE = (
    "Forbidden: spec is immutable after creation except resources.requests and "
    "volumeAttributesClassName for bound claims\n"
    "@@ -1,6 +1,6 @@\n"
    " {\n"
    '  "AccessModes": [\n'
    '-  "ReadWriteOnce"\n'
    '+  "ReadWriteMany"\n'
    "  ],\n"
    '  "Selector": null,\n'
    '  "Resources": {\n'
)


def _invalid(kind: str, name: str, field: str, body: str) -> dict[str, object]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f'{kind} "{name}" is invalid: {field}: {body}',
        "reason": "Invalid",
        "details": {
            "name": name,
            "kind": kind,
            "causes": [{"reason": "FieldValueForbidden", "message": body, "field": field}],
        },
        "code": 422,
    }


def test_a_volume_of_two_sources_is_refused_and_not_stored(
    server: Server, admin: requests.Session
) -> None:
    volume = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": "e2e-two-sources"},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "capacity": {"storage": "1Gi"},
            "hostPath": {"path": "/tmp/e2e"},
            "nfs": {"server": "nfs.example.com", "path": "/exports"},
        },
    }
    refused = admin.post(server.url + VOLUMES, json=volume)
    assert refused.status_code == 422
    assert refused.json() == _invalid(
        "PersistentVolume", "e2e-two-sources", "spec.nfs", TWO_SOURCES
    )
    assert admin.get(server.url + VOLUMES + "/e2e-two-sources").status_code == 404


def test_a_claims_access_modes_never_change(server: Server, admin: requests.Session) -> None:
    claim = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "e2e-fixed-modes"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }
    made = admin.post(server.url + CLAIMS, json=claim)
    assert made.status_code == 201
    url = server.url + CLAIMS + "/e2e-fixed-modes"
    try:
        changed = made.json()
        changed["spec"]["accessModes"] = ["ReadWriteMany"]
        refused = admin.put(url, json=changed)
        assert refused.status_code == 422
        assert refused.json() == _invalid(
            "PersistentVolumeClaim", "e2e-fixed-modes", "spec", IMMUTABLE
        )
        stored = admin.get(url).json()
        assert stored["spec"]["accessModes"] == ["ReadWriteOnce"]
        assert stored["metadata"]["resourceVersion"] == made.json()["metadata"]["resourceVersion"]
    finally:
        admin.delete(url)


def test_a_volume_update_reports_each_spec_problem_twice(
    server: Server, admin: requests.Session
) -> None:
    """kube's strategy validates the new volume and ValidatePersistentVolumeUpdate
    validates it again: the message names a problem once, the causes twice."""
    volume = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": "e2e-twice"},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "capacity": {"storage": "1Gi"},
            "hostPath": {"path": "/tmp/e2e"},
        },
    }
    assert admin.post(server.url + VOLUMES, json=volume).status_code == 201
    url = server.url + VOLUMES + "/e2e-twice"
    try:
        before = admin.get(url).json()
        refused = admin.patch(
            url,
            json={"spec": {"accessModes": None}},
            headers={"Content-Type": "application/merge-patch+json"},
        )
        assert refused.status_code == 422
        required = {"reason": "FieldValueRequired", "message": "Required value"}
        assert refused.json() == {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": 'PersistentVolume "e2e-twice" is invalid: spec.accessModes: Required value',
            "reason": "Invalid",
            "details": {
                "name": "e2e-twice",
                "kind": "PersistentVolume",
                "causes": [{**required, "field": "spec.accessModes"}] * 2,
            },
            "code": 422,
        }
        assert admin.get(url).json() == before
    finally:
        admin.delete(url)
