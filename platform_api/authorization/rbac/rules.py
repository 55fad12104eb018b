"""PolicyRule semantics: does a rule allow a request, do some rules cover others.

Rules are the JSON form of ``rbac.authorization.platform.io/v1`` PolicyRules.  The
matching follows kube's ``rbac.RuleAllows`` and the covering check (escalation
prevention, default-role reconciliation) its ``validation.Covers``: rules only add
rights, ``*`` is a wildcard for verbs, groups and resources, ``*/sub`` matches any
resource's sub-resource, and a trailing ``*`` on a non-resource URL is a prefix.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from platform_api.authorization.interface import Attributes

Rule = dict[str, Any]
ALL = "*"


def _has(items: Sequence[str] | None, value: str) -> bool:
    return bool(items) and value in items  # type: ignore[operator]


def verb_matches(rule: Rule, verb: str) -> bool:
    verbs = rule.get("verbs") or ()
    return ALL in verbs or verb in verbs


def group_matches(rule: Rule, group: str) -> bool:
    groups = rule.get("apiGroups") or ()
    return ALL in groups or group in groups


def resource_matches(rule: Rule, combined: str, subresource: str) -> bool:
    for resource in rule.get("resources") or ():
        if resource in (ALL, combined):
            return True
        if subresource and resource == "*/" + subresource:
            return True
    return False


def name_matches(rule: Rule, name: str) -> bool:
    names = rule.get("resourceNames") or ()
    return not names or name in names


def url_matches(rule: Rule, path: str) -> bool:
    for url in rule.get("nonResourceURLs") or ():
        if url in (ALL, path):
            return True
        if url.endswith("*") and path.startswith(url[:-1]):
            return True
    return False


def allows(attrs: Attributes, rule: Rule) -> bool:
    """kube's ``RuleAllows``: one rule against a request's attributes."""
    if not verb_matches(rule, attrs.verb):
        return False
    if not attrs.resource_request:
        return url_matches(rule, attrs.path)
    combined = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
    return (
        group_matches(rule, attrs.api_group)
        and resource_matches(rule, combined, attrs.subresource)
        and name_matches(rule, attrs.name)
    )


# -- covering ---------------------------------------------------------------------------


def breakdown(rule: Rule) -> list[Rule]:
    """One rule per (group, resource, verb[, name]) and per (URL, verb)."""
    verbs = rule.get("verbs") or []
    names = rule.get("resourceNames") or []
    out: list[Rule] = []
    for group in rule.get("apiGroups") or []:
        for resource in rule.get("resources") or []:
            for verb in verbs:
                base = {"apiGroups": [group], "resources": [resource], "verbs": [verb]}
                if names:
                    out += [{**base, "resourceNames": [n]} for n in names]
                else:
                    out.append(base)
    for url in rule.get("nonResourceURLs") or []:
        out += [{"nonResourceURLs": [url], "verbs": [verb]} for verb in verbs]
    return out


def _all_in(owner: Sequence[str], wanted: Sequence[str]) -> bool:
    return all(w in owner for w in wanted)


def _resources_covered(owner: Sequence[str], wanted: Sequence[str]) -> bool:
    if ALL in owner or _all_in(owner, wanted):
        return True
    for path in wanted:
        if path in owner:
            continue
        if "/" not in path or "*/" + path.split("/", 1)[1] not in owner:
            return False
    return True


def _url_covered(owner: str, wanted: str) -> bool:
    return owner == wanted or (owner.endswith("*") and wanted.startswith(owner.rstrip("*")))


def _rule_covers(owner: Rule, sub: Rule) -> bool:
    owner_verbs = owner.get("verbs") or []
    owner_groups = owner.get("apiGroups") or []
    owner_names = owner.get("resourceNames") or []
    sub_names = sub.get("resourceNames") or []
    owner_urls = owner.get("nonResourceURLs") or []
    return (
        (ALL in owner_verbs or _all_in(owner_verbs, sub.get("verbs") or []))
        and (ALL in owner_groups or _all_in(owner_groups, sub.get("apiGroups") or []))
        and _resources_covered(owner.get("resources") or [], sub.get("resources") or [])
        and all(
            any(_url_covered(o, w) for o in owner_urls) for w in sub.get("nonResourceURLs") or []
        )
        and (not owner_names or (bool(sub_names) and _all_in(owner_names, sub_names)))
    )


def covers(owner: Iterable[Rule], servant: Iterable[Rule]) -> tuple[bool, list[Rule]]:
    """Whether ``owner`` grants everything ``servant`` does, and the sub-rules it lacks."""
    owned = list(owner)
    missing = [
        sub
        for rule in servant
        for sub in breakdown(rule)
        if not any(_rule_covers(o, sub) for o in owned)
    ]
    return not missing, missing


def compact(rules: list[Rule]) -> list[Rule]:
    """Merge simple one-group, one-resource rules that differ only in verbs."""
    merged: dict[tuple[str, str], Rule] = {}
    out: list[Rule] = []
    for rule in rules:
        groups, resources = rule.get("apiGroups") or [], rule.get("resources") or []
        simple = (
            len(groups) == 1
            and len(resources) == 1
            and not rule.get("resourceNames")
            and not rule.get("nonResourceURLs")
        )
        if not simple:
            out.append(rule)
            continue
        key = (groups[0], resources[0])
        if key in merged:
            merged[key]["verbs"] += [
                v for v in rule.get("verbs") or [] if v not in merged[key]["verbs"]
            ]
        else:
            merged[key] = {
                "apiGroups": [key[0]],
                "resources": [key[1]],
                "verbs": list(rule["verbs"]),
            }
            out.append(merged[key])
    return out


def _go_quoted(items: Sequence[str]) -> str:
    """Go's ``%q`` of a string slice: ``["a" "b"]``."""
    return (
        "[" + " ".join('"' + i.replace("\\", "\\\\").replace('"', '\\"') + '"' for i in items) + "]"
    )


def compact_string(rule: Rule) -> str:
    """kube's ``CompactString``, as escalation errors list missing rights."""
    parts = []
    for field, label in (
        ("apiGroups", "APIGroups"),
        ("resources", "Resources"),
        ("nonResourceURLs", "NonResourceURLs"),
        ("resourceNames", "ResourceNames"),
        ("verbs", "Verbs"),
    ):
        if rule.get(field):
            parts.append(f"{label}:{_go_quoted(rule[field])}")
    return "{" + ", ".join(parts) + "}"
