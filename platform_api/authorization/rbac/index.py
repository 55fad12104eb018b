"""The RBAC rule resolver: roles and bindings held in memory, indexed by subject.

kube's authorizer walks every ClusterRoleBinding on each request; here bindings are
indexed by the subject they name (a user, a group, a service account's user name), so
a decision reads only the bindings that apply.  The rules a (user, namespace) pair
holds are cached until any role or binding changes.  The copy is kept current by an
``Informer`` over the four kinds, so a change is effective as soon as the watch hub
delivers it (within a second of the write).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from platform_api.authentication.user import UserInfo
from platform_api.controllers.informer import Informer
from platform_api.storage.interface import Storage
from platform_api.storage.watch import WatchHub

GROUP = "rbac.authorization.platform.io"
KINDS = ("roles", "clusterroles", "rolebindings", "clusterrolebindings")
SA_PREFIX = "system:serviceaccount:"
Obj = dict[str, Any]
Rule = dict[str, Any]
_CACHE_MAX = 4096


def prefix_of(plural: str) -> bytes:
    return f"/{GROUP}/{plural}/".encode()


@dataclass(frozen=True)
class Source:
    """Which binding granted a rule: kube's description in allow reasons."""

    binding_kind: str
    binding: str
    namespace: str
    role_kind: str
    role: str
    subject: Obj

    def __str__(self) -> str:
        name = f"{self.binding}/{self.namespace}" if self.namespace else self.binding
        kind, subject = self.subject.get("kind", ""), self.subject.get("name", "")
        if kind == "ServiceAccount":
            subject += "/" + (self.subject.get("namespace") or self.namespace)
        return (
            f'{self.binding_kind} "{name}" of {self.role_kind} "{self.role}" to {kind} "{subject}"'
        )


def subject_keys(subject: Obj, namespace: str) -> str | None:
    """The identity a subject names: ``u:<user>`` or ``g:<group>``; None if it names none."""
    kind, name = subject.get("kind"), subject.get("name", "")
    if kind == "User":
        return "u:" + name
    if kind == "Group":
        return "g:" + name
    if kind == "ServiceAccount":
        ns = subject.get("namespace") or namespace
        return f"u:{SA_PREFIX}{ns}:{name}" if ns and name else None
    return None


@dataclass
class Resolved:
    """The rules a user holds in a namespace, with their sources and resolution errors."""

    rules: list[tuple[Rule, Source]]
    errors: list[str]


