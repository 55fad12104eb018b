"""certificatesigningrequest-cleaner-controller: kube's ages, and the hourly pass."""

from __future__ import annotations

import base64
import datetime
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from platform_api.controllers.csrcleaner import CSRCleaner, due
from platform_api.storage.interface import ListOptions
from platform_api.timestamps import format_timestamp, parse_timestamp
from tests.authorization.rbac_cluster import Cluster
from tests.controllers.test_csrsigning import CSRS, csr

Obj = dict[str, Any]
NOW = parse_timestamp("2026-06-01T12:00:00Z") or 0.0
HOUR = 3600.0


def ago(seconds: float) -> str:
    return format_timestamp(NOW - seconds)


def certificate(not_after: float) -> str:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "x")])
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(1)
        .not_valid_before(datetime.datetime.fromtimestamp(not_after - 86400, datetime.UTC))
        .not_valid_after(datetime.datetime.fromtimestamp(not_after, datetime.UTC))
        .sign(key, hashes.SHA256())
    )
    return base64.b64encode(cert.public_bytes(serialization.Encoding.PEM)).decode()


def request(created: float, *conditions: tuple[str, float], cert: str = "") -> Obj:
    status: Obj = {
        "conditions": [
            {"type": t, "status": "True", "lastUpdateTime": ago(a)} for t, a in conditions
        ]
    }
    if cert:
        status["certificate"] = cert
    return {"metadata": {"name": "c", "creationTimestamp": ago(created)}, "status": status}


@pytest.mark.parametrize(
    "obj, gone",
    [
        (request(23 * HOUR), False),  # pending, under a day
        (request(25 * HOUR), True),  # pending over a day
        (request(2 * HOUR, ("Approved", 0.5 * HOUR), cert="x"), False),
        (request(2 * HOUR, ("Approved", 1.5 * HOUR), cert="x"), True),  # issued over an hour
        (request(30 * HOUR, ("Approved", 23 * HOUR)), False),  # approved, never issued
        (request(30 * HOUR, ("Approved", 25 * HOUR)), True),
        (request(2 * HOUR, ("Denied", 0.5 * HOUR)), False),
        (request(2 * HOUR, ("Denied", 1.5 * HOUR)), True),
        (request(2 * HOUR, ("Approved", 1.5 * HOUR), ("Failed", 0.5 * HOUR)), False),
        (request(3 * HOUR, ("Approved", 2.5 * HOUR), ("Failed", 1.5 * HOUR)), True),
        (request(HOUR, ("Approved", 60), cert=certificate(NOW - 1)), True),  # expired
        (request(HOUR, ("Approved", 60), cert=certificate(NOW + 60)), False),
    ],
)
def test_kubes_ages(obj: Obj, gone: bool) -> None:
    assert due(obj, NOW) is gone


def test_a_time_that_cannot_be_read_keeps_the_request() -> None:
    obj = request(HOUR, ("Denied", 0))
    obj["status"]["conditions"][0]["lastUpdateTime"] = "yesterday"
    obj["metadata"]["creationTimestamp"] = "2020-01-01T00:00:00"  # no offset: not RFC 3339
    assert not due(obj, NOW)


def test_the_pass_runs_every_hour(tmp_path: Path) -> None:
    cluster = Cluster(str(tmp_path))
    store = cluster.stores[CSRS]
    cleaner = CSRCleaner(store, cluster.hub, cluster.clock)
    created = parse_timestamp(
        cluster.run(store.create("", csr("c", "example.com/s", ["client auth"]))).object[
            "metadata"
        ]["creationTimestamp"]
    )
    assert created is not None
    cluster.clock.advance(created + 22.5 * HOUR)
    cleaner.start()
    cluster.settle()
    assert [s.object["metadata"]["name"] for s in store.list("", ListOptions()).items] == ["c"]
    cluster.clock.advance(HOUR)  # the next pass, at 23.5 hours
    cluster.settle()
    assert len(store.list("", ListOptions()).items) == 1
    cluster.clock.advance(HOUR)  # 24.5 hours: pending too long
    cluster.settle()
    assert store.list("", ListOptions()).items == []
