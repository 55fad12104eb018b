"""kube-apiserver flags that change nothing on this server: accepted, checked as pflag
checks them, and named on stderr with why.

A kube-apiserver command line (a kubeadm manifest, a kind or CI script) carries flags for
parts this server does not have: kubelet connections, per-resource watch cache sizes,
Go's profiler, etcd servers per resource.  Refusing them as unknown would stop the
server for a flag that means nothing here; taking them silently would hide that it
does not act on them.  So each is taken off the command line before twistd parses it
(as the deprecated ones are, deprecatedflags.py), its value checked, and one line says
what this server does instead.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from platform_api import gotext
from platform_api.apiserver.deprecatedflags import (
    any_value,
    bool_value,
    duration_value,
    int_value,
    uint_value,
)


def float_value(text: str) -> str | None:
    try:
        float(text)
    except ValueError:
        return f"strconv.ParseFloat: parsing {gotext.quote(text)}: invalid syntax"
    return None


def _logging_format(text: str) -> str | None:
    return None if text in ("text", "json") else f'format "{text}" is not supported'


@dataclass(frozen=True)
class Inert:
    why: str  # what this server does instead
    check: Callable[[str], str | None] = any_value  # pflag's parse error for a bad value
    boolean: bool = False  # may be given bare

    def notice(self, name: str) -> str:
        return f"Flag --{name} changes nothing on this server: {self.why}"

    def replacement(self, value: str, args: list[str]) -> list[str]:
        return []


_KUBELET = "it connects to no kubelet"
_WATCH_CACHE = (
    "every resource is watched through a watch cache, with a history per resource sized as kube's"
)
_PROFILER = "it has no Go profiler (/debug/pprof)"
_LOG = "twistd writes the log (its --logfile)"
_AUDIT = "the audit log buffers as this server does (--audit-log-mode)"
_PEERS = (
    "its replicas are all of one version, so none proxies a request to a peer "
    "(kube's mixed-version proxy)"
)
_COORDINATED = (
    "its controllers' leader is elected by one Lease (kube's coordinated leader election "
    "is behind a gate that is off)"
)

# kube-apiserver v1.36 flags, by name: their values' types as pflag parses them.
INERT: dict[str, Inert] = {
    "aggregator-reject-forwarding-redirect": Inert(
        "an aggregated server's redirect is passed on to the client", bool_value, boolean=True
    ),
    "allow-metric-labels": Inert("metric labels are not filtered"),
    "allow-metric-labels-manifest": Inert("metric labels are not filtered"),
    "audit-log-batch-buffer-size": Inert(_AUDIT, int_value),
    "audit-log-batch-max-size": Inert(_AUDIT, int_value),
    "audit-log-batch-max-wait": Inert(_AUDIT, duration_value),
    "audit-log-batch-throttle-burst": Inert(_AUDIT, int_value),
    "audit-log-batch-throttle-enable": Inert(_AUDIT, bool_value, boolean=True),
    "audit-log-batch-throttle-qps": Inert(_AUDIT, float_value),
    "contention-profiling": Inert(_PROFILER, bool_value, boolean=True),
    "coordinated-leadership-lease-duration": Inert(_COORDINATED, duration_value),
    "coordinated-leadership-renew-deadline": Inert(_COORDINATED, duration_value),
    "coordinated-leadership-retry-period": Inert(_COORDINATED, duration_value),
    "debug-socket-path": Inert(_PROFILER),
    "delete-collection-workers": Inert(
        "a collection is deleted one object after another", int_value
    ),
    "disabled-metrics": Inert("every metric family is served"),
    "etcd-db-metric-poll-interval": Inert(
        "etcd's database size is read every 15 s", duration_value
    ),
    "etcd-healthcheck-timeout": Inert(
        "the etcd checks of /livez take the etcd client's timeout", duration_value
    ),
    "etcd-readycheck-timeout": Inert(
        "the etcd check of /readyz takes the etcd client's timeout", duration_value
    ),
    "etcd-servers-overrides": Inert("every resource is kept on --etcd-servers"),
    "external-hostname": Inert("it writes no externalized URLs"),
    "goaway-chance": Inert("HTTP/2 clients are not sent GOAWAY to rebalance them", float_value),
    "http2-max-streams-per-connection": Inert(
        "HTTP/2 connections take Twisted's stream limit", int_value
    ),
    "kubelet-certificate-authority": Inert(_KUBELET),
    "kubelet-client-certificate": Inert(_KUBELET),
    "kubelet-client-key": Inert(_KUBELET),
    "kubelet-preferred-address-types": Inert(_KUBELET),
    "kubelet-timeout": Inert(_KUBELET, duration_value),
    "lease-reuse-duration-seconds": Inert(
        "objects carry no etcd lease (Events go by --event-ttl)", int_value
    ),
    "log-flush-frequency": Inert(_LOG, duration_value),
    "log-json-info-buffer-size": Inert(_LOG),
    "log-json-split-stream": Inert(_LOG, bool_value, boolean=True),
    "log-text-info-buffer-size": Inert(_LOG),
    "log-text-split-stream": Inert(_LOG, bool_value, boolean=True),
    "logging-format": Inert(_LOG, _logging_format),
    "max-connection-bytes-per-sec": Inert(
        "it opens no stream to a kubelet or pod (exec, attach, port-forward, proxy), the "
        "connections kube throttles",
        int_value,
    ),
    "peer-advertise-ip": Inert(_PEERS),
    "peer-advertise-port": Inert(_PEERS),
    "peer-ca-file": Inert(_PEERS),
    "permit-address-sharing": Inert(
        "the port is shared only between --workers", bool_value, boolean=True
    ),
    "permit-port-sharing": Inert(
        "the port is shared only between --workers", bool_value, boolean=True
    ),
    "profiling": Inert(
        _PROFILER + "; DELETE /metrics resets, as with profiling on", bool_value, boolean=True
    ),
    "send-retry-after-while-not-ready-once": Inert(
        "it opens its port once it is ready", bool_value, boolean=True
    ),
    "shutdown-send-retry-after": Inert(
        "requests during the shutdown delay are served", bool_value, boolean=True
    ),
    "shutdown-watch-termination-grace-period": Inert(
        "watches end when the shutdown delay is over", duration_value
    ),
    "storage-initialization-timeout": Inert(
        "it waits for its storage before it serves", duration_value
    ),
    "v": Inert(_LOG, uint_value),
    "vmodule": Inert(_LOG),
    "watch-cache": Inert(_WATCH_CACHE, bool_value, boolean=True),
    "watch-cache-sizes": Inert(_WATCH_CACHE),
}
