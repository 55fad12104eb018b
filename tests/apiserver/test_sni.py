"""--tls-sni-cert-key: parsing in component-base's words, loading in kube's, and the
choice of certificate per server name as Go's crypto/tls makes it."""

from __future__ import annotations

from pathlib import Path

import pytest

from platform_api.apiserver.flagvalues import ConfigError
from platform_api.apiserver.sni import NameMap, Pair, certificate_names, load
from platform_api.apiserver.tlsflags import NamedCertKey, named_cert_keys
from tests.e2e.certs import serving_certs


def pair(root: Path, names: list[str], listed: tuple[str, ...] = ()) -> Pair:
    paths = serving_certs(root, names)
    return load(NamedCertKey(paths.serving_cert, paths.serving_key, listed))


@pytest.mark.parametrize(
    ("value", "parsed"),
    [
        ("a.crt,a.key", NamedCertKey("a.crt", "a.key")),
        (" a.crt , a.key ", NamedCertKey("a.crt", "a.key")),
        (
            "a.crt,a.key:*.foo.com, foo.com",
            NamedCertKey("a.crt", "a.key", ("*.foo.com", "foo.com")),
        ),
    ],
)
def test_values(value: str, parsed: NamedCertKey) -> None:
    assert named_cert_keys([value]) == (parsed,)


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("a.crt", "expected comma separated certificate and key file paths"),
        ("a.crt,a.key,b", "expected comma separated certificate and key file paths"),
        ("", "expected comma separated certificate and key file paths"),
        ("a.crt,a.key:", "empty names list is not allowed"),
        ("a.crt,a.key: ", "empty names list is not allowed"),
    ],
)
def test_refused_values(value: str, why: str) -> None:
    with pytest.raises(ConfigError) as err:
        named_cert_keys([value])
    assert str(err.value) == f'invalid argument "{value}" for "--tls-sni-cert-key" flag: {why}'


def test_load_errors_are_kubes(tmp_path: Path) -> None:
    good = serving_certs(tmp_path / "good", ["a.example"])
    other = serving_certs(tmp_path / "other", ["b.example"])
    junk = tmp_path / "junk.pem"
    junk.write_text("not a pem\n")
    cases = [
        (NamedCertKey(str(tmp_path / "none.crt"), good.serving_key),
         f"open {tmp_path / 'none.crt'}: no such file or directory"),
        (NamedCertKey(str(junk), good.serving_key),
         "tls: failed to find any PEM data in certificate input"),
        (NamedCertKey(good.serving_cert, str(junk)),
         "tls: failed to find any PEM data in key input"),
        (NamedCertKey(good.serving_cert, other.serving_key),
         "tls: private key does not match public key"),
    ]  # fmt: skip
    for named, why in cases:
        with pytest.raises(ConfigError) as err:
            load(named)
        assert str(err.value) == f"failed to load SNI cert and key: {why}"


def test_certificate_names_skip_an_ip_common_name(tmp_path: Path) -> None:
    assert certificate_names(pair(tmp_path / "a", ["a.example", "b.example"]).leaf) == [
        "a.example",
        "a.example",
        "b.example",
    ]  # the CN, then the DNS SANs (kube keeps both)
    assert certificate_names(pair(tmp_path / "b", ["10.0.0.1", "c.example"]).leaf) == [
        "10.0.0.1",
        "c.example",
    ]  # an IP CN is dropped; a DNS SAN spelled as an IP is kept, as Go's
    assert certificate_names(pair(tmp_path / "c", ["*.wild.example"]).leaf) == [
        "*.wild.example",
        "*.wild.example",
    ]


def test_lookup_precedence(tmp_path: Path) -> None:
    first = pair(tmp_path / "1", ["shared.example", "first.example"])
    second = pair(tmp_path / "2", ["shared.example", "*.wild.example"])
    listed = pair(tmp_path / "3", ["ignored.example"], ("first.example", "127.0.0.1"))
    chosen = NameMap([first, second, listed], lambda p: p)
    assert chosen.for_server_name("shared.example") is first  # the earlier flag wins
    assert chosen.for_server_name("first.example") is listed  # listed names win
    assert chosen.for_server_name("ignored.example") is None  # listed replace the cert's
    assert chosen.for_server_name("API.Wild.Example.") is second  # case, trailing dot
    assert chosen.for_server_name("a.b.wild.example") is None  # one label only
    assert chosen.for_server_name("wild.example") is None
    assert chosen.for_address("127.0.0.1") is listed  # a hello without SNI
    assert chosen.for_address("::1") is None
