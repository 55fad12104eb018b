"""kube's per-plugin admission latency: ``apiserver_admission_controller_admission_duration_seconds``.

kube wraps every enabled plugin so that each one whose ``Handles`` takes the operation is
observed, its admit and its validate apart, whether or not it acts on the resource (most
return at once), until one refuses.  Which plugin handles which operations in which step
(``HANDLES``) was read off kube-apiserver v1.36's own metrics with every plugin that runs
without a configuration file enabled, after a create, an update, a delete and an exec;
AlwaysDeny, EventRateLimit and ImagePolicyWebhook from their sources.

Here most requests skip most plugins without a call (``AdmissionChain._on``).  A step's
``Plan`` lists, in kube's order, the plugins that act (timed) and those kube would ask
but that do nothing here (counted as taking no time: their series' first bucket, without
a call), so that every series kube has grows as it grows in kube, for ~1 µs a request.
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
# One entry of a plan: (the plugin to call, or None for one counted as taking no time;
# its series' labels, or None for a call kube does not observe).
Entry = tuple[Any, Labels | None]


class Plan:
    """One step of one operation on one resource, in kube's order."""

    def __init__(self, entries: list[Entry]) -> None:
        self.entries = entries

    async def run(self, method: str, attrs: Any, obj: Any, old: Any) -> None:
        series = CONTROLLER_DURATION.values
        for plugin, labels in self.entries:
            if plugin is None:  # kube's plugin would have returned at once
                assert labels is not None
                (series.get(labels) or CONTROLLER_DURATION.row(*labels))[0] += 1
            elif labels is None:
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
        if inspect.isawaitable(result):
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
    for name in enabled:
        if name not in HANDLES or name in CHAIN_PARTS:  # the chain observes those itself
            continue
        if step == VALIDATE and (name in LAST) != last:
            continue
        plugin = by_name.pop(name, None)
        kube_asks = handles(name, step, operation)
        if plugin is not None and (kube_asks or not strict):
            entries.append((plugin, (name, operation, step) if kube_asks else None))
        elif kube_asks:
            entries.append((None, (name, operation, "false", step)))
    if not strict:
        entries.extend((p, None) for p in by_name.values())  # not kube's: not observed
    return Plan(entries)


def nothing(name: str, step: str, operation: str, enabled: frozenset[str]) -> None:
    """A policy or webhook plugin kube would ask here, with none configured: no time."""
    if name in enabled and handles(name, step, operation):
        CONTROLLER_DURATION.row(name, operation, "false", step)[0] += 1
