"""Table columns of Pods, Nodes and Events (kube's printPod, printNode and printEvent): what
``kubectl get pods,nodes,events`` shows."""

from __future__ import annotations

import dataclasses
from typing import Any

from platform_api.endpoints.printers import AGE, NAME, age, column, created, meta, register
from platform_api.endpoints.tables import COLUMNS, Printer

Obj = dict[str, Any]
_TERMINAL = ("Succeeded", "Failed")
_COMPLETED = {
    "Succeeded": "The pod has completed successfully.",
    "Failed": "The pod failed.",
}


def _restartable(container: Obj | None) -> bool:
    """A sidecar: an init container that restarts Always."""
    return (container or {}).get("restartPolicy") == "Always"


def _condition_true(status: Obj, kind: str) -> bool:
    return any(
        c.get("type") == kind and c.get("status") == "True" for c in status.get("conditions") or []
    )


def _terminated_reason(terminated: Obj, prefix: str = "") -> str:
    if terminated.get("reason"):
        return prefix + terminated["reason"]
    if terminated.get("signal"):
        return f"{prefix}Signal:{terminated['signal']}"
    return f"{prefix}ExitCode:{terminated.get('exitCode', 0)}"


def _restarts(container: Obj) -> tuple[int, str]:
    """A container's restart count and when it last terminated (RFC 3339 times in UTC,
    which sort as they follow one another)."""
    last = (container.get("lastState") or {}).get("terminated") or {}
    return int(container.get("restartCount", 0)), last.get("finishedAt") or ""


class _PodState:
    """kube's printPod walk over the container statuses: the ready count, the restarts and
    when the last one was, and the reason shown as the pod's status."""

    def __init__(self, pod: Obj) -> None:
        spec, status = pod.get("spec") or {}, pod.get("status") or {}
        self.spec, self.status = spec, status
        inits = spec.get("initContainers") or []
        self.inits = {c.get("name"): c for c in inits}
        self.total = len(spec.get("containers") or []) + sum(map(_restartable, inits))
        self.ready, self.restarts, self.last_restart = 0, 0, ""
        self.reason = status.get("reason") or status.get("phase") or ""
        conditions = status.get("conditions") or []
        if any(
            c.get("reason") == "SchedulingGated"
            for c in conditions
            if c.get("type") == "PodScheduled"
        ):
            self.reason = "SchedulingGated"
        # sidecars' restarts count even once the pod is initialized
        self.sidecar_restarts, self.sidecar_last = 0, ""
        if not self._initializing() or _condition_true(status, "Initialized"):
            self._containers()

    def _initializing(self) -> bool:
        for i, container in enumerate(self.status.get("initContainerStatuses") or []):
            count, finished = _restarts(container)
            self.restarts += count
            self.last_restart = max(self.last_restart, finished)
            sidecar = _restartable(self.inits.get(container.get("name")))
            if sidecar:
                self.sidecar_restarts += count
                self.sidecar_last = max(self.sidecar_last, finished)
            state = container.get("state") or {}
            terminated, waiting = state.get("terminated"), state.get("waiting") or {}
            if terminated is not None and terminated.get("exitCode", 0) == 0:
                continue
            if sidecar and container.get("started"):
                self.ready += 1 if container.get("ready") else 0
                continue
            if terminated is not None:
                self.reason = _terminated_reason(terminated, "Init:")
            elif waiting.get("reason") and waiting["reason"] != "PodInitializing":
                self.reason = "Init:" + waiting["reason"]
            else:
                self.reason = f"Init:{i}/{len(self.inits)}"
            return True
        return False

    def _containers(self) -> None:
        self.restarts, self.last_restart = self.sidecar_restarts, self.sidecar_last
        running, error = False, ""
        for container in reversed(self.status.get("containerStatuses") or []):
            count, finished = _restarts(container)
            self.restarts += count
            self.last_restart = max(self.last_restart, finished)
            state = container.get("state") or {}
            waiting, terminated = state.get("waiting") or {}, state.get("terminated")
            if waiting.get("reason"):
                self.reason = waiting["reason"]
            elif terminated is not None:
                self.reason = _terminated_reason(terminated)
                if terminated.get("exitCode", 0) != 0:
                    error = self.reason
            elif container.get("ready") and state.get("running") is not None:
                running = True
                self.ready += 1
        if self.reason == "Completed":
            if running and _condition_true(self.status, "Ready"):
                self.reason = "Running"
            elif error:
                self.reason = error
            elif running:
                self.reason = "NotReady"


def _readiness_gates(spec: Obj, status: Obj) -> str:
    gates = spec.get("readinessGates") or []
    if not gates:
        return "<none>"
    conditions: dict[str, Any] = {}
    for c in status.get("conditions") or []:
        conditions.setdefault(c.get("type"), c.get("status"))
    true = sum(1 for g in gates if conditions.get(g.get("conditionType")) == "True")
    return f"{true}/{len(gates)}"


