"""Endpoint handlers, one module per verb."""

from platform_api.endpoints import (  # noqa: F401  (register the kinds' table columns)
    printers,
    printers_admission,
    printers_autoscaling,
    printers_batch,
    printers_cluster,
    printers_core,
    printers_networking,
    printers_optional,
    printers_policy,
    printers_storage,
    printers_workloads,
)
