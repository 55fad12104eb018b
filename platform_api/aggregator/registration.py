"""kube-aggregator's autoregister and CRD registration controllers: an APIService for
every group version this server serves itself.

Built-in group versions get kube's priorities and the label ``automanaged: onstart``:
they are made right at start, then left to the user (a deleted one stays deleted until
the next start).  Custom resource group versions get priority 1000/100 and ``automanaged:
true``: they follow their CustomResourceDefinitions, made again when deleted and removed
when no longer served.  APIServices without that label are never touched.
"""

from __future__ import annotations

import copy
from typing import Any

from platform_api import errors
from platform_api.controllers.base import Controller
from platform_api.fieldmanager.manager import APISERVER
from platform_api.registry.apiregistration import GROUP, KIND
from platform_api.registry.store import Store
from platform_api.scheme.catalog import Scheme
from platform_api.scheme.types import rebrand_group
from platform_api.storage.interface import Event, ListOptions

Obj = dict[str, Any]
MANAGED = "kube-aggregator.kubernetes.io/automanaged"
ON_START, ALWAYS = "onstart", "true"
CUSTOM_PRIORITY = (1000, 100)  # kube's crdRegistrationController: CRDs sort low

# kube-apiserver's apiVersionPriorities (group priority minimum, version priority);
# a built-in group version missing here gets no APIService, as in kube.
_UPSTREAM_PRIORITIES: dict[tuple[str, str], tuple[int, int]] = {
    ("", "v1"): (18000, 1),
    ("events.k8s.io", "v1"): (17750, 15),
    ("events.k8s.io", "v1beta1"): (17750, 5),
    ("authentication.k8s.io", "v1"): (17700, 15),
    ("authentication.k8s.io", "v1beta1"): (17700, 9),
    ("authentication.k8s.io", "v1alpha1"): (17700, 1),
    ("authorization.k8s.io", "v1"): (17600, 15),
    ("certificates.k8s.io", "v1"): (17300, 15),
    ("certificates.k8s.io", "v1beta1"): (17300, 9),
    ("certificates.k8s.io", "v1alpha1"): (17300, 1),
    ("rbac.authorization.k8s.io", "v1"): (17000, 15),
    ("apiextensions.k8s.io", "v1"): (16700, 15),
    ("admissionregistration.k8s.io", "v1"): (16700, 15),
    ("admissionregistration.k8s.io", "v1beta1"): (16700, 12),
    ("admissionregistration.k8s.io", "v1alpha1"): (16700, 9),
    ("coordination.k8s.io", "v1"): (16500, 15),
    ("coordination.k8s.io", "v1beta1"): (16500, 13),
    ("coordination.k8s.io", "v1alpha2"): (16500, 12),
    ("discovery.k8s.io", "v1"): (16200, 15),
    ("discovery.k8s.io", "v1beta1"): (16200, 12),
    ("flowcontrol.apiserver.k8s.io", "v1"): (16100, 21),
    ("flowcontrol.apiserver.k8s.io", "v1beta3"): (16100, 18),
    ("flowcontrol.apiserver.k8s.io", "v1beta2"): (16100, 15),
    ("flowcontrol.apiserver.k8s.io", "v1beta1"): (16100, 12),
    ("flowcontrol.apiserver.k8s.io", "v1alpha1"): (16100, 9),
    ("internal.apiserver.k8s.io", "v1alpha1"): (16000, 9),
    ("storagemigration.k8s.io", "v1beta1"): (15800, 9),
    ("apps", "v1"): (17800, 15),
    ("autoscaling", "v1"): (17500, 15),
    ("autoscaling", "v2"): (17500, 30),
    ("autoscaling", "v2beta1"): (17500, 9),
    ("autoscaling", "v2beta2"): (17500, 1),
    ("batch", "v1"): (17400, 15),
    ("batch", "v1beta1"): (17400, 9),
    ("batch", "v2alpha1"): (17400, 9),
    ("networking.k8s.io", "v1"): (17200, 15),
    ("networking.k8s.io", "v1beta1"): (17200, 9),
    ("policy", "v1"): (17100, 15),
    ("policy", "v1beta1"): (17100, 9),
    ("storage.k8s.io", "v1"): (16800, 15),
    ("storage.k8s.io", "v1beta1"): (16800, 9),
    ("storage.k8s.io", "v1alpha1"): (16800, 1),
    ("scheduling.k8s.io", "v1"): (16600, 15),
    ("scheduling.k8s.io", "v1alpha2"): (16600, 2),
    ("node.k8s.io", "v1"): (16300, 15),
    ("node.k8s.io", "v1alpha1"): (16300, 1),
    ("node.k8s.io", "v1beta1"): (16300, 9),
    ("resource.k8s.io", "v1"): (16200, 21),
    ("resource.k8s.io", "v1beta2"): (16200, 15),
    ("resource.k8s.io", "v1beta1"): (16200, 9),
    ("resource.k8s.io", "v1alpha3"): (16200, 1),
}
PRIORITIES = {(rebrand_group(g), v): p for (g, v), p in _UPSTREAM_PRIORITIES.items()}


