"""``--etcd-servers`` entries as the client dials them."""

from __future__ import annotations

import pytest

from platform_api.storage.etcd.endpoint import Target


@pytest.mark.parametrize(
    ("endpoint", "target"),
    [
        ("http://10.0.0.1:2379", Target("http", "10.0.0.1", 2379)),
        ("https://etcd.example:4001", Target("https", "etcd.example", 4001)),
        ("127.0.0.1:12379", Target("http", "127.0.0.1", 12379)),
        ("https://[::1]:2379", Target("https", "::1", 2379)),
        ("http://etcd", Target("http", "etcd", 2379)),
    ],
)
def test_an_endpoint_is_its_scheme_host_and_port(endpoint: str, target: Target) -> None:
    assert Target.parse(endpoint) == target


def test_what_no_client_could_dial_is_refused_with_why() -> None:
    with pytest.raises(ValueError) as raised:
        Target.parse("ftp://etcd:2379")
    assert str(raised.value) == 'ftp://etcd:2379: unsupported scheme "ftp" (http or https)'
    with pytest.raises(ValueError) as raised:
        Target.parse("http://etcd:70000")
    assert str(raised.value) == "http://etcd:70000: Port out of range 0-65535"
