"""The taints the control plane puts on Nodes (kube's ``node.kubernetes.io/*``, branded):
one place for the admission plugins that add and tolerate them and the node lifecycle
controller that keeps them in step with each Node's conditions."""

from __future__ import annotations

PREFIX = "node.platform.io/"
NOT_READY = PREFIX + "not-ready"
UNREACHABLE = PREFIX + "unreachable"
MEMORY_PRESSURE = PREFIX + "memory-pressure"
DISK_PRESSURE = PREFIX + "disk-pressure"
PID_PRESSURE = PREFIX + "pid-pressure"
NETWORK_UNAVAILABLE = PREFIX + "network-unavailable"
UNSCHEDULABLE = PREFIX + "unschedulable"
NO_SCHEDULE, NO_EXECUTE = "NoSchedule", "NoExecute"

# condition type -> {condition status: the NoSchedule taint it calls for}
BY_CONDITION: dict[str, dict[str, str]] = {
    "Ready": {"False": NOT_READY, "Unknown": UNREACHABLE},
    "MemoryPressure": {"True": MEMORY_PRESSURE},
    "DiskPressure": {"True": DISK_PRESSURE},
    "NetworkUnavailable": {"True": NETWORK_UNAVAILABLE},
    "PIDPressure": {"True": PID_PRESSURE},
}
