"""Objects larger than kube allows are refused with kube's Status and leave nothing behind."""

from __future__ import annotations

import requests

from tests.e2e.conftest import Server

CM = "/api/v1/namespaces/default/configmaps"


def test_config_map_over_one_mebibyte_is_refused(server: Server, admin: requests.Session) -> None:
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "too-big"}}
    body["data"] = {"k": "x" * (1024 * 1024 + 1)}
    r = admin.post(server.url + CM, json=body)
    assert r.status_code == 422
    assert r.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'ConfigMap "too-big" is invalid: []: Too long: may not be more than 1048576 '
        "bytes",
        "reason": "Invalid",
        "details": {
            "name": "too-big",
            "kind": "ConfigMap",
            "causes": [
                {
                    "reason": "FieldValueTooLong",
                    "message": "Too long: may not be more than 1048576 bytes",
                    "field": "[]",
                }
            ],
        },
        "code": 422,
    }
    assert admin.get(server.url + CM + "/too-big").status_code == 404
    # exactly 1 MiB is fine
    body["data"] = {"k": "x" * (1024 * 1024)}
    body["metadata"] = {"name": "just-fits"}
    assert admin.post(server.url + CM, json=body).status_code == 201
    assert admin.delete(server.url + CM + "/just-fits").status_code == 200
