"""--egress-selector-config-file: kube's decoding and validation (each message as the
reference kube-apiserver v1.36 printed it for the same file, under its group), then
only Direct connections taken."""

from __future__ import annotations

from pathlib import Path

import pytest

from platform_api.apiserver.config import from_flags
from platform_api.apiserver.flagvalues import ConfigError

HEAD = "apiVersion: apiserver.platform.io/v1beta1\nkind: EgressSelectorConfiguration\n"
MIXED = """egressSelections:
- name: cluster
  connection:
    proxyProtocol: Direct
    transport:
      uds: {udsName: /tmp/x}
- name: Cluster
  connection:
    proxyProtocol: HTTPConnect
- name: master
  connection:
    proxyProtocol: GRPC
    transport:
      tcp: {url: "https://x"}
- name: etcd
  connection:
    proxyProtocol: Magic
"""
TLS = """egressSelections:
- name: cluster
  connection:
    proxyProtocol: HTTPConnect
    transport:
      tcp: {url: "https://proxy:8131", tlsConfig: {caBundle: /nope/ca.crt}}
"""
DIRECT = """egressSelections:
- name: controlplane
  connection: {proxyProtocol: Direct}
- name: master
  connection: {proxyProtocol: Direct}
"""


def check(tmp_path: Path, body: str) -> None:
    path = tmp_path / "egress.yaml"
    path.write_text(HEAD + body)
    from_flags({"egress-selector-config-file": str(path)})


def refused(tmp_path: Path, body: str) -> str:
    with pytest.raises(ConfigError) as caught:
        check(tmp_path, body)
    return str(caught.value)


def test_direct_connections_are_taken(tmp_path: Path) -> None:
    check(tmp_path, DIRECT.replace("master", "etcd"))
    check(tmp_path, "egressSelections: []\n")


def test_validation_in_kubes_words(tmp_path: Path) -> None:
    assert refused(tmp_path, MIXED) == (
        "failed to validate egress selector configuration: [service.connection.transport: "
        'Invalid value: "direct": config must be absent for direct connect, '
        "service.connection.transport: Required value: transport must be set for "
        "HTTPConnect, service.connection.uds: Required value: UDS must be set with GRPC, "
        'service.connection.protocol: Unsupported value: "Magic": supported values: '
        '"Direct", "HTTPConnect", "GRPC", service.connection[1]: Duplicate value: "cluster"]'
    )
    assert refused(tmp_path, TLS) == (
        "failed to validate egress selector configuration: [service.connection.tlsConfig"
        '.caBundle: Invalid value: "/nope/ca.crt": TLS config ca bundle does not exist, '
        'service.connection.tlsConfig.clientCert: Invalid value: "nil": Using TLS requires '
        'clientCert, service.connection.tlsConfig.clientKey: Invalid value: "nil": Using '
        "TLS requires requires clientKey]"
    )
    assert refused(tmp_path, DIRECT) == (
        "failed to validate egress selector configuration: service.connection[1]: "
        'Duplicate value: "controlplane"'
    )  # master is controlplane's old name


def test_decoding_in_kubes_words(tmp_path: Path) -> None:
    extra = (
        "egressSelections:\n- name: cluster\n  connection: {proxyProtocol: Direct}\n  extra: 1\n"
    )
    assert refused(tmp_path, extra) == (
        "failed to read egress selector config: strict decoding error: unknown field "
        '"egressSelections[0].extra"'
    )
    with pytest.raises(ConfigError) as caught:
        from_flags({"egress-selector-config-file": str(tmp_path / "none.yaml")})
    assert str(caught.value) == (
        "failed to read egress selector config: unable to read egress selector configuration "
        f'from "{tmp_path / "none.yaml"}" [open {tmp_path / "none.yaml"}: no such file or '
        "directory]"
    )


def test_a_proxied_selection_is_refused(tmp_path: Path) -> None:
    proxied = (
        "egressSelections:\n- name: cluster\n  connection:\n    proxyProtocol: GRPC\n"
        "    transport: {uds: {udsName: /run/konnectivity.sock}}\n"
    )
    assert refused(tmp_path, proxied) == (
        'egress selection "cluster" uses GRPC: this server dials its webhooks, aggregated '
        "servers and etcd directly (Direct is the only proxyProtocol supported)"
    )
