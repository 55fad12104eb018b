"""The taints the control plane puts on Nodes: one place for the admission plugins that
add and tolerate them and the controllers that keep them in step with each Node's
conditions.  Their keys are kube's ``node.kubernetes.io/*`` branded; a server that serves
kube's group names (``--serve-upstream-groups``) uses kube's own, which stock components
and charts tolerate by name (``keys(upstream=True)``)."""

from __future__ import annotations

from dataclasses import dataclass, field

NO_SCHEDULE, NO_EXECUTE = "NoSchedule", "NoExecute"
_NAMES = (
    "not-ready",
    "unreachable",
    "memory-pressure",
    "disk-pressure",
    "pid-pressure",
    "network-unavailable",
    "unschedulable",
)


@dataclass(frozen=True)
class TaintKeys:
    """The taint keys under one prefix."""

    prefix: str
    not_ready: str = field(init=False)
    unreachable: str = field(init=False)
    memory_pressure: str = field(init=False)
    disk_pressure: str = field(init=False)
    pid_pressure: str = field(init=False)
    network_unavailable: str = field(init=False)
    unschedulable: str = field(init=False)
    # condition type -> {condition status: the NoSchedule taint it calls for}
    by_condition: dict[str, dict[str, str]] = field(init=False, compare=False)

    def __post_init__(self) -> None:
        for name in _NAMES:
            object.__setattr__(self, name.replace("-", "_"), self.prefix + name)
        by_condition = {
            "Ready": {"False": self.not_ready, "Unknown": self.unreachable},
            "MemoryPressure": {"True": self.memory_pressure},
            "DiskPressure": {"True": self.disk_pressure},
            "NetworkUnavailable": {"True": self.network_unavailable},
            "PIDPressure": {"True": self.pid_pressure},
        }
        object.__setattr__(self, "by_condition", by_condition)

    @property
    def all(self) -> frozenset[str]:
        """Every key the control plane sets under this prefix."""
        return frozenset(
            {*(k for m in self.by_condition.values() for k in m.values()), self.unschedulable}
        )


BRANDED = TaintKeys("node.platform.io/")
UPSTREAM = TaintKeys("node.kubernetes.io/")


def keys(upstream: bool) -> TaintKeys:
    """The taint keys of a server that serves kube's group names (or not)."""
    return UPSTREAM if upstream else BRANDED
