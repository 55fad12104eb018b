"""OwnerReferencesPermissionEnforcement: who may set ownerReferences (kube's ``gc`` plugin;
off by default).

Changing an object's ownerReferences needs ``delete`` on the object (creating it is
enough on a create: its creator could have not created it).  Setting
``blockOwnerDeletion`` on a reference (new, or turned on) needs ``update`` on the owner's
``finalizers`` subresource, unless the user may update every finalizers subresource.
The owner's kind is looked up among the served resources of its apiVersion.  Pod status
updates are exempt, as in kube (their strategy keeps ownerReferences).
"""

from __future__ import annotations

from typing import Any

from platform_api.admission.interface import Attributes, forbidden
from platform_api.admission.matching import Authorize
from platform_api.admission.plugins import PluginContext
from platform_api.cel.library.authz import CheckAttributes
from platform_api.registry.store import Store
from platform_api.scheme.types import ResourceType

Obj = dict[str, Any]
_EXEMPT = (("", "pods", "status"),)


def _refs(obj: Obj | None) -> list[Obj]:
    return list(((obj or {}).get("metadata") or {}).get("ownerReferences") or [])


def changes_owner_references(obj: Obj | None, old: Obj | None) -> bool:
    if old is None:
        return bool(_refs(obj))
    return _refs(obj) != _refs(old)


def new_blocking_refs(obj: Obj | None, old: Obj | None) -> list[Obj]:
    """References that block their owner's deletion and did not before (by uid)."""
    blocking = [ref for ref in _refs(obj) if ref.get("blockOwnerDeletion") is True]
    if old is None:
        return blocking
    before = {ref.get("uid", ""): ref for ref in _refs(old)}
    return [
        ref
        for ref in blocking
        if ref.get("uid", "") not in before
        or before[ref.get("uid", "")].get("blockOwnerDeletion") is not True
    ]


def _user(attrs: Attributes) -> dict[str, Any]:
    user = attrs.user
    return {
        "username": user.name,
        "uid": user.uid,
        "groups": list(user.groups),
        "extra": {k: list(v) for k, v in user.extra.items()},
    }


class OwnerReferencesPermissionEnforcement:
    name = "OwnerReferencesPermissionEnforcement"

    def __init__(self, authorize: Authorize, stores: dict[tuple[str, str, str], Store]) -> None:
        self._authorize = authorize
        self._stores = stores  # the server's, custom resources included

    async def validate(self, attrs: Attributes, obj: Obj | None, old: Obj | None) -> None:
        rt = attrs.resource
        if attrs.operation not in ("CREATE", "UPDATE") or obj is None:
            return
        if (rt.group, rt.plural, attrs.subresource) in _EXEMPT:
            return
        if not changes_owner_references(obj, old):
            return
        user = _user(attrs)
        if attrs.operation != "CREATE":
            check = CheckAttributes(
                user, "delete", True, "", rt.group, rt.version, rt.plural,
                attrs.subresource, attrs.namespace, attrs.name,
            )  # fmt: skip
            decision, reason = await self._authorize(check)
            if decision != "allow":
                why = f"cannot set an ownerRef on a resource you can't delete: {reason}, <nil>"
                raise forbidden(attrs, obj, why)
        blocking = new_blocking_refs(obj, old)
        if not blocking:
            return
        anything = CheckAttributes(user, "update", True, "", "*", "*", "*", "finalizers", "", "*")
        if (await self._authorize(anything))[0] == "allow":
            return
        for ref in blocking:
            await self._check_owner(attrs, obj, user, ref)

    async def _check_owner(self, attrs: Attributes, obj: Obj, user: Obj, ref: Obj) -> None:
        api_version, kind = str(ref.get("apiVersion", "")), str(ref.get("kind", ""))
        try:
            owners = self._mappings(api_version, kind)
        except ValueError as e:
            why = (
                "cannot set blockOwnerDeletion in this case because cannot find RESTMapping for "
                f"APIVersion {api_version} Kind {kind}: {e}"
            )
            raise forbidden(attrs, obj, why) from None
        for owner in owners:
            check = CheckAttributes(
                user, "update", True, "", owner.group, owner.version, owner.plural,
                "finalizers", attrs.namespace if owner.namespaced else "", str(ref.get("name", "")),
            )  # fmt: skip
            decision, reason = await self._authorize(check)
            if decision != "allow":
                why = (
                    "cannot set blockOwnerDeletion if an ownerReference refers to a resource you "
                    f"can't set finalizers on: {reason}, <nil>"
                )
                raise forbidden(attrs, obj, why)

    def _mappings(self, api_version: str, kind: str) -> list[ResourceType]:
        """kube's RESTMappings for the kind in that one version; ValueError if none."""
        if api_version.count("/") > 1:
            raise ValueError(f"unexpected GroupVersion string: {api_version}")
        group, _, version = api_version.rpartition("/")
        found = [
            store.resource
            for (g, v, _), store in list(self._stores.items())
            if (g, v) == (group, version) and store.resource.kind == kind
        ]
        if not found:
            raise ValueError(f'no matches for kind "{kind}" in version "{api_version}"')
        return found


def build(ctx: PluginContext) -> OwnerReferencesPermissionEnforcement:
    return OwnerReferencesPermissionEnforcement(ctx.authorize, ctx.stores)
