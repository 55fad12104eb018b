"""kube-apiserver's flags for proxying to aggregated API servers: names, checks, errors.

``config.from_flags`` calls ``from_flags``; aggregator/proxy.py uses what they name.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from platform_api.apiserver.flagvalues import ConfigError, parse_bool

Given = Callable[[str], str | None]

# (flag, default shown in --help, description), appended to serverflags.FLAGS.
AGGREGATOR_FLAGS: list[tuple[str, str, str]] = [
    (
        "proxy-client-cert-file",
        "",
        "Client certificate used to prove the identity of the aggregator or kube-apiserver "
        "when it must call out during a request. This includes proxying requests to a user "
        "api-server. The aggregated server trusts it through its "
        "--requestheader-client-ca-file.",
    ),
    (
        "proxy-client-key-file",
        "",
        "Private key for the proxy client certificate (--proxy-client-cert-file).",
    ),
    (
        "enable-aggregator-routing",
        "false",
        "Turns on aggregator routing requests to endpoints IP rather than cluster IP.",
    ),
]
BOOL_FLAGS = ("enable-aggregator-routing",)


@dataclass
class AggregatorOptions:
    proxy_client_cert_file: str = ""
    proxy_client_key_file: str = ""
    endpoint_routing: bool = False  # --enable-aggregator-routing

    def client_pems(self) -> tuple[bytes | None, bytes | None]:
        """The proxy client certificate and key, read now (None, None without them)."""
        if not self.proxy_client_cert_file:
            return None, None
        with (
            open(self.proxy_client_cert_file, "rb") as cert,
            open(self.proxy_client_key_file, "rb") as key,
        ):
            return cert.read(), key.read()


def from_flags(given: Given) -> AggregatorOptions:
    out = AggregatorOptions(
        proxy_client_cert_file=given("proxy-client-cert-file") or "",
        proxy_client_key_file=given("proxy-client-key-file") or "",
    )
    if bool(out.proxy_client_cert_file) != bool(out.proxy_client_key_file):
        raise ConfigError(
            "--proxy-client-cert-file and --proxy-client-key-file must be given together"
        )
    for name in ("proxy-client-cert-file", "proxy-client-key-file"):
        path = given(name)
        if path and not os.path.isfile(path):
            raise ConfigError(f"--{name}: {path}: no such file")
    routing = given("enable-aggregator-routing")
    if routing is not None:
        out.endpoint_routing = parse_bool("enable-aggregator-routing", routing)
    return out
