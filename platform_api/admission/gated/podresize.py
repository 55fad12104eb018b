"""PodResizeValidator: kube checks updates through the ``pods/resize`` subresource against
the node (Linux only, requests within allocatable).  That subresource is not served here,
so no request ever reaches the check: the plugin accepts everything."""

from __future__ import annotations

from platform_api.admission.gated import Inert
from platform_api.admission.plugins import PluginContext


class PodResizeValidator(Inert):
    name = "PodResizeValidator"


def build(ctx: PluginContext) -> PodResizeValidator:
    return PodResizeValidator()
