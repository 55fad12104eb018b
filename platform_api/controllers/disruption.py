"""disruption-controller (kube's DisruptionController): each PodDisruptionBudget's status
says how many of its pods may go now, which is what the eviction API (``kubectl
drain``) checks and charges.

``expectedPods`` comes from the pods' controllers' scale (Deployment through its
ReplicaSet, ReplicaSet, ReplicationController, StatefulSet) when the budget is a
percentage or a maxUnavailable, else from the pods; ``currentHealthy`` counts Ready pods
not being deleted and not just evicted (``disruptedPods``, which the eviction API
fills and this controller empties once the pod goes, or after two minutes);
``disruptionsAllowed`` is what is left over ``desiredHealthy``, with kube's
DisruptionAllowed condition.  A budget whose pods' controllers cannot be found fails
safe: no disruption allowed, reason SyncFailed.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from platform_api.apiextensions import scale as crscale
from platform_api.controllers import podcontrol
from platform_api.controllers.base import Controller, current_object, status_condition
from platform_api.controllers.deploymentutil import scaled_value
from platform_api.controllers.events import EventRecorder
from platform_api.controllers.informer import ByNamespace
from platform_api.errors import StatusError
from platform_api.registry.disruptionbudget import CONDITION, set_allowed_condition
from platform_api.registry.store import Store, resource_prefix
from platform_api.storage.interface import Event
from platform_api.timestamps import format_timestamp, parse_timestamp

Obj = dict[str, Any]
Key = tuple[str, str]
COMPONENT = "controllermanager"  # kube's disruption controller records events as this
DELETION_TIMEOUT = 120.0  # kube's DeletionTimeout: an evicted pod not gone by then counts again
STALE_DISRUPTION = 120.0  # kube's stalePodDisruptionTimeout


class NoController(Exception):
    """A selected pod's controller cannot be found (kube: 'found no controllers for pod')."""


