"""rbac.authorization.platform.io/v1: defaults and validation of roles and bindings.

kube's ``pkg/apis/rbac/validation``: rules need verbs and either resources (with API
groups) or non-resource URLs (cluster roles only); subjects are User, Group or
ServiceAccount; a binding's ``roleRef`` is fixed at creation.  Escalation prevention
needs the requesting user and lives with the authorizer
(``registry/rbacescalation.py``).
"""

from __future__ import annotations

from typing import Any

from platform_api.gotext import json_string
from platform_api.registry.defaults import defaults
from platform_api.registry.strategy import GenericStrategy, Obj, register
from platform_api.selectors import SelectorError, label_selector_from
from platform_api.validation import field
from platform_api.validation.field import FieldError, GoText
from platform_api.validation.labelselector import validate_label_selector
from platform_api.validation.names import is_dns1123_subdomain, is_path_segment_name

GROUP = "rbac.authorization.platform.io"
SUBJECT_KINDS = ["ServiceAccount", "User", "Group"]


@defaults(GROUP, "RoleBinding", "ClusterRoleBinding")
def _binding(obj: Obj) -> None:
    # roleRef is a struct in kube: a missing one is a zero value, and still defaulted.
    ref = obj.get("roleRef")
    if ref is None:
        ref = obj["roleRef"] = {}
    if isinstance(ref, dict) and not ref.get("apiGroup"):
        ref["apiGroup"] = GROUP
    for subject in obj.get("subjects") or []:
        kind = subject.get("kind") if isinstance(subject, dict) else None
        if kind in ("User", "Group") and not subject.get("apiGroup"):
            subject["apiGroup"] = GROUP


def validate_rule(rule: Obj, namespaced: bool, path: str) -> list[FieldError]:
    errs = []
    if not rule.get("verbs"):
        errs.append(field.required(f"{path}.verbs", "verbs must contain at least one value"))
    urls = rule.get("nonResourceURLs") or []
    if urls:
        if namespaced:
            errs.append(
                field.invalid(
                    f"{path}.nonResourceURLs",
                    urls,
                    "namespaced rules cannot apply to non-resource URLs",
                )
            )
        if rule.get("apiGroups") or rule.get("resources") or rule.get("resourceNames"):
            errs.append(
                field.invalid(
                    f"{path}.nonResourceURLs",
                    urls,
                    "rules cannot apply to both regular resources and non-resource URLs",
                )
            )
        return errs
    if not rule.get("apiGroups"):
        errs.append(
            field.required(f"{path}.apiGroups", "resource rules must supply at least one api group")
        )
    if not rule.get("resources"):
        errs.append(
            field.required(f"{path}.resources", "resource rules must supply at least one resource")
        )
    return errs


def validate_subject(
    subject: Obj, namespaced: bool, path: str, groups: tuple[str, ...] = (GROUP,)
) -> list[FieldError]:
    """``groups``: the names of the RBAC group a User or Group subject may give."""
    errs = []
    name, kind, group = (
        subject.get("name", ""),
        subject.get("kind", ""),
        subject.get("apiGroup", ""),
    )
    if not name:
        errs.append(field.required(f"{path}.name"))
    if kind == "ServiceAccount":
        if name:
            errs += [field.invalid(f"{path}.name", name, m) for m in is_dns1123_subdomain(name)]
        if group:
            errs.append(field.not_supported(f"{path}.apiGroup", field.plain(group), [""]))
        if not namespaced and not subject.get("namespace"):
            errs.append(field.required(f"{path}.namespace"))
    elif kind in ("User", "Group"):
        if group not in groups:
            errs.append(field.not_supported(f"{path}.apiGroup", field.plain(group), [GROUP]))
    else:
        errs.append(field.not_supported(f"{path}.kind", field.plain(kind), SUBJECT_KINDS))
    return errs


def role_ref_text(ref: Any) -> GoText:
    """The roleRef kube's "cannot change roleRef" error shows: its internal struct as
    JSON (untagged field names)."""
    ref = ref if isinstance(ref, dict) else {}
    parts = [f'"{go}":{json_string(str(ref.get(key) or ""))}' for go, key in _ROLE_REF]
    return GoText("{" + ",".join(parts) + "}")


_ROLE_REF = (("APIGroup", "apiGroup"), ("Kind", "kind"), ("Name", "name"))


@register(GROUP, "ClusterRole")
@register(GROUP, "Role")
class RoleStrategy(GenericStrategy):
    allow_create_on_update = True  # as kube's: RBAC reconcilers PUT what they make

    def validate(self, obj: Obj) -> list[FieldError]:
        errs = super().validate(obj)
        namespaced = self.resource.namespaced
        for i, rule in enumerate(obj.get("rules") or []):
            errs += validate_rule(rule, namespaced, f"rules[{i}]")
        aggregation = obj.get("aggregationRule")
        if aggregation is not None and not namespaced:
            selectors = aggregation.get("clusterRoleSelectors") or []
            path = "aggregationRule.clusterRoleSelectors"
            if not selectors:
                errs.append(
                    field.required(
                        path,
                        "at least one clusterRoleSelector required if aggregationRule is non-nil",
                    )
                )
            for i, selector in enumerate(selectors):
                errs += validate_label_selector(selector, f"{path}[{i}]")
                try:  # kube converts each too: a selector it cannot is null in the cause
                    label_selector_from(selector)
                except SelectorError:
                    errs.append(field.invalid(f"{path}[{i}]", None, "invalid label selector."))
        return errs

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        return super().validate_update(new, old) + self.validate(new)


class _BindingStrategy(GenericStrategy):
    allow_create_on_update = True
    kinds = ["Role", "ClusterRole"]

    def validate(self, obj: Obj) -> list[FieldError]:
        errs = super().validate(obj)
        ref = obj.get("roleRef") or {}
        groups = self.names_of(GROUP)
        if ref.get("apiGroup", "") not in groups:
            group = field.plain(ref.get("apiGroup", ""))  # RBAC's are plain Go strings: %q
            errs.append(field.not_supported("roleRef.apiGroup", group, [GROUP]))
        if ref.get("kind", "") not in self.kinds:
            errs.append(
                field.not_supported("roleRef.kind", field.plain(ref.get("kind", "")), self.kinds)
            )
        name = ref.get("name", "")
        if not name:
            errs.append(field.required("roleRef.name"))
        else:
            errs += [field.invalid("roleRef.name", name, m) for m in is_path_segment_name(name)]
        namespaced = self.resource.namespaced
        for i, subject in enumerate(obj.get("subjects") or []):
            errs += validate_subject(subject, namespaced, f"subjects[{i}]", groups)
        return errs

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        errs = self.validate(new) + super().validate_update(new, old)
        if new.get("roleRef") != old.get("roleRef"):
            errs.append(
                field.invalid("roleRef", role_ref_text(new.get("roleRef")), "cannot change roleRef")
            )
        return errs


@register(GROUP, "RoleBinding")
class RoleBindingStrategy(_BindingStrategy):
    pass


@register(GROUP, "ClusterRoleBinding")
class ClusterRoleBindingStrategy(_BindingStrategy):
    kinds = ["ClusterRole"]
