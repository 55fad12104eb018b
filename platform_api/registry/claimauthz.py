"""Who may write which part of a ResourceClaim's status (kube's resourceutils
``AuthorizedForBinding`` and ``AuthorizedForDeviceStatus``; its
DRAResourceClaimGranularStatusAuthorization gate, beta and on in v1.36).

Changing ``status.allocation`` or ``status.reservedFor`` (a scheduler's work) needs the
request's verb on ``resourceclaims/binding`` cluster-wide; changing a driver's entries in
``status.devices`` needs ``arbitrary-node:<verb>`` on ``resourceclaims/driver`` named for
the driver, or ``associated-node:<verb>`` for a service account running on the node the
claim is allocated to.  kube answers a refusal as a validation error of the field.
"""

from __future__ import annotations

from typing import Any

from platform_api.authentication.user import UserInfo
from platform_api.authorization.interface import Attributes, Authorizer, Decision
from platform_api.authorization.union import forbidden
from platform_api.registry.dranames import GROUP, Obj, items, node_name, obj, text
from platform_api.validation import field
from platform_api.validation.field import FieldError

NODE_NAME = "authentication.platform.io/node-name"  # a bound service account token's node
SERVICE_ACCOUNT = "system:serviceaccount:"


async def status_denials(
    authorizer: Authorizer, user: UserInfo, verb: str, namespace: str, new: Obj, old: Obj
) -> list[FieldError]:
    """The binding and device-status refusals of a status write (``new``/``old``: the
    claims' statuses), in kube's order."""
    errs: list[FieldError] = []
    changed = any(new.get(k) != old.get(k) for k in ("allocation", "reservedFor"))
    if changed:
        attrs = _attributes(user, verb, "binding", "", "")
        problem = await _refusal(authorizer, attrs)
        if problem:
            detail = (
                'changing status.allocation or status.reservedFor requires resource="resourceclaims'
                f'/binding", verb="{verb}" permission: {problem}'
            )
            errs.append(field.forbidden("status.allocation", detail))
    if new.get("allocation") is None:  # kube checks device status of an allocated claim only
        return errs
    verbs = [f"arbitrary-node:{verb}"]
    if _on_allocated_node(user, new.get("allocation")):
        verbs.insert(0, f"associated-node:{verb}")
    for driver in sorted(_modified_drivers(new, old)):
        problem = await _first_refusal(authorizer, user, verbs, namespace, driver)
        if problem:
            detail = (
                f'changing status.devices requires resource="resourceclaims/driver", '
                f'verb="[{" ".join(verbs)}]" permission: {problem}'
            )
            errs.append(field.forbidden("status.devices", detail))
    return errs


def _attributes(user: UserInfo, verb: str, sub: str, namespace: str, name: str) -> Attributes:
    return Attributes(
        user=user,
        verb=verb,
        resource_request=True,
        namespace=namespace,
        api_group=GROUP,
        api_version="v1",
        resource="resourceclaims",
        subresource=sub,
        name=name,
    )


async def _refusal(authorizer: Authorizer, attrs: Attributes) -> str:
    """kube's checkAuthorization: "" when allowed, else its Forbidden error's text."""
    decision, reason = await authorizer.authorize(attrs)
    if decision is Decision.ALLOW:
        return ""
    return str(forbidden(attrs, reason))


async def _first_refusal(
    authorizer: Authorizer, user: UserInfo, verbs: list[str], namespace: str, driver: str
) -> str:
    """The verbs are alternatives: "" once one is allowed, else the first refusal."""
    first = ""
    for verb in verbs:
        problem = await _refusal(authorizer, _attributes(user, verb, "driver", namespace, driver))
        if not problem:
            return ""
        first = first or problem
    return first


def _device_key(device: Any) -> tuple[str, str, str, str]:
    d = obj(device)
    return (
        text(d.get("driver")),
        text(d.get("pool")),
        text(d.get("device")),
        text(d.get("shareID")),
    )


def _modified_drivers(new: Obj, old: Obj) -> set[str]:
    """kube's getModifiedDrivers: drivers of device entries added, changed or removed."""
    before = {_device_key(d): d for d in items(old.get("devices"))}
    drivers: set[str] = set()
    for device in items(new.get("devices")):
        key = _device_key(device)
        if before.pop(key, None) != device:
            drivers.add(key[0])
    drivers.update(key[0] for key in before)
    return drivers


def _allocated_node(allocation: Any) -> str:
    """kube's nodeNameFromAllocation: a selector of exactly ``metadata.name In [node]``."""
    terms = items(obj(obj(allocation).get("nodeSelector")).get("nodeSelectorTerms"))
    if len(terms) != 1 or items(obj(terms[0]).get("matchExpressions")):
        return ""
    fields = items(obj(terms[0]).get("matchFields"))
    if len(fields) != 1:
        return ""
    match = obj(fields[0])
    values = items(match.get("values"))
    if match.get("key") != "metadata.name" or match.get("operator") != "In" or len(values) != 1:
        return ""
    return text(values[0])


def _on_allocated_node(user: UserInfo, allocation: Any) -> bool:
    """kube's saAssociatedWithAllocatedNode."""
    node = _allocated_node(allocation)
    parts = (
        user.name[len(SERVICE_ACCOUNT) :].split(":")
        if user.name.startswith(SERVICE_ACCOUNT)
        else []
    )
    if not node or len(parts) != 2 or not all(parts):
        return False
    nodes = tuple(user.extra.get(NODE_NAME, ()))
    return len(nodes) == 1 and not node_name(nodes[0], "") and nodes[0] == node
