"""Field selectors: kube's grammar, error texts and each kind's field labels."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from platform_api.selectors import SelectorError
from platform_api.validation.field import go_quote


def _split_unescaped(text: str, sep: str) -> list[str]:
    parts, current, escaped = [], [], False
    for ch in text:
        if escaped:
            current.append("\\" + ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == sep:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    if escaped:
        current.append("\\")
    parts.append("".join(current))
    return parts


def _unescape(value: str) -> str:
    out, escaped = [], False
    for ch in value:
        if escaped:
            if ch not in "\\,=":
                raise SelectorError(f"invalid field selector: invalid escape sequence: \\{ch}")
            out.append(ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch in ",=":
            raise SelectorError(f"invalid field selector: unescaped character in value: {ord(ch)}")
        else:
            out.append(ch)
    if escaped:
        raise SelectorError("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


@dataclass(frozen=True)
class FieldTerm:
    field: str
    value: str
    negate: bool


class FieldSelector:
    def __init__(self, terms: list[FieldTerm]) -> None:
        self.terms = terms

    def empty(self) -> bool:
        return not self.terms

    def matches(self, fields: dict[str, str]) -> bool:
        return all((fields.get(t.field, "") == t.value) != t.negate for t in self.terms)

    def exact(self, name: str) -> str | None:
        for term in self.terms:
            if term.field == name and not term.negate:
                return term.value
        return None


def parse_field_selector(text: str) -> FieldSelector:
    terms = []
    for part in sorted(_split_unescaped(text, ",")):
        if not part:
            continue
        for i in range(len(part)):
            op = next((o for o in ("!=", "==", "=") if part.startswith(o, i)), None)
            if op is not None and (i == 0 or part[i - 1] != "\\"):
                lhs, rhs = part[:i], part[i + len(op) :]
                terms.append(FieldTerm(lhs, _unescape(rhs), op == "!="))
                break
        else:
            raise SelectorError(f"invalid selector: '{text}'; can't understand '{part}'")
    return FieldSelector(terms)


# -- per-kind field labels ----------------------------------------------------------------

FieldGetter = Callable[[dict[str, Any]], str]


def _path(*keys: str) -> FieldGetter:
    def get(obj: dict[str, Any]) -> str:
        value: Any = obj
        for key in keys:
            if not isinstance(value, dict):
                return ""
            value = value.get(key)
        if value is None:
            return ""
        if isinstance(value, bool):
            return "true" if value else "false"
        return str(value)

    return get


def _pod_ips(obj: dict[str, Any]) -> str:
    ips = obj.get("status", {}).get("podIPs") or []
    return ",".join(ip.get("ip", "") for ip in ips)


_INVOLVED = ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")
_EVENT_FIELDS: dict[str, FieldGetter] = {
    **{f"involvedObject.{k}": _path("involvedObject", k) for k in _INVOLVED},
    "reason": _path("reason"),
    "reportingComponent": _path("reportingComponent"),
    # kube: the source's component, else the reporting controller (an Event written
    # through events.k8s.io has no source).
    "source": lambda obj: _path("source", "component")(obj) or _path("reportingComponent")(obj),
    "type": _path("type"),
}
_NEW_EVENT_FIELDS: dict[str, FieldGetter] = {
    **{f"regarding.{k}": _path("regarding", k) for k in _INVOLVED},
    "reason": _path("reason"),
    "reportingController": _path("reportingController"),
    "type": _path("type"),
}
FIELD_LABELS: dict[tuple[str, str], dict[str, FieldGetter]] = {
    ("", "pods"): {
        "spec.nodeName": _path("spec", "nodeName"),
        "spec.restartPolicy": _path("spec", "restartPolicy"),
        "spec.schedulerName": _path("spec", "schedulerName"),
        "spec.serviceAccountName": _path("spec", "serviceAccountName"),
        "spec.hostNetwork": lambda o: "true" if o.get("spec", {}).get("hostNetwork") else "false",
        "status.phase": _path("status", "phase"),
        "status.podIP": _path("status", "podIP"),
        "status.podIPs": _pod_ips,
        "status.nominatedNodeName": _path("status", "nominatedNodeName"),
        # kube's conversion keeps old v1 clients' name for the node: spec.nodeName
        "spec.host": _path("spec", "nodeName"),
    },
    ("", "nodes"): {
        "spec.unschedulable": lambda o: (
            "true" if o.get("spec", {}).get("unschedulable") else "false"
        )
    },
    ("", "secrets"): {"type": _path("type")},
    ("", "namespaces"): {"status.phase": _path("status", "phase")},
    ("", "events"): _EVENT_FIELDS,
    ("events.platform.io", "events"): _NEW_EVENT_FIELDS,
    ("", "replicationcontrollers"): {"status.replicas": _path("status", "replicas")},
    # apps/v1 ReplicaSets take metadata fields only (status.replicas was extensions/v1beta1's).
    ("", "services"): {
        "spec.clusterIP": _path("spec", "clusterIP"),
        "spec.type": _path("spec", "type"),
    },
    ("batch", "jobs"): {"status.successful": _path("status", "succeeded")},
    # A slice with no nodeName is selected by an empty one (kube's toSelectableFields).
    ("resource.platform.io", "resourceslices"): {
        "spec.nodeName": lambda o: str((o.get("spec") or {}).get("nodeName") or ""),
        "spec.driver": _path("spec", "driver"),
    },
}
# Kinds whose field-label conversion takes no metadata.namespace (kube's own lists name
# only metadata.name and their own fields).
WITHOUT_NAMESPACE = frozenset(
    {
        ("", "nodes"),
        ("", "namespaces"),
        ("certificates.platform.io", "certificatesigningrequests"),
        ("certificates.platform.io", "clustertrustbundles"),
        ("certificates.platform.io", "podcertificaterequests"),
        ("resource.platform.io", "resourceslices"),
    }
)


def field_getters(group: str, plural: str) -> dict[str, FieldGetter]:
    getters: dict[str, FieldGetter] = {
        "metadata.name": _path("metadata", "name"),
        "metadata.namespace": _path("metadata", "namespace"),
    }
    getters.update(FIELD_LABELS.get((group, plural), {}))
    if (group, plural) in WITHOUT_NAMESPACE:
        del getters["metadata.namespace"]
    return getters


# Built-in kinds with a field-label conversion of their own in kube (AddFieldLabelConversionFunc);
# other built-in kinds get apimachinery's default one, which words the refusal differently.
CONVERTED_FIELD_LABELS = frozenset(
    {
        ("", "pods"),
        ("", "nodes"),
        ("", "replicationcontrollers"),
        ("", "events"),
        ("", "namespaces"),
        ("", "secrets"),
        ("", "services"),
        ("batch", "jobs"),
        ("certificates.platform.io", "certificatesigningrequests"),
        ("certificates.platform.io", "clustertrustbundles"),
        ("certificates.platform.io", "podcertificaterequests"),
        ("events.platform.io", "events"),
        ("resource.platform.io", "resourceslices"),
    }
)


class FieldLabels(dict[str, FieldGetter]):
    """The getters of a built-in kind with a field-label conversion of its own, and the
    words it refuses another field in (most kinds': "field label not supported: x")."""

    def __init__(self, getters: dict[str, FieldGetter], refusal: str = "") -> None:
        super().__init__(getters)
        self.refusal = refusal or "field label not supported: {field}"

    def refuse(self, name: str) -> str:
        return self.refusal.format(field=name, quoted=go_quote(name))


class MetaFieldLabels(FieldLabels):
    """The getters of a built-in kind that only has kube's default conversion
    (``metadata.name`` and ``metadata.namespace``)."""

    def refuse(self, name: str) -> str:
        return f'{go_quote(name)} is not a known field selector: only "metadata.name", "metadata.namespace"'


# Kinds whose conversion words a refusal its own way ({field}, {quoted} filled in; a
# ResourceSlice's names its group and version, filled in by the strategy).
REFUSALS: dict[tuple[str, str], str] = {
    ("batch", "jobs"): "field label {quoted} not supported for Job",
    ("resource.platform.io", "resourceslices"): (
        "field label not supported for {group_version}, Kind=ResourceSlice: {field}"
    ),
}


def check_field_labels(selector: FieldSelector, getters: dict[str, FieldGetter]) -> None:
    for term in selector.terms:
        if term.field in getters:
            continue
        if isinstance(getters, FieldLabels):
            raise SelectorError(getters.refuse(term.field))
        raise SelectorError(f"field label not supported: {term.field}")
