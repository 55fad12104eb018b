"""AlwaysAdmit: admits everything (kube's deprecated ``admit`` plugin; off by default)."""

from __future__ import annotations

from typing import Any

from platform_api.admission.interface import Attributes
from platform_api.admission.plugins import PluginContext


class AlwaysAdmit:
    name = "AlwaysAdmit"

    def admit(self, attrs: Attributes, obj: Any, old: Any) -> None:
        return None

    def validate(self, attrs: Attributes, obj: Any, old: Any) -> None:
        return None


def build(ctx: PluginContext) -> AlwaysAdmit:
    return AlwaysAdmit()
