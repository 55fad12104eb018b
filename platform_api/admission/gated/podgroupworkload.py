"""PodGroupWorkloadExists: kube refuses a PodGroup whose Workload or PodGroupTemplate is
missing, only with the GenericWorkload feature gate (alpha, off in v1.36).  With the gate
off it does nothing, and PodGroups and Workloads are not served here."""

from __future__ import annotations

from platform_api.admission.gated import Inert
from platform_api.admission.plugins import PluginContext


class PodGroupWorkloadExists(Inert):
    name = "PodGroupWorkloadExists"


def build(ctx: PluginContext) -> PodGroupWorkloadExists:
    return PodGroupWorkloadExists()
