"""kube-apiserver's audit metric families (k8s.io/apiserver/pkg/audit/metrics.go).

Declared here, apart from the audit pipeline, so the audit backends only import the
counters and increment them: ``AUDIT_EVENTS.inc()`` per event handed to a backend,
``AUDIT_REJECTED.inc()`` per request refused because the backend failed,
``AUDIT_ERRORS.labels(plugin=...).inc()`` and ``AUDIT_LEVELS.labels(level=...).inc()``.
"""

from __future__ import annotations

from prometheus_client import Counter

from platform_api.apiserver.metrics import REGISTRY

AUDIT_EVENTS = Counter(
    "apiserver_audit_event_total",
    "[ALPHA] Counter of audit events generated and sent to the audit backend.",
    registry=REGISTRY,
)
AUDIT_ERRORS = Counter(
    "apiserver_audit_error_total",
    "[ALPHA] Counter of audit events that failed to be audited properly. "
    "Plugin identifies the plugin affected by the error.",
    ["plugin"],
    registry=REGISTRY,
)
AUDIT_LEVELS = Counter(
    "apiserver_audit_level_total",
    "[ALPHA] Counter of policy levels for audit events (1 per request).",
    ["level"],
    registry=REGISTRY,
)
AUDIT_REJECTED = Counter(
    "apiserver_audit_requests_rejected_total",
    "[ALPHA] Counter of apiserver requests rejected due to an error in audit logging backend.",
    registry=REGISTRY,
)
