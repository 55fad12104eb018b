"""A Deployment's rollout strategies (kube's rolling.go, recreate.go and
cleanupDeployment): RollingUpdate within maxSurge/maxUnavailable, unhealthy and oldest
old pods first; Recreate, old ReplicaSets emptied before the new one grows; old
ReplicaSets beyond revisionHistoryLimit removed once empty.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from platform_api.controllers import deploymentstatus as ds
from platform_api.controllers import deploymentutil as du
from platform_api.controllers import podcontrol
from platform_api.errors import StatusError

if TYPE_CHECKING:
    from platform_api.controllers.deployment import DeploymentController

Obj = dict[str, Any]


class Rollouts:
    def __init__(self, controller: DeploymentController) -> None:
        self.c = controller

    async def rolling(self, d: Obj, rs_list: list[Obj]) -> float | None:
        new, old = await self.c.all_rs(d, rs_list, create=True)
        assert new is not None
        all_rs = [*old, new]
        if await self._reconcile_new(d, all_rs, new) or await self._reconcile_old(
            d, all_rs, du.active_sets(old), new
        ):
            return await self.c.sync_rollout(d, self._fresh(all_rs), self._fresh([new])[0])
        if ds.complete(d, d.get("status") or {}):
            await self.cleanup(d, old)
        return await self.c.sync_rollout(d, all_rs, new)

    def _fresh(self, rs_list: list[Obj]) -> list[Obj]:
        """The ReplicaSets as last seen (a scale just written may have replaced them)."""
        out = []
        for rs in rs_list:
            seen = self.c.rs_index.objects.get(rs["metadata"].get("namespace", ""), {}).get(
                rs["metadata"]["name"]
            )
            out.append(
                seen
                if seen is not None and seen["metadata"]["uid"] == rs["metadata"]["uid"]
                else rs
            )
        return out

    async def _reconcile_new(self, d: Obj, all_rs: list[Obj], new: Obj) -> bool:
        if du.replicas(new) == du.replicas(d):
            return False
        if du.replicas(new) > du.replicas(d):
            return (await self.c.scale_rs(new, du.replicas(d), d))[0]
        return (await self.c.scale_rs(new, du.new_rs_replicas(d, all_rs, new), d))[0]

    async def _reconcile_old(self, d: Obj, all_rs: list[Obj], old: list[Obj], new: Obj) -> bool:
        """Old ReplicaSets scaled down as far as availability allows: their unhealthy
        pods first, then the oldest ReplicaSets' pods."""
        if sum(du.replicas(rs) for rs in old) == 0:
            return False
        min_available = du.replicas(d) - du.max_unavailable(d)
        new_unavailable = du.replicas(new) - du.status_of(new, "availableReplicas")
        budget = sum(du.replicas(rs) for rs in all_rs) - min_available - new_unavailable
        if budget <= 0:
            return False
        old = sorted(old, key=du.created_order)
        cleaned = 0
        for i, rs in enumerate(old):  # kube's cleanupUnhealthyReplicas
            unhealthy = du.replicas(rs) - du.status_of(rs, "availableReplicas")
            if cleaned >= budget or du.replicas(rs) == 0 or unhealthy <= 0:
                continue
            step = min(budget - cleaned, unhealthy)
            _, old[i] = await self.c.scale_rs(rs, du.replicas(rs) - step, d)
            cleaned += step
        available = sum(du.status_of(rs, "availableReplicas") for rs in [*old, new])
        scaled = 0
        if available > min_available:  # kube's scaleDownOldReplicaSetsForRollingUpdate
            for rs in old:
                if scaled >= available - min_available:
                    break
                if du.replicas(rs) == 0:
                    continue
                step = min(du.replicas(rs), available - min_available - scaled)
                await self.c.scale_rs(rs, du.replicas(rs) - step, d)
                scaled += step
        return cleaned + scaled > 0

    async def recreate(self, d: Obj, rs_list: list[Obj]) -> float | None:
        new, old = await self.c.all_rs(d, rs_list, create=False)
        all_rs = [*old, new] if new else list(old)
        scaled_down = False
        for rs in du.active_sets(old):
            scaled_down = (await self.c.scale_rs(rs, 0, d))[0] or scaled_down
        if scaled_down or self._old_pods_running(new, old):
            return await self.c.sync_rollout(d, self._fresh(all_rs), new)
        if new is None:
            new, old = await self.c.all_rs(d, rs_list, create=True)
            assert new is not None
            all_rs = [*old, new]
        await self.c.scale_rs(new, du.replicas(d), d)
        if ds.complete(d, d.get("status") or {}):
            await self.cleanup(d, old)
        return await self.c.sync_rollout(d, self._fresh(all_rs), self._fresh([new])[0])

    def _old_pods_running(self, new: Obj | None, old: list[Obj]) -> bool:
        if sum(du.status_of(rs, "replicas") for rs in old) > 0:
            return True
        old_uids = {rs["metadata"]["uid"] for rs in old}
        namespace = old[0]["metadata"].get("namespace", "") if old else ""
        for pod in self.c.pod_index.in_namespace(namespace):
            ref = podcontrol.controller_of(pod)
            finished = (pod.get("status") or {}).get("phase") in ("Failed", "Succeeded")
            if ref is not None and ref.get("uid") in old_uids and not finished:
                return True
        return False

    async def cleanup(self, d: Obj, old: list[Obj]) -> None:
        """Old ReplicaSets beyond revisionHistoryLimit, lowest revision first, once empty."""
        limit = d["spec"].get("revisionHistoryLimit", ds.NO_LIMIT)
        alive = [rs for rs in old if not rs["metadata"].get("deletionTimestamp")]
        if limit == ds.NO_LIMIT or len(alive) <= limit:
            return
        alive.sort(key=lambda rs: (du.revision(rs), du.created_order(rs)))
        for rs in alive[: len(alive) - limit]:
            status, meta = rs.get("status") or {}, rs["metadata"]
            if (
                status.get("replicas", 0)
                or du.replicas(rs)
                or meta.get("generation", 0) > status.get("observedGeneration", 0)
            ):
                continue
            try:
                await self.c.replicasets.delete(meta.get("namespace", ""), meta["name"])
            except StatusError as e:
                if e.code != 404:
                    raise
