"""JobValidation: kube refuses changing a Job's parallelism while a gang-scheduled PodGroup
belongs to it, only with the GenericWorkload or WorkloadWithJob feature gates (both alpha,
off in v1.36).  With them off it does nothing, and PodGroups are not served here."""

from __future__ import annotations

from platform_api.admission.gated import Inert
from platform_api.admission.plugins import PluginContext


class JobValidation(Inert):
    name = "JobValidation"


def build(ctx: PluginContext) -> JobValidation:
    return JobValidation()
