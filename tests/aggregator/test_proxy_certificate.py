"""The proxy client certificate is read again when its files change (kube reloads
--proxy-client-cert-file): checked every minute, a new pair replaces the clients."""

from __future__ import annotations

from pathlib import Path

from twisted.internet.task import Clock

from platform_api.aggregator.proxy import PEM_CHECK, AggregatorProxy
from platform_api.aggregator.remote import Backend
from platform_api.apiserver.aggregatoroptions import AggregatorOptions
from platform_api.registry.serviceresolver import Address


def test_a_rotated_certificate_is_used_within_a_minute(tmp_path: Path) -> None:
    cert, key = tmp_path / "proxy.crt", tmp_path / "proxy.key"
    cert.write_bytes(b"CERT-1")
    key.write_bytes(b"KEY-1")
    options = AggregatorOptions(proxy_client_cert_file=str(cert), proxy_client_key_file=str(key))
    clock = Clock()
    proxy = AggregatorProxy(clock, None, options.client_pems)  # type: ignore[arg-type]
    made: list[tuple[bytes | None, bytes | None]] = []

    def fresh(backend: Backend, address: Address) -> object:
        made.append((proxy.cert_pem, proxy.key_pem))
        return object()  # a client needs real PEM; this one stands for it

    proxy.fresh_client = fresh  # type: ignore[method-assign]
    backend = Backend("v1.example.com", "ns", "svc", 443, None, False, True)
    address = Address("10.0.0.9", 443, "svc.ns.svc")
    first = proxy.client(backend, address)
    assert (proxy.cert_pem, proxy.key_pem) == (b"CERT-1", b"KEY-1")
    cert.write_bytes(b"CERT-2")
    key.write_bytes(b"KEY-2")
    clock.advance(PEM_CHECK - 1)
    assert proxy.client(backend, address) is first and proxy.cert_pem == b"CERT-1"
    clock.advance(1)
    proxy.client(backend, address)
    assert (proxy.cert_pem, proxy.key_pem) == (b"CERT-2", b"KEY-2")
    assert made == [(b"CERT-1", b"KEY-1"), (b"CERT-2", b"KEY-2")]  # a new client for it
    cert.unlink()  # mid-rotation: the pair in use stays
    clock.advance(PEM_CHECK)
    proxy.client(backend, address)
    assert proxy.cert_pem == b"CERT-2"
