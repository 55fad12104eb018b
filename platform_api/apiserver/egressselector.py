"""``--egress-selector-config-file``: kube's EgressSelectorConfiguration, read and
validated as kube-apiserver reads it (apiserver.platform.io/v1beta1).

The file says how the server reaches the cluster's network, its control plane and etcd:
directly, or through a Konnectivity proxy (HTTP CONNECT over TCP or a Unix socket, or
gRPC over a Unix socket).  This server dials everything directly, so a file whose
selections are all ``Direct`` is taken and changes nothing; a proxied selection stops
the start in one line rather than being dialed past.  Bad files are refused in kube's
words first.
"""

from __future__ import annotations

import os
from typing import Any

from platform_api.apiserver.flagvalues import ConfigError
from platform_api.codec.configfile import ConfigKind, DecodeError, ReadError, read_file
from platform_api.validation import field as fe
from platform_api.validation.field import FieldError, GoText

GROUP = "apiserver.platform.io"
KIND = "EgressSelectorConfiguration"
NAMES = ["cluster", "controlplane", "etcd"]
DIRECT, HTTP_CONNECT, GRPC = "Direct", "HTTPConnect", "GRPC"
SCHEMA = ConfigKind(
    KIND,
    (f"{GROUP}/v1beta1", f"{GROUP}/v1alpha1"),
    {
        "": {"apiVersion", "kind", "egressSelections"},
        "egressSelections": {"name", "connection"},
        "connection": {"proxyProtocol", "transport"},
        "transport": {"tcp", "uds"},
        "tcp": {"url", "tlsConfig"},
        "tlsConfig": {"caBundle", "clientKey", "clientCert", "tlsServerName"},
        "uds": {"udsName"},
    },
)
_AT = "service.connection"
Obj = dict[str, Any]


def check(path: str) -> dict[str, str]:
    """The file's selections (name -> protocol), refused in kube's words when missing,
    undecodable or invalid, and in this server's when one goes through a proxy."""
    try:
        data = read_file(path)
    except ReadError as e:
        raise ConfigError(
            f"failed to read egress selector config: unable to read egress selector "
            f'configuration from "{path}" [{e}]'
        ) from None
    try:
        selections = _selections(SCHEMA.document(data))
    except DecodeError as e:
        raise ConfigError(f"failed to read egress selector config: {e}") from None
    errors = validate(selections)
    if errors:
        raise ConfigError(
            f"failed to validate egress selector configuration: {fe.aggregate(errors)}"
        )
    protocols = {str(s.get("name", "")).lower(): _protocol(s) for s in selections}
    for name, protocol in protocols.items():
        if protocol != DIRECT:
            raise ConfigError(
                f'egress selection "{name}" uses {protocol}: this server dials its webhooks, '
                "aggregated servers and etcd directly (Direct is the only proxyProtocol "
                "supported)"
            )
    return protocols


def _selections(doc: Obj) -> list[Obj]:
    """The selections, each field's JSON type checked as Go's decoder checks it (the
    validation below reads the dicts themselves)."""
    items = SCHEMA.typed(doc.get("egressSelections"), "egressSelections", list, [])
    out = []
    for i, item in enumerate(items):
        at = f"egressSelections[{i}]"
        entry = SCHEMA.typed(item, at, dict, {})
        SCHEMA.field(entry, "name", at, str, "")
        if entry.get("name") == "master":  # v1beta1's old name, converted as kube does
            entry = {**entry, "name": "controlplane"}
        connection = SCHEMA.field(entry, "connection", at, dict, {})
        SCHEMA.field(connection, "proxyProtocol", f"{at}.connection", str, "")
        SCHEMA.field(connection, "transport", f"{at}.connection", dict, None)
        out.append(entry)
    return out


def _protocol(selection: Obj) -> str:
    return str((selection.get("connection") or {}).get("proxyProtocol") or "")


def validate(selections: list[Obj]) -> list[FieldError]:
    """kube's ValidateEgressSelectorConfiguration: each connection, then the names."""
    errs: list[FieldError] = []
    for selection in selections:
        connection = selection.get("connection") or {}
        transport = connection.get("transport")
        protocol = _protocol(selection)
        if protocol == DIRECT:
            if transport is not None:
                errs.append(
                    fe.invalid(
                        f"{_AT}.transport", "direct", "config must be absent for direct connect"
                    )
                )
        elif protocol == HTTP_CONNECT:
            errs += _http_connect(transport)
        elif protocol == GRPC:
            errs += _grpc(transport)
        else:
            errs.append(fe.not_supported(f"{_AT}.protocol", protocol, [DIRECT, HTTP_CONNECT, GRPC]))
    seen: set[str] = set()
    for i, selection in enumerate(selections):
        name = str(selection.get("name", "")).lower()
        if name in seen:
            errs.append(fe.duplicate(f"{_AT}[{i}]", name))
            continue
        seen.add(name)
        if name not in NAMES:
            errs.append(fe.not_supported(_AT, name, NAMES))
    return errs


def _http_connect(transport: Obj | None) -> list[FieldError]:
    if transport is None:
        return [fe.required(f"{_AT}.transport", "transport must be set for HTTPConnect")]
    tcp, uds = transport.get("tcp"), transport.get("uds")
    if tcp is not None and uds is not None:
        shown = GoText(f'&apiserver.TCPTransport{{URL:"{tcp.get("url", "")}", ...}}')
        return [fe.invalid(f"{_AT}.tcp", shown, "TCP and UDS cannot both be set")]
    if tcp is None and uds is None:
        return [fe.required(f"{_AT}.tcp", "One of TCP or UDS must be set")]
    return _tcp(tcp) if tcp is not None else _uds(uds or {})


def _grpc(transport: Obj | None) -> list[FieldError]:
    if transport is None:
        return [fe.required(f"{_AT}.transport", "transport must be set for GRPC")]
    if transport.get("uds") is not None:
        return _uds(transport["uds"])
    return [fe.required(f"{_AT}.uds", "UDS must be set with GRPC")]


def _uds(uds: Obj) -> list[FieldError]:
    if not uds.get("udsName"):
        return [fe.invalid(f"{_AT}.udsName", "nil", "must be present for UDS connections")]
    return []


def _tcp(tcp: Obj) -> list[FieldError]:
    url = str(tcp.get("url") or "")
    if url.startswith("http://"):
        if tcp.get("tlsConfig") is not None:
            return [
                fe.invalid(f"{_AT}.tlsConfig", "nil", "config must not be present when using HTTP")
            ]
        return []
    if not url.startswith("https://"):
        why = "supported connection protocols are http:// and https://"
        return [fe.invalid(f"{_AT}.url", url, why)]
    tls = tcp.get("tlsConfig")
    if tls is None:
        return [fe.required(f"{_AT}.tlsConfig", "TLSConfig must be present when using HTTPS")]
    errs = []
    at = f"{_AT}.tlsConfig"
    bundle = tls.get("caBundle") or ""
    if bundle and not os.path.exists(bundle):
        errs.append(fe.invalid(f"{at}.caBundle", bundle, "TLS config ca bundle does not exist"))
    for key, what, missing in (
        ("clientCert", "TLS client cert does not exist", "Using TLS requires clientCert"),
        ("clientKey", "TLS client key does not exist", "Using TLS requires requires clientKey"),
    ):
        value = tls.get(key) or ""
        if not value:
            errs.append(fe.invalid(f"{at}.{key}", "nil", missing))
        elif not os.path.exists(value):
            errs.append(fe.invalid(f"{at}.{key}", value, what))
    return errs
