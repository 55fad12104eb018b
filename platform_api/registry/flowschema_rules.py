"""A FlowSchema's policy rules: who (subjects) and what (resource and non-resource rules)
each rule matches, validated as kube's ``flowcontrol/validation`` with its messages."""

from __future__ import annotations

from typing import Any

from platform_api.registry.strategy import Obj
from platform_api.validation import field
from platform_api.validation.field import FieldError
from platform_api.validation.names import is_dns1123_label, is_dns1123_subdomain

VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "proxy", "update", "watch"]
_NS_INTRO = "each member of this list must be '*' or a DNS-1123 label; "


def _rule_list(values: Any, path: str, what: str, errs: list[FieldError]) -> None:
    if len(values) > 1 and "*" in values:
        errs.append(
            field.invalid(path, values, f"if '*' is present, must not specify other {what}")
        )


def _verbs(rule: Obj, path: str, errs: list[FieldError]) -> None:
    verbs = rule.get("verbs") or []
    if not verbs:
        errs.append(field.required(f"{path}.verbs", "verbs must contain at least one value"))
    elif "*" in verbs:
        _rule_list(verbs, f"{path}.verbs", "verbs", errs)
    elif not set(verbs) <= set(VERBS):
        errs.append(field.not_supported(f"{path}.verbs", verbs, VERBS))


def _resource_rule(rule: Obj, path: str, errs: list[FieldError]) -> None:
    _verbs(rule, path, errs)
    groups, resources = rule.get("apiGroups") or [], rule.get("resources") or []
    if not groups:
        errs.append(
            field.required(f"{path}.apiGroups", "resource rules must supply at least one api group")
        )
    _rule_list(groups, f"{path}.apiGroups", "api groups", errs)
    if not resources:
        errs.append(
            field.required(f"{path}.resources", "resource rules must supply at least one resource")
        )
    _rule_list(resources, f"{path}.resources", "resources", errs)
    namespaces = rule.get("namespaces") or []
    if not namespaces and not rule.get("clusterScope"):
        errs.append(
            field.required(
                f"{path}.namespaces",
                "resource rules that are not cluster scoped must supply at least one namespace",
            )
        )
    elif "*" in namespaces:
        _rule_list(namespaces, f"{path}.namespaces", "namespaces", errs)
    else:
        for i, ns in enumerate(namespaces):
            for problem in is_dns1123_label(ns):  # kube's ValidateNamespaceName
                errs.append(field.invalid(f"{path}.namespaces[{i}]", ns, _NS_INTRO + problem))


def _non_resource_rule(rule: Obj, path: str, errs: list[FieldError]) -> None:
    _verbs(rule, path, errs)
    urls = rule.get("nonResourceURLs") or []
    if not urls:
        errs.append(
            field.required(
                f"{path}.nonResourceURLs", "nonResourceURLs must contain at least one value"
            )
        )
    elif "*" in urls:
        _rule_list(urls, f"{path}.nonResourceURLs", "non-resource URLs", errs)
    else:
        for i, url in enumerate(urls):
            problem = _url_path_problem(url)
            if problem:
                errs.append(field.invalid(f"{path}.nonResourceURLs[{i}]", url, problem))


def _url_path_problem(url: str) -> str:
    """kube's ValidateNonResourceURLPath: the first thing wrong with a URL path ("" for
    none); a ``*`` matches a suffix only (``/apis/*``)."""
    if not url:
        return "must not be empty"
    if url == "/":
        return ""
    if not url.startswith("/"):
        return "must start with slash"
    if " " in url:
        return "must not contain white-space"
    if "//" in url:
        return "must not contain double slash"
    stars = url.count("*")
    if stars > 1 or (stars == 1 and not url.endswith("/*")):
        return "wildcard can only do suffix matching"
    return ""


_KIND_FIELDS = {"ServiceAccount": "serviceAccount", "User": "user", "Group": "group"}


def _service_account(subject: Obj, path: str) -> list[FieldError]:
    """kube's ValidateServiceAccountSubject: a name (``*`` for all) and a namespace, each
    checked whether or not the other is there."""
    name, namespace = subject.get("name") or "", subject.get("namespace") or ""
    errs: list[FieldError] = []
    if not name:
        errs.append(field.required(f"{path}.name"))
    elif name != "*":
        errs += field.checked(f"{path}.name", name, is_dns1123_subdomain)
    if namespace:
        errs += field.checked(f"{path}.namespace", namespace, is_dns1123_label)
    else:
        errs.append(
            field.required(f"{path}.namespace", "must specify namespace for service account")
        )
    return errs


def _subject(subject: Obj, path: str, errs: list[FieldError]) -> None:
    kind = subject.get("kind")
    if kind not in _KIND_FIELDS:
        errs.append(field.not_supported(f"{path}.kind", kind or "", sorted(_KIND_FIELDS)))
        return
    own = _KIND_FIELDS[kind]
    body = subject.get(own)
    if body is None:
        errs.append(
            field.required(f"{path}.{own}", f"{own} is required when subject kind is '{kind}'")
        )
    elif kind == "ServiceAccount":
        errs += _service_account(body, f"{path}.{own}")
    elif not body.get("name"):
        errs.append(field.required(f"{path}.{own}.name"))
    for other_kind, other in _KIND_FIELDS.items():
        if other != own and subject.get(other) is not None:
            errs.append(
                field.forbidden(
                    f"{path}.{other}",
                    f"{other} is forbidden when subject kind is not '{other_kind}'",
                )
            )


def validate_policy_rule(rule: Obj, path: str, errs: list[FieldError]) -> None:
    """kube's ValidateFlowSchemaPolicyRulesWithSubjects: the subjects, then the rules."""
    subjects = rule.get("subjects") or []
    if not subjects:
        errs.append(field.required(f"{path}.subjects", "subjects must contain at least one value"))
    for i, subject in enumerate(subjects):
        _subject(subject, f"{path}.subjects[{i}]", errs)
    resources, others = rule.get("resourceRules") or [], rule.get("nonResourceRules") or []
    if not resources and not others:
        errs.append(
            field.required(
                path, "at least one of resourceRules and nonResourceRules has to be non-empty"
            )
        )
    for i, r in enumerate(resources):
        _resource_rule(r, f"{path}.resourceRules[{i}]", errs)
    for i, r in enumerate(others):
        _non_resource_rule(r, f"{path}.nonResourceRules[{i}]", errs)
