"""The cluster-authentication-trust controller: the merge rules (kube's) and the
ConfigMap kept over real storage, the hub and a Clock."""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

import orjson
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import Encoding
from cryptography.x509.oid import NameOID

from platform_api import errors
from platform_api.controllers.authtrust import (
    CONFIGMAP,
    RECHECK,
    AuthenticationInfo,
    AuthenticationTrust,
    combined_bundle,
    merged_data,
)
from tests.authorization.rbac_cluster import Cluster

Obj = dict[str, Any]
NOW = datetime.datetime(2026, 11, 29, 12, 0, tzinfo=datetime.UTC)


def ca_pem(name: str, expires: datetime.datetime) -> str:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(expires - datetime.timedelta(days=365))
        .not_valid_after(expires)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    return cert.public_bytes(Encoding.PEM).decode()


LATER = NOW + datetime.timedelta(days=30)
OLD, NEW, PROXY = ca_pem("old", LATER), ca_pem("new", LATER), ca_pem("proxy", LATER)


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_bundles_keep_stored_certificates_first_and_drop_expired_and_repeats() -> None:
    expired = ca_pem("expired", NOW - datetime.timedelta(minutes=6))
    slack = ca_pem("slack", NOW - datetime.timedelta(minutes=4))  # kube allows 5 minutes
    stored = OLD + expired + slack + OLD
    assert combined_bundle(stored, (NEW + OLD).encode(), NOW) == OLD + slack + NEW
    assert combined_bundle("", b"", NOW) == ""
    assert combined_bundle("not a PEM", NEW.encode(), NOW) == NEW


def test_headers_are_written_only_with_a_proxy_ca(tmp_path: Path) -> None:
    client = write(tmp_path, "client.crt", NEW)
    info = AuthenticationInfo(client_ca_file=client, username_headers=("X-Remote-User",))
    assert merged_data({}, info, NOW) == {"client-ca-file": NEW}
    assert merged_data({}, AuthenticationInfo(), NOW) == {}


def test_merged_data_unions_stored_and_own_settings(tmp_path: Path) -> None:
    info = AuthenticationInfo(
        client_ca_file=write(tmp_path, "client.crt", NEW),
        requestheader_client_ca_file=write(tmp_path, "proxy.crt", PROXY),
        username_headers=("X-Remote-User",),
        group_headers=("X-Remote-Group",),
        extra_headers_prefix=("X-Remote-Extra-",),
    )
    stored = {
        "client-ca-file": OLD,
        "requestheader-username-headers": '["X-Other-User","X-Remote-User"]',
        "requestheader-allowed-names": "not json",  # unreadable: replaced
        "stray": "dropped",
    }
    assert merged_data(stored, info, NOW) == {
        "client-ca-file": OLD + NEW,
        "requestheader-client-ca-file": PROXY,
        "requestheader-username-headers": '["X-Other-User","X-Remote-User"]',
        "requestheader-group-headers": '["X-Remote-Group"]',
        "requestheader-extra-headers-prefix": '["X-Remote-Extra-"]',
        "requestheader-allowed-names": "[]",
    }
    with_uid = AuthenticationInfo(
        requestheader_client_ca_file=info.requestheader_client_ca_file,
        uid_headers=("X-Remote-Uid",),
    )
    assert orjson.loads(merged_data({}, with_uid, NOW)["requestheader-uid-headers"]) == [
        "X-Remote-Uid"
    ]


def test_the_configmap_is_kept_in_each_namespace(tmp_path: Path) -> None:
    cluster = Cluster(str(tmp_path / "db"))
    namespaces = cluster.stores[("", "v1", "namespaces")]
    configmaps = cluster.stores[("", "v1", "configmaps")]
    for name in ("platform-system", "kube-system"):
        cluster.run(namespaces.create("", {"metadata": {"name": name}}))
    client = write(tmp_path, "client.crt", NEW)
    info = AuthenticationInfo(client_ca_file=client)
    trust = AuthenticationTrust(
        configmaps,
        info,
        ("platform-system", "kube-system"),
        cluster.hub,
        cluster.clock,
        now=lambda: NOW,
    )
    trust.start()
    cluster.settle()
    for ns in trust.namespaces:
        assert configmaps.get(ns, CONFIGMAP).object["data"] == {"client-ca-file": NEW}
    rv = configmaps.get("kube-system", CONFIGMAP).object["metadata"]["resourceVersion"]

    # Another server's CA stays (first); a foreign key goes.
    def other_server(obj: Obj | None) -> Obj:
        assert obj is not None
        return {**obj, "data": {"client-ca-file": OLD, "mine": "x"}}

    cluster.run(configmaps.update("kube-system", CONFIGMAP, other_server))
    cluster.settle()
    assert configmaps.get("kube-system", CONFIGMAP).object["data"] == {"client-ca-file": OLD + NEW}
    # Deleted: back at once.
    cluster.run(configmaps.delete("platform-system", CONFIGMAP))
    cluster.settle()
    assert configmaps.get("platform-system", CONFIGMAP).object["data"] == {"client-ca-file": NEW}
    # A rotated CA file is picked up at the next minute's check.
    (tmp_path / "client.crt").write_text(PROXY)
    cluster.clock.advance(RECHECK)
    cluster.settle()
    data = configmaps.get("platform-system", CONFIGMAP).object["data"]
    assert data == {"client-ca-file": NEW + PROXY}
    after = configmaps.get("kube-system", CONFIGMAP).object["metadata"]["resourceVersion"]
    assert after != rv
    trust.stop()


def test_nothing_to_publish_writes_nothing(tmp_path: Path) -> None:
    cluster = Cluster(str(tmp_path / "db"))
    namespaces = cluster.stores[("", "v1", "namespaces")]
    configmaps = cluster.stores[("", "v1", "configmaps")]
    cluster.run(namespaces.create("", {"metadata": {"name": "platform-system"}}))
    trust = AuthenticationTrust(
        configmaps, AuthenticationInfo(), ("platform-system",), cluster.hub, cluster.clock
    )
    trust.start()
    cluster.settle()
    with pytest.raises(errors.StatusError) as caught:
        configmaps.get("platform-system", CONFIGMAP)
    assert caught.value.code == 404
    trust.stop()


def test_written_before_ready_then_checked_a_minute_on(tmp_path: Path) -> None:
    """``write_now`` (at bootstrap) writes at once; ``start`` does not check again until
    a minute later, so start-up reads and parses the CA files once."""
    cluster = Cluster(str(tmp_path / "db"))
    namespaces = cluster.stores[("", "v1", "namespaces")]
    configmaps = cluster.stores[("", "v1", "configmaps")]
    cluster.run(namespaces.create("", {"metadata": {"name": "platform-system"}}))
    info = AuthenticationInfo(client_ca_file=write(tmp_path, "client.crt", NEW))
    trust = AuthenticationTrust(
        configmaps, info, ("platform-system",), cluster.hub, cluster.clock, now=lambda: NOW
    )
    checked: list[str] = []
    sync = trust.sync

    async def counted(namespace: str) -> float | None:
        checked.append(namespace)
        return await sync(namespace)

    trust.sync = counted  # type: ignore[method-assign]
    cluster.run(trust.write_now())
    assert configmaps.get("platform-system", CONFIGMAP).object["data"] == {"client-ca-file": NEW}
    cluster.hub.flush()  # the write's event went out during bootstrap
    trust.start()
    cluster.settle()
    assert checked == ["platform-system"]
    cluster.clock.advance(RECHECK)
    cluster.settle()
    assert checked == ["platform-system", "platform-system"]
    trust.stop()
