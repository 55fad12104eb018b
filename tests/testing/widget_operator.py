"""A kopf operator on a custom resource: it sizes every Widget and reports it in status."""

from __future__ import annotations

from typing import Any

import kopf


@kopf.on.create("ops.example.com", "v1", "widgets")
def created(spec: kopf.Spec, patch: kopf.Patch, **_: Any) -> None:
    patch["status"] = {"phase": "Ready", "size": spec.get("size", 1) * 10}


@kopf.on.field("ops.example.com", "v1", "widgets", field="spec.size")
def resized(new: int, patch: kopf.Patch, **_: Any) -> None:
    patch["status"] = {"size": (new or 1) * 10}
