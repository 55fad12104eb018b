"""Table columns of the workload kinds (kube's printDeployment, printReplicaSet,
printReplicationController, printStatefulSet, printDaemonSet, printControllerRevision and
printPodTemplate): what ``kubectl get deploy,rs,rc,sts,ds,controllerrevisions,podtemplates``
shows."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from platform_api.endpoints.printers import (
    AGE,
    column,
    created,
    format_labels,
    format_selector,
    label_selector,
    meta,
    register,
    template_containers,
)
from platform_api.endpoints.tables import Column

Obj = dict[str, Any]
APPS = "apps"
CONTAINERS = column("Containers", "Names of each container in the template.", priority=1)
IMAGES = column("Images", "Images referenced by each container in the template.", priority=1)
_READY = column("Ready", "Number of the pod with ready state")
_LABEL_SELECTORS = (
    "More info: "
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors"
)
_RC_DOCS = (
    "More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller"
    "#what-is-a-replicationcontroller"
)
_RS_DOCS = "More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicaset"
_DS_DOCS = "More info: https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/"


def _spec(obj: Obj) -> Obj:
    return obj.get("spec") or {}


def _status(obj: Obj) -> Obj:
    return obj.get("status") or {}


def _deployment_cells(obj: Obj) -> list[Any]:
    spec, status = _spec(obj), _status(obj)
    selector = label_selector(spec.get("selector"))
    return [
        f"{status.get('readyReplicas', 0)}/{spec.get('replicas', 0)}",
        status.get("updatedReplicas", 0),
        status.get("availableReplicas", 0),
        created(obj),
        *template_containers(spec.get("template")),
        "<invalid>" if selector == "<error>" else selector,
    ]


register(
    APPS,
    "deployments",
    (
        _READY,
        column(
            "Up-to-date",
            "Total number of non-terminating pods targeted by this deployment that have the "
            "desired template spec.",
        ),
        column(
            "Available",
            "Total number of available non-terminating pods (ready for at least "
            "minReadySeconds) targeted by this deployment.",
        ),
        AGE,
        CONTAINERS,
        IMAGES,
        column(
            "Selector",
            "Label selector for pods. Existing ReplicaSets whose pods are selected by this "
            "will be the ones affected by this deployment. It must match the pod template's "
            "labels.",
            priority=1,
        ),
    ),
    _deployment_cells,
)


def _replica_columns(desired: str, current: str, ready: str, selector: str) -> tuple[Column, ...]:
    return (
        column("Desired", desired, "integer"),
        column("Current", current, "integer"),
        column("Ready", ready, "integer"),
        AGE,
        CONTAINERS,
        IMAGES,
        column("Selector", selector, priority=1),
    )


def _replica_cells(obj: Obj, selector: Callable[[Obj | None], str]) -> list[Any]:
    """Desired, current and ready replicas; ``selector`` formats the selector (a
    LabelSelector's, a ReplicationController's map of labels)."""
    spec, status = _spec(obj), _status(obj)
    return [
        spec.get("replicas", 0),
        status.get("replicas", 0),
        status.get("readyReplicas", 0),
        created(obj),
        *template_containers(spec.get("template")),
        selector(spec.get("selector")),
    ]


register(
    APPS,
    "replicasets",
    _replica_columns(
        "Replicas is the number of desired pods. This is a pointer to distinguish between "
        f"explicit zero and unspecified. Defaults to 1. {_RS_DOCS}",
        f"Replicas is the most recently observed number of non-terminating pods. {_RS_DOCS}",
        "The number of non-terminating pods targeted by this ReplicaSet with a Ready Condition.",
        "Selector is a label query over pods that should match the replica count. Label keys "
        "and values that must match in order to be controlled by this replica set. It must "
        f"match the pod template's labels. {_LABEL_SELECTORS}",
    ),
    functools.partial(_replica_cells, selector=format_selector),
)
register(
    "",
    "replicationcontrollers",
    _replica_columns(
        "Replicas is the number of desired replicas. This is a pointer to distinguish between "
        f"explicit zero and unspecified. Defaults to 1. {_RC_DOCS}",
        f"Replicas is the most recently observed number of replicas. {_RC_DOCS}",
        "The number of ready replicas for this replication controller.",
        "Selector is a label query over pods that should match the Replicas count. If "
        "Selector is empty, it is defaulted to the labels present on the Pod template. Label "
        "keys and values that must match in order to be controlled by this replication "
        "controller, if empty defaulted to labels on Pod template. "
        f"{_LABEL_SELECTORS}",
    ),
    functools.partial(_replica_cells, selector=format_labels),
)
register(
    APPS,
    "statefulsets",
    (_READY, AGE, CONTAINERS, IMAGES),
    lambda o: [
        f"{_status(o).get('readyReplicas', 0)}/{_spec(o).get('replicas', 0)}",
        created(o),
        *template_containers(_spec(o).get("template")),
    ],
)


def _daemon_set_cells(obj: Obj) -> list[Any]:
    spec, status = _spec(obj), _status(obj)
    template = spec.get("template") or {}
    return [
        status.get("desiredNumberScheduled", 0),
        status.get("currentNumberScheduled", 0),
        status.get("numberReady", 0),
        status.get("updatedNumberScheduled", 0),
        status.get("numberAvailable", 0),
        format_labels((template.get("spec") or {}).get("nodeSelector")),
        created(obj),
        *template_containers(template),
        format_selector(spec.get("selector")),
    ]


_NODES_RUNNING = "nodes that should be running the daemon pod and have one or more of the daemon"
register(
    APPS,
    "daemonsets",
    (
        column(
            "Desired",
            "The total number of nodes that should be running the daemon pod (including nodes "
            f"correctly running the daemon pod). {_DS_DOCS}",
            "integer",
        ),
        column(
            "Current",
            "The number of nodes that are running at least 1 daemon pod and are supposed to "
            f"run the daemon pod. {_DS_DOCS}",
            "integer",
        ),
        column(
            "Ready",
            f"numberReady is the number of {_NODES_RUNNING} pod running with a Ready Condition.",
            "integer",
        ),
        column(
            "Up-to-date", "The total number of nodes that are running updated daemon pod", "integer"
        ),
        column(
            "Available",
            f"The number of {_NODES_RUNNING} pod running and available (ready for at least "
            "spec.minReadySeconds)",
            "integer",
        ),
        column(
            "Node Selector",
            "NodeSelector is a selector which must be true for the pod to fit on a node. "
            "Selector which must match a node's labels for the pod to be scheduled on that "
            "node. More info: https://kubernetes.io/docs/concepts/configuration/assign-pod-node/",
        ),
        AGE,
        CONTAINERS,
        IMAGES,
        column(
            "Selector",
            "A label query over pods that are managed by the daemon set. Must match in order to "
            f"be controlled. It must match the pod template's labels. {_LABEL_SELECTORS}",
            priority=1,
        ),
    ),
    _daemon_set_cells,
)


def _controller_name(obj: Obj) -> str:
    """The controlling owner as ``kind.group/name`` (lower-cased kind and group), as kube's
    ``formatResourceName`` writes it; ``<none>`` without a controller."""
    for ref in meta(obj).get("ownerReferences") or []:
        if not ref.get("controller"):
            continue
        api_version = ref.get("apiVersion") or ""
        group = api_version.split("/", 1)[0] if "/" in api_version else ""
        kind = ref.get("kind") or ""
        if not group and not kind:
            return str(ref.get("name", ""))
        kind_group = f"{kind}.{group}" if group else kind
        return f"{kind_group.lower()}/{ref.get('name', '')}"
    return "<none>"


register(
    APPS,
    "controllerrevisions",
    (
        column("Controller", "Controller of the object"),
        column("Revision", "Revision indicates the revision of the state represented by Data."),
        AGE,
    ),
    lambda o: [_controller_name(o), o.get("revision", 0), created(o)],
)
# kube's printPodTemplate: no age column, the containers are not wide-only.
register(
    "",
    "podtemplates",
    (
        column("Containers", CONTAINERS.description),
        column("Images", IMAGES.description),
        column("Pod Labels", "The labels for the pod template."),
    ),
    lambda o: [
        *template_containers(o.get("template")),
        format_labels(((o.get("template") or {}).get("metadata") or {}).get("labels")),
    ],
)