def _pod_cells(pod: Obj) -> list[Any]:
    state = _PodState(pod)
    spec, status = state.spec, state.status
    phase = status.get("phase") or ""
    if meta(pod).get("deletionTimestamp"):
        if status.get("reason") == "NodeLost":
            state.reason = "Unknown"
        elif phase not in _TERMINAL:
            state.reason = "Terminating"
    restarts = str(state.restarts)
    if state.restarts and state.last_restart:
        restarts += f" ({age(state.last_restart)} ago)"
    ips = status.get("podIPs") or []
    return [
        f"{state.ready}/{state.total}",
        state.reason,
        restarts,
        created(pod),
        (ips[0].get("ip") if ips else "") or "<none>",
        spec.get("nodeName") or "<none>",
        status.get("nominatedNodeName") or "<none>",
        _readiness_gates(spec, status),
    ]


def _pod_conditions(pod: Obj) -> list[Obj]:
    """A finished pod's row is Completed (kube's podSuccessConditions and
    podFailedConditions)."""
    phase = (pod.get("status") or {}).get("phase")
    if phase not in _COMPLETED:
        return []
    return [{"type": "Completed", "status": "True", "reason": phase, "message": _COMPLETED[phase]}]


register(
    "",
    "pods",
    (
        column("Ready", "The aggregate readiness state of this pod for accepting traffic."),
        column("Status", "The aggregate status of the containers in this pod."),
        column(
            "Restarts",
            "The number of times the containers in this pod have been restarted and when the "
            "last container in this pod has restarted.",
        ),
        AGE,
        column(
            "IP",
            "podIP address allocated to the pod. Routable at least within the cluster. Empty if "
            "not yet allocated.",
            priority=1,
        ),
        column(
            "Node",
            "NodeName indicates in which node this pod is scheduled. If empty, this pod is a "
            "candidate for scheduling by the scheduler defined in schedulerName. Once this "
            "field is set, the kubelet for this node becomes responsible for the lifecycle of "
            "this pod. This field should not be used to express a desire for the pod to be "
            "scheduled on a specific node. "
            "https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/#nodename",
            priority=1,
        ),
        column(
            "Nominated Node",
            "nominatedNodeName is set only when this pod preempts other pods on the node, but "
            "it cannot be scheduled right away as preemption victims receive their graceful "
            "termination periods. This field does not guarantee that the pod will be scheduled "
            "on this node. Scheduler may decide to place the pod elsewhere if other nodes "
            "become available sooner. Scheduler may also decide to give the resources on this "
            "node to a higher priority pod that is created after preemption. As a result, this "
            "field may be different than PodSpec.nodeName when the pod is scheduled.",
            priority=1,
        ),
        column(
            "Readiness Gates",
            "If specified, all readiness gates will be evaluated for pod readiness. A pod is "
            "ready when all its containers are ready AND all conditions specified in the "
            'readiness gates have status equal to "True" More info: '
            "https://git.k8s.io/enhancements/keps/sig-network/580-pod-readiness-gates",
            priority=1,
        ),
    ),
    _pod_cells,
    conditions=_pod_conditions,
)

_NODE_ROLE_PREFIX = "node-role.platform.io/"  # kube's node-role.kubernetes.io/<role>
_NODE_ROLE_LABEL = "platform.io/role"  # kube's kubernetes.io/role=<role>


def _node_roles(node: Obj) -> str:
    roles = set()
    for key, value in (meta(node).get("labels") or {}).items():
        if key.startswith(_NODE_ROLE_PREFIX) and key != _NODE_ROLE_PREFIX:
            roles.add(key[len(_NODE_ROLE_PREFIX) :])
        elif key == _NODE_ROLE_LABEL and value:
            roles.add(value)
    return ",".join(sorted(roles)) or "<none>"


def _node_status(node: Obj) -> str:
    ready = next(
        (c for c in (node.get("status") or {}).get("conditions") or [] if c.get("type") == "Ready"),
        None,
    )
    shown = [
        "Unknown" if ready is None else "Ready" if ready.get("status") == "True" else "NotReady"
    ]
    if (node.get("spec") or {}).get("unschedulable"):
        shown.append("SchedulingDisabled")
    return ",".join(shown)


def _node_address(node: Obj, kind: str) -> str:
    addresses = (node.get("status") or {}).get("addresses") or []
    return next((a.get("address", "") for a in addresses if a.get("type") == kind), "<none>")


def _node_cells(node: Obj) -> list[Any]:
    info = (node.get("status") or {}).get("nodeInfo") or {}
    kernel = info.get("kernelVersion") or "<unknown>"
    if info.get("architecture"):
        kernel += f" ({info['architecture']})"
    return [
        _node_status(node),
        _node_roles(node),
        created(node),
        info.get("kubeletVersion", ""),
        _node_address(node, "InternalIP"),
        _node_address(node, "ExternalIP"),
        info.get("osImage") or "<unknown>",
        kernel,
        info.get("containerRuntimeVersion") or "<unknown>",
    ]


