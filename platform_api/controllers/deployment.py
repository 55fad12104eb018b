"""deployment-controller (kube's DeploymentController): a Deployment owns ReplicaSets, one
per pod template it has had; a rollout scales the new one up and the old ones down within
the surge and unavailability budgets (RollingUpdate), or the old ones to zero before the
new one starts (Recreate).  It keeps the revision annotations ``kubectl rollout history``
and ``undo`` read, scales proportionally when resized mid-rollout, keeps
``revisionHistoryLimit`` old ReplicaSets, and reports the status and the Available and
Progressing conditions ``kubectl rollout status`` waits on.

ReplicaSets are written through the API, as kube's controller writes them; the
replicaset-controller then makes their pods.
"""

from __future__ import annotations

import copy
from typing import Any

from platform_api.controllers import deploymentstatus as ds
from platform_api.controllers import deploymentutil as du
from platform_api.controllers import podcontrol
from platform_api.controllers.base import Controller, current_object
from platform_api.controllers.deploymentrollout import Rollouts
from platform_api.controllers.events import EventRecorder
from platform_api.controllers.informer import ByNamespace
from platform_api.errors import StatusError
from platform_api.registry.store import Store, resource_prefix
from platform_api.storage.interface import DELETED, Event

Obj = dict[str, Any]
Key = tuple[str, str]
API_VERSION, KIND = "apps/v1", "Deployment"
COMPONENT = "deployment-controller"


