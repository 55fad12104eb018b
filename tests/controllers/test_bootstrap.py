"""bootstrap-signer-controller and token-cleaner-controller over real storage and a Clock.

The Clock starts at the epoch, so token expirations are written as 1970 times.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import jwt
import pytest

from platform_api import errors
from platform_api.controllers.bootstrap import (
    BootstrapSigner,
    TokenCleaner,
    detached_signature,
    time_left,
)
from platform_api.storage.interface import ListOptions
from tests.authorization.rbac_cluster import Cluster

# Bootstrap token secrets are 16 characters by design.
pytestmark = pytest.mark.filterwarnings("ignore:The HMAC key is 16 bytes long")
Obj = dict[str, Any]
KUBECONFIG = "apiVersion: v1\nclusters: []\nkind: Config\n"


def token_secret(token_id: str, secret: str, **extra: str) -> Obj:
    data = {"token-id": token_id, "token-secret": secret, **extra}
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": f"bootstrap-token-{token_id}"},
        "type": "bootstrap.platform.io/token",
        "data": {k: base64.b64encode(v.encode()).decode() for k, v in data.items()},
    }


def at(seconds: int) -> str:
    """An RFC 3339 time ``seconds`` after the epoch (the Clock's start)."""
    return f"1970-01-01T00:{seconds // 60:02d}:{seconds % 60:02d}Z"


def verify(signature: str, content: str, token_id: str, token_secret: str) -> Obj:
    """Re-attach the payload and check the JWS independently, insisting on HS256."""
    header, empty, sig = signature.split(".")
    assert empty == ""
    payload = base64.urlsafe_b64encode(content.encode()).rstrip(b"=").decode()
    claims = jwt.api_jws.decode_complete(
        f"{header}.{payload}.{sig}", key=token_secret, algorithms=["HS256"]
    )
    assert claims["payload"] == content.encode()
    header_fields: Obj = claims["header"]
    assert header_fields == {"alg": "HS256", "kid": token_id}
    return header_fields


def test_signature_matches_go_jose_and_verifies() -> None:
    # kube's known answer (cluster-bootstrap jws_test.go), byte for byte.
    content = "Hello from the other side. I must have called a thousand times."
    assert detached_signature(content, "joshua", "my voice is my passcode") == (
        "eyJhbGciOiJIUzI1NiIsImtpZCI6Impvc2h1YSJ9..VShe2taLd-YTrmWuRkcL_8QTNDHYxQIEBsAYYiIj1_8"
    )
    sig = detached_signature(KUBECONFIG, "abcdef", "0123456789abcdef")
    assert sig.startswith("eyJhbGciOiJIUzI1NiIsImtpZCI6ImFiY2RlZiJ9..")  # {"alg":..,"kid":..}
    verify(sig, KUBECONFIG, "abcdef", "0123456789abcdef")
    with pytest.raises(jwt.InvalidSignatureError):
        verify(sig, KUBECONFIG, "abcdef", "0123456789abcdeX")


def test_expiration_rules() -> None:
    assert time_left(token_secret("abcdef", "x"), 0) == (0.0, False)
    assert time_left(token_secret("abcdef", "x", expiration=at(90)), 30) == (60.0, False)
    assert time_left(token_secret("abcdef", "x", expiration=at(90)), 90) == (0.0, True)
    assert time_left(token_secret("abcdef", "x", expiration="soon"), 0) == (0.0, True)
    assert time_left(token_secret("abcdef", "x", expiration="1970-01-02T00:00:00"), 0)[1]


class Setup:
    def __init__(self, tmp_path: Path) -> None:
        self.cluster = Cluster(str(tmp_path))
        self.secrets = self.cluster.stores[("", "v1", "secrets")]
        self.configmaps = self.cluster.stores[("", "v1", "configmaps")]

    def add(self, secret: Obj) -> None:
        self.cluster.run(self.secrets.create("platform-system", secret))

    def info(self) -> dict[str, str]:
        data: dict[str, str] = self.configmaps.get("platform-public", "cluster-info").object["data"]
        return data

    def advance(self, seconds: float) -> None:
        self.cluster.clock.advance(seconds)
        self.cluster.settle()


def test_signer_signs_valid_tokens_and_drops_the_rest(tmp_path: Path) -> None:
    s = Setup(tmp_path)
    signer = BootstrapSigner(s.configmaps, s.secrets, s.cluster.hub, s.cluster.clock)
    signer.start()
    s.cluster.settle()  # no cluster-info yet: nothing to do, no error
    info = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "cluster-info"},
        "data": {"kubeconfig": KUBECONFIG, "jws-kubeconfig-zzzzzz": "stale..sig"},
    }
    s.cluster.run(s.configmaps.create("platform-public", info))
    s.add(token_secret("abcdef", "0123456789abcdef", **{"usage-bootstrap-signing": "true"}))
    s.add(token_secret("ghijkl", "0123456789abcdef"))  # not for signing
    s.add(token_secret("mnopqr", "1111111111111111", **{"usage-bootstrap-signing": "false"}))
    bad_name = token_secret("stuvwx", "2222222222222222", **{"usage-bootstrap-signing": "true"})
    bad_name["metadata"]["name"] = "bootstrap-token-other1"
    s.add(bad_name)
    expiring = {"usage-bootstrap-signing": "true", "expiration": at(30)}
    s.add(token_secret("expire", "3333333333333333", **expiring))
    s.cluster.settle()
    data = s.info()
    assert sorted(data) == ["jws-kubeconfig-abcdef", "jws-kubeconfig-expire", "kubeconfig"]
    verify(data["jws-kubeconfig-abcdef"], KUBECONFIG, "abcdef", "0123456789abcdef")
    verify(data["jws-kubeconfig-expire"], KUBECONFIG, "expire", "3333333333333333")
    # At its expiration the token's signature goes, with no event to prompt it.
    s.advance(30)
    assert sorted(s.info()) == ["jws-kubeconfig-abcdef", "kubeconfig"]
    # Deleting the token removes its signature; a changed kubeconfig is re-signed.
    s.cluster.run(s.secrets.delete("platform-system", "bootstrap-token-abcdef"))
    s.cluster.settle()
    assert sorted(s.info()) == ["kubeconfig"]
    s.add(token_secret("abcdef", "4444444444444444", **{"usage-bootstrap-signing": "true"}))
    s.cluster.settle()

    def edit(obj: Obj | None) -> Obj:
        assert obj is not None
        obj["data"]["kubeconfig"] = KUBECONFIG + "# edited\n"
        return obj

    s.cluster.run(s.configmaps.update("platform-public", "cluster-info", edit))
    s.cluster.settle()
    data = s.info()
    verify(data["jws-kubeconfig-abcdef"], data["kubeconfig"], "abcdef", "4444444444444444")
    signer.stop()


