"""Where a Service reference points: the address the server calls a webhook at.

Conversion and admission webhooks may name a Service (namespace, name, port) instead
of a URL.  This server runs no cluster network or DNS, so it resolves the way kube's
endpoint routing does: the Service's port maps to a target port, and the Service's
Endpoints give a ready address.  TLS is still verified for the Service's DNS name,
``<name>.<namespace>.svc``, as kube does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from platform_api import errors
from platform_api.registry.store import Store

Obj = dict[str, Any]


class ResolveError(Exception):
    """The Service cannot be reached; the text follows kube's resolver."""


@dataclass(frozen=True)
class Address:
    host: str
    port: int
    server_name: str  # the name the serving certificate must carry

    def url(self, path: str = "") -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"https://{host}:{self.port}{path}"


class ServiceResolver:
    def __init__(self, services: Store, endpoints: Store) -> None:
        self.services = services
        self.endpoints = endpoints

    def resolve(self, namespace: str, name: str, port: int = 443) -> Address:
        server_name = f"{name}.{namespace}.svc"
        try:
            service = self.services.get(namespace, name).object
        except errors.StatusError:
            raise ResolveError(f'service "{name}" not found') from None
        target = _target_port(service, port)
        if target is None:
            raise ResolveError(f"no service port {port} found for service {name!r}")
        try:
            endpoints = self.endpoints.get(namespace, name).object
        except errors.StatusError:
            raise ResolveError(f'endpoints "{name}" not found') from None
        for subset in endpoints.get("subsets") or []:
            number = _endpoint_port(subset, target)
            addresses = subset.get("addresses") or []
            if number is not None and addresses:
                return Address(addresses[0]["ip"], number, server_name)
        raise ResolveError(f'no endpoints available for service "{name}"')


def _target_port(service: Obj, port: int) -> tuple[str, int | str] | None:
    """(port name, target port) of the Service port numbered ``port``."""
    for entry in (service.get("spec") or {}).get("ports") or []:
        if entry.get("port") == port:
            return entry.get("name", ""), entry.get("targetPort", port)
    return None


def _endpoint_port(subset: Obj, target: tuple[str, int | str]) -> int | None:
    name, wanted = target
    for entry in subset.get("ports") or []:
        if isinstance(wanted, int) and entry.get("port") == wanted:
            return wanted
        if entry.get("name", "") == name or (
            isinstance(wanted, str) and entry.get("name") == wanted
        ):
            return int(entry["port"])
    return None
