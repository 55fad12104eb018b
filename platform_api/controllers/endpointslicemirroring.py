"""kube's endpointslice-mirroring-controller: hand-made Endpoints get EndpointSlices.

A Service without a selector has whatever Endpoints its user writes (an external
database, an aggregated API server outside the cluster).  Readers of EndpointSlices
(kube-proxy, the aggregator's availability check here) would see nothing, so each such
Endpoints object is mirrored: its repacked subsets become one EndpointSlice per address
family and port set (at most 1000 addresses a subset, ready ones first), labelled with
the Service's name and owned by the Endpoints.  Nothing is mirrored for a Service with a
selector (the endpointslice controller's), for Endpoints labelled
``endpointslice.kubernetes.io/skip-mirror: "true"``, or for a leader-election record;
their mirrored slices, and those of Endpoints or Services that are gone, are deleted.
"""

from __future__ import annotations

from typing import Any

from platform_api import errors
from platform_api.controllers.base import Controller, current_object
from platform_api.controllers.endpointsubsets import (
    LAST_APPLIED,
    LEADER_ANNOTATION,
    MANAGED_BY,
    SERVICE_NAME,
    SKIP_MIRROR,
    TRIGGER_TIME,
    canonical,
    controller_ref,
    normalized_ip,
    repack_subsets,
    slice_ports_key,
)
from platform_api.registry.store import Store
from platform_api.storage.interface import DELETED, Event, ListOptions

Obj = dict[str, Any]
Key = tuple[str, str]  # (namespace, name) of an Endpoints object and its Service
CONTROLLER_NAME = "endpointslicemirroring-controller.k8s.io"
MAX_PER_SUBSET = 1000


def should_mirror(endpoints: Obj) -> bool:
    meta = endpoints.get("metadata") or {}
    labels, annotations = meta.get("labels") or {}, meta.get("annotations") or {}
    return labels.get(SKIP_MIRROR) != "true" and LEADER_ANNOTATION not in annotations


def desired_endpoints(endpoints: Obj) -> dict[tuple[str, bytes], tuple[list[Obj], list[Obj]]]:
    """(address type, port key) -> (slice ports, slice endpoints), from the subsets."""
    out: dict[tuple[str, bytes], tuple[list[Obj], list[Obj]]] = {}
    for subset in repack_subsets(endpoints.get("subsets") or []):
        ports = [_slice_port(p) for p in subset.get("ports") or []]
        added = 0
        for ready, field in ((True, "addresses"), (False, "notReadyAddresses")):
            for address in subset.get(field) or []:
                if added >= MAX_PER_SUBSET:
                    break
                converted = _endpoint(address, ready)
                if converted is None:  # kube skips (and reports) an invalid IP
                    continue
                family, endpoint = converted
                key = (family, slice_ports_key(ports))
                out.setdefault(key, (ports, []))[1].append(endpoint)
                added += 1
    return out


def _slice_port(port: Obj) -> Obj:
    out = {
        "name": port.get("name") or "",
        "port": port.get("port"),
        "protocol": port.get("protocol") or "TCP",
    }
    if port.get("appProtocol") is not None:
        out["appProtocol"] = port["appProtocol"]
    return out


def _endpoint(address: Obj, ready: bool) -> tuple[str, Obj] | None:
    parsed = normalized_ip(address.get("ip") or "")
    if parsed is None:
        return None
    ip, family = parsed
    endpoint: Obj = {"addresses": [ip], "conditions": {"ready": ready}}
    if address.get("targetRef"):
        endpoint["targetRef"] = address["targetRef"]
    if address.get("nodeName"):
        endpoint["nodeName"] = address["nodeName"]
    if address.get("hostname"):
        endpoint["hostname"] = address["hostname"]
    return family, endpoint