def test_cleaner_deletes_expired_tokens_when_they_expire(tmp_path: Path) -> None:
    s = Setup(tmp_path)
    s.add(token_secret("before", "0000000000000000", expiration=at(0)))  # expired at start
    cleaner = TokenCleaner(s.secrets, s.cluster.hub, s.cluster.clock)
    cleaner.start()
    s.cluster.settle()
    s.add(token_secret("later1", "0000000000000000", expiration=at(100)))
    s.add(token_secret("never1", "0000000000000000"))
    s.add(token_secret("broken", "0000000000000000", expiration="tomorrow"))
    other = token_secret("notbtk", "0000000000000000", expiration=at(0))
    other["type"] = "Opaque"
    s.add(other)
    s.cluster.settle()

    def names() -> list[str]:
        items = s.secrets.list("platform-system", ListOptions()).items
        return sorted(i.object["metadata"]["name"] for i in items)

    assert names() == ["bootstrap-token-later1", "bootstrap-token-never1", "bootstrap-token-notbtk"]
    s.advance(99)
    assert "bootstrap-token-later1" in names()
    s.advance(1)  # the timer set from its expiration fires
    assert names() == ["bootstrap-token-never1", "bootstrap-token-notbtk"]
    cleaner.stop()
    with pytest.raises(errors.StatusError):
        s.secrets.get("platform-system", "bootstrap-token-later1")


def kube_token(token_id: str, secret: str, **extra: str) -> Obj:
    """A token as ``kubeadm token create`` writes it: kube's type, in kube-system."""
    made = token_secret(token_id, secret, **extra)
    made["type"] = "bootstrap.kubernetes.io/token"
    return made


@pytest.mark.parametrize("upstream", [True, False])
def test_kubes_tokens_and_cluster_info_with_upstream_names(tmp_path: Path, upstream: bool) -> None:
    """Under --serve-upstream-groups: tokens in kube-system of kube's type sign, and both
    public namespaces' cluster-info are signed; otherwise kube's tokens mean nothing."""
    s = Setup(tmp_path)
    signer = BootstrapSigner(
        s.configmaps, s.secrets, s.cluster.hub, s.cluster.clock, upstream=upstream
    )
    cleaner = TokenCleaner(s.secrets, s.cluster.hub, s.cluster.clock, upstream=upstream)
    signer.start()
    cleaner.start()
    for namespace in ("platform-public", "kube-public"):
        info = {"metadata": {"name": "cluster-info"}, "data": {"kubeconfig": KUBECONFIG}}
        s.cluster.run(s.configmaps.create(namespace, info))
    signing = {"usage-bootstrap-signing": "true"}
    s.cluster.run(
        s.secrets.create("kube-system", kube_token("kubadm", "0123456789abcdef", **signing))
    )
    expired = kube_token("gone00", "0123456789abcdef", expiration=at(0))
    s.cluster.run(s.secrets.create("kube-system", expired))
    s.cluster.settle()
    for namespace in ("platform-public", "kube-public"):
        data = s.configmaps.get(namespace, "cluster-info").object["data"]
        assert ("jws-kubeconfig-kubadm" in data) is upstream
    names = [
        x.object["metadata"]["name"] for x in s.secrets.list("kube-system", ListOptions()).items
    ]
    assert ("bootstrap-token-gone00" in names) is not upstream  # cleaned only as a token
    signer.stop()
    cleaner.stop()
