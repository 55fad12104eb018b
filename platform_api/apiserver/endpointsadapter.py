"""How the API server writes the ``kubernetes`` Service's Endpoints and keeps its
EndpointSlice beside them (kube's reconcilers' EndpointsAdapter).

The Endpoints are the reconcilers' record; each write is followed by an EndpointSlice of
the same name, labelled with the Service's name, derived from the first subset.  The
slice is written whole (no resourceVersion: EndpointSlices allow unconditional updates)
and only when its endpoints, ports or labels differ; an address type that changed means
a new slice, since the type is immutable.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from platform_api import errors
from platform_api.controllers.endpointsubsets import SERVICE_NAME, canonical
from platform_api.fieldmanager.manager import APISERVER
from platform_api.registry.store import Store, Track

Obj = dict[str, Any]
NAMESPACE = "default"


def _ipv6(address: Obj) -> bool:
    try:
        return ipaddress.ip_address(address.get("ip") or "").version == 6
    except ValueError:
        return False


def _endpoint(address: Obj, ready: bool) -> Obj:
    out: Obj = {"addresses": [address.get("ip") or ""], "conditions": {"ready": ready}}
    for field in ("hostname", "nodeName", "targetRef"):
        if address.get(field):
            out[field] = address[field]
    return out


def slice_from_endpoints(endpoints: Obj) -> Obj:
    """The EndpointSlice kube derives from the API server's Endpoints (first subset only;
    IPv6 when every address is)."""
    meta = endpoints["metadata"]
    out: Obj = {
        "apiVersion": "discovery.platform.io/v1",
        "kind": "EndpointSlice",
        "metadata": {
            "name": meta["name"],
            "namespace": meta["namespace"],
            "labels": {SERVICE_NAME: meta["name"]},
        },
        "addressType": "IPv4",
        "endpoints": [],
    }
    subsets = endpoints.get("subsets") or []
    if not subsets:
        return out
    first = subsets[0]
    ready, not_ready = first.get("addresses") or [], first.get("notReadyAddresses") or []
    if first.get("ports"):
        out["ports"] = [
            {"name": p.get("name") or "", "port": p.get("port"), "protocol": p.get("protocol")}
            | ({"appProtocol": p["appProtocol"]} if p.get("appProtocol") else {})
            for p in first["ports"]
        ]
    if ready + not_ready and all(_ipv6(a) for a in ready + not_ready):
        out["addressType"] = "IPv6"
    out["endpoints"] = [_endpoint(a, True) for a in ready] + [
        _endpoint(a, False) for a in not_ready
    ]
    return out


def _own(store: Store) -> Track | None:
    return store.tracker(APISERVER)


class EndpointsAdapter:
    def __init__(self, endpoints: Store, slices: Store) -> None:
        self.endpoints = endpoints
        self.slices = slices

    def get(self, name: str) -> Obj | None:
        """The Endpoints as stored (a private copy), or None."""
        try:
            return self.endpoints.get(NAMESPACE, name).copy()
        except errors.StatusError as e:
            if e.code != 404:
                raise
            return None

    async def create(self, endpoints: Obj) -> None:
        stored = await self.endpoints.create(NAMESPACE, endpoints, track=_own(self.endpoints))
        await self.ensure_slice(stored.object)

    async def update(self, endpoints: Obj) -> None:
        """Write ``endpoints`` over the stored ones; its resourceVersion, when it has one,
        makes the write conditional (409 if they changed meanwhile)."""
        name = endpoints["metadata"]["name"]
        stored, _ = await self.endpoints.update(
            NAMESPACE, name, lambda _: endpoints, track=_own(self.endpoints)
        )
        await self.ensure_slice(stored.object)

    async def ensure_slice(self, endpoints: Obj) -> None:
        desired = slice_from_endpoints(endpoints)
        name = desired["metadata"]["name"]
        try:
            current = self.slices.get(NAMESPACE, name).object
        except errors.StatusError as e:
            if e.code != 404:
                raise
            made = self.slices.create(NAMESPACE, desired, track=_own(self.slices))
            await errors.tolerating(made, 409)
            return
        if current.get("addressType") != desired["addressType"]:
            await self.slices.delete(NAMESPACE, name)
            await self.slices.create(NAMESPACE, desired, track=_own(self.slices))
            return
        same = all(
            canonical(current.get(field)) == canonical(desired.get(field))
            for field in ("endpoints", "ports")
        )
        if same and current["metadata"].get("labels") == desired["metadata"]["labels"]:
            return
        await self.slices.update(NAMESPACE, name, lambda _: desired, track=_own(self.slices))
