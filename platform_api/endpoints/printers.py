"""kube's table printers for the common kinds: the columns ``kubectl get`` shows.

Cells follow kube's printers (pkg/printers/internalversion): ages humanized as
``duration.HumanDuration``, ``<none>`` for empty values, priority 1 for ``-o wide``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

from platform_api.endpoints.tables import COLUMNS, Column, Printer

Obj = dict[str, Any]
NAME = Column("Name", "string", "name", "Name must be unique within a namespace.")
AGE = Column(
    "Age",
    "string",
    "",
    "CreationTimestamp is a timestamp representing the server time when this object was created.",
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


def age(timestamp: str | None, now: float | None = None) -> str:
    if not timestamp:
        return "<unknown>"
    created = datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp()
    return human_duration((now or time.time()) - created)


def _meta(obj: Obj) -> Obj:
    return obj.get("metadata") or {}


def _age(obj: Obj) -> str:
    return age(_meta(obj).get("creationTimestamp"))


def _none(value: Any) -> Any:
    return value if value not in (None, "", []) else "<none>"


def _register(
    group: str, plural: str, columns: list[Column], cells: Callable[[Obj], list[Any]]
) -> None:
    COLUMNS[(group, plural)] = Printer(
        (NAME, *columns), lambda obj: [_meta(obj).get("name", ""), *cells(obj)]
    )


def _col(name: str, kind: str = "string", priority: int = 0) -> Column:
    return Column(name, kind, "", "", priority)


def _pod_cells(pod: Obj) -> list[Any]:
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    containers = spec.get("containers") or []
    statuses = status.get("containerStatuses") or []
    ready = sum(1 for s in statuses if s.get("ready"))
    restarts = sum(int(s.get("restartCount", 0)) for s in statuses)
    reason = status.get("reason") or status.get("phase") or "Pending"
    for s in statuses:
        waiting = (s.get("state") or {}).get("waiting") or {}
        if waiting.get("reason"):
            reason = waiting["reason"]
    if _meta(pod).get("deletionTimestamp"):
        reason = "Terminating"
    ips = ",".join(ip.get("ip", "") for ip in status.get("podIPs") or []) or status.get("podIP")
    return [
        f"{ready}/{len(containers)}",
        reason,
        restarts,
        _age(pod),
        _none(ips),
        _none(spec.get("nodeName")),
        _none(status.get("nominatedNodeName")),
        "<none>",
    ]


def _selector(selector: Obj | None) -> str:
    labels = (selector or {}).get("matchLabels") or {}
    parts = [f"{k}={v}" for k, v in sorted(labels.items())]
    for expr in (selector or {}).get("matchExpressions") or []:
        values = ",".join(expr.get("values") or [])
        parts.append(f"{expr.get('key')} {expr.get('operator', '').lower()} ({values})")
    return ",".join(parts) or "<none>"


def _workload_containers(obj: Obj) -> tuple[str, str]:
    containers = (((obj.get("spec") or {}).get("template") or {}).get("spec") or {}).get(
        "containers"
    ) or []
    return ",".join(c.get("name", "") for c in containers), ",".join(
        c.get("image", "") for c in containers
    )


def _deployment_cells(obj: Obj) -> list[Any]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    names, images = _workload_containers(obj)
    return [
        f"{status.get('readyReplicas', 0)}/{spec.get('replicas', 1)}",
        status.get("updatedReplicas", 0),
        status.get("availableReplicas", 0),
        _age(obj),
        names,
        images,
        _selector(spec.get("selector")),
    ]


def _replica_cells(obj: Obj) -> list[Any]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    names, images = _workload_containers(obj)
    return [
        spec.get("replicas", 1),
        status.get("replicas", 0),
        status.get("readyReplicas", 0),
        _age(obj),
        names,
        images,
        _selector(spec.get("selector")),
    ]


def _service_cells(obj: Obj) -> list[Any]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    ports = []
    for port in spec.get("ports") or []:
        text = f"{port.get('port')}"
        if port.get("nodePort"):
            text += f":{port['nodePort']}"
        ports.append(f"{text}/{port.get('protocol', 'TCP')}")
    ingress = ((status.get("loadBalancer") or {}).get("ingress")) or []
    external = ",".join(i.get("ip") or i.get("hostname", "") for i in ingress) or ",".join(
        spec.get("externalIPs") or []
    )
    if not external:
        external = "<pending>" if spec.get("type") == "LoadBalancer" else "<none>"
    selector = spec.get("selector") or {}
    return [
        spec.get("type", "ClusterIP"),
        _none(spec.get("clusterIP")),
        external,
        ",".join(ports) or "<none>",
        _age(obj),
        ",".join(f"{k}={v}" for k, v in sorted(selector.items())) or "<none>",
    ]


def _job_cells(obj: Obj) -> list[Any]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    conditions = {c.get("type"): c.get("status") for c in status.get("conditions") or []}
    state = (
        "Complete"
        if conditions.get("Complete") == "True"
        else "Failed"
        if conditions.get("Failed") == "True"
        else "Running"
    )
    completions = spec.get("completions")
    shown = f"{status.get('succeeded', 0)}/{completions if completions is not None else 1}"
    duration = ""
    if status.get("startTime") and status.get("completionTime"):
        start = datetime.fromisoformat(status["startTime"].replace("Z", "+00:00"))
        end = datetime.fromisoformat(status["completionTime"].replace("Z", "+00:00"))
        duration = human_duration((end - start).total_seconds())
    elif status.get("startTime"):
        duration = age(status["startTime"])
    return [state, shown, duration, _age(obj)]


def _events_cells(obj: Obj) -> list[Any]:
    involved = obj.get("involvedObject") or obj.get("regarding") or {}
    last = obj.get("lastTimestamp") or obj.get("eventTime") or _meta(obj).get("creationTimestamp")
    target = f"{(involved.get('kind') or '').lower()}/{involved.get('name', '')}"
    return [
        age(last),
        obj.get("type", ""),
        obj.get("reason", ""),
        target,
        (obj.get("message") or obj.get("note") or "").strip(),
    ]


_register(
    "",
    "pods",
    [
        _col("Ready"),
        _col("Status"),
        _col("Restarts", "string"),
        AGE,
        _col("IP", priority=1),
        _col("Node", priority=1),
        _col("Nominated Node", priority=1),
        _col("Readiness Gates", priority=1),
    ],
    _pod_cells,
)
_register(
    "apps",
    "deployments",
    [
        _col("Ready"),
        _col("Up-to-date", "integer"),
        _col("Available", "integer"),
        AGE,
        _col("Containers", priority=1),
        _col("Images", priority=1),
        _col("Selector", priority=1),
    ],
    _deployment_cells,
)


def _pod_template_cells(obj: Obj) -> list[Any]:
    template = obj.get("template") or {}
    names, images = _workload_containers({"spec": {"template": template}})
    labels = (template.get("metadata") or {}).get("labels") or {}
    return [names, images, ",".join(f"{k}={v}" for k, v in sorted(labels.items())) or "<none>"]


# kube's printPodTemplate: no age column.
_register(
    "",
    "podtemplates",
    [_col("Containers"), _col("Images"), _col("Pod Labels")],
    _pod_template_cells,
)
for _group, _plural in (("apps", "replicasets"), ("", "replicationcontrollers")):
    _register(
        _group,
        _plural,
        [
            _col("Desired", "integer"),
            _col("Current", "integer"),
            _col("Ready", "integer"),
            AGE,
            _col("Containers", priority=1),
            _col("Images", priority=1),
            _col("Selector", priority=1),
        ],
        _replica_cells,
    )
_register(
    "apps",
    "statefulsets",
    [_col("Ready"), AGE],
    lambda o: [
        f"{(o.get('status') or {}).get('readyReplicas', 0)}/{(o.get('spec') or {}).get('replicas', 1)}",
        _age(o),
    ],
)
_register(
    "",
    "services",
    [
        _col("Type"),
        _col("Cluster-IP"),
        _col("External-IP"),
        _col("Port(s)"),
        AGE,
        _col("Selector", priority=1),
    ],
    _service_cells,
)
_register(
    "",
    "configmaps",
    [_col("Data", "integer"), AGE],
    lambda o: [len(o.get("data") or {}) + len(o.get("binaryData") or {}), _age(o)],
)
_register(
    "",
    "secrets",
    [_col("Type"), _col("Data", "integer"), AGE],
    lambda o: [o.get("type", ""), len(o.get("data") or {}), _age(o)],
)
_register(
    "",
    "namespaces",
    [_col("Status"), AGE],
    lambda o: [(o.get("status") or {}).get("phase", "Active"), _age(o)],
)
_register(
    "",
    "serviceaccounts",
    [_col("Secrets", "integer"), AGE],
    lambda o: [len(o.get("secrets") or []), _age(o)],
)
_register(
    "",
    "nodes",
    [_col("Status"), _col("Roles"), AGE, _col("Version")],
    lambda o: [
        "Ready"
        if any(
            c.get("type") == "Ready" and c.get("status") == "True"
            for c in (o.get("status") or {}).get("conditions") or []
        )
        else "NotReady",
        ",".join(
            sorted(
                k.split("/", 1)[1]
                for k in _meta(o).get("labels") or {}
                if k.startswith("node-role.platform.io/")
            )
        )
        or "<none>",
        _age(o),
        ((o.get("status") or {}).get("nodeInfo") or {}).get("kubeletVersion", ""),
    ],
)
_register("batch", "jobs", [_col("Status"), _col("Completions"), _col("Duration"), AGE], _job_cells)
_register(
    "batch",
    "cronjobs",
    [
        _col("Schedule"),
        _col("Timezone"),
        _col("Suspend", "boolean"),
        _col("Active", "integer"),
        _col("Last Schedule"),
        AGE,
    ],
    lambda o: [
        (o.get("spec") or {}).get("schedule", ""),
        _none((o.get("spec") or {}).get("timeZone")),
        bool((o.get("spec") or {}).get("suspend")),
        len((o.get("status") or {}).get("active") or []),
        age((o.get("status") or {}).get("lastScheduleTime"))
        if (o.get("status") or {}).get("lastScheduleTime")
        else "<none>",
        _age(o),
    ],
)
_register(
    "coordination.platform.io",
    "leases",
    [_col("Holder"), AGE],
    lambda o: [(o.get("spec") or {}).get("holderIdentity", ""), _age(o)],
)
for _plural in ("rolebindings", "clusterrolebindings"):
    _register(
        "rbac.authorization.platform.io",
        _plural,
        [_col("Role"), AGE],
        lambda o: [
            f"{(o.get('roleRef') or {}).get('kind', '')}/{(o.get('roleRef') or {}).get('name', '')}",
            _age(o),
        ],
    )
EVENT_COLUMNS = [_col("Last Seen"), _col("Type"), _col("Reason"), _col("Object"), _col("Message")]
COLUMNS[("", "events")] = Printer(tuple(EVENT_COLUMNS), _events_cells)
COLUMNS[("events.platform.io", "events")] = Printer(tuple(EVENT_COLUMNS), _events_cells)
