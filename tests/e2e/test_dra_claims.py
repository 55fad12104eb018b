"""resourceclaim-controller through the real server: a pod naming a ResourceClaimTemplate
gets its claim and its ``status.resourceClaimStatuses`` (applied by the controller's own
field manager), and the claim goes with the pod (the garbage collector)."""

from __future__ import annotations

from typing import Any

import requests

from tests.e2e.conftest import Server
from tests.e2e.crds import eventually

NS = "dra-claims"
Obj = dict[str, Any]


def test_a_pods_template_claim_is_made_and_goes_with_the_pod(
    server: Server, admin: requests.Session
) -> None:
    api = server.url + "/apis/resource.platform.io/v1"
    made = admin.post(server.url + "/api/v1/namespaces", json={"metadata": {"name": NS}})
    assert made.status_code in (201, 409), made.text
    device_class = {"metadata": {"name": "claims.example.com"}, "spec": {}}
    made = admin.post(api + "/deviceclasses", json=device_class)
    assert made.status_code in (201, 409), made.text
    request = {"name": "gpu", "exactly": {"deviceClassName": "claims.example.com"}}
    template = {
        "metadata": {"name": "gpu-template"},
        "spec": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"devices": {"requests": [request]}},
        },
    }
    made = admin.post(f"{api}/namespaces/{NS}/resourceclaimtemplates", json=template)
    assert made.status_code == 201, made.text
    pod = {
        "metadata": {"name": "web"},
        "spec": {
            "containers": [
                {"name": "c", "image": "busybox", "resources": {"claims": [{"name": "gpu"}]}}
            ],
            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpu-template"}],
        },
    }
    pods = f"{server.url}/api/v1/namespaces/{NS}/pods"
    # the namespace's default service account comes from its controller
    made = eventually(lambda: (r := admin.post(pods, json=pod)).status_code == 201 and r)
    uid = made.json()["metadata"]["uid"]

    def claims() -> list[Obj]:
        answer = admin.get(f"{api}/namespaces/{NS}/resourceclaims")
        assert answer.status_code == 200, answer.text
        return answer.json()["items"]  # type: ignore[no-any-return]

    (claim,) = eventually(claims)
    meta = claim["metadata"]
    assert meta["generateName"] == "web-gpu-"
    assert meta["labels"] == {"app": "web"}
    assert meta["annotations"] == {"resource.platform.io/pod-claim-name": "gpu"}
    owner = {"apiVersion": "v1", "kind": "Pod", "name": "web", "uid": uid, "controller": True}
    assert meta["ownerReferences"] == [owner]
    assert (
        claim["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"]
        == "claims.example.com"
    )

    def recorded() -> Obj | None:
        current: Obj = admin.get(f"{pods}/web").json()
        return current if (current.get("status") or {}).get("resourceClaimStatuses") else None

    current = eventually(recorded)
    expected = [{"name": "gpu", "resourceClaimName": meta["name"]}]
    assert current["status"]["resourceClaimStatuses"] == expected
    managers = {
        (m["manager"], m["operation"], m.get("subresource"))
        for m in current["metadata"]["managedFields"]
    }
    assert ("ResourceClaimController", "Apply", "status") in managers

    gone = admin.delete(f"{pods}/web", json={"gracePeriodSeconds": 0})
    assert gone.status_code == 200, gone.text
    eventually(lambda: claims() == [], timeout=30.0)