_ADDRESSES = (
    "List of addresses reachable to the node. Queried from cloud provider, if available. More "
    "info: https://kubernetes.io/docs/reference/node/node-status/#addresses Note: This field is "
    "declared as mergeable, but the merge key is not sufficiently unique, which can cause data "
    "corruption when it is merged. Callers should instead use a full-replacement patch. See "
    "https://pr.k8s.io/79391 for an example. Consumers should assume that addresses can change "
    "during the lifetime of a Node. However, there are some exceptions where this may not be "
    "possible, such as Pods that inherit a Node's address in its own status or consumers of "
    "the downward API (status.hostIP)."
)
register(
    "",
    "nodes",
    (
        column("Status", "The status of the node"),
        column("Roles", "The roles of the node"),
        AGE,
        column("Version", "Kubelet Version reported by the node."),
        column("Internal-IP", _ADDRESSES, priority=1),
        column("External-IP", _ADDRESSES, priority=1),
        column(
            "OS-Image",
            "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 "
            "(wheezy)).",
            priority=1,
        ),
        column(
            "Kernel-Version",
            "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).",
            priority=1,
        ),
        column(
            "Container-Runtime",
            "ContainerRuntime Version reported by the node through runtime remote API (e.g. "
            "containerd://1.4.2).",
            priority=1,
        ),
    ),
    _node_cells,
)


def _core_event(obj: Obj) -> Obj:
    """An events.platform.io Event in the core form kube prints both from."""
    if "regarding" not in obj and "note" not in obj and "deprecatedSource" not in obj:
        return obj
    return {
        **obj,
        "involvedObject": obj.get("regarding") or {},
        "message": obj.get("note", ""),
        "source": obj.get("deprecatedSource") or {},
        "firstTimestamp": obj.get("deprecatedFirstTimestamp"),
        "lastTimestamp": obj.get("deprecatedLastTimestamp"),
        "count": obj.get("deprecatedCount", 0),
        "reportingComponent": obj.get("reportingController", ""),
    }


def _event_cells(obj: Obj) -> list[Any]:
    event = _core_event(obj)
    involved, source = event.get("involvedObject") or {}, event.get("source") or {}
    first = age(event.get("firstTimestamp") or event.get("eventTime"))
    last = age(event["lastTimestamp"]) if event.get("lastTimestamp") else first
    count = event.get("count") or 1
    if event.get("series") is not None:
        last = age(event["series"].get("lastObservedTime"))
        count = event["series"].get("count", 0)
    kind = (involved.get("kind") or "").lower()
    component = source.get("component") or event.get("reportingComponent") or ""
    instance = source.get("host") or event.get("reportingInstance") or ""
    return [
        last,
        event.get("type", ""),
        event.get("reason", ""),
        f"{kind}/{involved['name']}" if involved.get("name") else kind,
        involved.get("fieldPath", ""),
        f"{component}, {instance}" if instance else component,
        (event.get("message") or "").strip(),
        first,
        count,
        meta(event).get("name", ""),
    ]


_EVENTS = Printer(
    (
        column(
            "Last Seen", "The time at which the most recent occurrence of this event was recorded."
        ),
        column(
            "Type", "Type of this event (Normal, Warning), new types could be added in the future"
        ),
        column(
            "Reason",
            "This should be a short, machine understandable string that gives the reason for "
            "the transition into the object's current status.",
        ),
        column("Object", "The object that this event is about."),
        column(
            "Subobject",
            "If referring to a piece of an object instead of an entire object, this string "
            "should contain a valid JSON/Go field access statement, such as "
            "desiredState.manifest.containers[2]. For example, if the object reference is to a "
            'container within a pod, this would take on a value like: "spec.containers{name}" '
            '(where "name" refers to the name of the container that triggered the event) or if '
            'no container name is specified "spec.containers[2]" (container with index 2 in '
            "this pod). This syntax is chosen only to have some well-defined way of referencing "
            "a part of an object.",
            priority=1,
        ),
        column(
            "Source",
            "The component reporting this event. Should be a short machine understandable string.",
            priority=1,
        ),
        column("Message", "A human-readable description of the status of this operation."),
        column(
            "First Seen",
            "The time at which the event was first recorded. (Time of server receipt is in "
            "TypeMeta.)",
            priority=1,
        ),
        column("Count", "The number of times this event has occurred.", priority=1),
        dataclasses.replace(NAME, priority=1),
    ),
    _event_cells,
)
COLUMNS[("", "events")] = _EVENTS
COLUMNS[("events.platform.io", "events")] = _EVENTS