def local_apiservice(group: str, version: str, priority: tuple[int, int], managed: str) -> Obj:
    spec: Obj = {"version": version, "groupPriorityMinimum": priority[0]}
    if group:
        spec["group"] = group
    spec["versionPriority"] = priority[1]
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": KIND,
        "metadata": {"name": f"{version}.{group}", "labels": {MANAGED: managed}},
        "spec": spec,
    }


def desired(scheme: Scheme) -> dict[str, Obj]:
    """The APIServices of what ``scheme`` serves, by name."""
    out: dict[str, Obj] = {}
    served = {(rt.group, rt.version): rt.custom for rt in scheme.all()}
    for (group, version), custom in sorted(served.items()):
        if custom:
            out[f"{version}.{group}"] = local_apiservice(group, version, CUSTOM_PRIORITY, ALWAYS)
        elif (group, version) in PRIORITIES and group != GROUP:
            priority = PRIORITIES[(group, version)]
            out[f"{version}.{group}"] = local_apiservice(group, version, priority, ON_START)
    return out


async def ensure_apiservices(apiservices: Store, scheme: Scheme) -> None:
    """Create the missing ones before the server is ready (kube's readyz waits for its
    autoregistration), so clients see no burst of creates in their first second."""
    for name, obj in desired(scheme).items():
        try:
            apiservices.get("", name)
        except errors.StatusError:
            made = apiservices.create("", obj, track=apiservices.tracker(APISERVER))
            await errors.tolerating(made, 409)  # another worker's


class APIServiceRegistration(Controller):
    """Keys are APIService names."""

    name = "apiservice-registration-controller"
    queue = "APIServiceRegistrationController"
    manager = APISERVER  # kube runs it inside the API server

    def __init__(self, apiservices: Store, scheme: Scheme, *args: Any) -> None:
        super().__init__(*args)
        self.apiservices = apiservices
        self.scheme = scheme
        self.prefix = apiservices.prefix
        self._synced: set[str] = set()  # onstart ones made right once: left alone after
        self._desired = desired(scheme)
        self._generation = scheme.generation
        scheme.on_change(self._scheme_changed)

    def _wanted(self) -> dict[str, Obj]:
        if self._generation != self.scheme.generation:
            self._desired, self._generation = desired(self.scheme), self.scheme.generation
        return self._desired

    def _scheme_changed(self) -> None:
        """As kube's CRD registration controller: only the group versions a change added,
        removed or altered (requeueing every APIService per CRD made each CRD cost more
        than the one before)."""
        before, after = self._desired, self._wanted()
        for name in sorted(before.keys() | after.keys()):
            if before.get(name) != after.get(name):
                self.enqueue(name)

    def resync(self) -> None:
        names = set(self._wanted())
        for stored in self.apiservices.list("", ListOptions()).items:
            meta = stored.object["metadata"]
            if (meta.get("labels") or {}).get(MANAGED) in (ON_START, ALWAYS):
                names.add(meta["name"])
        for name in sorted(names):
            self.enqueue(name)

    def observe(self, event: Event) -> None:
        if event.key.startswith(self.prefix):
            self.enqueue(self.apiservices.name_of_key(event.key))

    async def sync(self, name: str) -> float | None:
        want = self._wanted().get(name)
        try:
            current: Obj | None = self.apiservices.get("", name).object
        except errors.StatusError:
            current = None
        managed = ((current or {}).get("metadata", {}).get("labels") or {}).get(MANAGED)
        if want is None:
            if managed == ALWAYS or (managed == ON_START and name not in self._synced):
                await errors.tolerating(self.apiservices.delete("", name), 404)
            return None
        once = want["metadata"]["labels"][MANAGED] == ON_START
        if once and name in self._synced:
            return None
        if current is None:  # (a copy: the create fills in the object it is given)
            await errors.tolerating(self.apiservices.create("", copy.deepcopy(want)), 409)
        elif managed in (ON_START, ALWAYS) and _spec(current) != want["spec"]:
            await self._rewrite(name, want)
        if once:
            self._synced.add(name)
        return None

    async def _rewrite(self, name: str, want: Obj) -> None:
        def rewrite(current: Obj | None) -> Obj:
            if current is None:
                raise errors.not_found("apiservices", GROUP, name)
            current["spec"] = dict(want["spec"])
            return current

        await errors.tolerating(self.apiservices.update("", name, rewrite), 404)


def _spec(obj: Obj) -> Obj:
    """The fields the registration owns (kube compares the whole spec)."""
    return {k: v for k, v in (obj.get("spec") or {}).items() if v not in (None, "", False)}
