"""Builders of kube-controller-manager's workload controllers (ReplicaSets,
Deployments, Jobs, CronJobs, StatefulSets, DaemonSets, disruption budgets): what each
needs from a ControllerContext.  Registered by name in registry.py; each imports its
controller when called, as registry.py's own builders do."""

# ruff: noqa: PLC0415

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from platform_api.controllers.base import Controller
    from platform_api.controllers.registry import Builder, ControllerContext


def workload(kind_name: str, group: str, plural: str) -> Builder:
    def build(ctx: ControllerContext) -> Controller:
        from platform_api.controllers import replicaset

        kind = getattr(replicaset, kind_name)
        return replicaset.ReplicaSetController(
            ctx.through_api(group, "v1", plural),
            ctx.through_api("", "v1", "pods"),
            ctx.store("", "v1", "events"),
            kind,
            ctx.hub,
            ctx.reactor,
        )

    return build


def deployment(ctx: ControllerContext) -> Controller:
    from platform_api.controllers.deployment import DeploymentController

    return DeploymentController(
        ctx.through_api("apps", "v1", "deployments"),
        ctx.through_api("apps", "v1", "replicasets"),
        ctx.store("", "v1", "pods"),
        ctx.store("", "v1", "events"),
        ctx.hub,
        ctx.reactor,
    )


def cronjob(ctx: ControllerContext) -> Controller:
    from platform_api.controllers.cronjob import CronJobController

    return CronJobController(
        ctx.store("batch", "v1", "cronjobs"),
        ctx.through_api("batch", "v1", "jobs"),
        ctx.store("", "v1", "events"),
        ctx.hub,
        ctx.reactor,
    )


def job(ctx: ControllerContext) -> Controller:
    from platform_api.controllers.job import JobController

    return JobController(
        ctx.through_api("batch", "v1", "jobs"),
        ctx.through_api("", "v1", "pods"),
        ctx.store("", "v1", "events"),
        ctx.hub,
        ctx.reactor,
    )


def statefulset(ctx: ControllerContext) -> Controller:
    from platform_api.controllers.statefulset import StatefulSetController

    return StatefulSetController(
        ctx.store("apps", "v1", "statefulsets"),
        ctx.through_api("", "v1", "pods"),
        ctx.through_api("", "v1", "persistentvolumeclaims"),
        ctx.store("apps", "v1", "controllerrevisions"),
        ctx.store("", "v1", "events"),
        ctx.hub,
        ctx.reactor,
    )


def daemonset(ctx: ControllerContext) -> Controller:
    from platform_api.controllers.daemonset import DaemonSetController
    from platform_api.scheme.nodetaints import keys

    return DaemonSetController(
        ctx.store("apps", "v1", "daemonsets"),
        ctx.through_api("", "v1", "pods"),
        ctx.store("", "v1", "nodes"),
        ctx.store("apps", "v1", "controllerrevisions"),
        ctx.store("", "v1", "events"),
        ctx.hub,
        ctx.reactor,
        keys=keys(ctx.upstream_names),
    )


def disruption(ctx: ControllerContext) -> Controller:
    from platform_api.controllers.disruption import DisruptionController

    owners = {
        "ReplicaSet": ctx.store("apps", "v1", "replicasets"),
        "Deployment": ctx.store("apps", "v1", "deployments"),
        "StatefulSet": ctx.store("apps", "v1", "statefulsets"),
        "ReplicationController": ctx.store("", "v1", "replicationcontrollers"),
    }
    return DisruptionController(
        ctx.store("policy", "v1", "poddisruptionbudgets"),
        ctx.store("", "v1", "pods"),
        owners,
        ctx.store("", "v1", "events"),
        ctx.every,
        ctx.hub,
        ctx.reactor,
    )
