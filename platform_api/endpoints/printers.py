"""kube's table printers (pkg/printers/internalversion): the columns ``kubectl get`` shows.

This module holds what every printer shares (the Name and Age columns, ages humanized as
``duration.HumanDuration``, label and selector formatting) and the printers of the small
core kinds; the ``printers_*`` modules hold the others.  Descriptions are the fields' API
documentation, as kube's ``SwaggerDoc()``; the server asks every printer for kube's wide
output, so priority-1 cells are always there (``kubectl get -o wide`` shows them).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

from platform_api.endpoints.tables import COLUMNS, Column, Printer

Obj = dict[str, Any]
NAME = Column(
    "Name",
    "string",
    "name",
    "Name must be unique within a namespace. Is required when creating resources, although "
    "some resources may allow a client to request the generation of an appropriate name "
    "automatically. Name is primarily intended for creation idempotence and configuration "
    "definition. Cannot be updated. More info: "
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names",
)
AGE = Column(
    "Age",
    "string",
    "",
    "CreationTimestamp is a timestamp representing the server time when this object was "
    "created. It is not guaranteed to be set in happens-before order across separate "
    "operations. Clients may not set this value. It is represented in RFC3339 form and is in "
    "UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
)


def human_duration(seconds: float) -> str:
    """Go's ``duration.HumanDuration``."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        rest = s % 60
        return f"{minutes}m{rest}s" if rest else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        rest = minutes % 60
        return f"{hours}h{rest}m" if rest else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        rest = hours % 24
        return f"{hours // 24}d{rest}h" if rest else f"{hours // 24}d"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = (hours // 24) % 365
        return f"{hours // 24 // 365}y{days}d" if days else f"{hours // 24 // 365}y"
    return f"{hours // 24 // 365}y"


def timestamp(value: str) -> float:
    """An RFC 3339 time (``metav1.Time`` or ``MicroTime``) as epoch seconds."""
    return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()


clock = time.time  # what ages count from (tests set it)


def age(value: str | None, now: float | None = None) -> str:
    """kube's ``translateTimestampSince``: ``<unknown>`` for a zero time."""
    if not value:
        return "<unknown>"
    return human_duration((now or clock()) - timestamp(value))


def meta(obj: Obj) -> Obj:
    return obj.get("metadata") or {}


def created(obj: Obj) -> str:
    """The Age cell: how long ago the object was created."""
    return age(meta(obj).get("creationTimestamp"))


def column(name: str, description: str, kind: str = "string", priority: int = 0) -> Column:
    return Column(name, kind, "", description, priority)


def register(
    group: str,
    plural: str,
    columns: tuple[Column, ...],
    cells: Callable[[Obj], list[Any]],
    **extra: Any,
) -> None:
    """A kind's printer: the Name column, then ``columns`` (``cells`` gives their values)."""
    COLUMNS[(group, plural)] = Printer(
        (NAME, *columns), lambda obj: [meta(obj).get("name", ""), *cells(obj)], **extra
    )


def format_labels(labels: Obj | None) -> str:
    """``labels.FormatLabels``: ``k=v`` sorted by key, ``<none>`` when empty."""
    return ",".join(f"{k}={v}" for k, v in sorted((labels or {}).items())) or "<none>"


_OPERATORS = {"In": " in ", "NotIn": " notin ", "Exists": "", "DoesNotExist": ""}


def label_selector(selector: Obj | None) -> str:
    """A LabelSelector as ``LabelSelectorAsSelector(s).String()``: the requirements sorted
    by key, values sorted; ``""`` for a nil or empty selector, ``<error>`` if invalid."""
    if not selector:
        return ""
    reqs = [(k, f"{k}={v}") for k, v in (selector.get("matchLabels") or {}).items()]
    for expr in selector.get("matchExpressions") or []:
        key, op = expr.get("key", ""), expr.get("operator", "")
        values = sorted(expr.get("values") or [])
        if op not in _OPERATORS or bool(values) != (op in ("In", "NotIn")):
            return "<error>"
        if op == "DoesNotExist":
            reqs.append((key, f"!{key}"))
        else:
            shown = f"({','.join(values)})" if values else ""
            reqs.append((key, f"{key}{_OPERATORS[op]}{shown}"))
    return ",".join(text for _, text in sorted(reqs, key=lambda r: r[0]))


def format_selector(selector: Obj | None) -> str:
    """``metav1.FormatLabelSelector``: the selector's string, ``<none>`` when it is empty."""
    return label_selector(selector) or "<none>"


def template_containers(template: Obj | None) -> list[str]:
    """A pod template's Containers and Images cells: kube's ``layoutContainerCells``, the
    names and the images, comma-separated."""
    containers = ((template or {}).get("spec") or {}).get("containers") or []
    return [",".join(c.get(key, "") for c in containers) for key in ("name", "image")]


register(
    "",
    "configmaps",
    (
        column(
            "Data",
            "Data contains the configuration data. Each key must consist of alphanumeric "
            "characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the "
            "BinaryData field. The keys stored in Data must not overlap with the keys in the "
            "BinaryData field, this is enforced during validation process.",
        ),
        AGE,
    ),
    lambda o: [len(o.get("data") or {}) + len(o.get("binaryData") or {}), created(o)],
)
register(
    "",
    "secrets",
    (
        column(
            "Type",
            "Used to facilitate programmatic handling of secret data. More info: "
            "https://kubernetes.io/docs/concepts/configuration/secret/#secret-types",
        ),
        column(
            "Data",
            "Data contains the secret data. Each key must consist of alphanumeric characters, "
            "'-', '_' or '.'. The serialized form of the secret data is a base64 encoded "
            "string, representing the arbitrary (possibly non-string) data value here. "
            "Described in https://tools.ietf.org/html/rfc4648#section-4",
        ),
        AGE,
    ),
    lambda o: [o.get("type", ""), len(o.get("data") or {}), created(o)],
)
register(
    "",
    "namespaces",
    (column("Status", "The status of the namespace"), AGE),
    lambda o: [(o.get("status") or {}).get("phase", ""), created(o)],
)
# kube's printServiceAccount: no count of secrets any more
register("", "serviceaccounts", (AGE,), lambda o: [created(o)])
register(
    "coordination.platform.io",
    "leases",
    (
        column(
            "Holder",
            "holderIdentity contains the identity of the holder of a current lease. If "
            "Coordinated Leader Election is used, the holder identity must be equal to the "
            "elected LeaseCandidate.metadata.name field.",
        ),
        AGE,
    ),
    lambda o: [(o.get("spec") or {}).get("holderIdentity") or "", created(o)],
)


def _binding_cells(obj: Obj) -> list[Any]:
    """The role, then (wide) the users, groups and service accounts: rbac.SubjectsStrings."""
    ref = obj.get("roleRef") or {}
    kinds: dict[str, list[str]] = {"User": [], "Group": [], "ServiceAccount": []}
    for subject in obj.get("subjects") or []:
        kind, name = subject.get("kind", ""), subject.get("name", "")
        if kind == "ServiceAccount":
            name = f"{subject.get('namespace', '')}/{name}"
        if kind in kinds:
            kinds[kind].append(name)
    return [
        f"{ref.get('kind', '')}/{ref.get('name', '')}",
        created(obj),
        *(", ".join(names) for names in kinds.values()),
    ]


def _binding_columns(role: str, kind: str) -> tuple[Column, ...]:
    return (
        column("Role", role),
        AGE,
        column("Users", f"Users in the {kind}", priority=1),
        column("Groups", f"Groups in the {kind}", priority=1),
        column("ServiceAccounts", f"ServiceAccounts in the {kind}", priority=1),
    )


_RESOLVED = "If the RoleRef cannot be resolved, the Authorizer must return an error."
register(
    "rbac.authorization.platform.io",
    "rolebindings",
    _binding_columns(
        "RoleRef can reference a Role in the current namespace or a ClusterRole in the "
        f"global namespace. {_RESOLVED}",
        "roleBinding",
    ),
    _binding_cells,
)
register(
    "rbac.authorization.platform.io",
    "clusterrolebindings",
    _binding_columns(
        f"RoleRef can only reference a ClusterRole in the global namespace. {_RESOLVED}",
        "clusterRoleBinding",
    ),
    _binding_cells,
)
