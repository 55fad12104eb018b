"""kube's per-plugin admission latency: ``apiserver_admission_controller_admission_duration_seconds``.

kube wraps every enabled plugin so that each one whose ``Handles`` takes the operation is
observed, its admit and its validate apart, whether or not it acts on the resource (most
return at once), until one refuses.  Which plugin handles which operations in which step
(``HANDLES``) was read off kube-apiserver v1.36's own metrics with every plugin that runs
without a configuration file enabled, after a create, an update, a delete and an exec;
AlwaysDeny, EventRateLimit and ImagePolicyWebhook from their sources.

Here most requests skip most plugins without a call (``AdmissionChain._on``).  A step's
``Plan`` lists, in kube's order, the plugins that act (timed) and the runs of those kube
would ask but that do nothing here (``Idle``: counted once per request, without a call,
and spread over their series' first bucket when the family is read), so that every
series kube has grows as it grows in kube.
A plugin whose step differs from kube's (ours validates where kube's admits) is counted
in kube's step, and not timed.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Iterable
from typing import Any

from platform_api.admission.metrics import CONTROLLER_DURATION
from platform_api.admission.plugins import CHAIN_PARTS

ADMIT, VALIDATE = "admit", "validate"
_C, _U, _D, _X = "CREATE", "UPDATE", "DELETE", "CONNECT"
_ALL = (_C, _U, _D, _X)
# name: (operations its admit handles, operations its validate handles)
HANDLES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "AlwaysAdmit": (_ALL, _ALL),
    "NamespaceAutoProvision": ((_C,), ()),
    "NamespaceLifecycle": ((_C, _U, _D), ()),
    "NamespaceExists": ((), (_C, _U, _D)),
    "LimitPodHardAntiAffinityTopology": ((), (_C, _U)),
    "LimitRanger": ((_C, _U), (_C, _U)),
    "ServiceAccount": ((_C, _U), (_C, _U)),
    "NodeRestriction": ((_C, _U, _D), ()),
    "TaintNodesByCondition": ((_C,), ()),
    "AlwaysPullImages": ((_C, _U), (_C, _U)),
    "ImagePolicyWebhook": ((), (_C, _U)),
    "PodSecurity": ((), (_C, _U)),
    "PodNodeSelector": ((_C,), (_C,)),
    "Priority": ((_C, _U, _D), (_C, _U, _D)),
    "DefaultTolerationSeconds": ((_C, _U), ()),
    "PodTolerationRestriction": ((_C, _U), (_C, _U)),
    "EventRateLimit": ((), (_C, _U)),
    "ExtendedResourceToleration": ((_C, _U), ()),
    "DefaultStorageClass": ((_C,), ()),
    "StorageObjectInUseProtection": ((_C,), ()),
    "PodGroupProtection": ((_C,), ()),
    "OwnerReferencesPermissionEnforcement": ((), (_C, _U)),
    "PersistentVolumeClaimResize": ((), (_U,)),
    "RuntimeClass": ((_C,), (_C,)),
    "CertificateApproval": ((), (_U,)),
    "CertificateSigning": ((), (_U,)),
    "ClusterTrustBundleAttest": ((), (_C, _U)),
    "CertificateSubjectRestriction": ((), (_C,)),
    "DefaultIngressClass": ((_C,), ()),
    "DenyServiceExternalIPs": ((), (_C, _U)),
    "PodTopologyLabels": ((_C,), ()),
    "PodGroupWorkloadExists": ((), (_C,)),
    "NodeDeclaredFeatureValidator": ((), (_U,)),
    "JobValidation": ((), (_U,)),
    "PodResizeValidator": ((), (_U,)),
    "MutatingAdmissionPolicy": ((_C, _U, _X), ()),
    "MutatingAdmissionWebhook": (_ALL, ()),
    "ValidatingAdmissionPolicy": ((), _ALL),
    "ValidatingAdmissionWebhook": ((), _ALL),
    "ResourceQuota": ((), (_C, _U)),
    "AlwaysDeny": (_ALL, _ALL),
}
# Asked after the validating policies and webhooks (chain: ``runs_last``).
LAST = frozenset(("ResourceQuota", "AlwaysDeny"))


def handles(name: str, step: str, operation: str) -> bool:
    ops = HANDLES.get(name)
    return ops is not None and operation in ops[0 if step == ADMIT else 1]


Labels = tuple[str, ...]


class Idle:
    """Plugins kube would ask one after another that take no time here: one count per
    request, spread over their series (first bucket) when the family is read."""

    __slots__ = ("count", "labels")

    def __init__(self, labels: list[Labels]) -> None:
        self.labels = labels
        self.count = 0
        _IDLE.append(self)

    def spread(self) -> None:
        if self.count:
            for labels in self.labels:
                CONTROLLER_DURATION.row(*labels)[0] += self.count
            self.count = 0


_IDLE: list[Idle] = []


def _spread() -> None:
    for idle in _IDLE:
        idle.spread()


def _forget() -> None:
    for idle in _IDLE:
        idle.count = 0


CONTROLLER_DURATION.before_collect = _spread
CONTROLLER_DURATION.on_clear = _forget

# One entry of a plan: a plugin to call, with its series' labels (None: kube does not
# observe this call), or a run of plugins that take no time here.
Entry = tuple[Any, Labels | None] | Idle


class Plan:
    """One step of one operation on one resource, in kube's order."""

    def __init__(self, entries: list[Entry]) -> None:
        self.entries = entries

    async def run(self, method: str, attrs: Any, obj: Any, old: Any) -> None:
        for entry in self.entries:
            if isinstance(entry, Idle):  # kube's plugins would have returned at once
                entry.count += 1
                continue
            plugin, labels = entry
            if labels is None:
                pending = getattr(plugin, method)(attrs, obj, old)
                if pending is not None:
                    await pending
            else:
                await timed(labels, getattr(plugin, method), attrs, obj, old)


