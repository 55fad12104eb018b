"""kube-aggregator's availability controllers: ``status.conditions[Available]`` of every
APIService.

A local APIService (no ``spec.service``) is always Available (reason ``Local``).  For one
naming a Service, kube's checks run in kube's order and words (ServiceNotFound,
ServicePortError, EndpointsNotFound, MissingEndpoints, from the Service and its
EndpointSlices); one that passes them all stays unavailable with reason ``NotProxied``:
this server does not proxy to aggregated API servers, and its requests answer 503 as
kube's do for an unavailable APIService.
"""

from __future__ import annotations

from typing import Any

from platform_api import errors
from platform_api.controllers.base import Controller
from platform_api.registry.apiregistration import AVAILABLE, LOCAL_MESSAGE, LOCAL_REASON
from platform_api.registry.store import Store
from platform_api.storage.interface import Event, ListOptions

Obj = dict[str, Any]
SERVICE_NAME_LABEL = "kubernetes.io/service-name"
NOT_PROXIED = "NotProxied"
NOT_PROXIED_MESSAGE = "this server does not proxy requests to aggregated API servers"


def service_ref(apiservice: Obj) -> tuple[str, str] | None:
    service = (apiservice.get("spec") or {}).get("service")
    if not isinstance(service, dict):
        return None
    return service.get("namespace", ""), service.get("name", "")


class APIServiceAvailability(Controller):
    """Keys are APIService names."""

    name = "apiservice-availability-controller"
    prefix = b"/"

    def __init__(self, apiservices: Store, services: Store, slices: Store, *args: Any) -> None:
        super().__init__(*args)
        self.apiservices, self.services, self.slices = apiservices, services, slices

    def resync(self) -> None:
        for stored in self.apiservices.list("", ListOptions()).items:
            self.enqueue(stored.object["metadata"]["name"])

    def observe(self, event: Event) -> None:
        key = event.key
        if key.startswith(self.apiservices.prefix):
            self.enqueue(self.apiservices.name_of_key(key))
            return
        if key.startswith(self.services.prefix):
            ref = (self.services.namespace_of_key(key), self.services.name_of_key(key))
        elif key.startswith(self.slices.prefix):
            state = event.stored or event.prev
            meta = state.object.get("metadata") or {} if state is not None else {}
            ref = (
                meta.get("namespace", ""),
                (meta.get("labels") or {}).get(SERVICE_NAME_LABEL, ""),
            )
        else:
            return
        for stored in self.apiservices.list("", ListOptions()).items:
            if service_ref(stored.object) == ref:
                self.enqueue(stored.object["metadata"]["name"])

    async def sync(self, name: str) -> float | None:
        try:
            apiservice = self.apiservices.get("", name).object
        except errors.StatusError:
            return None
        status, reason, message = self.check(apiservice)
        conditions = (apiservice.get("status") or {}).get("conditions") or []
        current = next((c for c in conditions if c.get("type") == AVAILABLE), None)
        if current is not None and (
            current.get("status"),
            current.get("reason"),
            current.get("message"),
        ) == (status, reason, message):
            return None
        await self._write(name, status, reason, message)
        return None

    def check(self, apiservice: Obj) -> tuple[str, str, str]:
        """(status, reason, message) of the Available condition."""
        ref = service_ref(apiservice)
        if ref is None:
            return "True", LOCAL_REASON, LOCAL_MESSAGE
        namespace, name = ref
        where = f'service/{name} in "{namespace}"'
        try:
            service = self.services.get(namespace, name).object
        except errors.StatusError:
            return "False", "ServiceNotFound", f"{where} is not present"
        spec = service.get("spec") or {}
        if spec.get("type", "ClusterIP") == "ClusterIP":
            port = apiservice["spec"]["service"].get("port", 443)
            names = [p.get("name", "") for p in spec.get("ports") or [] if p.get("port") == port]
            if not names:
                return "False", "ServicePortError", f"{where} is not listening on port {port}"
            slices = self._slices(namespace, name)
            if not slices:
                return "False", "EndpointsNotFound", f"cannot find endpointslices for {where}"
            if not _has_ready_endpoint(names[0], slices):
                message = (
                    f'endpointslices for {where} have no addresses with port name "{names[0]}"'
                )
                return "False", "MissingEndpoints", message
        return "False", NOT_PROXIED, NOT_PROXIED_MESSAGE

    def _slices(self, namespace: str, service: str) -> list[Obj]:
        items = self.slices.list(namespace, ListOptions()).items
        found = [s.object for s in items]
        return [
            s
            for s in found
            if (s["metadata"].get("labels") or {}).get(SERVICE_NAME_LABEL) == service
        ]

    async def _write(self, name: str, status: str, reason: str, message: str) -> None:
        now = self.apiservices.now()

        def set_condition(current: Obj | None) -> Obj:
            if current is None:
                raise errors.not_found("apiservices", self.apiservices.resource.group, name)
            current["status"] = current.get("status") or {}
            conditions = current["status"].setdefault("conditions", [])
            found = next((c for c in conditions if c.get("type") == AVAILABLE), None)
            if found is None:
                found = {"type": AVAILABLE, "status": status, "lastTransitionTime": now}
                conditions.append(found)
            elif found.get("status") != status:  # kube's SetAPIServiceCondition
                found["status"], found["lastTransitionTime"] = status, now
            found["reason"], found["message"] = reason, message
            return current

        update = self.apiservices.update("", name, set_condition, subresource="status")
        await errors.tolerating(update, 404, 409)


def _has_ready_endpoint(port_name: str, slices: list[Obj]) -> bool:
    """kube's hasAvailableEndpoint: a ready endpoint in a slice with the named port."""
    for slice_ in slices:
        ports = slice_.get("ports") or []
        if not any((p.get("name") or "") == port_name and p.get("port") for p in ports):
            continue
        for endpoint in slice_.get("endpoints") or []:
            if (endpoint.get("conditions") or {}).get("ready") is not False:
                return True
    return False
