"""cluster-info objects, the CA bundle the publisher uses, and the four controllers' names."""

from __future__ import annotations

import base64
from pathlib import Path

import yaml

from platform_api.apiserver import pki
from platform_api.apiserver.clusterinfo import (
    ROLE,
    bootstrap_kubeconfig,
    cluster_info_objects,
    root_ca_bundle,
)
from platform_api.apiserver.config import ServerConfig
from platform_api.controllers import registry


def test_default_on_and_aliases_as_kube() -> None:
    every = registry.parse("*")
    assert "root-ca-certificate-publisher-controller" in every
    assert "ttl-after-finished-controller" in every
    assert "bootstrap-signer-controller" not in every
    assert "token-cleaner-controller" not in every
    assert registry.parse("*,bootstrapsigner,tokencleaner,-ttl-after-finished") == (
        every - {"ttl-after-finished-controller"}
    ) | {"bootstrap-signer-controller", "token-cleaner-controller"}
    assert registry.parse("root-ca-cert-publisher") == {"root-ca-certificate-publisher-controller"}


def test_bootstrap_kubeconfig_is_kubeadms_layout() -> None:
    text = bootstrap_kubeconfig("https://10.0.0.1:6443", b"PEM")
    assert text == (
        "apiVersion: v1\n"
        "clusters:\n"
        "- cluster:\n"
        f"    certificate-authority-data: {base64.b64encode(b'PEM').decode()}\n"
        "    server: https://10.0.0.1:6443\n"
        "  name: ''\n"
        "contexts: null\n"
        "current-context: ''\n"
        "kind: Config\n"
        "preferences: {}\n"
        "users: null\n"
    )
    assert yaml.safe_load(text)["clusters"][0]["name"] == ""


def test_anonymous_may_get_cluster_info_only() -> None:
    (_, cm), (_, role), (_, binding) = cluster_info_objects("https://h:1", b"PEM")
    assert cm["metadata"] == {"name": "cluster-info", "namespace": "platform-public"}
    assert role["metadata"]["name"] == binding["metadata"]["name"] == ROLE
    assert role["rules"] == [
        {
            "verbs": ["get"],
            "apiGroups": [""],
            "resources": ["configmaps"],
            "resourceNames": ["cluster-info"],
        }
    ]
    assert binding["subjects"] == [
        {"kind": "User", "apiGroup": "rbac.authorization.platform.io", "name": "system:anonymous"}
    ]


def test_root_ca_bundle_is_our_ca_or_the_client_ca(tmp_path: Path) -> None:
    cfg = ServerConfig(cert_dir=str(tmp_path / "pki"))
    assert root_ca_bundle(cfg) is None  # not made yet
    paths = pki.ensure_pki(cfg.cert_dir, "127.0.0.1")
    assert root_ca_bundle(cfg) == Path(paths.ca_cert).read_bytes()
    client_ca = tmp_path / "client-ca.crt"
    client_ca.write_bytes(b"CLIENT CA")
    external = ServerConfig(tls_cert_file="x.crt", client_ca_file=str(client_ca))
    assert root_ca_bundle(external) == b"CLIENT CA"
    assert root_ca_bundle(ServerConfig(tls_cert_file="x.crt")) is None
