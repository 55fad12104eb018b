"""PodGroupProtection: kube adds ``scheduling.platform.io/podgroup-protection`` to new
PodGroups, only with the GenericWorkload feature gate (alpha, off in v1.36).  With the
gate off it does nothing, and PodGroups are not served here."""

from __future__ import annotations

from platform_api.admission.gated import Inert
from platform_api.admission.plugins import PluginContext


class PodGroupProtection(Inert):
    name = "PodGroupProtection"


def build(ctx: PluginContext) -> PodGroupProtection:
    return PodGroupProtection()
