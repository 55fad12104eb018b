"""kube's validatingadmissionpolicy-status-controller: ``status.typeChecking`` of every policy.

Each ValidatingAdmissionPolicy whose ``metadata.generation`` is newer than its
``status.observedGeneration`` is type-checked against the schemas of the kinds it matches
(see ``admission.policy.typecheck``) and gets ``observedGeneration`` and ``typeChecking``
(``{}`` when every expression checks) by a forced server-side apply to ``/status`` as the
field manager ``validatingadmissionpolicy-status``, as kube's controller writes them; it
sets no conditions.  Building a kind's CEL environment takes tens of milliseconds (a
descriptor pool of its whole schema): the controller yields to the reactor after each.
"""

from __future__ import annotations

from typing import Any

from twisted.internet.task import deferLater

from platform_api import errors
from platform_api.admission.policy.typecheck import TypeChecker, warnings
from platform_api.controllers.base import Controller
from platform_api.registry.store import Store
from platform_api.scheme.catalog import Scheme
from platform_api.storage.interface import DELETED, Event, ListOptions

Obj = dict[str, Any]
GROUP = "admissionregistration.platform.io"
API_VERSION = f"{GROUP}/v1"
FIELD_MANAGER = "validatingadmissionpolicy-status"  # kube's ControllerName constant


class VAPStatusController(Controller):
    """Keys are policy names."""

    name = "validatingadmissionpolicy-status-controller"
    manager = None  # its one write applies its own ownership (Store.applier)

    def __init__(self, policies: Store, scheme: Scheme, *args: Any) -> None:
        super().__init__(*args)
        self.policies = policies
        self.checker = TypeChecker(scheme)

    def resync(self) -> None:
        for stored in self.policies.list("", ListOptions()).items:
            self.enqueue(stored.object["metadata"]["name"])

    def watched(self) -> tuple[bytes, ...]:
        return (self.policies.prefix,)

    def observe(self, event: Event) -> None:
        if event.key.startswith(self.policies.prefix) and event.type != DELETED:
            self.enqueue(self.policies.name_of_key(event.key))

    async def sync(self, name: str) -> float | None:
        try:
            policy = self.policies.get("", name).object
        except errors.StatusError as e:
            if e.code == 404:
                return None
            raise
        generation = policy["metadata"].get("generation") or 0
        if generation <= ((policy.get("status") or {}).get("observedGeneration") or 0):
            return None
        plan = self.checker.plan(policy)
        for index in range(len(plan.kinds)):
            for _ in self.checker.check_kind(plan, index):
                await deferLater(self.reactor, 0, lambda: None)  # let requests in between
        found = warnings(plan)
        checking: Obj = {"expressionWarnings": found} if found else {}
        config = {
            "apiVersion": API_VERSION,
            "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": name},
            "status": {"observedGeneration": generation, "typeChecking": checking},
        }
        apply = self.policies.applier(FIELD_MANAGER, config, "status")  # kube's ApplyStatus
        try:
            await self.policies.update("", name, apply, subresource="status")
        except errors.StatusError as e:
            if e.code == 404:
                return None
            raise
        return None