class RuleIndex:
    def __init__(
        self,
        storage: Storage,
        hub: WatchHub,
        canonical_groups: Callable[[list[str]], list[str]] | None = None,
    ) -> None:
        self.canonical_groups = canonical_groups
        self.informer = Informer(storage, hub, tuple(prefix_of(k) for k in KINDS))
        self.roles: dict[tuple[str, str], list[Rule]] = {}
        self.cluster_roles: dict[str, list[Rule]] = {}
        # binding key -> binding object; subject identity -> binding keys.
        self.bindings: dict[bytes, Obj] = {}
        self.by_subject: dict[str, set[bytes]] = {}
        self._cache: dict[tuple[str, tuple[str, ...], str], Resolved] = {}
        self.informer.add_listener(self._changed)

    def start(self) -> None:
        self.informer.start()

    def stop(self) -> None:
        self.informer.stop()

    # -- keeping current -----------------------------------------------------------------

    def _changed(self, key: bytes, old: Obj | None, new: Obj | None) -> None:
        self._cache.clear()
        plural = key.split(b"/", 3)[2].decode()
        if plural in ("rolebindings", "clusterrolebindings"):
            if old is not None:
                self._unindex(key, old)
            if new is not None:
                self._index(key, new)
            return
        obj = new if new is not None else old
        assert obj is not None
        meta = obj.get("metadata") or {}
        target: dict[Any, list[Rule]] = self.roles if plural == "roles" else self.cluster_roles
        name = (
            (meta.get("namespace", ""), meta.get("name", ""))
            if plural == "roles"
            else meta.get("name", "")
        )
        if new is None:
            target.pop(name, None)
        else:
            target[name] = [self.canonical(rule) for rule in new.get("rules") or []]

    def canonical(self, rule: Rule) -> Rule:
        """A rule whose upstream group names read as the branded groups that serve them
        (``--serve-upstream-groups``): rules naming either name grant both."""
        groups = rule.get("apiGroups")
        if not groups or self.canonical_groups is None:
            return rule
        renamed = self.canonical_groups(list(groups))
        return rule if renamed == groups else {**rule, "apiGroups": renamed}

    def _identities(self, binding: Obj) -> set[str]:
        namespace = (binding.get("metadata") or {}).get("namespace", "")
        keys = (subject_keys(s, namespace) for s in binding.get("subjects") or [])
        return {k for k in keys if k}

    def _index(self, key: bytes, binding: Obj) -> None:
        self.bindings[key] = binding
        for identity in self._identities(binding):
            self.by_subject.setdefault(identity, set()).add(key)

    def _unindex(self, key: bytes, binding: Obj) -> None:
        self.bindings.pop(key, None)
        for identity in self._identities(binding):
            keys = self.by_subject.get(identity)
            if keys is not None:
                keys.discard(key)
                if not keys:
                    del self.by_subject[identity]

    # -- reading -------------------------------------------------------------------------

    def role_rules(self, role_ref: Obj, namespace: str) -> list[Rule] | str:
        """The rules a roleRef names, or kube's not-found text when the role is missing."""
        kind, name = role_ref.get("kind"), role_ref.get("name", "")
        if kind == "ClusterRole":
            rules = self.cluster_roles.get(name)
            return rules if rules is not None else f'clusterrole.{GROUP} "{name}" not found'
        if kind == "Role" and namespace:
            rules = self.roles.get((namespace, name))
            return rules if rules is not None else f'role.{GROUP} "{name}" not found'
        return f'unsupported role reference kind: "{kind}"'

    def _applying(self, user: UserInfo, namespace: str) -> Iterator[tuple[Obj, Obj]]:
        """(binding, subject) pairs granting ``user`` anything here: cluster bindings first."""
        identities = ["u:" + user.name, *("g:" + g for g in user.groups)]
        keys = set().union(*(self.by_subject.get(i, ()) for i in identities))
        cluster_prefix, local = prefix_of("clusterrolebindings"), prefix_of("rolebindings")
        scoped = local + namespace.encode() + b"/"
        wanted = set(identities)
        for key in sorted(keys, key=lambda k: (not k.startswith(cluster_prefix), k)):
            if not key.startswith(cluster_prefix) and not (namespace and key.startswith(scoped)):
                continue
            binding = self.bindings[key]
            ns = (binding.get("metadata") or {}).get("namespace", "")
            for subject in binding.get("subjects") or []:
                if subject_keys(subject, ns) in wanted:
                    yield binding, subject
                    break

    def rules_for(self, user: UserInfo, namespace: str) -> Resolved:
        cache_key = (user.name, user.groups, namespace)
        resolved = self._cache.get(cache_key)
        if resolved is not None:
            return resolved
        resolved = Resolved([], [])
        for binding, subject in self._applying(user, namespace):
            meta = binding.get("metadata") or {}
            ns = meta.get("namespace", "")
            ref = binding.get("roleRef") or {}
            rules = self.role_rules(ref, ns)
            if isinstance(rules, str):
                resolved.errors.append(rules)
                continue
            source = Source(
                "RoleBinding" if ns else "ClusterRoleBinding",
                meta.get("name", ""),
                ns,
                ref.get("kind", ""),
                ref.get("name", ""),
                subject,
            )
            resolved.rules += [(rule, source) for rule in rules]
        if len(self._cache) >= _CACHE_MAX:
            self._cache.clear()
        self._cache[cache_key] = resolved
        return resolved
