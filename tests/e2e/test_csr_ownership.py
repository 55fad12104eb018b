"""Who owns what of a CertificateSigningRequest, as kube-apiserver v1.36 recorded it
(reference, 2026-12-08): kube's CSR strategies reset the spec on every write, the
conditions on /status and the certificate on /approval, so no writer owns them there."""

from __future__ import annotations

import json
import time
from typing import Any

import requests

from tests.controllers.test_csrcleaner import certificate
from tests.e2e.conftest import Server
from tests.registry.test_certificates import pem_request

CSRS = "/apis/certificates.platform.io/v1/certificatesigningrequests"
APPLY = {"Content-Type": "application/apply-patch+yaml"}


def _owned(obj: dict[str, Any]) -> dict[str, Any]:
    return {e["manager"]: e["fieldsV1"] for e in obj["metadata"]["managedFields"]}


def _condition(kind: str) -> dict[str, str]:
    return {"type": kind, "status": "True", "reason": "R", "message": "m"}


def test_no_writer_owns_what_a_csr_strategy_resets(server: Server, admin: requests.Session) -> None:
    url = server.url + CSRS
    spec = {"request": pem_request(), "signerName": "example.com/foo", "usages": ["client auth"]}
    body = {
        "apiVersion": "certificates.platform.io/v1",
        "kind": "CertificateSigningRequest",
        "metadata": {"name": "owned", "labels": {"a": "1"}},
        "spec": spec,
    }
    made = admin.patch(f"{url}/owned?fieldManager=one", data=json.dumps(body), headers=APPLY)
    assert made.status_code == 201, made.text
    assert _owned(made.json()) == {"one": {"f:metadata": {"f:labels": {"f:a": {}}}}}

    current = made.json()
    current["status"] = {"conditions": [_condition("Approved")]}
    approved = admin.put(f"{url}/owned/approval?fieldManager=approver", json=current)
    assert approved.status_code == 200, approved.text
    conditions = _owned(approved.json())["approver"]["f:status"]["f:conditions"]
    assert list(conditions) == [".", 'k:{"type":"Approved"}']

    current = approved.json()
    current["status"]["certificate"] = certificate(time.time() + 86400)
    current["status"]["conditions"].append(_condition("Failed"))
    signed = admin.put(f"{url}/owned/status?fieldManager=signer", json=current)
    assert signed.status_code == 200, signed.text
    assert _owned(signed.json())["signer"] == {"f:status": {"f:certificate": {}}}
    assert admin.delete(f"{url}/owned").status_code == 200
