"""``apiserver_requested_deprecated_apis``: kube's gauge of deprecated APIs served.

Declared apart from the request path so the deprecation code sets it without importing
the metrics instrumentation: ``REQUESTED_DEPRECATED_APIS.labels(group=..., version=...,
resource=..., subresource=..., removed_release=...).set(1)`` when a deprecated version
is requested (kube sets 1 and never clears it).
"""

from __future__ import annotations

from prometheus_client import Gauge

from platform_api.apiserver.metrics import REGISTRY

REQUESTED_DEPRECATED_APIS = Gauge(
    "apiserver_requested_deprecated_apis",
    "[STABLE] Gauge of deprecated APIs that have been requested, broken out by API group, "
    "version, resource, subresource, and removed_release.",
    ["group", "removed_release", "resource", "subresource", "version"],
    registry=REGISTRY,
)
