"""Escalation prevention: nobody grants through RBAC what they do not hold.

kube checks this in the RBAC storage (its ``policybased`` wrappers of the four stores),
not in admission, so it cannot be turned off; here it is the write guard of those four
stores.  Writing a role needs every permission it grants at the same scope, or the
``escalate`` verb on it; writing a binding needs the referenced role's permissions, or
``bind`` on that role.  The check runs on the exact object about to be stored, inside
the write's retry: ``escalate``/``bind`` through the whole authorizer chain (which may be
a webhook), the covering check against the in-memory rule index.
"""

from __future__ import annotations

import copy
from typing import Any

import orjson

from platform_api import errors
from platform_api.authentication.user import MASTERS, UserInfo
from platform_api.authorization.interface import Attributes, Authorizer, allows
from platform_api.authorization.rbac import rules
from platform_api.authorization.rbac.index import GROUP, RuleIndex

Obj = dict[str, Any]
ROLES = ("roles", "clusterroles")
BINDINGS = ("rolebindings", "clusterrolebindings")
FULL_AUTHORITY = [
    {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]},
    {"verbs": ["*"], "nonResourceURLs": ["*"]},
]


class EscalationGuard:
    """The write guard of one RBAC store (``plural``): see the module doc."""

    def __init__(self, index: RuleIndex, authorizer: Authorizer, plural: str) -> None:
        assert plural in ROLES + BINDINGS
        self.index = index
        self.authorizer = authorizer
        self.plural = plural

    async def check(self, user: UserInfo, namespace: str, obj: Obj, old: Obj | None) -> None:
        """Refuse (403) a write that grants what ``user`` does not hold."""
        if MASTERS in user.groups or (old is not None and only_gc_fields_changed(obj, old)):
            return
        plural, name = self.plural, obj["metadata"].get("name", "")
        if plural in ROLES:
            if not await self._allowed(user, "escalate", plural, namespace, name):
                self._role_check(user, plural, namespace, obj, old)
            return
        ref = obj.get("roleRef") or {}
        ref_plural = "roles" if ref.get("kind") == "Role" else "clusterroles"
        if ref and await self._allowed(user, "bind", ref_plural, namespace, ref.get("name", "")):
            return
        granted = self.index.role_rules(ref, namespace)
        if isinstance(granted, str):  # a role that does not exist (validation took the rest)
            # kube passes on its role getter's NotFound, which names the request's resource
            raise errors.not_found(plural, GROUP, ref.get("name", ""))
        self.confirm(user, namespace, granted, plural, name)

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
        return await allows(self.authorizer, attrs)

    def _role_check(
        self, user: UserInfo, plural: str, namespace: str, obj: Obj, old: Obj | None
    ) -> None:
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
