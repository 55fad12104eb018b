"""Escalation prevention: nobody grants through RBAC what they do not hold.

kube checks this in the RBAC storage, not in admission, so it cannot be turned off.
Writing a role needs every permission it grants at the same scope, or the ``escalate``
verb on it; writing a binding needs the referenced role's permissions, or ``bind`` on
that role.  ``escalate``/``bind`` go through the whole authorizer chain (which may be a
webhook), so they are asked before the write; the covering check reads the in-memory
rule index and runs on the exact object about to be stored, inside the write's retry.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import orjson
import yaml

from platform_api import errors
from platform_api.authentication.user import MASTERS, UserInfo
from platform_api.authorization.interface import Attributes, Authorizer, Decision
from platform_api.authorization.rbac import rules
from platform_api.authorization.rbac.index import GROUP, RuleIndex

if TYPE_CHECKING:
    from platform_api.endpoints.scope import Scope

Obj = dict[str, Any]
Check = Callable[[Obj, Obj | None], None]
ROLES = ("roles", "clusterroles")
BINDINGS = ("rolebindings", "clusterrolebindings")
FULL_AUTHORITY = [
    {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]},
    {"verbs": ["*"], "nonResourceURLs": ["*"]},
]


class EscalationGuard:
    def __init__(self, index: RuleIndex, authorizer: Authorizer) -> None:
        self.index = index
        self.authorizer = authorizer

    async def prepare(self, scope: Scope) -> Check | None:
        """The check a write of an RBAC object must pass, or None when it needs none."""
        rt, user = scope.resource, scope.ctx.user
        if rt.group != GROUP or rt.plural not in ROLES + BINDINGS:
            return None
        if MASTERS in user.groups:
            return None
        namespace = scope.namespace
        if rt.plural in ROLES:
            if await self._allowed(user, "escalate", rt.plural, namespace, scope.name):
                return None
            return self._role_check(user, rt.plural, namespace)
        ref = _role_ref(scope)
        bindable = None
        if ref is not None:
            plural = "roles" if ref.get("kind") == "Role" else "clusterroles"
            if await self._allowed(user, "bind", plural, namespace, ref.get("name", "")):
                bindable = ref
        return self._binding_check(user, rt.plural, namespace, bindable)

    async def _allowed(self, user: UserInfo, verb: str, plural: str, ns: str, name: str) -> bool:
        attrs = Attributes(
            user=user,
            verb=verb,
            resource_request=True,
            namespace=ns,
            api_group=GROUP,
            api_version="v1",
            resource=plural,
            name=name,
        )
        decision, _ = await self.authorizer.authorize(attrs)
        return decision is Decision.ALLOW

    def _role_check(self, user: UserInfo, plural: str, namespace: str) -> Check:
        def check(obj: Obj, old: Obj | None) -> None:
            if old is not None and only_gc_fields_changed(obj, old):
                return
            name = obj["metadata"].get("name", "")
            wanted = [self.index.canonical(rule) for rule in obj.get("rules") or []]
            self.confirm(user, namespace, wanted, plural, name)
            aggregates = obj.get("aggregationRule") or (old or {}).get("aggregationRule")
            if plural == "clusterroles" and aggregates:
                held, _ = rules.covers(self._owned(user, namespace)[0], FULL_AUTHORITY)
                if not held:
                    raise errors.forbidden(
                        plural,
                        GROUP,
                        name,
                        "must have cluster-admin privileges to use the aggregationRule",
                    )

        return check

    def _binding_check(self, user: UserInfo, plural: str, ns: str, bindable: Obj | None) -> Check:
        def check(obj: Obj, old: Obj | None) -> None:
            if old is not None and only_gc_fields_changed(obj, old):
                return
            ref = obj.get("roleRef") or {}
            if bindable is not None and ref == bindable:
                return
            name = obj["metadata"].get("name", "")
            granted = self.index.role_rules(ref, ns)
            if isinstance(granted, str):
                raise errors.forbidden(plural, GROUP, name, granted)
            self.confirm(user, ns, granted, plural, name)

        return check

    def _owned(self, user: UserInfo, namespace: str) -> tuple[list[rules.Rule], list[str]]:
        resolved = self.index.rules_for(user, namespace)
        return [rule for rule, _ in resolved.rules], resolved.errors

    def confirm(
        self, user: UserInfo, namespace: str, wanted: list[rules.Rule], plural: str, name: str
    ) -> None:
        """kube's ``ConfirmNoEscalation``: 403 listing the rights the user lacks."""
        owned, resolution_errors = self._owned(user, namespace)
        held, missing = rules.covers(owned, wanted)
        if held:
            return
        lines = sorted({rules.compact_string(r) for r in rules.compact(missing)})
        groups = "[" + " ".join(orjson.dumps(g).decode() for g in user.groups) + "]"
        message = (
            f"user {orjson.dumps(user.name).decode()} (groups={groups}) is attempting to grant "
            "RBAC permissions not currently held:\n" + "\n".join(lines)
        )
        if resolution_errors:
            message += f"; resolution errors: [{', '.join(resolution_errors)}]"
        raise errors.forbidden(plural, GROUP, name, message)


def only_gc_fields_changed(new: Obj, old: Obj) -> bool:
    """kube's ``IsOnlyMutatingGCFields``: owner references and finalizers need no rights."""
    copied = copy.deepcopy(new)
    meta, old_meta = copied.setdefault("metadata", {}), old.get("metadata") or {}
    for key in ("ownerReferences", "finalizers", "resourceVersion", "managedFields"):
        meta.pop(key, None)
    trimmed = {
        **old,
        "metadata": {
            k: v
            for k, v in old_meta.items()
            if k not in ("ownerReferences", "finalizers", "resourceVersion", "managedFields")
        },
    }
    return copied == trimmed


def _role_ref(scope: Scope) -> Obj | None:
    """The roleRef a binding write names: the live object's (it is immutable), else the body's."""
    if scope.name:
        try:
            ref = scope.store.get(scope.namespace, scope.name).object.get("roleRef")
            return ref if isinstance(ref, dict) else None
        except errors.StatusError:
            pass
    try:
        body = yaml.safe_load(scope.body())
    except yaml.YAMLError:
        return None
    ref = body.get("roleRef") if isinstance(body, dict) else None
    if isinstance(ref, dict):
        return {"apiGroup": ref.get("apiGroup") or GROUP, **ref}
    return None
