"""kube's admission and validation metric families (admission/metrics, validation/metrics).

The registry is the server's one (a leaf module): admission records its own latencies.

Declared with kube's names, labels, help and buckets; ``observe_step`` and friends are
the calls an admission chain makes (type is ``admit`` or ``validate``, operation the
admission operation, rejected ``true``/``false``).
"""

from __future__ import annotations

from prometheus_client import Counter, Histogram

from platform_api.apiserver.metrics import REGISTRY, RawCounter, ReactorHistogram

_BUCKETS = (0.005, 0.025, 0.1, 0.5, 1.0, 2.5)
_BY_NAME = "identified by name and broken out for each operation and API resource and type"
# Observed twice on every write, on the reactor: the lock-free family (see ReactorCounter).
STEP_DURATION = ReactorHistogram(
    "apiserver_admission_step_admission_duration_seconds",
    "[STABLE] Admission sub-step latency histogram in seconds, broken out for each operation "
    "and API resource and step type (validate or admit).",
    ["operation", "rejected", "type"],
    buckets=_BUCKETS,
    registry=REGISTRY,
)
# Observed for every plugin kube would ask, on the reactor (admission/plugintimes.py).
CONTROLLER_DURATION = ReactorHistogram(
    "apiserver_admission_controller_admission_duration_seconds",
    f"[STABLE] Admission controller latency histogram in seconds, {_BY_NAME} (validate or admit).",
    ["name", "operation", "rejected", "type"],
    buckets=_BUCKETS,
    registry=REGISTRY,
)
WEBHOOK_DURATION = Histogram(
    "apiserver_admission_webhook_admission_duration_seconds",
    f"[STABLE] Admission webhook latency histogram in seconds, {_BY_NAME} (validate or admit).",
    ["name", "operation", "rejected", "type"],
    buckets=(*_BUCKETS, 10, 25),
    registry=REGISTRY,
)
WEBHOOK_REJECTIONS = RawCounter(
    "apiserver_admission_webhook_rejection_count",
    "[ALPHA] Admission webhook rejection count, identified by name and broken out for each "
    "admission type (validating or admit) and operation. Additional labels specify an error "
    "type (calling_webhook_error or apiserver_internal_error if an error occurred; no_error "
    "otherwise) and optionally a non-zero rejection code if the webhook rejects the request "
    "with an HTTP status code (honored by the apiserver when the code is greater or equal to "
    "400). Codes greater than 600 are truncated to 600, to keep the metrics cardinality "
    "bounded.",
    ["error_type", "name", "operation", "rejection_code", "type"],
    registry=REGISTRY,
)
WEBHOOK_REQUESTS = Counter(
    "apiserver_admission_webhook_request_total",
    "[ALPHA] Admission webhook request total, identified by name and broken out for each "
    "admission type (validating or admit) and operation. Additional labels specify whether "
    "the request was rejected or not and an HTTP status code. Codes greater than 600 are "
    "truncated to 600, to keep the metrics cardinality bounded.",
    ["code", "name", "operation", "rejected", "type"],
    registry=REGISTRY,
)
DECLARATIVE_MISMATCH = Counter(
    "apiserver_validation_declarative_validation_mismatch_total",
    "[BETA] Number of times declarative validation results differed from handwritten "
    "validation results for core types.",
    ["validation_identifier"],
    registry=REGISTRY,
)


def observe_step(kind: str, operation: str, rejected: bool, seconds: float) -> None:
    """One admission step (all mutating, or all validating plugins) of a request."""
    STEP_DURATION.observe(seconds, operation, "true" if rejected else "false", kind)


def observe_webhook(
    name: str, kind: str, operation: str, code: int, rejected: bool, seconds: float
) -> None:
    """One call of an admission webhook: its latency and its request count by status."""
    flag = str(rejected).lower()
    WEBHOOK_DURATION.labels(name=name, operation=operation, rejected=flag, type=kind).observe(
        seconds
    )
    WEBHOOK_REQUESTS.labels(
        code=str(min(code, 600)), name=name, operation=operation, rejected=flag, type=kind
    ).inc()


def observe_rejection(name: str, kind: str, operation: str, error_type: str, code: int) -> None:
    """A webhook refusal (``no_error``, with its code) or failure (``calling_webhook_error``)."""
    WEBHOOK_REJECTIONS.labels(
        error_type=error_type,
        name=name,
        operation=operation,
        rejection_code=str(min(code, 600)),
        type=kind,
    ).inc()
