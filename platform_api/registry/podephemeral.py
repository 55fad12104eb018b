"""Ephemeral containers (``kubectl debug``), as kube's validateEphemeralContainers
checks them: common container rules, unique names, an existing target, none of the
fields that make a container part of the workload.  A pod may not be created with any;
``pods/ephemeralcontainers`` (registry/core.py) adds them."""

from __future__ import annotations

from typing import Any

from platform_api.registry.podcontainers import PodFacts, validate_common
from platform_api.validation import field
from platform_api.validation.field import FieldError

Obj = dict[str, Any]
# The container fields an ephemeral container may not set, in kube's struct order.
FORBIDDEN = (
    "ports",
    "resources",
    "resizePolicy",
    "restartPolicy",
    "restartPolicyRules",
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
    "lifecycle",
)
NOT_HERE = "cannot be set for an Ephemeral Container"


def validate_ephemeral_containers(
    containers: list[Obj], path: str, others: set[str], facts: PodFacts
) -> list[FieldError]:
    """``others``: the names of the pod's regular and init containers."""
    errs: list[FieldError] = []
    names = set(others)
    for i, container in enumerate(containers):
        at = f"{path}[{i}]"
        errs += validate_common(container, at, facts)
        image = container.get("image") or ""
        if image and image.strip() != image:
            why = "must not have leading or trailing whitespace"
            errs.append(field.invalid(f"{at}.image", image, why))
        name = container.get("name", "")
        if name in names:
            errs.append(field.duplicate(f"{at}.name", name))
        names.add(name)
        target = container.get("targetContainerName") or ""
        if target and target not in others:
            errs.append(field.not_found(f"{at}.targetContainerName", target))
        errs += [
            field.forbidden(f"{at}.{key}", NOT_HERE) for key in FORBIDDEN if container.get(key)
        ]
        for j, mount in enumerate(container.get("volumeMounts") or []):
            for key in ("subPath", "subPathExpr"):
                if (mount or {}).get(key):
                    errs.append(field.forbidden(f"{at}.volumeMounts[{j}].{key}", NOT_HERE))
    return errs


def created_with_ephemeral(spec: Obj) -> list[FieldError]:
    if spec.get("ephemeralContainers"):
        return [field.forbidden("spec.ephemeralContainers", "cannot be set on create")]
    return []
