"""The checks behind /healthz, /livez and /readyz, as kube-apiserver lists them.

``ping``, ``log`` and the storage's check (``etcd`` or ``lmdb``) everywhere; kube's
post-start hooks by kube's names, those making default objects ready once bootstrapped,
with ``--livez-grace-period`` forgiving them on /livez; ``kms-providers`` where kube
has it; ``shutdown`` on /readyz during the shutdown delay; one check per worker under
``--workers``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

from cryptography import x509

from platform_api.apiserver.config import ServerConfig
from platform_api.apiserver.health import HealthCheck, HealthEndpoint

# kube-apiserver's post-start hooks, in its order, that have a counterpart here: the
# parts a hook starts are built before this server listens, but for the default objects
# (``DEFAULTS``, ready once bootstrapped) and the RBAC defaults.  Hooks of parts this
# server does not have (the peer proxy's handler) are not listed; the peer endpoint
# reconciler's is, as its gate says (its leases name where a peer proxy would send).
SERVING, DEFAULTS, RBAC = "serving", "defaults", "rbac"
API_SERVER_IDENTITY = "APIServerIdentity"  # the feature gate of the identity Leases
PEER_PROXY = "UnknownVersionInteroperabilityProxy"  # ... and of the peer endpoint leases
HOOKS: tuple[tuple[str, str, str], ...] = (  # (name, when ready, which part must be on)
    ("start-apiserver-admission-initializer", SERVING, ""),
    ("generic-apiserver-start-informers", SERVING, ""),
    ("priority-and-fairness-config-consumer", SERVING, "apf"),
    ("priority-and-fairness-filter", SERVING, "apf"),
    ("storage-object-count-tracker-hook", SERVING, ""),
    ("start-apiextensions-informers", SERVING, ""),
    ("start-apiextensions-controllers", SERVING, ""),
    ("crd-informer-synced", SERVING, ""),
    ("start-system-namespaces-controller", DEFAULTS, ""),
    ("peer-endpoint-reconciler-controller", SERVING, "peers"),
    ("start-cluster-authentication-info-controller", DEFAULTS, ""),
    ("start-kube-apiserver-identity-lease-controller", DEFAULTS, "identity"),
    ("start-kube-apiserver-identity-lease-garbage-collector", DEFAULTS, "identity"),
    ("storage-readiness", SERVING, ""),
    ("start-legacy-token-tracking-controller", DEFAULTS, ""),
    ("start-service-ip-repair-controllers", DEFAULTS, ""),
    ("rbac/bootstrap-roles", RBAC, ""),
    ("scheduling/bootstrap-system-priority-classes", DEFAULTS, ""),
    ("priority-and-fairness-config-producer", DEFAULTS, "apf"),
    ("bootstrap-controller", DEFAULTS, ""),
    ("start-kubernetes-service-cidr-controller", DEFAULTS, ""),
    ("start-kube-aggregator-informers", SERVING, "aggregator"),
    ("apiservice-status-local-available-controller", SERVING, "aggregator"),
    ("apiservice-status-remote-available-controller", SERVING, "aggregator"),
    ("apiservice-registration-controller", SERVING, "aggregator"),
    ("apiservice-wait-for-first-sync", SERVING, "aggregator"),
    ("apiservice-discovery-controller", SERVING, "aggregator"),
    ("kube-apiserver-autoregistration", DEFAULTS, "aggregator"),
    ("autoregister-completion", DEFAULTS, "aggregator"),  # kube's has no prefix
    ("apiservice-openapi-controller", SERVING, "aggregator"),
    ("apiservice-openapiv3-controller", SERVING, "aggregator"),
)


class ServerState(Protocol):
    config: ServerConfig
    started_at: float
    bootstrapped: bool
    rbac_bootstrapped: bool
    shutting_down: bool

    @property
    def aggregation(self) -> object | None: ...


def loopback_certificate(cert_pem: bytes, clock: Callable[[], float] = time.time) -> HealthCheck:
    """kube's ``loopback-serving-certificate``: fails once the certificate the loopback
    client pins (the serving one here) has expired, as every loopback write then would."""
    expires = x509.load_pem_x509_certificate(cert_pem).not_valid_after_utc.timestamp()

    def check() -> str | None:
        return "the loopback serving certificate has expired" if clock() > expires else None

    return HealthCheck("loopback-serving-certificate", check)


def endpoints(
    state: ServerState,
    storage: HealthCheck,
    encryption: list[HealthCheck],
    workers: list[HealthCheck],
    loopback: HealthCheck,
) -> dict[str, HealthEndpoint]:
    def bootstrap(grace: bool, done: bool | None = None) -> str | None:
        if state.bootstrapped if done is None else done:
            return None
        if grace and time.monotonic() - state.started_at < state.config.livez_grace_period:
            return None
        return "not finished"

    parts = {"": True, "apf": state.config.enable_priority_and_fairness}
    parts["aggregator"] = state.aggregation is not None
    parts["identity"] = state.config.feature_gates.enabled(API_SERVER_IDENTITY)
    parts["peers"] = state.config.feature_gates.enabled(PEER_PROXY)

    def hook_check(when: str, grace: bool) -> Callable[[], str | None]:
        if when == SERVING:
            return lambda: None
        if when == RBAC:
            return lambda: bootstrap(grace, state.rbac_bootstrapped)
        return lambda: bootstrap(grace)

    def hooks(grace: bool) -> list[HealthCheck]:
        return [
            HealthCheck(
                name if name == "autoregister-completion" else f"poststarthook/{name}",
                hook_check(when, grace),
            )
            for name, when, part in HOOKS
            if parts[part]
        ]

    common = [HealthCheck("ping", lambda: None), HealthCheck("log", lambda: None)]
    informers = HealthCheck("informer-sync", lambda: None)  # started before serving
    shutdown = HealthCheck("shutdown", lambda: "shutting down" if state.shutting_down else None)
    # kube's /readyz has etcd's check and its readiness check (OpenShift's build drops
    # both); whatever the engine, they keep kube's names, as probes and tools ask for them.
    ready = [storage, HealthCheck("etcd-readiness", storage.check)]
    return {
        "healthz": HealthEndpoint(
            "healthz", [*common, loopback, storage, *hooks(False), *encryption]
        ),
        "livez": HealthEndpoint("livez", [*common, loopback, storage, *hooks(True)]),
        "readyz": HealthEndpoint(
            "readyz",
            [*common, *ready, informers, *hooks(False), *encryption, shutdown, *workers],
            failure_code=503,
        ),
    }
