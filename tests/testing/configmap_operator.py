"""A small kopf operator for the plugin's tests: it greets every ConfigMap that names someone,
and holds its deletion (kopf's finalizer) until it has said goodbye."""

from __future__ import annotations

from typing import Any

import kopf


@kopf.on.create("v1", "configmaps", field="data.name", value=kopf.PRESENT)
def greet(body: kopf.Body, patch: kopf.Patch, **_: Any) -> None:
    patch["data"] = {"greeting": f"hello {body['data']['name']}"}


@kopf.on.update("v1", "configmaps", field="data.name")
def regreet(new: str, patch: kopf.Patch, **_: Any) -> None:
    patch["data"] = {"greeting": f"hello again {new}"}


@kopf.on.delete("v1", "configmaps", field="data.name", value=kopf.PRESENT)
def farewell(logger: kopf.Logger, name: str, **_: Any) -> None:
    logger.info(f"goodbye {name}")
