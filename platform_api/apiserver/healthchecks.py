"""The checks behind /healthz, /livez and /readyz, as kube-apiserver lists them.

``ping``, ``log`` and the storage's check (``etcd`` or ``lmdb``) everywhere; the
post-start hooks (the default namespaces, then the RBAC defaults) once bootstrapped,
with ``--livez-grace-period`` forgiving them on /livez; ``kms-providers`` where kube
has it; ``shutdown`` on /readyz during the shutdown delay; one check per worker under
``--workers``.
"""

from __future__ import annotations

import time
from typing import Protocol

from platform_api.apiserver.config import ServerConfig
from platform_api.apiserver.health import HealthCheck, HealthEndpoint

NAMESPACES_HOOK = "poststarthook/bootstrap-namespaces"
RBAC_HOOK = "poststarthook/rbac/bootstrap-roles"


class ServerState(Protocol):
    config: ServerConfig
    started_at: float
    bootstrapped: bool
    rbac_bootstrapped: bool
    shutting_down: bool


def endpoints(
    state: ServerState,
    storage: HealthCheck,
    encryption: list[HealthCheck],
    workers: list[HealthCheck],
) -> dict[str, HealthEndpoint]:
    def bootstrap(grace: bool, done: bool | None = None) -> str | None:
        if state.bootstrapped if done is None else done:
            return None
        if grace and time.monotonic() - state.started_at < state.config.livez_grace_period:
            return None
        return "not finished"

    def hooks(grace: bool) -> list[HealthCheck]:
        return [
            HealthCheck(NAMESPACES_HOOK, lambda: bootstrap(grace)),
            HealthCheck(RBAC_HOOK, lambda: bootstrap(grace, state.rbac_bootstrapped)),
        ]

    common = [HealthCheck("ping", lambda: None), HealthCheck("log", lambda: None), storage]
    shutdown = HealthCheck("shutdown", lambda: "shutting down" if state.shutting_down else None)
    return {
        "healthz": HealthEndpoint("healthz", [*common, *hooks(False), *encryption]),
        "livez": HealthEndpoint("livez", [*common, *hooks(True)]),
        "readyz": HealthEndpoint(
            "readyz", [*common, *hooks(False), *encryption, shutdown, *workers], failure_code=503
        ),
    }
