"""Deprecated and hidden metrics, and ``--show-hidden-metrics-for-version``.

component-base's lifecycle: a metric deprecated in release D is shown with ``(Deprecated
since D)`` in its help from D on, and hidden once its deprecation period is over
(ALPHA: D itself, BETA: one more minor, STABLE: three more).  A hidden metric is not
registered at all unless the operator passes ``--show-hidden-metrics-for-version`` with
the previous minor release, which buys one release to notice before the metric goes.
Families declared through ``declare`` follow these rules on REGISTRY.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from prometheus_client import Gauge
from prometheus_client.registry import Collector
from twisted.logger import Logger

from platform_api.apiserver.flagvalues import ConfigError
from platform_api.apiserver.metrics import REGISTRY

CURRENT = (1, 36)
_PERIOD = {"STABLE": 3, "BETA": 1}  # minors served after deprecation; ALPHA/INTERNAL 0
log = Logger()
M = TypeVar("M", bound=Collector)
_hidden: list[tuple[str, Collector]] = []
_shown = False


def validate_show_hidden(value: str) -> str:
    """The flag's value, or kube's error when it is not the previous minor release."""
    allowed = f"{CURRENT[0]}.{CURRENT[1] - 1}"
    if value and value != allowed:
        raise ConfigError(
            f'metrics.showHiddenMetricsForVersion: Invalid value: "{value}": must be omitted '
            f"or have the value '{allowed}'; only the previous minor version is allowed"
        )
    return value


def _release(version: str) -> tuple[int, int]:
    major, minor = version.split(".")[:2]
    return int(major), int(minor)


def is_hidden(stability: str, deprecated_version: str) -> bool:
    """component-base's ``shouldHide`` at release 1.36 (not an alpha.0 build)."""
    major, minor = _release(deprecated_version)
    if major != CURRENT[0]:
        return major < CURRENT[0]
    return minor + _PERIOD.get(stability, 0) <= CURRENT[1]


def help_text(help: str, stability: str, deprecated_version: str = "") -> str:
    """The HELP line kube writes: stability prefix, then the deprecation note once due."""
    if deprecated_version and _release(deprecated_version) <= CURRENT:
        help = f"(Deprecated since {deprecated_version}) {help}"
    return f"[{stability}] {help}"


def declare(
    cls: Callable[..., M],
    name: str,
    help: str,
    labels: list[str],
    *,
    stability: str,
    deprecated_version: str,
    **kwargs: Any,
) -> M:
    """A metric kube marks deprecated: on REGISTRY now, or when hidden metrics are shown.

    The object is always usable; while hidden its samples are simply not exposed, as a
    hidden kube metric is never created."""
    metric = cls(
        name, help_text(help, stability, deprecated_version), labels, registry=None, **kwargs
    )
    if is_hidden(stability, deprecated_version) and not _shown:
        _hidden.append((name, metric))
    else:
        REGISTRY.register(metric)
    return metric


def show_hidden(version: str) -> None:
    """Register the hidden metrics, as kube does for a valid ``--show-hidden-metrics-for-version``."""
    global _shown
    if not version or _shown:
        return
    _shown = True
    for name, metric in _hidden:
        log.warn(
            "Hidden metrics ({name}) have been manually overridden, showing this very "
            "deprecated metric.",
            name=name,
        )
        REGISTRY.register(metric)
    _hidden.clear()


# k8s.io/apiserver/pkg/storage/etcd3/metrics: hidden since 1.28 (ALPHA, deprecated 1.28).
STORAGE_DB_TOTAL_SIZE = declare(
    Gauge,
    "apiserver_storage_db_total_size_in_bytes",
    "Total size of the storage database file physically allocated in bytes.",
    ["endpoint"],
    stability="ALPHA",
    deprecated_version="1.28.0",
)


def watch_database(endpoint: str, size: Callable[[], float]) -> None:
    """Report a database's size under ``endpoint`` (an etcd member, or the LMDB file)."""
    STORAGE_DB_TOTAL_SIZE.labels(endpoint=endpoint).set_function(size)
