"""kube-aggregator's availability controllers: ``status.conditions[Available]`` of every
APIService.

A local APIService (no ``spec.service``) is always Available (reason ``Local``).  For one
naming a Service, kube's checks run in kube's order and words (ServiceNotFound,
ServicePortError, EndpointsNotFound, MissingEndpoints, from the Service and its
EndpointSlices), then the discovery check: ``GET /apis/<group>/<version>`` through the
proxy's transport as ``system:kube-aggregator`` (system:masters), five attempts at once,
5 s each; one 2xx answer makes it Available (``Passed``), else ``FailedDiscoveryCheck``
with Go's words for the last failure.  Remote APIServices are checked again every 30 s,
and after a failure sooner (5 ms doubling to 30 s), as kube's queue does.
"""

from __future__ import annotations

from typing import Any

from twisted.internet.defer import ensureDeferred, gatherResults
from twisted.web.http_headers import Headers

from platform_api import errors
from platform_api.aggregator.proxy import AggregatorProxy
from platform_api.aggregator.remote import backend_of
from platform_api.authentication.user import MASTERS, UserInfo
from platform_api.client.goerrors import DEADLINE, go_error
from platform_api.controllers.base import Controller
from platform_api.fieldmanager.manager import APISERVER
from platform_api.registry.apiregistration import AVAILABLE, LOCAL_MESSAGE, LOCAL_REASON
from platform_api.registry.serviceresolver import ResolveError
from platform_api.registry.store import Store
from platform_api.storage.interface import Event, ListOptions

Obj = dict[str, Any]
SERVICE_NAME_LABEL = "kubernetes.io/service-name"
RESYNC = 30.0
ATTEMPTS = 5
AGGREGATOR_USER = UserInfo("system:kube-aggregator", groups=(MASTERS,))
PASSED = ("True", "Passed", "all checks passed")


def service_ref(apiservice: Obj) -> tuple[str, str] | None:
    service = (apiservice.get("spec") or {}).get("service")
    if not isinstance(service, dict):
        return None
    return service.get("namespace", ""), service.get("name", "")


class APIServiceAvailability(Controller):
    """Keys are APIService names."""

    name = "apiservice-availability-controller"
    queue = "RemoteAvailabilityController"  # kube splits local APIServices off
    manager = APISERVER  # kube runs it inside the API server
    prefix = b"/"

    def __init__(
        self,
        apiservices: Store,
        services: Store,
        slices: Store,
        proxy: AggregatorProxy | None,
        *args: Any,
    ) -> None:
        super().__init__(*args)
        self.apiservices, self.services, self.slices = apiservices, services, slices
        self.proxy = proxy
        self._failures: dict[str, int] = {}

    def resync(self) -> None:
        for stored in self.apiservices.list("", ListOptions()).items:
            self.enqueue(stored.object["metadata"]["name"])

    def watched(self) -> tuple[bytes, ...]:
        return (self.apiservices.prefix, self.services.prefix, self.slices.prefix)

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
        remote = service_ref(apiservice) is not None
        if (status, reason, message) == PASSED and remote:
            status, reason, message = await self.discovery_check(apiservice)
        retry = self._retry_after(name, remote, status == "True")
        conditions = (apiservice.get("status") or {}).get("conditions") or []
        current = next((c for c in conditions if c.get("type") == AVAILABLE), None)
        if current is not None and (
            current.get("status"),
            current.get("reason"),
            current.get("message"),
        ) == (status, reason, message):
            return retry
        await self._write(name, status, reason, message)
        return retry

    def _retry_after(self, name: str, remote: bool, available: bool) -> float | None:
        if not remote:
            return None
        if available:
            self._failures.pop(name, None)
            return RESYNC
        failures = self._failures[name] = self._failures.get(name, 0) + 1
        return min(RESYNC, 0.005 * 2 ** min(failures - 1, 20))

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
        return PASSED

    async def discovery_check(self, apiservice: Obj) -> tuple[str, str, str]:
        """kube's check that the aggregated server answers its discovery path."""
        if self.proxy is None:
            return PASSED
        spec = apiservice["spec"]
        path = f"/apis/{spec.get('group', '')}/{spec.get('version', '')}"
        if apiservice["metadata"]["name"] == "v1.":
            path = f"/api/{spec.get('version', '')}"
        attempts = [self._attempt(apiservice, path) for _ in range(ATTEMPTS)]
        results = await gatherResults([ensureDeferred(a) for a in attempts])
        if any(r is None for r in results):
            return PASSED
        return "False", "FailedDiscoveryCheck", str(results[-1])

    async def _attempt(self, apiservice: Obj, path: str) -> str | None:
        """None when the server answered 2xx, else what went wrong."""
        assert self.proxy is not None
        backend = backend_of(apiservice)
        try:
            address = self.proxy.address(backend)
        except ResolveError as e:
            return str(e)
        url = address.url(path)
        headers = Headers()
        self.proxy.auth_headers(headers, AGGREGATOR_USER)
        client = self.proxy.fresh_client(backend, address)
        try:
            reply = await client.get(url, headers=headers, timeout=5)
            await reply.content()
        except Exception as e:
            why = go_error(e, url)
            if why == DEADLINE:  # http.Client's own Timeout, as Go words it
                why += " (Client.Timeout exceeded while awaiting headers)"
            return f'failing or missing response from {url}: Get "{url}": {why}'
        if not 200 <= reply.code < 300:
            return f"failing or missing response from {url}: bad status from {url}: {reply.code}"
        return None

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