class DisruptionController(Controller):
    name = "disruption-controller"

    def __init__(
        self,
        budgets: Store,
        pods: Store,
        owners: dict[str, Store],
        events: Store,
        every: Iterable[Any],
        *args: Any,
    ) -> None:
        super().__init__(*args)
        self.budgets, self.pods = budgets, pods
        self.every = every  # a live view: any kind with a scale subresource may own pods
        self.budget_index, self.pod_index = ByNamespace(budgets), ByNamespace(pods)
        # kind -> index of the controllers whose scale counts (kube's finders)
        self.owners = {kind: ByNamespace(store) for kind, store in owners.items()}
        self.prefixes = [
            (resource_prefix(budgets.resource), self.budget_index),
            (resource_prefix(pods.resource), self.pod_index),
        ] + [(resource_prefix(s.resource), self.owners[k]) for k, s in owners.items()]
        self.events = EventRecorder(events, COMPONENT, self.reactor)

    def resync(self) -> None:
        for _, index in self.prefixes[1:]:
            index.load()
        for budget in self.budget_index.load():
            self.enqueue(_key(budget))

    def watched(self) -> tuple[bytes, ...]:
        return tuple(prefix for prefix, _ in self.prefixes)

    def observe(self, event: Event) -> None:
        for prefix, index in self.prefixes:
            if not event.key.startswith(prefix):
                continue
            old, new = index.apply(event)
            if index is self.budget_index and (old or new):
                self.enqueue(_key(new or old))  # type: ignore[arg-type]
            elif index is self.pod_index and (old or new):
                self._pod_changed(new or old)  # type: ignore[arg-type]
            return

    def _pod_changed(self, pod: Obj) -> None:
        """kube's getPdbForPod: the (first) budget selecting the pod is looked at again;
        a stale DisruptionTarget condition is cleared later."""
        wait = self._stale_in(pod)
        if wait is not None:
            meta = pod["metadata"]
            self.enqueue(("stale", meta.get("namespace", ""), meta["name"]), wait)
        labels = pod["metadata"].get("labels") or {}
        for budget in self.budget_index.in_namespace(pod["metadata"].get("namespace", "")):
            selector = podcontrol.spec_selector(budget)
            if selector is not None and selector.matches(labels):
                self.enqueue(_key(budget))
                return

    # -- sync --------------------------------------------------------------------------

    def _stale_in(self, pod: Obj) -> float | None:
        """kube's nonTerminatingPodHasStaleDisruptionCondition: a pod marked as about to
        be disrupted that was not (after two minutes, the mark is taken back)."""
        if pod["metadata"].get("deletionTimestamp"):
            return None
        condition = status_condition(pod, "DisruptionTarget")
        phase = (pod.get("status") or {}).get("phase")
        if (
            condition is None
            or condition.get("status") != "True"
            or phase in ("Succeeded", "Failed")
        ):
            return None
        if condition.get("reason") == "TerminationByKubelet":
            return None
        since = parse_timestamp(condition.get("lastTransitionTime")) or 0.0
        return max(since + STALE_DISRUPTION - self.reactor.seconds(), 0.0)

    async def _clear_stale(self, namespace: str, name: str) -> None:
        pod = self.pod_index.objects.get(namespace, {}).get(name)
        if pod is None or self._stale_in(pod) != 0.0:
            return

        def clear(existing: Obj | None) -> Obj:
            assert existing is not None
            now = format_timestamp(self.reactor.seconds())
            for condition in (existing.get("status") or {}).get("conditions") or ():
                if (
                    condition.get("type") == "DisruptionTarget"
                    and condition.get("status") != "False"
                ):
                    condition.update(status="False", lastTransitionTime=now)
                    condition.pop("reason", None)
                    condition.pop("message", None)
            return existing

        await self.pods.update(namespace, name, clear, subresource="status")

    async def sync(self, key: Any) -> float | None:
        if len(key) == 3:
            await self._clear_stale(key[1], key[2])
            return None
        budget = current_object(self.budgets, *key)
        if budget is None:
            return None
        try:
            return await self._try_sync(budget)
        except StatusError as e:
            if e.code == 409:
                return 0.005
            raise
        except NoController as e:
            await self._write(budget, _fail_safe(budget, str(e), self.reactor.seconds()))
            return None

    async def _try_sync(self, budget: Obj) -> float | None:
        selector = podcontrol.spec_selector(budget)
        namespace = budget["metadata"].get("namespace", "")
        pods = [
            p
            for p in self.pod_index.in_namespace(namespace)
            if selector is not None and selector.matches(p["metadata"].get("labels") or {})
        ]
        if not pods:
            self._event(budget, "Normal", "NoPods", "No matching pods found")
        expected, desired, unmanaged = self._expected(budget, pods)
        if unmanaged:
            self._event(budget, "Warning", "UnmanagedPods", _unmanaged_message(budget))
        now = self.reactor.seconds()
        disrupted, recheck = self._disrupted(budget, pods, now)
        healthy = sum(
            1
            for p in pods
            if not p["metadata"].get("deletionTimestamp")
            and p["metadata"]["name"] not in disrupted
            and podcontrol.is_ready(p)
        )
        allowed = healthy - desired if expected > 0 else 0
        status = {
            "currentHealthy": healthy,
            "desiredHealthy": desired,
            "expectedPods": expected,
            "disruptionsAllowed": max(allowed, 0),
            "observedGeneration": budget["metadata"].get("generation", 0),
        }
        if disrupted:
            status["disruptedPods"] = disrupted
        before = budget.get("status") or {}
        conditions = copy.deepcopy(before.get("conditions") or [])
        status["conditions"] = conditions
        set_allowed_condition(status, now)
        if _same(before, status):
            return None if recheck is None else max(recheck - now, 0.0)
        await self._write(budget, status)
        return None if recheck is None else max(recheck - now, 0.0)

    def _expected(self, budget: Obj, pods: list[Obj]) -> tuple[int, int, list[str]]:
        """kube's getExpectedPodCount: (expected pods, desired healthy, unmanaged pods)."""
        spec = budget.get("spec") or {}
        if spec.get("maxUnavailable") is not None:
            expected, unmanaged = self._scale(pods)
            most = scaled_value(spec["maxUnavailable"], expected, True)
            return expected, max(expected - most, 0), unmanaged
        least = spec.get("minAvailable")
        if isinstance(least, int):
            return len(pods), least, []
        if least is not None:
            expected, unmanaged = self._scale(pods)
            return expected, scaled_value(least, expected, True), unmanaged
        return 0, 0, []

    def _scale(self, pods: list[Obj]) -> tuple[int, list[str]]:
        """kube's getExpectedScale: the replicas of every controller of the pods."""
        scale: dict[str, int] = {}
        unmanaged: list[str] = []
        for pod in pods:
            ref = podcontrol.controller_of(pod)
            if ref is None:
                unmanaged.append(pod["metadata"]["name"])
                continue
            if ref.get("uid") in scale:
                continue
            found = self._controller_scale(ref, pod["metadata"].get("namespace", ""))
            if found is None:
                raise NoController(f'found no controllers for pod "{pod["metadata"]["name"]}"')
            scale[found[0]] = found[1]
        return sum(scale.values()), unmanaged

    def _controller_scale(self, ref: Obj, namespace: str) -> tuple[str, int] | None:
        """(uid, replicas) of the controller a pod's reference names; a ReplicaSet of a
        Deployment counts as its Deployment; other kinds count by their scale."""
        if not self._finds(ref):
            return self._scale_of(ref, namespace)
        owner = self._owner(ref, namespace)
        if owner is None:
            return None
        if ref.get("kind") == "ReplicaSet":
            parent = podcontrol.controller_of(owner)
            if parent is not None and parent.get("kind") == "Deployment":
                owner = self._owner(parent, namespace)
                if owner is None:
                    return None
        replicas = (owner.get("spec") or {}).get("replicas")
        return owner["metadata"]["uid"], 1 if replicas is None else int(replicas)

    def _finds(self, ref: Obj) -> bool:
        """Whether one of kube's finders (ReplicaSet, StatefulSet...) knows the kind."""
        group = str(ref.get("apiVersion", "")).rpartition("/")[0]
        return str(ref.get("kind")) in self.owners and group in ("", "apps", "extensions")

    def _scale_of(self, ref: Obj, namespace: str) -> tuple[str, int] | None:
        """kube's getScaleController: the replicas the owner's scale subresource shows
        (a custom resource's at its CRD's specReplicasPath)."""
        group, _, version = str(ref.get("apiVersion", "")).rpartition("/")
        kind = str(ref.get("kind", ""))
        store = next(
            (s for s in list(self.every) if (s.resource.group, s.resource.kind) == (group, kind)),
            None,
        )
        if store is None:
            where = f"{group}/{version}" if group else version
            raise NoController(f'no matches for kind "{kind}" in version "{where}"')
        rt = store.resource
        if not any(sub.name == "scale" for sub in rt.subresources):
            named = f"{rt.plural}.{rt.group}" if rt.group else rt.plural
            raise NoController(f"{named} does not implement the scale subresource")
        owner = current_object(store, namespace, str(ref.get("name", "")))
        if owner is None or owner["metadata"].get("uid") != ref.get("uid"):
            return None
        uid = owner["metadata"]["uid"]
        paths = getattr(getattr(store, "strategy", None), "scale", None)  # a CRD's paths
        if paths is None:  # a built-in kind (or one the manager cannot see the CRD of)
            replicas = (owner.get("spec") or {}).get("replicas")
            return uid, 1 if replicas is None else int(replicas)
        replicas = crscale.nested(owner, paths["specReplicasPath"], int, "")[0]
        return uid, int(replicas or 0)

    def _owner(self, ref: Obj, namespace: str) -> Obj | None:
        index = self.owners.get(str(ref.get("kind")))
        if index is None or not self._finds(ref):
            return None
        owner = index.objects.get(namespace, {}).get(ref.get("name", ""))
        if owner is None or owner["metadata"].get("uid") != ref.get("uid"):
            return None
        return owner

    def _disrupted(self, budget: Obj, pods: list[Obj], now: float) -> tuple[Obj, float | None]:
        """kube's buildDisruptedPodMap: evicted pods still there and not yet overdue; the
        time the first of them is due."""
        listed = (budget.get("status") or {}).get("disruptedPods") or {}
        kept: Obj = {}
        recheck: float | None = None
        for pod in pods:
            name = pod["metadata"]["name"]
            if pod["metadata"].get("deletionTimestamp") or name not in listed:
                continue
            due = (parse_timestamp(listed[name]) or 0.0) + DELETION_TIMEOUT
            if due < now:
                where = budget["metadata"].get("namespace", "")
                message = f"Pod was expected by PDB {where}/{where} to be deleted but it wasn't"
                self.events.record(pod, "v1", "Pod", "Warning", "NotDeleted", message)
            else:
                kept[name] = listed[name]
                recheck = due if recheck is None else min(recheck, due)
        return kept, recheck

    async def _write(self, budget: Obj, status: Obj) -> None:
        meta = budget["metadata"]

        def change(existing: Obj | None) -> Obj:
            assert existing is not None
            if existing["metadata"].get("resourceVersion") != meta.get("resourceVersion"):
                raise StatusError(409, "Conflict", "the budget changed; syncing again")
            existing["status"] = status
            return existing

        await self.budgets.update(
            meta.get("namespace", ""), meta["name"], change, subresource="status"
        )

    def _event(self, budget: Obj, type_: str, reason: str, message: str) -> None:
        self.events.record(budget, "policy/v1", "PodDisruptionBudget", type_, reason, message)


