"""bootstrap-signer, token-cleaner, root-ca-certificate-publisher and ttl-after-finished
controllers in a real server, with real clients; prints the signing and cleanup delays."""

from __future__ import annotations

import base64
import statistics
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

import jwt
import pytest
import requests
import yaml

from tests.e2e.conftest import Server, session_for, start_server
from tests.e2e.test_list import make_namespace

pytestmark = pytest.mark.filterwarnings("ignore:The HMAC key is 16 bytes long")
SECRETS = "/api/v1/namespaces/platform-system/secrets"
CLUSTER_INFO = "/api/v1/namespaces/platform-public/configmaps/cluster-info"
MERGE = {"Content-Type": "application/merge-patch+json"}


@pytest.fixture(scope="module")
def signing_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    running = start_server(
        tmp_path_factory.mktemp("bootstrap"),
        "--controllers=*,bootstrap-signer-controller,token-cleaner-controller",
        "--authorization-mode=RBAC",
        "--anonymous-auth=true",
    )
    yield running
    running.stop()


@pytest.fixture
def admin_of(signing_server: Server) -> requests.Session:
    return session_for(signing_server, cert=signing_server.admin_cert)


def wait_for(check: Callable[[], Any], timeout: float = 10.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.01)
    raise AssertionError("condition not reached")


def token_secret(token_id: str, token_secret: str, **extra: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": f"bootstrap-token-{token_id}", "namespace": "platform-system"},
        "type": "bootstrap.platform.io/token",
        "stringData": {"token-id": token_id, "token-secret": token_secret, **extra},
    }


def signed(
    session: requests.Session, server: Server, token_id: str
) -> Callable[[], dict[str, str] | None]:
    """A check: cluster-info's data once it holds the token's signature."""

    def check() -> dict[str, str] | None:
        data: dict[str, str] = session.get(server.url + CLUSTER_INFO).json()["data"]
        return data if f"jws-kubeconfig-{token_id}" in data else None

    return check


def gone(session: requests.Session, url: str) -> bool:
    return session.get(url).status_code == 404


def verify(detached: str, content: str, token_id: str, token_secret: str) -> None:
    """As a joining client does: re-attach the payload, insist on HS256."""
    header, _, signature = detached.split(".")
    payload = base64.urlsafe_b64encode(content.encode()).rstrip(b"=").decode()
    found = jwt.api_jws.decode_complete(
        f"{header}.{payload}.{signature}", key=token_secret, algorithms=["HS256"]
    )
    assert found["header"] == {"alg": "HS256", "kid": token_id}


def test_cluster_info_is_public_and_signed_per_token(
    signing_server: Server, admin_of: requests.Session
) -> None:
    anonymous = session_for(signing_server)
    r = anonymous.get(signing_server.url + CLUSTER_INFO)
    assert r.status_code == 200, r.text
    kubeconfig = yaml.safe_load(r.json()["data"]["kubeconfig"])
    cluster = kubeconfig["clusters"][0]
    assert cluster["name"] == ""
    assert cluster["cluster"]["server"] == signing_server.url
    ca = Path(signing_server.ca).read_bytes()
    assert base64.b64decode(cluster["cluster"]["certificate-authority-data"]) == ca
    assert "users" not in kubeconfig or not kubeconfig["users"]
    # Anonymous may get cluster-info, nothing else there.
    denied = anonymous.get(signing_server.url + "/api/v1/namespaces/platform-public/configmaps")
    assert denied.status_code == 403

    delays = []
    for i in range(5):
        token_id = f"sign0{i}"
        created = time.monotonic()
        body = token_secret(token_id, "0123456789abcdef", **{"usage-bootstrap-signing": "true"})
        assert admin_of.post(signing_server.url + SECRETS, json=body).status_code == 201
        data = wait_for(signed(anonymous, signing_server, token_id))
        delays.append(time.monotonic() - created)
        verify(data[f"jws-kubeconfig-{token_id}"], data["kubeconfig"], token_id, "0123456789abcdef")
    print(
        f"\nsigning delay (created -> signed): median {statistics.median(delays) * 1000:.0f} ms,"
        f" max {max(delays) * 1000:.0f} ms over {len(delays)}"
    )
    # A token without signing usage gets no signature; a deleted one loses it.
    body = token_secret("nosign", "0123456789abcdef", **{"usage-bootstrap-authentication": "true"})
    assert admin_of.post(signing_server.url + SECRETS, json=body).status_code == 201
    r = admin_of.delete(signing_server.url + SECRETS + "/bootstrap-token-sign00")
    assert r.status_code == 200
    wait_for(
        lambda: (
            "jws-kubeconfig-sign00"
            not in admin_of.get(signing_server.url + CLUSTER_INFO).json()["data"]
        )
    )
    assert (
        "jws-kubeconfig-nosign"
        not in admin_of.get(signing_server.url + CLUSTER_INFO).json()["data"]
    )


