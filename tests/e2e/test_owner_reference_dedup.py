"""Repeated ownerReferences, as kube-apiserver v1.36 answered them (reference,
2026-12-08): entries equal to an earlier one are dropped and the writer is warned, in
the words of the step that found them (a patch: after mutating admission)."""

from __future__ import annotations

import requests

from tests.e2e.conftest import Server
from tests.e2e.test_list import make_namespace

REF = {"apiVersion": "v1", "kind": "ConfigMap", "name": "o", "uid": "u1"}
ADVICE = (
    "API server dedups owner references in 1.20+, and may reject such requests as early "
    "as 1.24; please fix your requests; duplicate UID(s) observed: "
)


def _warning(response: requests.Response) -> str:
    return response.headers.get("Warning", "")


def test_repeated_owner_references_are_dropped_with_a_warning(
    server: Server, admin: requests.Session
) -> None:
    base = server.url + make_namespace(admin, server, "owner-dedup")
    controller = {**REF, "controller": True}
    body = {"metadata": {"name": "c", "ownerReferences": [REF, REF, controller, REF]}}
    made = admin.post(base, json=body)
    assert made.status_code == 201
    assert made.json()["metadata"]["ownerReferences"] == [REF, controller]
    before = '299 - ".metadata.ownerReferences contains duplicate entries; '
    assert _warning(made) == before + ADVICE + 'u1, u1"'

    current = made.json()
    current["metadata"]["ownerReferences"] = [REF, REF]
    put = admin.put(f"{base}/c", json=current)
    assert (put.status_code, put.json()["metadata"]["ownerReferences"]) == (200, [REF])
    assert _warning(put) == before + ADVICE + 'u1"'

    second = {**REF, "uid": "u2"}
    patch = {"metadata": {"ownerReferences": [REF, REF, second, second]}}
    merge = {"Content-Type": "application/merge-patch+json"}
    patched = admin.patch(f"{base}/c", json=patch, headers=merge)
    assert patched.json()["metadata"]["ownerReferences"] == [REF, second]
    after = (
        '299 - ".metadata.ownerReferences contains duplicate entries after mutating '
        "admission happens; "
    )
    assert _warning(patched) == after + ADVICE + 'u1, u2"'
    assert admin.get(f"{base}/c").json()["metadata"]["ownerReferences"] == [REF, second]