def _fail_safe(budget: Obj, message: str, now: float) -> Obj:
    status = copy.deepcopy(budget.get("status") or {})
    status["disruptionsAllowed"] = 0
    conditions = [c for c in status.get("conditions") or () if c.get("type") != CONDITION]
    previous: Obj = next(
        (c for c in status.get("conditions") or () if c.get("type") == CONDITION), {}
    )
    since = previous.get("lastTransitionTime") if previous.get("status") == "False" else None
    conditions.append(
        {
            "type": CONDITION,
            "status": "False",
            "reason": "SyncFailed",
            "message": message,
            "observedGeneration": status.get("observedGeneration", 0),
            "lastTransitionTime": since or format_timestamp(now),
        }
    )
    status["conditions"] = conditions
    return status


def _same(before: Obj, after: Obj) -> bool:
    keys = ("currentHealthy", "desiredHealthy", "expectedPods", "disruptionsAllowed")
    if any(before.get(k, 0) != after.get(k, 0) for k in keys):
        return False
    if (before.get("disruptedPods") or {}) != (after.get("disruptedPods") or {}):
        return False
    return before.get("observedGeneration") == after.get("observedGeneration") and (
        before.get("conditions") == after.get("conditions")
    )


def _unmanaged_message(budget: Obj) -> str:
    selector = (budget.get("spec") or {}).get("selector")
    return (
        f"Pods selected by this PodDisruptionBudget (selector: {selector}) were found to be "
        "unmanaged. As a result, the status of the PDB cannot be calculated correctly, which "
        "may result in undefined behavior. To account for these pods please set "
        '".spec.minAvailable" field of the PDB to an integer value.'
    )


def _key(obj: Obj) -> Key:
    meta = obj["metadata"]
    return meta.get("namespace", ""), meta["name"]