def test_expired_tokens_are_deleted_and_unsigned(
    signing_server: Server, admin_of: requests.Session
) -> None:
    delays = []
    for i in range(3):
        token_id = f"expir{i}"
        expiry = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=2)
        body = token_secret(
            token_id,
            "0123456789abcdef",
            expiration=expiry.strftime("%Y-%m-%dT%H:%M:%SZ"),
            **{"usage-bootstrap-signing": "true"},
        )
        assert admin_of.post(signing_server.url + SECRETS, json=body).status_code == 201
        wait_for(signed(admin_of, signing_server, token_id))
        url = signing_server.url + SECRETS + f"/bootstrap-token-{token_id}"
        wait_for(partial(gone, admin_of, url), timeout=10)
        delays.append(time.time() - expiry.timestamp())
        # The signer hears of the deletion from its informer, as kube's does: soon after.
        check = signed(admin_of, signing_server, token_id)
        wait_for(lambda check=check: not check(), timeout=10)
    print(
        f"\ncleanup delay (expiration -> deleted): median {statistics.median(delays) * 1000:.0f}"
        f" ms, max {max(delays) * 1000:.0f} ms over {len(delays)}"
    )


def test_new_namespace_gets_the_root_ca(signing_server: Server, admin_of: requests.Session) -> None:
    base = make_namespace(admin_of, signing_server, "rootca")
    url = signing_server.url + base + "/platform-root-ca.crt"
    wait_for(lambda: admin_of.get(url).status_code == 200)
    cm = admin_of.get(url).json()
    assert cm["data"] == {"ca.crt": Path(signing_server.ca).read_text()}
    assert cm["metadata"]["annotations"]["platform.io/description"].startswith(
        "Contains a CA bundle that can be used to verify the kube-apiserver"
    )
    # Deleted, it is back; edited, it is fixed.
    assert admin_of.delete(url).status_code == 200
    wait_for(lambda: admin_of.get(url).status_code == 200)
    r = admin_of.patch(url, json={"data": {"ca.crt": "nope"}}, headers=MERGE)
    assert r.status_code == 200
    wait_for(
        lambda: admin_of.get(url).json()["data"] == {"ca.crt": Path(signing_server.ca).read_text()}
    )


@pytest.mark.parametrize("ttl", [0, 1])
def test_finished_job_with_ttl_is_deleted(
    signing_server: Server, admin_of: requests.Session, ttl: int
) -> None:
    jobs = "/apis/batch/v1/namespaces/default/jobs"
    name = f"ttl-{ttl}"
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            "ttlSecondsAfterFinished": ttl,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "c", "image": "busybox"}],
                }
            },
        },
    }
    assert admin_of.post(signing_server.url + jobs, json=job).status_code == 201
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    status = {
        "status": {
            "conditions": [
                {"type": "SuccessCriteriaMet", "status": "True", "lastTransitionTime": now},
                {"type": "Complete", "status": "True", "lastTransitionTime": now},
            ],
            "startTime": now,
            "completionTime": now,
            "succeeded": 1,
        }
    }
    url = signing_server.url + f"{jobs}/{name}"
    finished = time.time()
    r = admin_of.patch(url + "/status", json=status, headers=MERGE)
    assert r.status_code == 200, r.text
    wait_for(lambda: admin_of.get(url).status_code == 404, timeout=10)
    assert time.time() - finished >= ttl - 1  # second-granular finish time