def _endpoint_key(endpoint: Obj) -> bytes:
    """What makes two slice endpoints the same (kube compares these beyond its hash)."""
    conditions = endpoint.get("conditions") or {}
    return canonical(
        [
            endpoint.get("addresses") or [],
            conditions.get("ready"),
            conditions.get("serving"),
            conditions.get("terminating"),
            endpoint.get("targetRef") or None,
            endpoint.get("nodeName") or "",
            endpoint.get("hostname") or "",
            endpoint.get("zone") or "",
        ]
    )


class EndpointSliceMirroring(Controller):
    """Keys are (namespace, name) of Endpoints (and of their Services)."""

    name = "endpointslice-mirroring-controller"

    def __init__(self, endpoints: Store, services: Store, slices: Store, *args: Any) -> None:
        super().__init__(*args)
        self.endpoints, self.services, self.slices = endpoints, services, slices
        # The mirrored slices, by their Endpoints' key and name, kept from the events: a
        # sync need not read every slice of the namespace.
        self.mine: dict[Key, dict[str, Obj]] = {}

    def resync(self) -> None:
        for stored in self.endpoints.list("", ListOptions()).items:
            self.enqueue(_key(stored.object))
        for stored in self.slices.list("", ListOptions()).items:
            self._slice_changed(None, stored.object)

    def watched(self) -> tuple[bytes, ...]:
        return (self.endpoints.prefix, self.services.prefix, self.slices.prefix)

    def observe(self, event: Event) -> None:
        # Keys first: decoding every event the server commits is what the watchers avoid.
        if event.key.startswith(self.endpoints.prefix):
            self.enqueue(_named(self.endpoints, event.key))
        elif event.key.startswith(self.services.prefix):
            self._service_changed(event)
        elif event.key.startswith(self.slices.prefix):
            prev = event.prev.object if event.prev is not None else None
            now = event.stored.object if event.stored is not None else None
            self._slice_changed(prev, None if event.type == DELETED else now)

    def _service_changed(self, event: Event) -> None:
        """A Service gaining or losing its selector (or coming and going) changes who
        owns its endpoints."""
        before = event.prev.object if event.prev is not None else None
        after = event.stored.object if event.stored is not None else None
        has = after is not None and (after.get("spec") or {}).get("selector") is not None
        had = before is not None and (before.get("spec") or {}).get("selector") is not None
        if event.type == DELETED or before is None or has != had:
            self.enqueue(_named(self.services, event.key))

    def _slice_changed(self, prev: Obj | None, now: Obj | None) -> None:
        """Keep the index of mirrored slices, and look again at the Endpoints they mirror
        (a slice edited or deleted by hand is put back)."""
        for obj, present in ((prev, False), (now, True)):
            owner = _mirrored_for(obj) if obj is not None else None
            if obj is None or owner is None:
                continue
            slices = self.mine.setdefault(owner, {})
            if present:
                slices[obj["metadata"]["name"]] = obj
            else:
                slices.pop(obj["metadata"]["name"], None)
            self.enqueue(owner)

    async def sync(self, key: Key) -> float | None:
        namespace, name = key
        mirrored = sorted(self.mine.get(key, {}).values(), key=lambda s: s["metadata"]["name"])
        service = current_object(self.services, namespace, name)
        selector = service is not None and (service.get("spec") or {}).get("selector") is not None
        # Cheap checks first: a selector Service's Endpoints (the endpoints controller's,
        # rewritten on every pod change) need no reading here.
        endpoints = (
            None if service is None or selector else current_object(self.endpoints, namespace, name)
        )
        if endpoints is None or not should_mirror(endpoints):
            for slice_ in mirrored:
                await self._delete(slice_)
            return None
        await self._reconcile(endpoints, mirrored)
        return None

    async def _reconcile(self, endpoints: Obj, mirrored: list[Obj]) -> None:
        desired = desired_endpoints(endpoints)
        existing: dict[tuple[str, bytes], list[Obj]] = {}
        for slice_ in mirrored:
            key = (slice_.get("addressType") or "", slice_ports_key(slice_.get("ports") or []))
            existing.setdefault(key, []).append(slice_)
        for key, (ports, wanted) in desired.items():
            have = existing.pop(key, [])
            for extra in have[1:]:
                await self._delete(extra)
            first = have[0] if have else None
            if first is None or not self._same(endpoints, first, wanted):
                await self._write(endpoints, key[0], ports, wanted, first)
        for leftovers in existing.values():
            for slice_ in leftovers:
                await self._delete(slice_)

    @staticmethod
    def _same(endpoints: Obj, slice_: Obj, wanted: list[Obj]) -> bool:
        meta, smeta = endpoints.get("metadata") or {}, slice_.get("metadata") or {}
        labels = dict(smeta.get("labels") or {})
        labels.pop(MANAGED_BY, None)
        labels.pop(SERVICE_NAME, None)
        annotations = _copied_annotations(meta)
        owners = smeta.get("ownerReferences") or []
        stale_owner = any(
            o.get("kind") == "Endpoints"
            and o.get("name") == meta.get("name")
            and o.get("uid") != meta.get("uid")
            for o in owners
        )
        have = sorted(_endpoint_key(e) for e in slice_.get("endpoints") or [])
        return (
            have == sorted(_endpoint_key(e) for e in wanted)
            and labels == (meta.get("labels") or {})
            and annotations == (smeta.get("annotations") or {})
            and not stale_owner
        )

    async def _write(
        self, endpoints: Obj, family: str, ports: list[Obj], wanted: list[Obj], first: Obj | None
    ) -> None:
        meta = endpoints["metadata"]
        namespace = meta.get("namespace", "")
        slice_: Obj = {
            "apiVersion": "discovery.platform.io/v1",
            "kind": "EndpointSlice",
            "metadata": {
                "namespace": namespace,
                "labels": {
                    **(meta.get("labels") or {}),
                    SERVICE_NAME: meta["name"],
                    MANAGED_BY: CONTROLLER_NAME,
                },
                "annotations": _copied_annotations(meta),
                "ownerReferences": [controller_ref("Endpoints", meta)],
            },
            "addressType": family,
            "endpoints": wanted,
            "ports": ports,
        }
        if first is None:
            if meta.get("deletionTimestamp"):
                return
            slice_["metadata"]["generateName"] = meta["name"] + "-"
            await errors.tolerating(self.slices.create(namespace, slice_), 403, 409)
            return
        name = first["metadata"]["name"]
        slice_["metadata"]["name"] = name

        def replace(existing: Obj | None) -> Obj:
            assert existing is not None
            slice_["metadata"]["resourceVersion"] = existing["metadata"]["resourceVersion"]
            return slice_

        await errors.tolerating(self.slices.update(namespace, name, replace), 404, 409)

    async def _delete(self, slice_: Obj) -> None:
        meta = slice_["metadata"]
        await errors.tolerating(self.slices.delete(meta.get("namespace", ""), meta["name"]), 404)


def _copied_annotations(meta: Obj) -> Obj:
    skipped = (TRIGGER_TIME, LAST_APPLIED)
    return {k: v for k, v in (meta.get("annotations") or {}).items() if k not in skipped}


def _key(obj: Obj) -> Key:
    meta = obj.get("metadata") or {}
    return meta.get("namespace", ""), meta.get("name", "")


def _mirrored_for(slice_: Obj) -> Key | None:
    """The Endpoints a slice mirrors, when this controller made it."""
    labels = (slice_.get("metadata") or {}).get("labels") or {}
    if labels.get(MANAGED_BY) != CONTROLLER_NAME or not labels.get(SERVICE_NAME):
        return None
    return slice_["metadata"].get("namespace", ""), labels[SERVICE_NAME]


def _named(store: Store, key: bytes) -> Key:
    return store.namespace_of_key(key), store.name_of_key(key)
