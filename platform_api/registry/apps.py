"""Strategies of the workload and policy groups: generation tracking, create-on-update."""

from __future__ import annotations

from platform_api.registry.strategy import GenericStrategy, register


class WorkloadStrategy(GenericStrategy):
    """Controllers compare ``metadata.generation`` with ``status.observedGeneration``."""

    tracks_generation = True


for _group, _kind in (
    ("apps", "Deployment"),
    ("apps", "ReplicaSet"),
    ("apps", "StatefulSet"),
    ("apps", "DaemonSet"),
    ("batch", "Job"),
    ("batch", "CronJob"),
    ("autoscaling", "HorizontalPodAutoscaler"),
    ("policy", "PodDisruptionBudget"),
    ("networking.platform.io", "NetworkPolicy"),
    ("networking.platform.io", "Ingress"),
):
    register(_group, _kind)(WorkloadStrategy)


class CreateOnUpdateStrategy(GenericStrategy):
    """Kinds kube lets a PUT create (leader-election leases, RBAC reconcilers)."""

    allow_create_on_update = True


for _group, _kind in (
    ("coordination.platform.io", "Lease"),
    ("rbac.authorization.platform.io", "Role"),
    ("rbac.authorization.platform.io", "ClusterRole"),
    ("rbac.authorization.platform.io", "RoleBinding"),
    ("rbac.authorization.platform.io", "ClusterRoleBinding"),
):
    register(_group, _kind)(CreateOnUpdateStrategy)
