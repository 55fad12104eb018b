"""Who may point an admission policy at parameter objects: kube's policy storage checks.

A policy's ``paramKind`` and a binding's ``paramRef`` make the server read objects on
every admitted request; kube's storage of the four policy kinds therefore refuses one
whose writer could not read those objects themselves.  A policy needs ``get`` on every
object of its paramKind (name and namespace ``*``); a binding needs ``get`` on the object
its paramRef names (``list`` for a selector), in the group and resource the policy's
paramKind resolves to, or on everything when it does not resolve.  Members of
``system:masters`` skip the check, and so does an update that keeps the policy's
paramKind (a binding's paramRef is compared as Go compares its struct of pointers: equal
only without a selector and a parameterNotFoundAction, which v1 requires, so a binding
with a paramRef is checked on every update).  The refusal is a 422 ``Forbidden`` cause on
``spec.paramKind`` or ``spec.paramRef`` with kube's text, the user as Go's ``%v`` prints
it; the mutating bindings' text swaps the verb and the user, as kube's does.

This is a write guard of those stores (``Store.guard``): it runs on the object about to be
stored, after the kind's validation, before validating admission.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from platform_api import errors
from platform_api.authentication.user import MASTERS, UserInfo
from platform_api.authorization.interface import Attributes, Authorizer, allows
from platform_api.registry.admissionregistration import GROUP
from platform_api.scheme.types import ResourceType
from platform_api.validation import field

Obj = dict[str, Any]
# paramKind's (apiVersion, kind) to its (group, resource), or None when it is not served.
Resolve = Callable[[str, str], tuple[str, str] | None]
# A policy by name, or None when there is none.
PolicyOf = Callable[[str], Obj | None]

POLICIES = ("validatingadmissionpolicies", "mutatingadmissionpolicies")
BINDINGS = ("validatingadmissionpolicybindings", "mutatingadmissionpolicybindings")


def go_user(user: UserInfo) -> str:
    """A user as Go's ``%v`` prints kube's ``*user.DefaultInfo``."""
    extra = " ".join(f"{key}:[{' '.join(user.extra[key])}]" for key in sorted(user.extra))
    return f"&{{{user.name} {user.uid} [{' '.join(user.groups)}] map[{extra}]}}"


def parse_group_version(api_version: str) -> tuple[str, str] | None:
    """``schema.ParseGroupVersion``: None for more than one slash."""
    if api_version.count("/") > 1:
        return None
    group, _, version = api_version.rpartition("/")
    return group, version


class ParamAccessGuard:
    """The write guard of one policy or binding store (``rt``): see the module doc."""

    def __init__(
        self, rt: ResourceType, authorizer: Authorizer, resolve: Resolve, policy_of: PolicyOf
    ) -> None:
        assert rt.plural in POLICIES + BINDINGS
        self.rt = rt
        self.authorizer = authorizer
        self.resolve = resolve
        self.policy_of = policy_of  # the bindings' policies (same group, mutating or not)

    async def check(self, user: UserInfo, namespace: str, obj: Obj, old: Obj | None) -> None:
        spec: Obj = obj["spec"] if isinstance(obj.get("spec"), dict) else {}
        old_spec: Obj | None = None
        if old is not None and isinstance(old.get("spec"), dict):
            old_spec = old["spec"]
        if self.rt.plural in POLICIES:
            param_kind = spec.get("paramKind")
            if not isinstance(param_kind, dict):
                return
            if old_spec is not None and old_spec.get("paramKind") == param_kind:
                return
            why = await self._policy(user, param_kind) if MASTERS not in user.groups else None
            where = "spec.paramKind"
        else:
            ref = spec.get("paramRef")
            if not isinstance(ref, dict):
                return
            if old_spec is not None and _same_binding(old_spec, spec):
                return
            why = await self._binding(user, spec, ref) if MASTERS not in user.groups else None
            where = "spec.paramRef"
        if why is not None:
            name = obj.get("metadata", {}).get("name", "")
            raise errors.invalid(self.rt.kind, self.rt.group, name, [field.forbidden(where, why)])

    async def _policy(self, user: UserInfo, param_kind: Obj) -> str | None:
        api_version, kind = str(param_kind.get("apiVersion", "")), str(param_kind.get("kind", ""))
        group = version = resource = "*"
        parsed = parse_group_version(api_version)
        if parsed is not None:
            group, version = parsed
            found = self.resolve(api_version, kind)
            if found is not None:
                group, resource = found
        if await self._allowed(user, "get", group, version, resource, "*", "*"):
            return None
        return (
            f'user {go_user(user)} must have "get" permission on all objects of the '
            f"referenced paramKind (kind={kind}, apiVersion={api_version})"
        )

    async def _binding(self, user: UserInfo, spec: Obj, ref: Obj) -> str | None:
        group = version = resource = "*"
        problem = ""
        policy_name = str(spec.get("policyName", ""))
        policy = self.policy_of(policy_name)
        param_kind = (policy.get("spec") or {}).get("paramKind") if policy is not None else None
        if policy is None:
            problem = f"unable to get policy {policy_name}"
        elif isinstance(param_kind, dict):
            api_version = str(param_kind.get("apiVersion", ""))
            kind = str(param_kind.get("kind", ""))
            printed = f"&{{{api_version} {kind}}}"
            parsed = parse_group_version(api_version)
            if parsed is None:
                problem = f"unable to parse paramKind {printed}"
            else:
                group, version = parsed
                found = self.resolve(api_version, kind)
                if found is None:
                    problem = f"unable to resolve paramKind {printed}"
                else:
                    group, resource = found
        name = str(ref.get("name") or "")
        verb = "get" if name else "list"
        ref_namespace = str(ref.get("namespace") or "")
        if await self._allowed(user, verb, group, version, resource, ref_namespace, name):
            return None
        who = go_user(user)
        if problem:
            return (
                f"{problem} to determine minimum required permissions and user {who} does not "
                f'have "{verb}" permission for all groups, versions and resources'
            )
        if self.rt.plural.startswith("mutating"):  # kube's Errorf has its arguments swapped
            who, verb = verb, who
        return f'user {who} does not have "{verb}" permission on the object referenced by paramRef'

    async def _allowed(
        self, user: UserInfo, verb: str, group: str, version: str, resource: str, ns: str, name: str
    ) -> bool:
        attrs = Attributes(
            user, verb, resource_request=True, namespace=ns, name=name,
            api_group=group, api_version=version, resource=resource,
        )  # fmt: skip
        return await allows(self.authorizer, attrs)


def _same_binding(old: Obj, new: Obj) -> bool:
    """Go's ``*old.ParamRef == *new.ParamRef`` (pointers compare by address: a selector or
    a parameterNotFoundAction makes two decodings differ) and the same policy."""
    ref, old_ref = new.get("paramRef"), old.get("paramRef")
    if not isinstance(old_ref, dict) or not isinstance(ref, dict):
        return False
    pointers = ("selector", "parameterNotFoundAction")
    if any(r.get(p) is not None for r in (ref, old_ref) for p in pointers):
        return False
    same_ref = (ref.get("name"), ref.get("namespace")) == (
        old_ref.get("name"),
        old_ref.get("namespace"),
    )
    return same_ref and old.get("policyName") == new.get("policyName")


def guard_param_access(
    stores: dict[tuple[str, str, str], Any],
    by_kind: Callable[[str, str, str], Any],
    authorizer: Authorizer,
) -> None:
    """Set the guard on every served version of the four policy stores; ``by_kind`` is
    the scheme's (custom resources too, as they come)."""

    def resolve(api_version: str, kind: str) -> tuple[str, str] | None:
        group, _, version = api_version.rpartition("/")
        rt = by_kind(group, version, kind)
        return None if rt is None else (rt.group, rt.plural)

    # A binding's policy, from the policy store (its served versions share one storage).
    policy_stores = {p: store for (g, _, p), store in stores.items() if g == GROUP}
    policies_of = dict(zip(BINDINGS, POLICIES, strict=True))
    for (group, _version, plural), store in stores.items():
        if group != GROUP or plural not in POLICIES + BINDINGS:
            continue
        policies = policy_stores.get(policies_of.get(plural, ""))

        def policy_of(name: str, policies: Any = policies) -> Obj | None:
            try:
                return None if policies is None else dict(policies.get("", name).object)
            except errors.StatusError:
                return None

        store.guard = ParamAccessGuard(store.resource, authorizer, resolve, policy_of)
