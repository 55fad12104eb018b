"""--advertise-address, --endpoint-reconciler-type and --apiserver-count, as kube reads
them, and kube's choice of the address to advertise."""

from __future__ import annotations

import pytest

from platform_api.apiserver import endpointoptions
from platform_api.apiserver.config import from_flags
from platform_api.apiserver.endpointoptions import EndpointOptions, advertised_address, usable
from platform_api.apiserver.flagvalues import ConfigError


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (
            {"advertise-address": "nope"},
            'invalid argument "nope" for "--advertise-address" flag: failed to parse IP: "nope"',
        ),
        (
            {"bind-address": "1.2.3"},
            'invalid argument "1.2.3" for "--bind-address" flag: failed to parse IP: "1.2.3"',
        ),
        ({"endpoint-reconciler-type": "bogus"}, "Reconciler not implemented: bogus"),
        (
            {"apiserver-count": "0"},
            "--apiserver-count should be a positive number, but value '0' provided",
        ),
        (
            {"apiserver-count": "x"},
            'invalid argument "x" for "--apiserver-count" flag: strconv.ParseInt: parsing "x": '
            "invalid syntax",
        ),
    ],
)
def test_bad_values_are_refused_with_kubes_words(flags: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        from_flags(dict(flags))
    assert str(raised.value) == message


def test_values_are_kept_in_their_canonical_form() -> None:
    cfg = from_flags(
        {
            "advertise-address": "fd00:0::5",
            "endpoint-reconciler-type": "master-count",
            "apiserver-count": "3",
        }
    )
    assert cfg.endpoints == EndpointOptions("fd00::5", "master-count", 3)
    assert from_flags({}).endpoints == EndpointOptions("", "lease", 1)


@pytest.fixture
def host(monkeypatch: pytest.MonkeyPatch) -> None:
    """A host whose default route leaves from 192.0.2.2 and that also has fd00::2."""
    routes = {4: "192.0.2.2", 6: "fd00::2"}
    monkeypatch.setattr(endpointoptions, "_default_route_source", routes.get)
    monkeypatch.setattr(endpointoptions, "_host_addresses", lambda version: [])


@pytest.mark.parametrize(
    ("flag", "bind", "expected"),
    [
        ("10.1.1.1", "0.0.0.0", "10.1.1.1"),  # the flag wins
        ("", "10.2.2.2", "10.2.2.2"),  # then a bind address that is a real one
        ("0.0.0.0", "10.2.2.2", "10.2.2.2"),  # an unspecified flag counts as none
        ("", "0.0.0.0", "192.0.2.2"),  # else the default route's source
        ("", "127.0.0.1", "192.0.2.2"),
        ("", "::", "fd00::2"),  # in the bind address's family
        ("", "::1", "fd00::2"),
    ],
)
def test_the_advertised_address_is_chosen_as_kube_chooses(
    host: None, flag: str, bind: str, expected: str
) -> None:
    assert advertised_address(EndpointOptions(advertise_address=flag), bind) == expected


def test_without_a_route_any_host_address_serves(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(endpointoptions, "_default_route_source", lambda version: None)
    found = {4: ["10.9.9.9"], 6: []}
    monkeypatch.setattr(endpointoptions, "_host_addresses", found.__getitem__)
    assert advertised_address(EndpointOptions(), "::") == "10.9.9.9"


@pytest.mark.parametrize(
    ("address", "ok"),
    [
        ("10.0.0.1", True),
        ("192.0.2.2", True),
        ("fd00::2", True),
        ("127.0.0.1", False),
        ("::1", False),
        ("169.254.1.1", False),
        ("fe80::1", False),
        ("224.0.0.1", False),
        ("0.0.0.0", False),
        ("255.255.255.255", False),
    ],
)
def test_only_global_unicast_addresses_are_advertised(address: str, ok: bool) -> None:
    assert usable(address) is ok
