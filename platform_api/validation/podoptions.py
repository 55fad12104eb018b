"""kube's PodValidationOptions that its feature gates set: what a pod spec may hold.

kube computes them per write from its gates and the object being updated (a cluster
that turned a gate off keeps accepting updates of what was written while it was on),
then hands them down through every pod-spec check.  Here the registry computes them
(``gateddrops.pod_options``) and holds them in a context while the kind's validation
runs, so the checks deep in a pod template read them without every caller passing them
on; outside a write (a config file's tolerations) they are kube's zero options.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass


@dataclass(frozen=True)
class PodOptions:
    toleration_comparisons: bool = False  # AllowTaintTolerationComparisonOperators
    userns_host_network: bool = False  # AllowUserNamespacesHostNetworkSupport


ZERO = PodOptions()  # kube's zero PodValidationOptions
_CURRENT: ContextVar[PodOptions] = ContextVar("pod_validation_options", default=ZERO)


def current() -> PodOptions:
    return _CURRENT.get()


@contextlib.contextmanager
def using(options: PodOptions) -> Iterator[None]:
    """Validation inside the block sees ``options``."""
    token = _CURRENT.set(options)
    try:
        yield
    finally:
        _CURRENT.reset(token)