class DeploymentController(Controller):
    name = COMPONENT

    def __init__(
        self, deployments: Store, replicasets: Store, pods: Store, events: Store, *args: Any
    ) -> None:
        super().__init__(*args)
        self.deployments, self.replicasets = deployments, replicasets  # writes via the API
        self.index = ByNamespace(deployments)
        self.rs_index, self.pod_index = ByNamespace(replicasets, owners=True), ByNamespace(pods)
        self.prefixes = tuple(resource_prefix(s.resource) for s in (deployments, replicasets, pods))
        self.events = EventRecorder(events, COMPONENT, self.reactor)
        self.claims = podcontrol.Claims(deployments, replicasets, API_VERSION, KIND)
        self.rollouts = Rollouts(self)

    # -- events ------------------------------------------------------------------------

    def resync(self) -> None:
        self.rs_index.load()
        self.pod_index.load()
        for d in self.index.load():
            self.enqueue(_key(d))

    def watched(self) -> tuple[bytes, ...]:
        return self.prefixes

    def observe(self, event: Event) -> None:
        deployments, replicasets, pods = self.prefixes
        if event.key.startswith(deployments):
            old, new = self.index.apply(event)
            if old is not None or new is not None:
                self.enqueue(_key(new or old))  # type: ignore[arg-type]
        elif event.key.startswith(replicasets):
            old, new = self.rs_index.apply(event)
            for rs in (old, new):
                if rs is not None:
                    self._wake_for(rs)
        elif event.key.startswith(pods):
            old, new = self.pod_index.apply(event)
            if event.type == DELETED and old is not None:
                self._pod_gone(old)

    def _wake_for(self, rs: Obj) -> None:
        """The ReplicaSet's Deployment, or for an orphan each that selects it."""
        namespace = rs["metadata"].get("namespace", "")
        ref = podcontrol.controller_of(rs)
        if ref is not None:
            if ref.get("kind") == KIND:
                self.enqueue((namespace, ref.get("name", "")))
            return
        for d in self.index.in_namespace(namespace):
            if podcontrol.matches(podcontrol.spec_selector(d), rs):
                self.enqueue(_key(d))

    def _pod_gone(self, pod: Obj) -> None:
        """A Recreate rollout waits for the old pods to be gone (kube's deletePod)."""
        ref = podcontrol.controller_of(pod)
        namespace = pod["metadata"].get("namespace", "")
        rs = self.rs_index.objects.get(namespace, {}).get(ref.get("name", "")) if ref else None
        owner = podcontrol.controller_of(rs) if rs is not None else None
        if owner is not None and owner.get("kind") == KIND:
            d = self.index.objects.get(namespace, {}).get(owner.get("name", ""))
            if d is not None and not du.rolling(d):
                self.enqueue(_key(d))

    # -- sync --------------------------------------------------------------------------

    async def sync(self, key: Key) -> float | None:
        found = current_object(self.deployments, *key)
        if found is None:
            return None
        d = copy.deepcopy(found)
        if d["spec"].get("selector") == {}:
            self._event(
                d,
                "Warning",
                "SelectingAll",
                "This deployment is selecting all pods. A non-empty selector is required.",
            )
            if (d.get("status") or {}).get("observedGeneration", 0) < d["metadata"].get(
                "generation", 0
            ):
                d.setdefault("status", {})["observedGeneration"] = d["metadata"]["generation"]
                await self._write_status(d)
            return None
        rs_list = await self._replicasets(d)
        if d["metadata"].get("deletionTimestamp"):
            new_rs, old = await self.all_rs(d, rs_list, create=False)
            await self._sync_status(d, [*old, new_rs] if new_rs else old, new_rs)
            return None
        await self._check_paused(d)
        if d["spec"].get("paused") or await self._scaling_event(d, rs_list):
            await self._sync_scale(d, rs_list)
            return None
        if du.rolling(d):
            return await self.rollouts.rolling(d, rs_list)
        return await self.rollouts.recreate(d, rs_list)

    async def _replicasets(self, d: Obj) -> list[Obj]:
        uid = d["metadata"]["uid"]
        mine = self.rs_index.candidates(d["metadata"].get("namespace", ""), uid)
        return await self.claims.claim(d, podcontrol.spec_selector(d), mine)

    async def _check_paused(self, d: Obj) -> None:
        if not ds.has_deadline(d):
            return
        status = d.setdefault("status", {})
        current = ds.condition(status, "Progressing")
        if current is not None and current.get("reason") == "ProgressDeadlineExceeded":
            return
        paused_noted = current is not None and current.get("reason") == "DeploymentPaused"
        now = self.reactor.seconds()
        if d["spec"].get("paused") and not paused_noted:
            ds.set_progressing(status, "Unknown", "DeploymentPaused", "Deployment is paused", now)
        elif not d["spec"].get("paused") and paused_noted:
            ds.set_progressing(status, "Unknown", "DeploymentResumed", "Deployment is resumed", now)
        else:
            return
        await self._write_status(d)

    async def all_rs(
        self, d: Obj, rs_list: list[Obj], create: bool
    ) -> tuple[Obj | None, list[Obj]]:
        new = du.find_new(d, rs_list)
        old = [
            rs for rs in rs_list if new is None or rs["metadata"]["uid"] != new["metadata"]["uid"]
        ]
        return await self._new_rs(d, rs_list, old, create), old

    async def _new_rs(self, d: Obj, rs_list: list[Obj], old: list[Obj], create: bool) -> Obj | None:
        """kube's getNewReplicaSet: the new ReplicaSet brought up to date with the
        Deployment's annotations and revision, or made (``create``)."""
        existing = du.find_new(d, rs_list)
        next_revision = max((du.revision(rs) for rs in old), default=0) + 1
        status = d.setdefault("status", {})
        if existing is None:
            return await self._create_rs(d, old, next_revision) if create else None
        rs = copy.deepcopy(existing)
        annotations_changed = du.set_new_rs_annotations(d, rs, next_revision, exists=True)
        min_ready = d["spec"].get("minReadySeconds", 0)
        if annotations_changed or rs["spec"].get("minReadySeconds", 0) != min_ready:
            rs["spec"]["minReadySeconds"] = min_ready
            return await self._write_rs(rs, lambda e: _take_spec_and_annotations(e, rs))
        changed = du.set_revision(d, rs["metadata"]["annotations"].get(du.REVISION, ""))
        if ds.has_deadline(d) and ds.condition(status, "Progressing") is None:
            message = f'Found new replica set "{rs["metadata"]["name"]}"'
            ds.set_progressing(
                status, "True", "FoundNewReplicaSet", message, self.reactor.seconds()
            )
            changed = True
        if changed:
            await self._write_status(d)
        return rs

    async def _create_rs(self, d: Obj, old: list[Obj], next_revision: int) -> Obj:
        status, meta = d.setdefault("status", {}), d["metadata"]
        template = copy.deepcopy(d["spec"]["template"])
        hashed = du.template_hash(template, status.get("collisionCount"))
        template.setdefault("metadata", {}).setdefault("labels", {})[du.HASH_LABEL] = hashed
        selector = copy.deepcopy(d["spec"]["selector"])
        selector.setdefault("matchLabels", {})[du.HASH_LABEL] = hashed
        name = f"{meta['name'][: 253 - 1 - len(hashed)]}-{hashed}"
        rs: Obj = {
            "apiVersion": API_VERSION,
            "kind": "ReplicaSet",
            "metadata": {
                "name": name,
                "namespace": meta.get("namespace", ""),
                "ownerReferences": [podcontrol.controller_ref(d, API_VERSION, KIND)],
                "labels": dict(template["metadata"]["labels"]),
            },
            "spec": {
                "replicas": 0,
                "minReadySeconds": d["spec"].get("minReadySeconds", 0),
                "selector": selector,
                "template": template,
            },
        }
        rs["spec"]["replicas"] = count = du.new_rs_replicas(d, [*old, rs], rs)
        du.set_new_rs_annotations(d, rs, next_revision, exists=False)
        now = self.reactor.seconds()
        try:
            made = (await self.replicasets.create(meta.get("namespace", ""), rs)).object
        except StatusError as e:
            return await self._create_failed(d, rs, e)
        if count > 0:
            self._event(
                d, "Normal", "ScalingReplicaSet", f"Scaled up replica set {name} from 0 to {count}"
            )
        du.set_revision(d, str(next_revision))
        if ds.has_deadline(d):
            ds.set_progressing(
                status, "True", "NewReplicaSetCreated", f'Created new replica set "{name}"', now
            )
        await self._write_status(d)
        return made

    async def _create_failed(self, d: Obj, rs: Obj, error: StatusError) -> Obj:
        """A name taken by a ReplicaSet that is not this template's: count a collision
        (the next name differs); any other refusal is reported on the Deployment."""
        name, status = rs["metadata"]["name"], d.setdefault("status", {})
        if error.code == 409 and error.reason == "AlreadyExists":
            taken = self.rs_index.objects.get(rs["metadata"]["namespace"], {}).get(name)
            ref = podcontrol.controller_of(taken) if taken is not None else None
            if (
                taken is not None
                and ref is not None
                and ref.get("uid") == d["metadata"]["uid"]
                and du.equal_ignore_hash(taken["spec"]["template"], d["spec"]["template"])
            ):
                return taken
            status["collisionCount"] = status.get("collisionCount", 0) + 1
            await self._write_status(d)
            raise error
        if podcontrol.terminating_namespace(error):
            raise error
        message = f'Failed to create new replica set "{name}": {error.message}'
        if ds.has_deadline(d):
            ds.set_progressing(
                status, "False", "ReplicaSetCreateError", message, self.reactor.seconds()
            )
            await self._write_status(d)
        self._event(d, "Warning", "ReplicaSetCreateError", message)
        raise error

    # -- scaling -------------------------------------------------------------------------

    async def scale_rs(self, rs: Obj, size: int, d: Obj, force: bool = False) -> tuple[bool, Obj]:
        """kube's scaleReplicaSet: the size and the desired/max annotations, one write."""
        before = du.replicas(rs)
        if not force and before == size:
            return False, rs
        want = copy.deepcopy(rs)
        want["spec"]["replicas"] = size
        annotations_changed = du.set_replicas_annotations(
            want, du.replicas(d), du.replicas(d) + du.max_surge(d)
        )
        if before == size and not annotations_changed:
            return False, rs
        written = await self._write_rs(want, lambda e: _take_spec_and_annotations(e, want))
        if before != size:
            direction = "up" if before < size else "down"
            self._event(
                d,
                "Normal",
                "ScalingReplicaSet",
                f"Scaled {direction} replica set {rs['metadata']['name']} from {before} to {size}",
            )
        return before != size, written

    async def _scaling_event(self, d: Obj, rs_list: list[Obj]) -> bool:
        new, old = await self.all_rs(d, rs_list, create=False)
        for rs in du.active_sets([*old, new]):
            desired = (rs["metadata"].get("annotations") or {}).get(du.DESIRED)
            if desired is not None and desired.isdigit() and int(desired) != du.replicas(d):
                return True
        return False

    async def _sync_scale(self, d: Obj, rs_list: list[Obj]) -> None:
        """kube's sync: a paused Deployment or a resize mid-rollout; no new template."""
        new, old = await self.all_rs(d, rs_list, create=False)
        await self._scale(d, new, old)
        if d["spec"].get("paused"):
            await self.rollouts.cleanup(d, old)
        await self._sync_status(d, [*old, new] if new else old, new)

    async def _scale(self, d: Obj, new: Obj | None, old: list[Obj]) -> None:
        only = du.active_or_latest(new, old)
        if only is not None:
            if du.replicas(only) != du.replicas(d):
                await self.scale_rs(only, du.replicas(d), d)
            return
        if du.saturated(d, new):
            for rs in du.active_sets(old):
                await self.scale_rs(rs, 0, d)
            return
        if not du.rolling(d):
            return
        active = du.active_sets([*old, new])
        allowed = du.replicas(d) + du.max_surge(d) if du.replicas(d) > 0 else 0
        to_add = allowed - sum(du.replicas(rs) for rs in active)
        newer_first = to_add > 0
        active.sort(key=lambda rs: (-du.replicas(rs), du.creation_rank(rs, newer_first)))
        sizes, added = [], 0
        for rs in active:
            share = du.proportion(rs, d, to_add, added) if to_add else 0
            sizes.append(du.replicas(rs) + share)
            added += share
        if active and to_add:
            sizes[0] = max(sizes[0] + to_add - added, 0)  # the leftover: to the largest
        for rs, size in zip(active, sizes, strict=True):
            await self.scale_rs(rs, size, d, force=True)

    # -- status --------------------------------------------------------------------------

    async def _sync_status(self, d: Obj, all_rs: list[Obj], new: Obj | None) -> None:
        status = ds.calculate_status(all_rs, new, d, self.reactor.seconds())
        if ds.normal(status) != ds.normal(d.get("status") or {}):
            d["status"] = status
            await self._write_status(d)

    async def sync_rollout(self, d: Obj, all_rs: list[Obj], new: Obj | None) -> float | None:
        """kube's syncRolloutStatus: write what changed, else look again at the deadline."""
        now = self.reactor.seconds()
        status = ds.rollout_status(d, all_rs, new, now)
        if ds.normal(status) == ds.normal(d.get("status") or {}):
            return ds.deadline_check(d, status, now)
        d["status"] = status
        await self._write_status(d)
        return None

    async def _write_status(self, d: Obj) -> None:
        """The status and the revision annotation (kube writes both with UpdateStatus)."""
        meta = d["metadata"]
        status = ds.normal(d.get("status") or {})
        revision = (meta.get("annotations") or {}).get(du.REVISION)

        def change(existing: Obj | None) -> Obj:
            assert existing is not None
            if existing["metadata"].get("uid") != meta["uid"]:
                raise StatusError(409, "Conflict", "the Deployment was replaced")
            existing["status"] = status
            if revision is not None:
                existing["metadata"].setdefault("annotations", {})[du.REVISION] = revision
            return existing

        await self.deployments.update(
            meta.get("namespace", ""), meta["name"], change, subresource="status"
        )

    async def _write_rs(self, rs: Obj, change: Any) -> Obj:
        meta = rs["metadata"]
        stored, _ = await self.replicasets.update(meta.get("namespace", ""), meta["name"], change)
        return stored.copy()  # the sync goes on editing it

    def _event(self, d: Obj, type_: str, reason: str, message: str) -> None:
        self.events.record(d, API_VERSION, KIND, type_, reason, message)


def _key(obj: Obj) -> Key:
    return obj["metadata"].get("namespace", ""), obj["metadata"]["name"]


def _take_spec_and_annotations(existing: Obj | None, want: Obj) -> Obj:
    """A ReplicaSet write: our size, minReadySeconds and annotations onto the current
    object (a conflicting identity is refused)."""
    assert existing is not None
    if existing["metadata"].get("uid") != want["metadata"]["uid"]:
        raise StatusError(409, "Conflict", "the ReplicaSet was replaced")
    existing["spec"]["replicas"] = want["spec"]["replicas"]
    existing["spec"]["minReadySeconds"] = want["spec"].get("minReadySeconds", 0)
    existing["metadata"]["annotations"] = want["metadata"].get("annotations") or {}
    return existing
