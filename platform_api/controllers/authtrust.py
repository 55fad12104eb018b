"""kube-apiserver's cluster-authentication-trust controller: the
``extension-apiserver-authentication`` ConfigMap.

An aggregated API server (one built on k8s.io/apiserver: metrics-server, the sample
server) reads from it which CA signs client certificates and which proxy may assert a
user in request headers.  Every API server merges its own settings into what is
stored, as kube's does: CA bundles keep the stored certificates first, then add their
own, dropping expired ones and duplicates; header lists are unions in the same order.
So replicas with different CAs (a rotation under way) each leave theirs.  Checked at
start, when the ConfigMap changes, and every minute (the CA files are read each time,
so a rotated file is picked up).  Written in the system namespace, and in
``kube-system`` too when upstream names are served, where stock servers look.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import orjson
from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding
from twisted.internet.interfaces import IReactorTime
from twisted.logger import Logger

from platform_api import errors
from platform_api.controllers.base import Controller, current_object
from platform_api.fieldmanager.manager import APISERVER
from platform_api.registry.store import Store
from platform_api.storage.interface import Event
from platform_api.storage.watch import WatchHub

log = Logger()
Obj = dict[str, Any]
CONFIGMAP = "extension-apiserver-authentication"
RECHECK = 60.0  # kube's controller re-checks every minute
EXPIRY_SLACK = datetime.timedelta(minutes=5)
HEADER_KEYS = (  # (data key, AuthenticationInfo field); uid only written when set
    ("requestheader-username-headers", "username_headers"),
    ("requestheader-uid-headers", "uid_headers"),
    ("requestheader-group-headers", "group_headers"),
    ("requestheader-extra-headers-prefix", "extra_headers_prefix"),
    ("requestheader-allowed-names", "allowed_names"),
)


@dataclass(frozen=True)
class AuthenticationInfo:
    """This server's settings: CA files by path (re-read on every check) and header lists."""

    client_ca_file: str = ""
    requestheader_client_ca_file: str = ""
    username_headers: tuple[str, ...] = ()
    uid_headers: tuple[str, ...] = ()
    group_headers: tuple[str, ...] = ()
    extra_headers_prefix: tuple[str, ...] = ()
    allowed_names: tuple[str, ...] = ()


def _read(path: str) -> bytes:
    if not path:
        return b""
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        log.warn("cannot read CA bundle {path}: {error}", path=path, error=e)
        return b""


def _certificates(pem: str | bytes) -> list[x509.Certificate]:
    data = pem.encode() if isinstance(pem, str) else pem
    if not data.strip():
        return []
    try:
        return x509.load_pem_x509_certificates(data)
    except ValueError:
        return []  # kube gives up on an unreadable bundle; here it is replaced


def combined_bundle(stored: str, own: bytes, now: datetime.datetime) -> str:
    """Stored certificates first, then ours; unexpired (5 minutes' slack), each once."""
    seen: set[bytes] = set()
    out = []
    for cert in _certificates(stored) + _certificates(own):
        der = cert.public_bytes(Encoding.DER)
        if der in seen or cert.not_valid_after_utc < now - EXPIRY_SLACK:
            continue
        seen.add(der)
        out.append(cert.public_bytes(Encoding.PEM).decode())
    return "".join(out)


def _string_list(text: str | None) -> list[str]:
    try:
        value = orjson.loads(text or "[]")
    except orjson.JSONDecodeError:
        return []
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _union(stored: Sequence[str], own: Sequence[str]) -> list[str]:
    return list(dict.fromkeys([*stored, *own]))


def merged_data(stored: dict[str, str], info: AuthenticationInfo, now: datetime.datetime) -> Obj:
    """The ConfigMap's data once this server's settings are merged into ``stored``."""
    data: Obj = {}
    client_ca = combined_bundle(stored.get("client-ca-file", ""), _read(info.client_ca_file), now)
    if client_ca:
        data["client-ca-file"] = client_ca
    own_header_ca = _read(info.requestheader_client_ca_file)
    header_ca = combined_bundle(stored.get("requestheader-client-ca-file", ""), own_header_ca, now)
    if not header_ca:
        return data  # headers mean nothing without a CA to trust their sender
    for key, field in HEADER_KEYS:
        values = _union(_string_list(stored.get(key)), getattr(info, field))
        if values or field != "uid_headers":
            data[key] = orjson.dumps(values).decode()
    data["requestheader-client-ca-file"] = header_ca
    return data


class AuthenticationTrust(Controller):
    """Keys are the namespaces the ConfigMap is kept in."""

    name = "cluster-authentication-trust-controller"
    queue = "cluster_authentication_trust_controller"
    manager = APISERVER  # kube runs it inside the API server

    def __init__(
        self,
        configmaps: Store,
        info: AuthenticationInfo,
        namespaces: tuple[str, ...],
        hub: WatchHub,
        reactor: IReactorTime,
        now: Callable[[], datetime.datetime] | None = None,
    ) -> None:
        super().__init__(hub, reactor)
        self.configmaps = configmaps
        self.info = info
        self.namespaces = namespaces
        self.now = now or (lambda: datetime.datetime.now(datetime.UTC))
        self._written_at_start = False
        self._track = configmaps.tracker(APISERVER)

    async def write_now(self) -> None:
        """Bring every namespace's ConfigMap up to date before the server says it is
        ready; ``start`` then waits a minute before its first periodic check."""
        for namespace in self.namespaces:
            try:
                await self.sync(namespace)
            except Exception:  # the periodic check tries again
                log.failure("writing {name} in {ns}", name=CONFIGMAP, ns=namespace)
        self._written_at_start = True

    def resync(self) -> None:
        delay = RECHECK if self._written_at_start else 0.0
        for namespace in self.namespaces:
            self.enqueue(namespace, delay)

    def watched(self) -> tuple[bytes, ...]:
        return (self.configmaps.prefix,)

    def observe(self, event: Event) -> None:
        if not event.key.startswith(self.configmaps.prefix):
            return
        stored = event.stored if event.stored is not None else event.prev
        if stored is None or self.configmaps.name_of_key(event.key) != CONFIGMAP:
            return
        namespace = stored.object.get("metadata", {}).get("namespace", "")
        if namespace in self.namespaces:
            self.enqueue(namespace)

    async def sync(self, namespace: str) -> float | None:
        existing = current_object(self.configmaps, namespace, CONFIGMAP)
        data = merged_data((existing or {}).get("data") or {}, self.info, self.now())
        if existing is not None and (existing.get("data") or {}) == data:
            return RECHECK
        if existing is None:
            if data:
                obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": CONFIGMAP}}
                made = self.configmaps.create(namespace, {**obj, "data": data}, track=self._track)
                await errors.tolerating(made, 404, 409)  # 409: another server made it
            return RECHECK

        def write(current: Obj | None) -> Obj:
            assert current is not None
            return {**current, "data": data}

        log.info(
            "writing updated authentication info to {namespace} configmaps/{name}",
            namespace=namespace,
            name=CONFIGMAP,
        )
        written = self.configmaps.update(namespace, CONFIGMAP, write, track=self._track)
        await errors.tolerating(written, 404, 409)
        return RECHECK