async def timed(labels: Labels, call: Callable[..., Any], *args: Any) -> Any:
    """``call(*args)`` (awaited if it returns an awaitable), observed under ``labels``
    (name, operation, step); a refusal is observed as rejected."""
    name, operation, step = labels
    started = time.perf_counter()
    try:
        result = call(*args)
        if result is not None and inspect.isawaitable(result):
            result = await result
    except BaseException:
        CONTROLLER_DURATION.observe(time.perf_counter() - started, name, operation, "true", step)
        raise
    CONTROLLER_DURATION.observe(time.perf_counter() - started, name, operation, "false", step)
    return result


def plan(enabled: Iterable[str], acting: list[Any], step: str, operation: str, last: bool) -> Plan:
    """The plan of the built-in plugins of one step: ``acting`` are ours that act on the
    resource here (in kube's order, then ours kube has no name for), ``enabled`` every
    plugin name the server runs; ``last`` picks the plugins asked after the policies and
    webhooks (``LAST``) instead of those before them (validating only)."""
    by_name = {getattr(p, "name", ""): p for p in acting}
    # kube asks a built-in plugin about a CONNECT only when it says it handles one
    # (AlwaysAdmit, AlwaysDeny); ours are not asked otherwise either.
    strict = operation == "CONNECT"
    entries: list[Entry] = []
    idle: list[Labels] = []
    for name in enabled:
        if name not in HANDLES or name in CHAIN_PARTS:  # the chain observes those itself
            continue
        if step == VALIDATE and (name in LAST) != last:
            continue
        plugin = by_name.pop(name, None)
        kube_asks = handles(name, step, operation)
        if plugin is not None and (kube_asks or not strict):
            if idle:  # a plugin that acts may refuse: the idle ones before it come first
                entries.append(Idle(idle))
                idle = []
            entries.append((plugin, (name, operation, step) if kube_asks else None))
        elif kube_asks:
            idle.append((name, operation, "false", step))
    if idle:
        entries.append(Idle(idle))
    if not strict:
        entries.extend((p, None) for p in by_name.values())  # not kube's: not observed
    return Plan(entries)


def idle_for(name: str, step: str, operation: str, enabled: frozenset[str]) -> Idle | None:
    """The count of a policy or webhook plugin kube would ask here that has nothing
    configured (None: kube would not ask it)."""
    if name in enabled and handles(name, step, operation):
        return Idle([(name, operation, "false", step)])
    return None
