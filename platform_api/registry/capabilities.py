"""What the cluster allows of pods (kube's pkg/capabilities), set once when the server
starts and read wherever a pod spec is validated: pods, and every pod template.

kube keeps this process-wide too: it is a property of the cluster, not of a request,
and the validators that read it run deep inside every workload kind's strategy.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Capabilities:
    # --allow-privileged: kube's default is false; this server's is true, as every
    # cluster installer (kubeadm, kind, minikube) sets it.
    allow_privileged: bool = True


_current = Capabilities()


def setup(capabilities: Capabilities) -> None:
    global _current  # one setting per process, as kube's capabilities.Setup
    _current = capabilities


def get() -> Capabilities:
    return _current
