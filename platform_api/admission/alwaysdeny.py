"""AlwaysDeny: refuses every write (kube's deprecated ``deny`` plugin; off by default).

As in kube it refuses in both phases: the mutating one (so a create is refused before
the object is validated) and the validating one, where it runs after the webhooks, last
of all, as it is last in kube's plugin order.
"""

from __future__ import annotations

from typing import Any

from platform_api.admission.interface import Attributes, forbidden
from platform_api.admission.plugins import PluginContext

DENIED = "admission control is denying all modifications"


class AlwaysDeny:
    name = "AlwaysDeny"
    runs_last = True

    def admit(self, attrs: Attributes, obj: dict[str, Any] | None, old: Any) -> None:
        raise forbidden(attrs, obj, DENIED)

    def validate(self, attrs: Attributes, obj: dict[str, Any] | None, old: Any) -> None:
        raise forbidden(attrs, obj, DENIED)


def build(ctx: PluginContext) -> AlwaysDeny:
    return AlwaysDeny()
