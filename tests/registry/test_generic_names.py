"""Names as kube-apiserver v1.36 checked them (reference, 2026-12-08): a kind's own
name rule first, then, for kinds whose rule checks nothing, BeforeCreate's generic one
(a path segment; a generateName only as its prefix); apimachinery's LongName counts in
bytes and leaves a generateName to the name it made."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from platform_api import errors
from platform_api.registry import prepare
from platform_api.registry.strategy import strategy_for
from platform_api.scheme.catalog import builtin_scheme

Obj = dict[str, Any]
NOW = "2026-12-08T00:00:00Z"


def _request() -> str:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "alice")])
    csr = x509.CertificateSigningRequestBuilder().subject_name(subject).sign(key, hashes.SHA256())
    return base64.b64encode(csr.public_bytes(serialization.Encoding.PEM)).decode()


def _create(group: str, plural: str, obj: Obj, namespace: str = "") -> list[str]:
    """The causes of the create's refusal (none when it passes)."""
    rt = builtin_scheme().lookup(group, "v1", plural)
    assert rt is not None
    try:
        prepare.before_create(rt, strategy_for(rt), namespace, obj, NOW)
    except errors.StatusError as e:
        return [f"{c['field']}: {c['message']}" for c in e.details["causes"]]
    return []


def _csr(meta: Obj, **spec: Any) -> Obj:
    body = {"request": _request(), "signerName": "example.com/foo", "usages": ["client auth"]}
    return {"kind": "CertificateSigningRequest", "metadata": meta, "spec": {**body, **spec}}


CSR = "certificates.platform.io"


def test_a_csrs_name_is_checked_only_once_its_request_passes() -> None:
    assert _create(CSR, "certificatesigningrequests", _csr({"name": ".."})) == [
        "metadata.name: Invalid value: \"..\": may not be '..'"
    ]
    assert _create(CSR, "certificatesigningrequests", _csr({"name": ".."}, usages=None)) == [
        "spec.usages: Required value"
    ]
    assert _create(CSR, "certificatesigningrequests", _csr({"name": "Bad_Name"})) == []


@pytest.mark.parametrize(
    ("prefix", "causes"),
    [
        ("..", []),
        ("a%", ["metadata.generateName: Invalid value: \"a%\": may not contain '%'"]),
    ],
)
def test_a_csrs_generate_name_is_a_path_segments_prefix(prefix: str, causes: list[str]) -> None:
    found = _create(CSR, "certificatesigningrequests", _csr({"generateName": prefix}))
    assert found[: len(causes)] == causes
    assert len(found) == (2 if causes else 0)  # the name made from it too


def _rc(meta: Obj) -> Obj:
    template = {
        "metadata": {"labels": {"a": "b"}},
        "spec": {"containers": [{"name": "c", "image": "i"}]},
    }
    spec = {"selector": {"a": "b"}, "template": template}
    return {"kind": "ReplicationController", "metadata": meta, "spec": spec}


def test_a_replication_controllers_long_name_counts_bytes() -> None:
    long = "a" * 254
    found = _create("", "replicationcontrollers", _rc({"name": long}), "ns")
    assert found[:1] == [f'metadata.name: Invalid value: "{long}": must be no more than 253 bytes']


def test_a_replication_controllers_generate_name_is_left_to_its_name() -> None:
    found = _create("", "replicationcontrollers", _rc({"generateName": "Bad_"}), "ns")
    assert [cause.split(":")[0] for cause in found] == ["metadata.name"]


def test_rbac_checks_a_generate_name_as_a_whole_path_segment() -> None:
    """RBAC's name rule takes no notice of a prefix: ``..`` is refused as a generateName
    too, where BeforeCreate's own check would let it through."""
    role = {"kind": "Role", "metadata": {"generateName": ".."}}
    assert _create("rbac.authorization.platform.io", "roles", role, "ns") == [
        "metadata.generateName: Invalid value: \"..\": may not be '..'"
    ]
