"""Table columns of the admission registration kinds (kube's internalversion printers)."""

from __future__ import annotations

from typing import Any

from platform_api.endpoints.printers import AGE, NAME, age
from platform_api.endpoints.tables import COLUMNS, Column, Printer

GROUP = "admissionregistration.platform.io"
Obj = dict[str, Any]

# kube's printers (pkg/printers/internalversion): the number of webhooks.
_WEBHOOKS = Column(
    "Webhooks",
    "integer",
    "",
    "Webhooks indicates the number of webhooks registered in this configuration",
)


def _cells(obj: Obj) -> list[Any]:
    meta = obj.get("metadata") or {}
    return [
        meta.get("name", ""),
        len(obj.get("webhooks") or []),
        age(meta.get("creationTimestamp")),
    ]


for _plural in ("mutatingwebhookconfigurations", "validatingwebhookconfigurations"):
    COLUMNS[(GROUP, _plural)] = Printer((NAME, _WEBHOOKS, AGE), _cells)
